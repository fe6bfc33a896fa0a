// The work list: what a framework makes the CPU and the GPU do for one inference.
//
// Lowering (lowering.h) turns a Graph into a WorkList for one framework and precision: CPU
// dispatches in program order, each with a dispatch class, and the GPU kernels each dispatch
// launches, with the FLOPs, bytes and GEMM-like shape the kernel cost model needs. The
// pipeline simulation (pipeline.h) prices it with a host profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "predictor/framework.h"

namespace ftax {

struct KernelWork {
  KernelClass cls = KernelClass::kElementwise;
  DType dtype = DType::kFloat32;
  double flops = 0;
  double bytes = 0;  // bytes read + written in device memory
  // GEMM-like problem shape for tile/wave quantization (m x n outputs, depth k, batch
  // independent problems); zero where it does not apply.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int op_index = -1;  // graph op it came from (-1: framework-added)
};

struct DispatchWork {
  DispatchClass cls = DispatchClass::kKernel;
  int op_index = -1;
  int first_kernel = 0;  // kernels [first_kernel, first_kernel + num_kernels) in WorkList
  int num_kernels = 0;
};

struct WorkList {
  std::vector<DispatchWork> dispatches;
  std::vector<KernelWork> kernels;
  int module_calls = 0;  // nn.Module __call__s (Python eager only)
  std::vector<std::string> notes;  // approximations made while lowering
};

}  // namespace ftax
