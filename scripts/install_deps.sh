#!/usr/bin/env bash
# Installs what ftax needs to build and test on a Debian/Ubuntu machine (skips what is there).
# Debian's libtorch-dev (1.13, CPU) serves the TorchScript loader and its tests; the CUDA parts
# (bench, validate) need the PyTorch wheel's LibTorch on the GPU host (scripts/build_gpu.sh).
set -euo pipefail
# xz-utils: the parity corpus (tests/data/parity) and older host runs' files are xz-compressed.
pkgs=(build-essential cmake pkg-config libonnx-dev libprotobuf-dev protobuf-compiler libceres-dev
      libcli11-dev nlohmann-json3-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
      gnuplot-nox libonnx-testdata python3 libtorch-dev pybind11-dev python3-dev clang-14 libclang-rt-14-dev
      xz-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# pytest for the Python module's tests, for the python3 that CMake finds first.
python3 -c 'import pytest' 2>/dev/null || python3 -m pip install -q pytest
