// The CPU/GPU pipeline simulation: prices a work list with a host profile.
//
// The CPU issues dispatches in order, each costing its op type's measured dispatch cost where
// the profile keeps one, else its class's (plus a share of nn.Module call costs for Python
// eager); a kernel is enqueued when its dispatch ends and
// starts at max(enqueue time, end of the previous kernel + kernel gap). The call ends at
// max(CPU done, GPU done) plus the framework's fixed per-call cost (entry, checks, sync).
// At the extremes this is the paper's max(framework overhead, compute); in between it
// accounts for the GPU idling while the CPU catches up. A CUDA graph replays all kernels
// from one launch: latency = call cost + per-node launch cost + kernels + one node gap per
// kernel. torch.compile's reduce-overhead adds, before its replay starts, the wrapper's CPU
// work: call_us plus module_us per module (Dynamo's guards); a profile of the older reading
// (FrameworkParams::call_before_replay false) takes max(call_us, the replay).
//
//   Expected<ResolvedParams> rp = ResolveParams(work, profile, Framework::kTorchscript);
//   Timing t = Simulate(work, rp.value());
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
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
  bool call_before_replay = false;  // reduce-overhead: FrameworkParams::call_before_replay
  // torch.compile (default mode): per tensor of model state its kernels read
  // (FrameworkParams::input_us, WorkList::graph_inputs); 0 for every other framework.
  double input_us = 0;
  // CPU cost of each kernel launch beyond a dispatch's first (a library call's extra kernels,
  // an op's second kernel): the profile's gpu.launch_us (an empty kernel launched back to
  // back), or, in profiles without it, what an op that launches a kernel costs more than one
  // that launches none, dispatch_us[kernel] - dispatch_us[view] of libtorch-eager (of this
  // framework when the profile lacks libtorch-eager), at least 0. Not drawn in samples.
  double launch_us = 0;
  // Eager and TorchScript with per-op costs in the profile (FrameworkParams::op_us): per
  // dispatch of the work list, the index into op_us of its op type's measured cost, or -1
  // where its class prices it. Empty when the profile keeps no per-op costs.
  std::vector<int> dispatch_op;
  std::vector<double> op_us, op_se;
  std::vector<std::string> op_keys;  // per op_us entry: its op type (DispatchCostKey)
  std::vector<double> op_kernels;  // per op_us entry: launches its measured cost covers
  // Per op_us entry: what a launch more or fewer than op_kernels costs it (op_launch_us, else
  // launch_us).
  std::vector<double> op_launch;
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
  double call_se = 0, module_se = 0, node_gap_se = 0, kernel_gap_se = 0, replay_se = 0, input_se = 0;
  std::array<double, kNumDispatchClasses> dispatch_se{};
  std::vector<KernelTheta> theta_se;
  // Per theta: the log-normal sigma of a class's model error when the class failed its
  // quality gates (from its held-out median |error|), 0 for a trusted class. Samples scale
  // the class's kernel times by exp(N(0, sigma)).
  std::vector<double> theta_model_sigma;
  std::vector<std::string> notes;  // fallbacks used, ranges exceeded
};

// What a profile gives one kernel class at one dtype, as ResolveParams uses it: the class's
// own entry (whose measured range applies), the entry priced with (its own, or a fallback such
// as fp16 for bf16), and the notes that choice adds.
struct ClassParams {
  bool found = false;  // false: the profile has no entry to price the class with
  const KernelParams* own = nullptr;
  const KernelParams* used = nullptr;
  std::string used_key;            // "gemm/fp16"
  std::vector<std::string> notes;  // fallbacks used, a failed quality gate
  KernelTheta theta, se;
  double model_sigma = 0;
};
ClassParams ResolveClassParams(const HostProfile& profile, KernelClass cls, DType dtype);

