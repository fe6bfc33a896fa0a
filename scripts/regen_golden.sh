#!/bin/sh
# Regenerates the expected outputs of the golden CLI tests (tests/golden/SUBCOMMAND/*.expected)
# from the current ftax binary. Never edit an .expected file by hand: change the code, run
# this, and review the diff.
#
#   scripts/regen_golden.sh [path/to/ftax]      (default: build/ftax)
#
# Each case SUBCOMMAND/NAME.cmd holds the arguments after `ftax SUBCOMMAND`, with paths
# relative to the repository root; NAME.expected holds stdout, stderr and the exit code in the
# format that tests/cli/golden_cli_test.cc compares, with paths under the checkout made relative
# to it (so the files are the same on every machine).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
ftax=${1:-$root/build/ftax}
case $ftax in /*) ;; *) ftax=$PWD/$ftax ;; esac
[ -x "$ftax" ] || { echo "regen_golden.sh: no ftax binary at $ftax" >&2; exit 2; }
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for cmd in tests/golden/*/*.cmd; do
  name=${cmd%.cmd}
  sub=$(basename "$(dirname "$cmd")")
  set +e
  # shellcheck disable=SC2046
  "$ftax" "$sub" $(cat "$cmd") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
  {
    echo "# ftax $sub $(cat "$cmd")"
    echo "# exit: $rc"
    echo "# stdout:"
    cat "$tmp/out"
    echo "# stderr:"
    cat "$tmp/err"
  } | sed "s|$root/||g" >"$name.expected"
  n=$((n + 1))
done
echo "regenerated $n golden files in tests/golden"
