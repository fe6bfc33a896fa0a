#!/usr/bin/env bash
# Makes the shipped profile of each GPU (data/profiles/GPU.json) from a host run: its bench's
# profile refined on the calibration models of data/zoo/split.json (those the run measured:
# host runs p and q ran six of them, which the profile's provenance.refined_on_models names),
# with its accuracy on the evaluation models (never fitted on) recorded in
# provenance.accuracy. No GPU needed; the host runs' own files are left as they are. Rows
# predicted from a trace need it where the run recorded it (/tmp/models/NAME.fp16.pt: unpack
# a host run's models.tar.xz there, e.g. validation/h200/2026-11-26ai's); `ftax validate` skips
# a row whose trace is missing, and provenance.accuracy lists the models it compared.
#   validation/scripts/ship_profiles.sh [BUILD_DIR] [OUT_DIR]    # OUT_DIR: data/profiles
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=$(cd "${1:-$root/build}" && pwd)/ftax
outdir=$(mkdir -p "${2:-$root/data/profiles}" && cd "${2:-$root/data/profiles}" && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$root/validation/scripts/measured_runs.sh"
split=data/zoo/split.json
cal=$(python3 -c "import json;print(' '.join(json.load(open('$split'))['calibration']))")
ev=$(python3 -c "import json;print(' '.join(json.load(open('$split'))['evaluation']))")
# GPU name and the host run its shipped profile comes from (the newest timed without a profiler)
for pair in h200:validation/h200/2026-11-23p h100:validation/h100/2026-11-23q; do
  gpu=${pair%%:*}; run=${pair#*:}
  out=$work  # measured() unpacks FILE.json.xz there
  mapfile -t runs < <(measured "$run/torchscript-cudagraph.json" "$run/eager.json")
  bench="$run/bench.measurements.json"
  [ -f "$bench" ] || { xz -dc "$bench.xz" > "$work/$gpu-bench.json"; bench="$work/$gpu-bench.json"; }
  "$ftax" calibrate "$bench" -o "$work/$gpu-profile.json" > "$work/$gpu-calibrate.txt" 2>&1
  # shellcheck disable=SC2086  # the model lists are one argument per model
  "$ftax" validate "${runs[@]}" --profile "$work/$gpu-profile.json" --refined-profile "$work/$gpu-refined.json" \
    --refine-models $cal >/dev/null 2>&1
  # shellcheck disable=SC2086
  "$ftax" validate "${runs[@]}" --profile "$work/$gpu-refined.json" --report-models $ev --format json \
    > "$work/$gpu-report.json"
  python3 - "$work/$gpu-refined.json" "$work/$gpu-report.json" "$outdir/$gpu.json" "$split" "$run" "$work" <<'PY'
import json, os, sys
prof, rep, out, split, run, work = sys.argv[1:]
p = json.load(open(prof))


def in_repo(path):
    """A file this script unpacked into its scratch folder, named as the host run keeps it."""
    if not path.startswith(work + "/"):
        return path
    name = os.path.basename(path)
    if name.endswith("-bench.json"):
        name = "bench.measurements.json"
    name = name[len(run.replace("/", "_")) + 1:] if name.startswith(run.replace("/", "_") + "_") else name
    kept = os.path.join(run, name)
    return kept if os.path.exists(kept) else kept + ".xz"


for key in ("measurements", "refined_with"):
    p["provenance"][key] = [in_repo(x) for x in p["provenance"].get(key, [])]
r = json.load(open(rep))
reported = {row["model"] for row in r["rows"]}  # the evaluation models the run measured
acc = {"models": [m for m in json.load(open(split))["evaluation"] if m in reported],
       "measured": "fp16, batch 1-128, no profiler attached",
       "rule": "cuda-graph within ±10%; others within ±15% or inside the measured p10-p90"}
for f in r["frameworks"]:
    acc[f["framework"]] = {"rows": f["rows"], "within": f["within_or_inside"],
                           "median_abs_error_pct": round(f["median_abs_error_pct"], 1)}
p["provenance"]["accuracy"] = acc
p["provenance"]["host_run"] = run
json.dump(p, open(out + ".tmp", "w"), indent=2)
import os; os.replace(out + ".tmp", out)
print(out, {k: v for k, v in acc.items() if isinstance(v, dict)})
PY
done
