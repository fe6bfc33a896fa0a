#!/usr/bin/env bash
# Refits the shipped profiles from data/measurements and recomputes the validation reports
# and plots of docs/ from data/validation (no GPU needed). Prints the summary tables.
#   scripts/regen_profiles_and_reports.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
# profile name : measurement file : validation campaign (data/validation/CAMPAIGN.*.json), one
# loan per line of data/loans.txt
mapfile -t runs < <(grep -v '^#' data/loans.txt | grep .)
out=${REPORTS:-/tmp/ftax-reports}
mkdir -p "$out"
for run in "${runs[@]}"; do
  IFS=: read -r h meas campaign <<<"$run"
  "$ftax" calibrate "data/measurements/$meas.measurements.json" -o "data/profiles/$h.json" \
    > "data/profiles/$h.calibrate.txt" 2>&1 || true
  m=(--measured "data/validation/$campaign.torchscript-cudagraph.json"
     --measured "data/validation/$campaign.eager.json")
  "$ftax" validate "${m[@]}" --profile "data/profiles/$h.json" --refined-profile "data/profiles/$h-refined.json" \
    --format json > "$out/$h-none.json"
  "$ftax" validate "${m[@]}" --profile "data/profiles/$h.json" --refine leave-one-model-out --format json \
    --plot "docs/img/$h-validation.png" > "$out/$h-loo.json"
  for r in none loo; do python3 scripts/validation_tables.py "$out/$h-$r.json" > "$out/$h-$r.md"; done
  python3 scripts/findings_tables.py "$out/$h-loo.json" > "$out/$h-findings.md"
  echo "== $h"; cat "$out/$h-none.md" "$out/$h-loo.md"
done
# The findings once per self-benchmarked loan (all runs but the first two), named by letter.
args=()
for run in "${runs[@]:2}"; do h=${run%%:*}; args+=("${h:4}=$out/$h-loo.json"); done
python3 scripts/findings_across_loans.py "${args[@]}" > "$out/findings-across-loans.md"
echo "== findings across loans"; cat "$out/findings-across-loans.md"
