// Host profiles: the fitted description of one GPU host and its frameworks.
//
// A profile is a versioned JSON file (docs/profile-format.md) written by `ftax calibrate`
// from real measurements. It holds the host's identity and provenance, GPU kernel-cost
// parameters per kernel class and dtype, CPU-side parameters per framework, fit quality, and
// the ranges of work sizes that were measured. Every parameter carries a unit and a standard
// error; unknown values are null, never a magic number. The predictor sees profiles only
// through this struct; it never reads files itself.
//
//   Expected<HostProfile> p = HostProfileFromJson(doc);  // a file: LoadHostProfile (calibrate/profile_file.h)
//   const KernelParams* gemm = p->gpu.Find(KernelClass::kGemm, DType::kFloat16);
#pragma once

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "graph/graph.h"
#include "predictor/framework.h"
#include "predictor/kernel_facts.h"
#include "predictor/work_list.h"

namespace ftax {

constexpr int kProfileSchemaVersion = 1;

// A fitted number: value, standard error (NaN if unknown) and unit.
struct Param {
  double value = std::nan("");
  double std_error = std::nan("");
  bool known() const { return !std::isnan(value); }
  static Param Of(double v, double se = std::nan("")) { return Param{v, se}; }
};

// One measured microbenchmark point kept in the profile. Near it, the analytic cost model is
// corrected by the measured-over-modelled ratio (kernel_cost.h), so cuBLAS's and cuDNN's
// per-shape kernel choices show up in predictions without a term for each of them.
struct KernelAnchor {
  KernelVariant variant = KernelVariant::kPlain;
  int64_t m = 0, n = 0, k = 0, batch = 1;  // GEMM-like shape; m = 0: located by bytes only
  double flops = 0, bytes = 0;
  double us = 0;  // measured median kernel time of one call
  // Kernels one call launched (CUPTI): a library call may run more than one, e.g. cuDNN's
  // layout transposes around a half-precision convolution or cuBLAS's split-K reduction.
  double kernels = 1;
  // Set by PrepareAnchors (kernel_cost.h) from the class's fitted parameters: log2 of the shape (or of the
  // bytes) and log(us / model).
  double lm = 0, ln = 0, lk = 0, lb = 0, lbytes = 0, log_ratio = 0;
};

// GPU cost of one kernel class at one dtype:
//   t = floor_us + max(flops_eff / rate, bytes / bandwidth)
// with flops_eff padded to whole waves of tile_m x tile_n tiles over the SMs for classes with
// a GEMM-like shape. rate in TFLOP/s (absent for memory-bound classes), bandwidth in GB/s.
struct KernelParams {
  Param floor_us;
  Param rate_tflops;
  Param bandwidth_gbps;
  int tile_m = 128;
  int tile_n = 128;
  // Measured range of the fit data (work outside it is flagged).
  double min_flops = 0, max_flops = 0, min_bytes = 0, max_bytes = 0;
  int points = 0;
  double r2 = std::nan("");
  double median_abs_err_pct = std::nan("");
  // Median |error| on benchmark rows held out of the fit (NaN: no holdout), and whether the
  // class passed calibrate's quality gates. An untrusted class is still used, with its
  // held-out error as a relative uncertainty of its kernels' times in prediction intervals,
  // and predictions that use it say so.
  double holdout_err_pct = std::nan("");
  bool trusted = true;
  std::vector<KernelAnchor> anchors;
  // The GPU's SM count the anchors were prepared with (PrepareAnchors): the curve at a
  // kernel's work, for the variants whose anchors are interpolated in time.
  int anchor_sms = 0;
};

struct GpuParams {
  int num_sms = 0;
  // Gap between two dependent kernels of one stream launched ahead (µs).
  Param kernel_gap_us;
  // Host time of one kernel launch with nothing around it (an empty kernel launched back to
  // back through the driver, µs): what an op's second and further kernels cost the CPU.
  // Unknown in profiles from benches that did not time it (the pipeline then takes
  // libtorch-eager's kernel less view dispatch cost).
  Param launch_us;
  // key: class name + "/" + dtype name, e.g. "gemm/fp16"
  std::map<std::string, KernelParams> kernels;