// What predictions with one profile compute again and again and the profile alone decides:
// each kernel class's parameters (ResolveClassParams) and the anchors' correction and kernel
// count of a kernel's work (AnchorFactor, AnchorKernels), which recur across the layers of a
// model and across models. Kept by a caller that predicts many models with one profile (the
// Python module keeps one per Profile). A cached value is the very number the computation
// gives, so results are the same with or without a cache. Thread-safe. It is bound to the
// first profile it is used with (it is not used with another) and must not be used after that
// profile changed or died.
class ProfileCache {
 public:
  struct Key {
    const KernelParams* params = nullptr;
    KernelClass cls = KernelClass::kElementwise;
    KernelVariant variant = KernelVariant::kPlain;
    int64_t m = 0, n = 0, k = 0, batch = 1;
    double bytes = 0;
    bool operator==(const Key& o) const {
      return params == o.params && cls == o.cls && variant == o.variant && m == o.m && n == o.n && k == o.k &&
             batch == o.batch && bytes == o.bytes;
    }
  };
  struct Value {
    double factor = 1.0;
    int kernels = 1;
    AnchorReach reach = AnchorReach::kNoAnchors;
  };
  ProfileCache();
  ~ProfileCache();
  ProfileCache(const ProfileCache&) = delete;
  ProfileCache& operator=(const ProfileCache&) = delete;

  // Whether the cache serves `profile` (binding it to `profile` when still unbound).
  bool Serves(const HostProfile& profile);
  // For a profile it serves: the value of `key` (of `work`), computed once.
  Value Anchor(const HostProfile& profile, const Key& key, const KernelWork& work);
  // For a profile it serves: ResolveClassParams, computed once (the reference stays valid).
  const ClassParams& Class(const HostProfile& profile, KernelClass cls, DType dtype);
  size_t size() const;  // anchor values kept

 private:
  struct Hash {
    size_t operator()(const Key& k) const;
  };
  static constexpr int kDTypes = int(DType::kComplex64) + 1;
  mutable std::mutex mu_;
  const HostProfile* profile_ = nullptr;
  std::unordered_map<Key, Value, Hash> values_;
  std::array<std::array<std::unique_ptr<ClassParams>, kDTypes>, kNumKernelClasses> classes_;
};

// `cache` (may be null) keeps what the profile decides across calls with that profile.
Expected<ResolvedParams> ResolveParams(const WorkList& work, const HostProfile& profile,
                                       Framework framework, ProfileCache* cache = nullptr);

// A copy of `p` with every parameter drawn from N(value, stderr), clipped at zero.
ResolvedParams SampleParams(const ResolvedParams& p, std::mt19937_64& rng);

struct Timing {
  double latency_us = 0;
  double framework_us = 0;  // CPU-side time of the call (dispatches, modules, call cost)
  double launch_us = 0;     // of which launches beyond each dispatch's first (launch_us each)
  double compute_us = 0;    // sum of GPU kernel times
  double gpu_idle_us = 0;   // GPU idle inside the call
  double sync_wait_us = 0;  // of framework_us: the CPU waiting for the GPU (waits_for_gpu)
  int dispatches = 0;
  int kernels = 0;           // GPU kernels launched (library calls' extra kernels included)
  std::array<double, kNumKernelClasses> class_us{};  // kernel time per class
};

Timing Simulate(const WorkList& work, const ResolvedParams& params);

// CPU time (µs) and count of the dispatches of each op type priced by its own measured cost
// (ResolvedParams::dispatch_op), launches beyond those its bench chain made included; empty
// when no dispatch is so priced.
std::map<std::string, std::pair<double, int>> OpFrameworkUs(const WorkList& work, const ResolvedParams& p);

// GPU time (µs) and kernels launched (a library call's extra kernels counted) per graph op,
// keyed by KernelWork::op_index (-1: kernels the framework adds, e.g. Inductor's copies).
std::map<int, std::pair<double, int>> KernelUsByOp(const WorkList& work, const ResolvedParams& p);

// The work list's kernels grouped by what prices them: graph op type, class, variant, dtype
// and shape (m, n, k, batch, flops, bytes). Equal layers (ResNet's repeated 3x3 convolutions)
// fall in one group. Sorted by GPU time, most first; `op_type` of framework-added kernels is
// "(framework)". For reading which layers a prediction spends its GPU time on (`ftax predict
// --kernels`), and for comparing them with a profiler's kernel records.
struct KernelGroup {
  std::string op_type;
  KernelWork shape;      // the group's first kernel (the others differ only in op_index)
  int count = 0;         // work-list kernels in the group
  int launched = 0;      // GPU kernels they launch (a library call's extra kernels counted)
  double us_each = 0;    // GPU time of one
  double us_total = 0;
};
std::vector<KernelGroup> KernelGroups(const WorkList& work, const ResolvedParams& p,
                                      const std::vector<std::string>& op_types);

}  // namespace ftax
