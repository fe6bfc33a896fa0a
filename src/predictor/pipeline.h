// The CPU/GPU pipeline simulation: prices a work list with a host profile.
//
// The CPU issues dispatches in order, each costing its class's dispatch cost (plus a share of
// nn.Module call costs for Python eager); a kernel is enqueued when its dispatch ends and
// starts at max(enqueue time, end of the previous kernel + kernel gap). The call ends at
// max(CPU done, GPU done) plus the framework's fixed per-call cost (entry, checks, sync).
// At the extremes this is the paper's max(framework overhead, compute); in between it
// accounts for the GPU idling while the CPU catches up. A CUDA graph replays all kernels
// from one launch: latency = call cost + per-node launch cost + kernels + one node gap per
// kernel.
//
//   Expected<ResolvedParams> rp = ResolveParams(work, profile, Framework::kTorchscript);
//   Timing t = Simulate(work, rp.value());
#pragma once

#include <array>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "predictor/host_profile.h"
#include "predictor/kernel_cost.h"
#include "predictor/work_list.h"

namespace ftax {

// The profile's numbers for one framework and the kernel classes/dtypes a work list uses,
// looked up once so the simulation (and Monte Carlo samples of it) does no map lookups.
struct ResolvedParams {
  Framework framework = Framework::kPytorchEager;
  int num_sms = 1;
  double kernel_gap_us = 0;
  double call_us = 0;
  std::array<double, kNumDispatchClasses> dispatch_us{};
  double module_us = 0;
  double node_gap_us = 0;
  double replay_per_node_us = 0;
  // CPU cost of each kernel launch beyond a dispatch's first (a library call's extra kernels,
  // an op's second kernel): what an op that launches a kernel costs more than one that
  // launches none, dispatch_us[kernel] - dispatch_us[view] of libtorch-eager (of this
  // framework when the profile lacks libtorch-eager), at least 0. Not drawn in samples.
  double launch_us = 0;
  // Per kernel of the work list: index into `thetas`.
  std::vector<int> theta_index;
  std::vector<KernelTheta> thetas;
  std::vector<std::pair<int, int>> tiles;  // per theta
  std::vector<std::string> theta_keys;     // "gemm/fp16" per theta
  // Per kernel: the profile's anchors' correction of the model (kernel_cost.h; 1: none).
  std::vector<double> anchor_factor;
  // Per kernel: the GPU kernels it launches (1, or more for a library call whose nearest
  // benchmark point launched more; kernel_cost.h AnchorKernels). Each is a graph node and
  // costs a gap.
  std::vector<int> kernel_nodes;
  // Standard errors in the same layout (NaN: unknown).
  double call_se = 0, module_se = 0, node_gap_se = 0, kernel_gap_se = 0, replay_se = 0;
  std::array<double, kNumDispatchClasses> dispatch_se{};
  std::vector<KernelTheta> theta_se;
  // Per theta: the log-normal sigma of a class's model error when the class failed its
  // quality gates (from its held-out median |error|), 0 for a trusted class. Samples scale
  // the class's kernel times by exp(N(0, sigma)).
  std::vector<double> theta_model_sigma;
  std::vector<std::string> notes;  // fallbacks used, ranges exceeded
};

Expected<ResolvedParams> ResolveParams(const WorkList& work, const HostProfile& profile,
                                       Framework framework);

// A copy of `p` with every parameter drawn from N(value, stderr), clipped at zero.
ResolvedParams SampleParams(const ResolvedParams& p, std::mt19937_64& rng);

struct Timing {
  double latency_us = 0;
  double framework_us = 0;  // CPU-side time of the call (dispatches, modules, call cost)
  double launch_us = 0;     // of which launches beyond each dispatch's first (launch_us each)
  double compute_us = 0;    // sum of GPU kernel times
  double gpu_idle_us = 0;   // GPU idle inside the call
  int dispatches = 0;
  int kernels = 0;           // GPU kernels launched (library calls' extra kernels included)
  std::array<double, kNumKernelClasses> class_us{};  // kernel time per class
};

Timing Simulate(const WorkList& work, const ResolvedParams& params);

}  // namespace ftax
