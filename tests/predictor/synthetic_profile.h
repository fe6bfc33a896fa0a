// A SYNTHETIC host profile for tests: made-up numbers of plausible size, marked
// synthetic=true, describing no real GPU. Never ship it or compare it with measurements.
#pragma once

#include "predictor/host_profile.h"

namespace ftax::testing {

inline HostProfile SyntheticProfile(double dispatch_us = 10, double gemm_tflops = 100) {
  HostProfile p;
  p.synthetic = true;
  p.host = {{"gpu", "synthetic test GPU"}};
  p.gpu.num_sms = 100;
  p.gpu.kernel_gap_us = Param::Of(1.0, 0.1);
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (KernelClass c : AllKernelClasses()) {
      KernelParams k;
      k.floor_us = Param::Of(3.0, 0.2);
      k.bandwidth_gbps = Param::Of(2000, 50);
      if (IsComputeClass(c)) k.rate_tflops = Param::Of(d == DType::kFloat32 ? gemm_tflops / 8 : gemm_tflops, 5);
      p.gpu.kernels[KernelKey(c, d)] = k;
    }
  }
  for (Framework f : AllFrameworks()) {
    FrameworkParams fp;
    fp.call_us = Param::Of(20, 1);
    double scale = f == Framework::kPytorchEager ? 1.0 : f == Framework::kTorchscript ? 0.5 : 0.3;
    fp.dispatch_us[int(DispatchClass::kView)] = Param::Of(dispatch_us * scale * 0.5, 0.2);
    fp.dispatch_us[int(DispatchClass::kKernel)] = Param::Of(dispatch_us * scale, 0.3);
    fp.dispatch_us[int(DispatchClass::kLibrary)] = Param::Of(dispatch_us * scale * 1.5, 0.4);
    fp.module_us = Param::Of(f == Framework::kPytorchEager ? 5 : 0, 0.5);
    fp.node_gap_us = Param::Of(1.0, 0.1);
    p.frameworks[FrameworkName(f)] = fp;
  }
  return p;
}

// The work of one GEMM of m x n outputs over depth k (fp16 unless said), as the lowering
// describes it.
inline KernelWork GemmWork(int64_t m, int64_t n, int64_t k,
                           KernelVariant v = KernelVariant::kPlain, DType dtype = DType::kFloat16) {
  KernelWork w;
  w.cls = KernelClass::kGemm;
  w.dtype = dtype;
  w.m = m;
  w.n = n;
  w.k = k;
  w.variant = v;
  w.flops = 2.0 * double(m) * double(n) * double(k);
  w.bytes = 2.0 * double(m * k + n * k + m * n);
  return w;
}

}  // namespace ftax::testing
