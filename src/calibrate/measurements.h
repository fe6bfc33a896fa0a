// Measurement files: the raw, versioned output of `ftax bench` (and of the Python eager
// benchmark it drives), input to `ftax calibrate`.
//
// Format (JSON, docs/calibration.md):
// {
//   "schema_version": 1, "kind": "ftax-measurements",
//   "host": {"gpu": "NVIDIA H200", "sm_count": 132, "torch": "2.11.0", ...},
//   "kernels": [   // one row per microbenchmark point, kernel time from CUPTI records
//     {"class": "gemm", "dtype": "fp16", "label": "gemm 128x768x768",
//      "m": 128, "n": 768, "k": 768, "batch": 1, "flops": 1.5e8, "bytes": 2.6e6,
//      "kernels_per_call": 1, "kernel_us": {"median": 7.1, "p10": 7.0, "p90": 7.3}}
//   ],
//   "dispatch": [  // chains of n_ops tiny ops of one dispatch class run by one framework
//     {"framework": "libtorch-eager", "class": "kernel", "n_ops": 64, "modules": 0,
//      "call_us": {"median": .., "p10": .., "p90": ..},     // host time of one call, synced
//      "gpu_kernel_us": ..,   // sum of CUPTI kernel durations per call (null if unknown)
//      "gpu_span_us": ..},    // first kernel start to last kernel end per call
//     {"framework": "pytorch-eager", "class": "library", "op": "conv", "n_ops": 32, ..,
//      "issue_us": {..}},  // n_ops calls of one op; host time until the chain returned
//     {"framework": "cuda-graph", "class": "kernel", "chain": "transformer", "dtype": "fp16",
//      "n_ops": 16, "nodes": 64, ...}  // a graph of n_ops model-sized blocks, `nodes` kernels
//   ],
//   "failures": [{"what": "gemm bf16 8192x8192x8192", "error": "out of memory"}]
// }
// A row may be written before the run ends; readers accept files whose lists are partial.
//
//   Expected<Measurements> m = LoadMeasurements("h200.measurements.json");
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "predictor/work_list.h"

