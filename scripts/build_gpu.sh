#!/usr/bin/env bash
# Builds the GPU-side ftax (LibTorch + CUDA + CUPTI: bench, validate) on a CUDA host whose
# python3 has PyTorch, in one go. libonnx and Ceres are optional there: fitting
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
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFTAX_WITH_TORCH=ON -DFTAX_WITH_CUDA=ON \
  -DFTAX_BUILD_TESTS=OFF -DFTAX_BUILD_BENCH=OFF -DTorch_DIR="$torch_prefix/Torch" "${prefix_args[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$build.cmake.log" 2>&1 || { tail -30 "$build.cmake.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target ftax 2>&1 | tail -5
echo "built $build/ftax"
