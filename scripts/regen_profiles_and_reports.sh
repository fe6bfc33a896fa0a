#!/usr/bin/env bash
# Refits the shipped profiles from data/measurements and recomputes the validation reports
# and plots of docs/ from data/validation (no GPU needed). Prints the summary tables.
#   scripts/regen_profiles_and_reports.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ftax=${1:-$root/build}/ftax
cd "$root"
declare -A meas=([h200]=h200-2026-11-22b [h100]=h100-2026-11-22)
out=${REPORTS:-/tmp/ftax-reports}
mkdir -p "$out"
for h in h200 h100; do
  "$ftax" calibrate "data/measurements/${meas[$h]}.measurements.json" -o "data/profiles/$h.json" --force \
    > "data/profiles/$h.calibrate.txt" 2>&1 || true
  m=(--measured "data/validation/$h-2026-11-22.torchscript-cudagraph.json"
     --measured "data/validation/$h-2026-11-22.eager.json")
  "$ftax" validate "${m[@]}" --profile "data/profiles/$h.json" --refined-profile "data/profiles/$h-refined.json" \
    --format json > "$out/$h-none.json"
  "$ftax" validate "${m[@]}" --profile "data/profiles/$h.json" --refine leave-one-model-out --format json \
    --plot "docs/img/$h-validation.png" > "$out/$h-loo.json"
  for r in none loo; do python3 scripts/validation_tables.py "$out/$h-$r.json" > "$out/$h-$r.md"; done
  python3 scripts/findings_tables.py "$out/$h-loo.json" > "$out/$h-findings.md"
  echo "== $h"; cat "$out/$h-none.md" "$out/$h-loo.md"
done
