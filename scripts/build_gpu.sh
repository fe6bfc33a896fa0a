#!/usr/bin/env bash
# Builds the GPU-side ftax (LibTorch + CUDA + CUPTI: bench, validate) on a CUDA host whose
# python3 has PyTorch, in one go: BUILD_DIR/ftax, which hands bench, validate and TorchScript
# files to BUILD_DIR/libexec/ftax/ftax-torch. libonnx and Ceres are optional there: fitting
# (`ftax calibrate`) and ONNX inspection can run on any other machine.
#   scripts/build_gpu.sh [BUILD_DIR]        (default build-gpu)
# Header-only nlohmann-json is taken from .deps/*.deb (unpacked into .deps/prefix) when the
# host has no nlohmann_json CMake package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu}
prefix_args=()
if ! ls /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json /usr/share/nlohmann_json 2>/dev/null | grep -q .; then
  if ls "$root"/.deps/nlohmann-json3-dev_*.deb >/dev/null 2>&1; then
    mkdir -p "$root/.deps/prefix"
    for f in "$root"/.deps/*.deb; do dpkg -x "$f" "$root/.deps/prefix"; done
    prefix_args+=("-DCMAKE_PREFIX_PATH=$root/.deps/prefix/usr")
  fi
fi
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
# The GPU image's default C++ compiler (/opt/gcc) links libstdc++ statically: the binary then
# holds a second libstdc++ beside LibTorch's shared one, and objects that cross (a
# std::stringstream inside TorchScript's compiler) are freed by the wrong copy ("free():
# invalid pointer" in `ftax bench`). The system g++ links the shared one.
compiler_args=()
if [ -x /usr/bin/g++ ]; then
  compiler_args+=(-DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++)
  # A cache made with another compiler would be reset by CMake, dropping the options below.
  if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=/usr/bin/g++$' "$build/CMakeCache.txt"; then
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
  fi
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFTAX_WITH_TORCH=ON -DFTAX_WITH_CUDA=ON \
  -DFTAX_BUILD_TESTS=OFF -DFTAX_BUILD_BENCH=OFF -DTorch_DIR="$torch_prefix/Torch" "${prefix_args[@]}" "${compiler_args[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$build.cmake.log" 2>&1 || { tail -30 "$build.cmake.log"; exit 1; }
# The target ftax builds both binaries: ftax (no LibTorch, starts at once) and
# libexec/ftax/ftax-torch (LibTorch, CUDA, CUPTI), to which ftax hands bench, validate and
# TorchScript files; run $build/ftax as before.
cmake --build "$build" -j"$(nproc)" --target ftax 2>&1 | tail -5
[ -x "$build/libexec/ftax/ftax-torch" ] || { echo "no $build/libexec/ftax/ftax-torch: LibTorch not linked?" >&2; exit 1; }
echo "built $build/ftax (and $build/libexec/ftax/ftax-torch)"
