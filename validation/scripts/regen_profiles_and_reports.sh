#!/usr/bin/env bash
# Refits every host run's profile from its bench (validation/GPU/RUN/bench.measurements.json)
# and recomputes the validation reports and plots from its runs (no GPU needed). Prints the
# summary tables. Host runs are listed in validation/hosts.txt.
#   validation/scripts/regen_profiles_and_reports.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
mapfile -t runs < <(grep -v '^#' validation/hosts.txt | grep .)
cal=$(python3 -c "import json;print(','.join(json.load(open('data/zoo/split.json'))['calibration']))")
out=${REPORTS:-/tmp/ftax-reports}
mkdir -p "$out" validation/img
source "$root/validation/scripts/measured_runs.sh"
for run in "${runs[@]}"; do
  read -r h bench campaign <<<"$run"
  b="$bench/bench.measurements.json"
  if [ ! -f "$b" ] && [ -f "$b.xz" ]; then  # older host runs keep their bench xz-compressed
    xz -dc "$b.xz" > "$out/$h-bench.measurements.json"
    b="$out/$h-bench.measurements.json"
  fi
  "$ftax" calibrate "$b" -o "$bench/profile.json" > "$bench/calibrate.txt" 2>&1
  mapfile -t m < <(measured "$campaign/torchscript-cudagraph.json" "$campaign/eager.json")
  # Framework costs are refined on the calibration models of data/zoo/split.json only.
  "$ftax" validate "${m[@]}" --profile "$bench/profile.json" --refined-profile "$bench/profile-refined.json" \
    --refine-models "$cal" --format json > "$out/$h-none.json"
  "$ftax" validate "${m[@]}" --profile "$bench/profile.json" --refine leave-one-model-out --format json \
    --plot "validation/img/$h-validation.png" > "$out/$h-loo.json"
  for r in none loo; do python3 validation/scripts/validation_tables.py "$out/$h-$r.json" > "$out/$h-$r.md"; done
  python3 validation/scripts/findings_tables.py "$out/$h-loo.json" > "$out/$h-findings.md"
  echo "== $h"; cat "$out/$h-none.md" "$out/$h-loo.md"
done
# The findings once per self-benchmarked host run (all runs but the first two), named by letter.
args=()
for run in "${runs[@]:2}"; do h=${run%% *}; args+=("${h:4}=$out/$h-loo.json"); done
python3 validation/scripts/findings_across_hosts.py "${args[@]}" > "$out/findings-across-hosts.md"
echo "== findings across host runs"; cat "$out/findings-across-hosts.md"
