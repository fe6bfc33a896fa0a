// `ftax bench`: microbenchmarks of one GPU host, written as a measurement file.
//
// GPU side: each kernel class is swept over sizes and dtypes through LibTorch (so cuBLAS and
// cuDNN pick kernels as real runs do) and timed from CUPTI kernel records, and so are the
// convolution, pooling and layer-norm layers of a layer-shapes file (calibrate/layer_shapes.h),
// at the shapes real models' layers have. CPU side: chains of N tiny ops of one dispatch class per framework (LibTorch eager, TorchScript, CUDA graph
// replay, and Python eager through the host's python3), for several N, so that the cost per
// dispatch (slope) and per call (intercept) separate. Rows are written to the output file as
// they are measured; a point that fails (out of memory, unsupported dtype) is recorded under
// "failures" and the run goes on. An interrupted run keeps every finished row, and a rerun
// with `resume` measures only the rows the file lacks. Host times are taken with no profiler
// attached (CUPTI is detached while the host clock runs; kernel records are separate passes).
//
//   BenchOptions o; o.output = "h200.measurements.json"; o.quick = true;
//   Status s = RunBench(o, [](const std::string& line) { std::cerr << line << "\n"; });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "predictor/framework.h"

namespace ftax {

struct BenchOptions {
  int device = 0;
  std::vector<Framework> frameworks = CostFrameworks();  // each measured once
  std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
  std::vector<std::string> classes;  // empty: every kernel class
  bool quick = false;                // fewer sizes and repetitions
  bool kernels = true;               // run the kernel sweeps
  std::string output;                // measurement file (required)
  std::string python = "python3";    // interpreter for the pytorch-eager benchmark
  std::string eager_script;          // bench_eager.py to run; empty: the one beside the binary
  // Layer shapes to time (calibrate/layer_shapes.h): a file, empty for the one shipped beside
  // the binary (layer-shapes.json), "none" for no layer rows.
  std::string layer_shapes;
  bool resume = false;               // keep the rows an earlier run wrote to `output`
};

using ProgressFn = std::function<void(const std::string&)>;

// Needs LibTorch with CUDA; returns kUnsupported in builds without it.
Status RunBench(const BenchOptions& options, const ProgressFn& progress);

}  // namespace ftax