namespace ftax {

constexpr int kMeasurementsSchemaVersion = 1;

struct Spread {
  double median = 0, p10 = 0, p90 = 0;
};

struct KernelMeasurement {
  KernelWork work;  // class, dtype, flops, bytes, m/n/k/batch
  std::string label;
  int kernels_per_call = 1;
  Spread kernel_us;  // GPU time of one call: its kernels' durations, an overlap counted once (BusyUs); older benches summed them
};

struct DispatchMeasurement {
  Framework framework = Framework::kLibtorchEager;
  DispatchClass cls = DispatchClass::kKernel;
  int n_ops = 0;
  int modules = 0;
  // torch.compile chains: tensors of model state (parameters and buffers) the compiled graph
  // takes as inputs besides the chain's input, read by its kernels (bench_eager.py's parameter
  // chain: four a kernel, one a kernel in host run cf's bench; its library chain: the one
  // matrix). 0: none, or a bench from before it was recorded.
  int graph_inputs = 0;
  Spread call_us;
  double gpu_kernel_us = -1;  // < 0: unknown
  double gpu_span_us = -1;
  // Chains of model-sized kernels (cuda-graph only): the chain's name ("transformer",
  // "resnet"), its dtype, and the CUPTI kernel count of one call (graph nodes). An empty
  // chain is a chain of n_ops tiny ops of `cls`.
  std::string chain;
  std::string dtype;
  double nodes = -1;
  // Chains of one op as models call it (bench_eager.py's op_layers): the op's cost key
  // ("conv", "linear", "layer_norm", ...; DispatchCostKey in predictor/lowering_rules.h), and
  // the host time until the chain returned, before it was synchronized (the CPU's own cost).
  // An empty op is a chain of the class's generic op.
  std::string op;
  // Which of an op's chains this is, where the bench runs several ("256c14", "1x1", "dw" for
  // convolutions of other shapes; empty: the op's first chain).
  std::string geometry;
  std::optional<Spread> issue_us;
  // torch.compile's default mode (bench_eager.py, outside_spread): the host time of a call
  // spent outside the code Inductor generated for it (Dynamo's guards, gathering the graph's
  // inputs from the modules, AOTAutograd's wrapper), the compiled module's call minus the
  // generated call run directly; it may read below zero in noise. Absent in older benches.
  std::optional<Spread> outside_us;
  // torch.compile's reduce-overhead (bench_eager.py, scripts/replay_marks.py): the host time
  // from a call's start to its graph's replay (the wrapper's CPU work, the GPU idle), and the
  // replay's time on the GPU by CUDA events. Absent in benches before 2026-11-28.
  std::optional<Spread> before_replay_us;
  std::optional<Spread> replay_gpu_us;
  // Chains of small real layers (torch.compile, both modes): the layer ("convbn",
  // "lnlinear"). They price a module from outside_us (default mode, with their `modules` and
  // `graph_inputs`) or before_replay_us (reduce-overhead) and stay out of every other fit.
  // Empty: not such a chain.
  std::string layers;
  double kernels_per_call = -1;  // GPU kernels one call launched (< 0: unknown)
  // TorchScript per-op chains: whether the TensorExpr fuser was on (as traced models run);
  // unknown for rows of benches from before it was recorded, which ran with it off. Recorded
  // for study: calibrate does not fit TorchScript's per-op rows yet.
  std::optional<bool> fuser;
  // The CPU gauge read around the row's timing (scripts/cpu_gauge.py, microseconds; < 0: not
  // read): the host's CPU speed while it ran. calibrate/cpu_gauge.h brings rows to one speed.
  double cpu_gauge_us = -1;
  // The host probe read around a chain the C++ bench timed (calibrate/host_probe.h,
  // microseconds per op of LibTorch's 64-add chain; < 0: not read): the same for its rows.
  double host_probe_us = -1;
  // Elements of the tensor a libtorch-eager chain of kernel-class ops ran over, where the bench
  // made it large enough that each kernel outlasts its dispatch (the GPU sets the pace): such a
  // row shows the GPU's own gap between kernels queued back to back (gpu.kernel_gap_us) and is
  // never used for the CPU's costs. 0: a chain of the usual 8x8 tensors.
  int64_t elements = 0;
};

// Empty kernels launched back to back through the driver (the C++ bench's "launches" list):
// the host time until n launches returned, unsynchronized. Its slope over n is what one launch
// costs the CPU with nothing around it.
struct LaunchMeasurement {
  int n = 0;
  Spread issue_us;
};

// The op mix of a model against chains of one op (bench_eager.py's mix_row; a "dispatch" row
// with "mix_of"): a pass over layers of every op type in a shuffled order, its cost over the
// sum of the same calls' costs in their own chains, both at one CPU speed.
// TorchScript's mix (ts_mix_row) carries no ratio: TorchScript is priced by dispatch class, and
// calibrate prices the pass from the fitted class costs (calibrate/op_mix.h).
struct MixMeasurement {
  Framework framework = Framework::kPytorchEager;
  int n_ops = 0;
  double ratio = -1;  // < 0: unknown
  double issue_us = -1;      // median host time of one pass
  double cpu_gauge_us = -1;  // the gauge read around the pass
  // The pass's calls: op key ("conv", "conv:1x1", "gelu", ...; mix_of), how many, and the
  // dispatch class that prices a key without a per-op cost (mix_class_of).
  struct Calls {
    std::string key;
    DispatchClass cls = DispatchClass::kKernel;
    int n = 0;
  };
  std::vector<Calls> calls;  // TorchScript's mix only
  double kernels = -1;       // GPU kernels one pass launched (mix_kernels)
  double add_us = -1;        // TorchScript's `x + 1.0` chain per op, timed beside the pass
};

struct Measurements {
  nlohmann::json host;
  std::vector<KernelMeasurement> kernels;
  std::vector<DispatchMeasurement> dispatch;
  std::vector<LaunchMeasurement> launches;
  std::vector<MixMeasurement> mixes;
  nlohmann::json failures = nlohmann::json::array();
  std::string source;  // file it was read from
};

Expected<Measurements> MeasurementsFromJson(const nlohmann::json& j);
Expected<Measurements> LoadMeasurements(const std::string& path);
// Whether (merged) measurements can make a profile: at least one kernel row. InvalidInput
// naming the files otherwise.
Status CheckProfileInput(const Measurements& m);
// Merges several files (e.g. the C++ bench and the Python eager bench of one host).
Measurements MergeMeasurements(const std::vector<Measurements>& parts);

}  // namespace ftax
