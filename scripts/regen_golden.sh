#!/bin/sh
# Regenerates the expected outputs of the golden CLI tests (tests/golden/inspect/*.expected)
# from the current ftax binary. Never edit an .expected file by hand: change the code, run
# this, and review the diff.
#
#   scripts/regen_golden.sh [path/to/ftax]      (default: build-onnx/ftax)
#
# Each case NAME.cmd holds the arguments after `ftax inspect`, with paths relative to the
# repository root; NAME.expected holds stdout, stderr and the exit code in the format that
# tests/cli/inspect_golden_test.cc compares.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
ftax=${1:-$root/build-onnx/ftax}
case $ftax in /*) ;; *) ftax=$PWD/$ftax ;; esac
[ -x "$ftax" ] || { echo "regen_golden.sh: no ftax binary at $ftax" >&2; exit 2; }
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for cmd in tests/golden/inspect/*.cmd; do
  name=${cmd%.cmd}
  # shellcheck disable=SC2046
  set +e
  "$ftax" inspect $(cat "$cmd") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
  {
    echo "# ftax inspect $(cat "$cmd")"
    echo "# exit: $rc"
    echo "# stdout:"
    cat "$tmp/out"
    echo "# stderr:"
    cat "$tmp/err"
  } >"$name.expected"
  n=$((n + 1))
done
echo "regenerated $n golden files in tests/golden/inspect"
