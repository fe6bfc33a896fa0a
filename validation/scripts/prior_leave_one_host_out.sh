#!/usr/bin/env bash
# How well a host that no model has run on is predicted with a prior from other hosts
# (`ftax validate --refine prior`, validation/campaigns.md "A prior for new hosts"): for every
# self-benchmarked host run of validation/hosts.txt, its bench-only profile with framework costs scaled by
# the median of the scales the OTHER host runs' refinements recorded (validation/*/*/profile-refined.json),
# against its measured runs. PRIOR=same takes only host runs of the same GPU type (the profile
# name's first four letters, h100/h200), PRIOR=all every other host run. No GPU needed.
#   validation/scripts/prior_leave_one_host_out.sh [BUILD_DIR]      (reports in $REPORTS, default /tmp/ftax-prior)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
out=${REPORTS:-/tmp/ftax-prior}
mode=${PRIOR:-same}
mkdir -p "$out"
source "$root/validation/scripts/measured_runs.sh"
# The first two host runs ran before their hosts were benchmarked for themselves: not in the prior.
# Only host runs refined on their own model runs (profile-refined.json) take part: the later
# ones were measured to be predicted from a prior, never refined.
mapfile -t all_runs < <(grep -v '^#' validation/hosts.txt | grep . | tail -n +3)
runs=()
for run in "${all_runs[@]}"; do
  read -r _ bench _ <<<"$run"
  [ -f "$bench/profile-refined.json" ] && [ -f "$bench/profile.json" ] && runs+=("$run")
done
echo "host runs with a refined profile: ${#runs[@]} of ${#all_runs[@]}" >&2
for run in "${runs[@]}"; do
  read -r h bench campaign <<<"$run"
  prior=()
  for other in "${runs[@]}"; do
    read -r o obench _ <<<"$other"
    [ "$o" = "$h" ] && continue
    [ "$mode" = same ] && [ "${o:0:4}" != "${h:0:4}" ] && continue
    prior+=("$obench/profile-refined.json")
  done
  mapfile -t m < <(measured "$campaign/torchscript-cudagraph.json" "$campaign/eager.json")
  "$ftax" validate "${m[@]}" --profile "$bench/profile.json" \
    --refine prior --prior "${prior[@]}" --format json > "$out/$h-prior-$mode.json"
done
python3 - "$out" "$mode" "${runs[@]}" <<'PY'
import json, sys
out, mode, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"| host run | cuda-graph within ±10% | torchscript within ±15% or p10–p90 (alone) | "
      f"pytorch-eager, same (alone) | bound agrees (ts / eager) | crossover within 2x |")
print("|---|---|---|---|---|---|")
tot = [0] * 12
for run in runs:
    h = run.split()[0]
    rep = json.load(open(f"{out}/{h}-prior-{mode}.json"))
    f = {x["framework"]: x for x in rep["frameworks"]}
    none = {"within_tolerance": 0, "within_or_inside": 0, "bound_agrees": 0, "rows": 0}
    cg, ts, ea = (f.get(k, none) for k in ("cuda-graph", "torchscript", "pytorch-eager"))
    cx = sum(c["agrees"] for c in rep["crossovers"])
    vals = [cg["within_tolerance"], ts["within_or_inside"], ts["within_tolerance"],
            ea["within_or_inside"], ea["within_tolerance"], ts["bound_agrees"], ea["bound_agrees"], cx,
            cg["rows"], ts["rows"], ea["rows"], len(rep["crossovers"])]
    tot = [a + b for a, b in zip(tot, vals)]
    print(f"| {h} | {vals[0]}/{cg['rows']} | {vals[1]}/{ts['rows']} ({vals[2]}) | "
          f"{vals[3]}/{ea['rows']} ({vals[4]}) | {vals[5]} / {vals[6]} | {cx}/{len(rep['crossovers'])} |")
print(f"| all | {tot[0]}/{tot[8]} | {tot[1]}/{tot[9]} ({tot[2]}) | {tot[3]}/{tot[10]} ({tot[4]}) | "
      f"{tot[5]} / {tot[6]} | {tot[7]}/{tot[11]} |")
PY