  const KernelParams* Find(KernelClass c, DType t) const;
};

// CPU-side cost of a framework. A call costs call_us once (entry, input checks, final
// synchronize), plus per dispatch op_us[op type] where measured, else dispatch_us[class],
// plus module_us per nn.Module call (Python eager; torch.compile's default mode pays it per
// module once a call, for the guards Dynamo checks). For cuda-graph, call_us is the graph launch, node_gap_us the GPU
// gap between two graph nodes and replay_per_node_us the launch cost per node. For
// torch.compile's reduce-overhead, call_us is the CPU time of a call before its graph replays
// (the GPU idle), module_us what each module's guards add to it (null: the default mode's).
struct FrameworkParams {
  Param call_us;
  std::array<Param, kNumDispatchClasses> dispatch_us;
  Param module_us;
  Param node_gap_us;
  // cuda-graph only: host-side replay cost that grows with the number of graph nodes
  // (cudaGraphLaunch work before the GPU starts), per node.
  Param replay_per_node_us;
  // torch.compile's reduce-overhead: true where call_us and module_us are the CPU's time before
  // the graph replays (the GPU idle meanwhile; latency = call_us + module_us * modules + the
  // replay), as calibrate fits them from a bench that marked its replays or priced its modules.
  // False (profiles without the key, benches with neither): the older reading, the wrapper's
  // bookkeeping overlapping the replay (latency = max(call_us, the replay)).
  bool call_before_replay = false;
  // torch.compile, default mode: what the compiled call costs per tensor of model state
  // (a parameter or buffer) that Inductor's generated kernels read, each an input the compiled
  // graph takes every call (a batch norm's weight, bias and running statistics, a layer norm's
  // weight and bias). The bench's library-op chains hold the weights their ops read, so those
  // are in op_us. Unknown: benches before 2026-11-28 timed no chain of such inputs; costs 0.
  Param input_us;
  // Frameworks that dispatch op by op (calibrate fills it for Python eager): the dispatch cost
  // of one op type, measured by chains of that op as models call it (key: DispatchCostKey,
  // e.g. "conv", "layer_norm"). An op whose key is
  // here costs op_us[key] (all its launches included) instead of dispatch_us[class].
  std::map<std::string, Param> op_us;
  // Kernels one call of the op launched in the bench (key as op_us; absent: 1). A model's op
  // that launches more costs a launch per extra one, one that launches fewer saves a launch
  // per kernel it skips (pipeline.h).
  std::map<std::string, double> op_kernels;
  // What one launch more or fewer costs the op (key as op_us), where the bench's chains of
  // that op in several geometries launched different numbers of kernels (cuDNN's 3x3
  // convolutions over NCHW add layout transposes, 1x1 ones do not); absent: gpu.launch_us.
  std::map<std::string, Param> op_launch_us;
  // How much more a model's mix of ops cost the CPU than the same calls in chains of one op
  // (the bench's op mix, calibrate/op_mix.h); dispatch_us and op_us already include it. NaN:
  // not measured (benches before 2026-11-26), costs as the chains gave them.
  double mix_scale = std::nan("");
  // Relative scales of this framework's per-op costs, by op type (key as op_us; "*": every
  // other CPU cost: ops priced by class, further launches, call_us, module_us), as whole
  // models ran them against the bench's chains (calibrate/op_scale_fit.h): learned on the
  // calibration models by `ftax validate --refined-profile`, carried to other hosts by
  // `ftax calibrate --prior`. Empty: the costs as the chains gave them.
  std::map<std::string, double> op_scale;
  int points = 0;
  double r2 = std::nan("");
};

struct HostProfile {
  int schema_version = kProfileSchemaVersion;
  nlohmann::json host;        // identity: gpu, sm_count, clocks, memory, driver, cuda, cpu, torch
  nlohmann::json provenance;  // date, ftax commit, measurement file, notes
  nlohmann::json fit;         // fit quality summary, holdout error
  GpuParams gpu;
  std::map<std::string, FrameworkParams> frameworks;  // key: FrameworkName
  // Side kernels the host's PyTorch launches and the extrapolation margin (kernel_facts.h);
  // the optional "kernel_facts" object, defaults where absent.
  KernelFacts kernel_facts;
  bool synthetic = false;     // true for profiles made up by tests; never shipped
  // The CPU gauge (scripts/cpu_gauge.py: microseconds per add of 64 adds on a tiny CPU
  // tensor from Python) at which the Python eager costs are priced: the host's fast state, to
  // which calibrate brought every bench row that carried a gauge (calibrate/cpu_gauge.h).
  // < 0: unknown (benches before 2026-11-26 read no gauge).
  double cpu_gauge_us = -1;
  // The host probe (calibrate/host_probe.h: microseconds per op of LibTorch's chain of 64 adds
  // on a CUDA tensor, from C++) at which the C++ bench's chains are priced: the host's fast
  // state, to which calibrate brought every chain that read it. < 0: unknown (benches
  // before 2026-11-26 read no probe around their chains).
  double host_probe_us = -1;
  // The bench's median readings of the same two: the host's typical speed while it benched
  // (`ftax predict --whatif cpu=typical` prices at them). < 0: unknown (profiles calibrated
  // before 2026-11-28).
  double cpu_gauge_typical_us = -1;
  double host_probe_typical_us = -1;

  const FrameworkParams* FindFramework(Framework f) const;
};

// Parses and validates a profile; errors name the JSON field at fault. "kernel_facts" is
// written only when it differs from the defaults, and then whole.
Expected<HostProfile> HostProfileFromJson(const nlohmann::json& j);
nlohmann::json HostProfileToJson(const HostProfile& p);

std::string KernelKey(KernelClass c, DType t);

}  // namespace ftax
