#!/usr/bin/env bash
# How the relative op scales (docs/calibration.md, "Relative op scales") carry to hosts they
# were not fitted on: each host run's bench is calibrated with the prior of host runs p, q, s
# and u, then again with the refined profiles of the host runs whose calibration models taught
# op scales (REFINED, each left out for its own host run), and both are compared with that
# host run's evaluation-model runs. Prints one line per host run and framework; no GPU needed.
# Run from a folder whose data/models/ holds the traces the rows name (host run ai's
# models.tar.xz, validation/h200/2026-11-26ai/).
#   validation/scripts/op_scales_across_hosts.sh [BUILD_DIR]
# Env: HOSTS (host runs, default the ones with per-op TorchScript costs), REFINED (refined
# profiles carrying op scales), CPU_SPEED (profile or row: `ftax validate --cpu-speed`).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=$(cd "${1:-$root/build}" && pwd)/ftax
v=$root/validation
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$v/scripts/measured_runs.sh"
base=("$v/h200/2026-11-23p/profile-refined.json" "$v/h100/2026-11-23q/profile-refined.json"
      "$v/h100/2026-11-25s/profile-refined.json" "$v/h100/2026-11-25u/profile-refined.json")
read -r -a hosts <<<"${HOSTS:-h200/2026-11-26ap h200/2026-11-26aq h200/2026-11-26as h100/2026-11-26at h200/2026-11-26au h100/2026-11-26av h200/2026-11-26aw}"
read -r -a refined <<<"${REFINED:-h100/2026-11-26av/profile-refined.json h200/2026-11-26aw/profile-refined.json}"
ev=$(python3 "$root/scripts/model_zoo.py" --side evaluation | tr , ' ')
summary() {
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" | ".join("%s %d/%d (%.1f%%)" % (f["framework"], f["within_or_inside"], f["rows"], f["median_abs_error_pct"])
                 for f in r["frameworks"]))' "$1"
}
for h in "${hosts[@]}"; do
  d=$v/$h
  name=${h##*/}
  b=$d/bench.measurements.json
  [ -f "$b" ] || { xz -dc "$b.xz" > "$out/$name-bench.json"; b=$out/$name-bench.json; }
  mapfile -t m < <(measured "$d/torchscript-cudagraph.json" "$d/eager.json")
  others=()
  for r in "${refined[@]}"; do [[ $r == "$h/"* ]] || others+=("$v/$r"); done
  for prior in base op-scales; do
    p=("${base[@]}")
    [ $prior = op-scales ] && p+=("${others[@]}")
    "$ftax" calibrate "$b" -o "$out/$name-$prior.json" --prior "${p[@]}" > /dev/null 2>&1
    # shellcheck disable=SC2086  # one argument per model
    "$ftax" validate "${m[@]}" --profile "$out/$name-$prior.json" --report-models $ev \
      --cpu-speed "${CPU_SPEED:-profile}" --format json > "$out/$name-$prior-report.json" 2>/dev/null
    printf '%s %-9s (%d refined): %s\n' "$name" "$prior" "$(( ${#p[@]} - ${#base[@]} ))" \
      "$(summary "$out/$name-$prior-report.json")"
  done
done
