#!/usr/bin/env bash
# Refits every host run's profile from its bench (validation/GPU/RUN/bench.measurements.json,
# calibrated without a prior: the way the host runs before 2026-11-25 were made) and recomputes
# the validation reports and plots from its runs (no GPU needed). Prints the summary tables.
# Host runs are listed in validation/hosts.txt.
#   validation/scripts/regen_profiles_and_reports.sh [BUILD_DIR]
# Env: REPORTS (/tmp/ftax-reports): where everything is written: HOST-profile.json,
# HOST-calibrate.txt, HOST-profile-refined.json, HOST-validation.png and the reports. The stored
# host runs are left as they are: their refined profiles are the prior every later host run
# is predicted with (`ftax calibrate --prior`), and a refit here would change it. IN_PLACE=1
# writes the profiles, calibrate.txt and plots into validation/ instead, over the stored ones.
# ONLY: a space-separated list of host-run names (hosts.txt's first column) to redo alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
mapfile -t runs < <(grep -v '^#' validation/hosts.txt | grep .)
cal=$(python3 -c "import json;print(','.join(json.load(open('data/zoo/split.json'))['calibration']))")
out=${REPORTS:-/tmp/ftax-reports}
mkdir -p "$out"
[ "${IN_PLACE:-0}" = 1 ] && mkdir -p validation/img
source "$root/validation/scripts/measured_runs.sh"
for run in "${runs[@]}"; do
  read -r h bench campaign <<<"$run"
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $h "* ]]; then continue; fi
  if [ "${IN_PLACE:-0}" = 1 ]; then
    profile="$bench/profile.json" calreport="$bench/calibrate.txt" refined="$bench/profile-refined.json"
    plot="validation/img/$h-validation.png"
  else
    profile="$out/$h-profile.json" calreport="$out/$h-calibrate.txt" refined="$out/$h-profile-refined.json"
    plot="$out/$h-validation.png"
  fi
  b="$bench/bench.measurements.json"
  if [ ! -f "$b" ] && [ -f "$b.xz" ]; then  # older host runs keep their bench xz-compressed
    xz -dc "$b.xz" > "$out/$h-bench.measurements.json"
    b="$out/$h-bench.measurements.json"
  fi
  if [ ! -f "$b" ]; then echo "== $h: no bench ($b), skipped" >&2; continue; fi
  "$ftax" calibrate "$b" -o "$profile" > "$calreport" 2>&1
  mapfile -t m < <(measured "$campaign/torchscript-cudagraph.json" "$campaign/eager.json")
  if [ -z "${m[*]}" ]; then echo "== $h: no model runs, profile only ($profile)" >&2; continue; fi
  # Framework costs are refined on the calibration models of data/zoo/split.json only.
  "$ftax" validate "${m[@]}" --profile "$profile" --refined-profile "$refined" \
    --refine-models "$cal" --format json > "$out/$h-none.json"
  "$ftax" validate "${m[@]}" --profile "$profile" --refine leave-one-model-out --format json \
    --plot "$plot" > "$out/$h-loo.json"
  for r in none loo; do python3 validation/scripts/validation_tables.py "$out/$h-$r.json" > "$out/$h-$r.md"; done
  python3 validation/scripts/findings_tables.py "$out/$h-loo.json" > "$out/$h-findings.md"
  echo "== $h"; cat "$out/$h-none.md" "$out/$h-loo.md"
done
# The findings once per self-benchmarked host run (all runs but the first two), named by letter.
args=()
for run in "${runs[@]:2}"; do h=${run%% *}; [ -f "$out/$h-loo.json" ] && args+=("${h:4}=$out/$h-loo.json"); done
python3 validation/scripts/findings_across_hosts.py "${args[@]}" > "$out/findings-across-hosts.md"
echo "== findings across host runs"; cat "$out/findings-across-hosts.md"
