#!/usr/bin/env bash
# Regenerates the generated block of docs/validation.md (between the BEGIN zoo_report and END
# zoo_report markers) from the host-run report the BEGIN marker names; never edit it by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 "$root/validation/scripts/validation_summary.py" --write "$root/docs/validation.md"
