#!/usr/bin/env bash
# Makes the shipped profile of each GPU (data/profiles/GPU.json) from a host run: its bench's
# profile refined on the calibration models of data/zoo/split.json, with its accuracy on the
# evaluation models (never fitted on) recorded in provenance.accuracy. No GPU needed.
#   validation/scripts/ship_profiles.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
split=data/zoo/split.json
cal=$(python3 -c "import json;print(','.join(json.load(open('$split'))['calibration']))")
ev=$(python3 -c "import json;print(','.join(json.load(open('$split'))['evaluation']))")
# GPU name and the host run its shipped profile comes from (the newest timed without a profiler)
for pair in h200:validation/h200/2026-11-23p h100:validation/h100/2026-11-23q; do
  gpu=${pair%%:*}; run=${pair#*:}
  runs=(--measured "$run/torchscript-cudagraph.json" --measured "$run/eager.json")
  "$ftax" calibrate "$run/bench.measurements.json" -o "$run/profile.json" > "$run/calibrate.txt" 2>&1
  "$ftax" validate "${runs[@]}" --profile "$run/profile.json" --refined-profile "$run/profile-refined.json" \
    --refine-models "$cal" >/dev/null
  "$ftax" validate "${runs[@]}" --profile "$run/profile-refined.json" --report-models "$ev" --format json \
    > "/tmp/ftax-ship-$gpu.json"
  python3 - "$run/profile-refined.json" "/tmp/ftax-ship-$gpu.json" "data/profiles/$gpu.json" "$split" <<'PY'
import json, sys
prof, rep, out, split = sys.argv[1:]
p = json.load(open(prof))
r = json.load(open(rep))
acc = {"models": json.load(open(split))["evaluation"], "measured": "fp16, batch 1-128, no profiler attached",
       "rule": "cuda-graph within ±10%; others within ±15% or inside the measured p10-p90"}
for f in r["frameworks"]:
    acc[f["framework"]] = {"rows": f["rows"], "within": f["within_or_inside"],
                           "median_abs_error_pct": round(f["median_abs_error_pct"], 1)}
p["provenance"]["accuracy"] = acc
p["provenance"]["host_run"] = prof.rsplit("/", 1)[0]
json.dump(p, open(out + ".tmp", "w"), indent=2)
import os; os.replace(out + ".tmp", out)
print(out, {k: v for k, v in acc.items() if isinstance(v, dict)})
PY
done
