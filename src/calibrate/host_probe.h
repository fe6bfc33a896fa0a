// The host probe: how fast the host's CPU side runs right now, from C++. It times LibTorch's
// chain of 64 `x = x + 1` on an 8x8 CUDA tensor (each op one tiny kernel, so the host is the
// bound; the bench's libtorch-eager "kernel" chain of 64 times the same), the median of five
// chains, in microseconds per op. A shared host's CPU switches between speeds about 1.5x apart
// (docs/validation.md), and the probe moves with it: `ftax validate` reads it before every
// visit of a TorchScript or CUDA-graph point (the row's host_probe_us) and `ftax bench` around
// every chain it times in C++, so that `ftax calibrate` can bring those chains to the host's
// fast state (calibrate/cpu_gauge.h) as it does the Python ones with scripts/cpu_gauge.py.
//
//   const at::Tensor x0 = at::randn({8, 8}, at::TensorOptions().device(at::kCUDA));
//   double us = HostProbeUs(x0);   // ~6-7 us per op on a fast H200 host
//
// CUDA builds only (host_probe_cuda.cc).
#pragma once

#include <ATen/ATen.h>

namespace ftax {

double HostProbeUs(const at::Tensor& x0);

}  // namespace ftax
