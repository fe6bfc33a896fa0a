#!/usr/bin/env bash
# Makes the shipped profile of each GPU (data/profiles/GPU.json) from a host run's bench,
# fitted with the prior of the host runs that docs/validation.md predicts every host with
# (their refined profiles: framework costs learned on calibration models only), which is how
# every accuracy figure of docs/validation.md is made. Its accuracy on the evaluation models of
# data/zoo/split.json (never fitted on) is measured on the stored rows of a host run of the
# same GPU (the bench's own where it ran the models, else another's) and recorded in
# provenance.accuracy, the bench's host run in provenance.host_run. No GPU needed; the host
# runs' own files are left as they are. A zoo run's rows name their traces
# data/models/NAME.fp16.pt, so the comparison runs from TRACES_DIR (default: the checkout), a
# folder whose data/models/ holds them (unpack validation/h200/2026-11-26ai/models.tar.xz
# there); `ftax validate` skips a row whose trace is missing, and provenance.accuracy lists the
# models it compared.
#   [TRACES_DIR=DIR] validation/scripts/ship_profiles.sh [BUILD_DIR] [OUT_DIR]    # OUT_DIR: data/profiles
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=$(cd "${1:-$root/build}" && pwd)/ftax
outdir=$(mkdir -p "${2:-$root/data/profiles}" && cd "${2:-$root/data/profiles}" && pwd)
traces=$(cd "${TRACES_DIR:-$root}" && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$root/validation/scripts/measured_runs.sh"
split=data/zoo/split.json
ev=$(python3 -c "import json;print(' '.join(json.load(open('$split'))['evaluation']))")
prior=(validation/h200/2026-11-23p/profile-refined.json validation/h100/2026-11-23q/profile-refined.json
       validation/h100/2026-11-25s/profile-refined.json validation/h100/2026-11-25u/profile-refined.json
       validation/h100/2026-11-26av/profile-refined.json validation/h200/2026-11-26aw/profile-refined.json)
# GPU name, the host run its bench comes from and the host runs whose model runs measure its
# accuracy ('+' between them). The bench is one of that GPU in all three dtypes, with every row
# of this version, checked on the stored runs of the other host runs of its GPU
# (data/profiles/README.md): ct's for the H200 (the first with torch.compile's module and input
# chains, which the default mode's price needs; it trades Python eager points for torch.compile
# ones: on the stored runs of au, ay, bi, bk, bn, bu and bz it put CUDA graphs 337 of 364 points
# right, TorchScript 121 of 246 and Python eager 241 of 430, where bv's bench, shipped before
# it, had 336, 125 and 259; on those of cd, ce, ch, ck, cm and cs torch.compile's default mode
# 42 of 84 and reduce-overhead 40 of 64, where bv's had 39 and 24), with bu's runs of CUDA
# graphs, TorchScript and Python eager and its own of Python eager and torch.compile; by's for
# the H100 (every row, the gap's
# chains among them, with its own model runs: on the stored runs of av, bh, bj, bp and bx it
# predicted CUDA graphs 227 of 242 points right, TorchScript 64 of 158 and Python eager 137 of
# 274, where bl's bench, shipped before it, had 221, 55 and 120; bw's timed its op mix while
# its CPU ran slow; bo's read 1.94x).
for spec in h200:validation/h200/2026-11-28ct:validation/h200/2026-11-27bu+validation/h200/2026-11-28ct \
            h100:validation/h100/2026-11-27by:validation/h100/2026-11-27by; do
  gpu=${spec%%:*}; rest=${spec#*:}; run=${rest%%:*}; rows=${rest#*:}
  out=$work  # measured() unpacks FILE.json.xz there
  runs=()
  for r in ${rows//+/ }; do
    mapfile -t -O "${#runs[@]}" runs < <(measured "$root/$r/torchscript-cudagraph.json" "$root/$r/eager.json" "$root/$r/compile.json")
  done
  bench="$run/bench.measurements.json"
  [ -f "$bench" ] || { xz -dc "$bench.xz" > "$work/$gpu-bench.json"; bench="$work/$gpu-bench.json"; }
  "$ftax" calibrate "$bench" --prior "${prior[@]}" -o "$work/$gpu-profile.json" > "$work/$gpu-calibrate.txt" 2>&1
  # shellcheck disable=SC2086  # the model list is one argument per model
  (cd "$traces" && "$ftax" validate "${runs[@]}" --profile "$work/$gpu-profile.json" --report-models $ev \
    --format json) > "$work/$gpu-report.json" 2>"$work/$gpu-report.err"
  python3 - "$work/$gpu-profile.json" "$work/$gpu-report.json" "$outdir/$gpu.json" "$split" "$run" "$work" "$rows" <<'PY'
import json, os, sys
prof, rep, out, split, run, work, rows = sys.argv[1:]
p = json.load(open(prof))


def in_repo(path):
    """A file this script unpacked into its scratch folder, named as the host run keeps it."""
    if not path.startswith(work + "/"):
        return path
    kept = os.path.join(run, "bench.measurements.json")
    return kept if os.path.exists(kept) else kept + ".xz"


p["provenance"]["measurements"] = [in_repo(x) for x in p["provenance"].get("measurements", [])]
r = json.load(open(rep))
reported = {row["model"] for row in r["rows"]}  # the evaluation models the run measured
acc = {"models": [m for m in json.load(open(split))["evaluation"] if m in reported],
       "measured": "fp16, batch 1 and 8, no profiler attached",
       "rows_of": ", ".join(r + (" (the bench's own host run)" if r == run else " (another host of this GPU)")
                            for r in rows.split("+")),
       "rule": "CUDA graphs within ±10%; others within ±15% or inside the measured p10-p90"}
for f in r["frameworks"]:
    acc[f["framework"]] = {"rows": f["rows"], "within": f["within_or_inside"],
                           "median_abs_error_pct": round(f["median_abs_error_pct"], 1)}
p["provenance"]["accuracy"] = acc
p["provenance"]["host_run"] = run
json.dump(p, open(out + ".tmp", "w"), indent=1)
os.replace(out + ".tmp", out)
print(out, {k: v for k, v in acc.items() if isinstance(v, dict)})
PY
done
