#!/usr/bin/env bash
# A short run of the fuzz targets, part of the test suite (ctest fuzz_short_run): builds
# inspect_fuzz (ONNX loader, shape inference, counting) and profile_fuzz (the readers of
# profiles, measurement files and layer-shapes files) with clang, ASan, UBSan and libFuzzer
# into BUILD_DIR (default build-fuzz beside the source), then runs each over its seeds for a
# fixed number of inputs with a fixed random seed (FUZZ_RUNS, default 60000 and 4000: tens of
# seconds on one core), so that a run is the same on every machine and a failure can be
# replayed.
# Any crash, leak, undefined behaviour or timeout fails the test; so does a build error. Inputs
# that once found a bug are kept in tests/fuzz/regressions/ and run first, every time.
# Exits 77 (ctest: skipped) when clang-14 or its fuzzer runtime is not installed.
# The long runs (10 minutes each) and their results: validation/fuzz-runs.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
runs=${FUZZ_RUNS:-}
command -v clang++-14 >/dev/null || { echo "clang++-14 not installed: skipped"; exit 77; }
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  { echo "libclang-rt-14-dev (libFuzzer) not installed: skipped"; exit 77; }
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -DFTAX_FUZZ=ON -DFTAX_BUILD_TESTS=OFF \
    -DFTAX_BUILD_BENCH=OFF -DFTAX_WITH_CERES=OFF -DFTAX_WITH_TORCH=OFF -DFTAX_WITH_PYTHON=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$build.cmake.log" 2>&1 || { tail -20 "$build.cmake.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" --target inspect_fuzz profile_fuzz 2>&1 | tail -3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/onnx" "$work/profile"
cd "$work"
echo "inspect_fuzz: ${runs:-60000} inputs"
"$build/tests/fuzz/inspect_fuzz" -seed=1 -runs="${runs:-60000}" -max_len=65536 -print_final_stats=1 \
  "$work/onnx" "$root/tests/fuzz/regressions" "$root/tests/data/onnx" "$root/tests/data/onnx/bad" \
  "$root/tests/hostile/cases" 2>&1 | tail -12
echo "profile_fuzz: ${runs:-4000} inputs"
"$build/tests/fuzz/profile_fuzz" -seed=1 -runs="${runs:-4000}" -max_len=1048576 -print_final_stats=1 \
  "$work/profile" "$root/data/profiles" "$root/tests/data/measurements" "$root/tests/hostile/cases" \
  "$root/data/zoo" 2>&1 | tail -12
echo "no findings"
