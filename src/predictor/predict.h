// Predictions: latency of a model per framework, precision and batch, with its split into
// framework overhead and GPU compute, the bound, an interval and the crossover batch.
//
// The model is given as a function from batch size to Graph (a file re-bound at another
// batch, or an arch spec rebuilt), so sweeps and the crossover search can ask for any batch.
//
//   PredictRequest req; req.frameworks = {Framework::kTorchscript}; req.batches = {1, 8, 64};
//   Expected<PredictionReport> r = PredictSweep(graph_at_batch, profile, req);
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/graph.h"
#include "predictor/framework.h"
#include "predictor/host_profile.h"
#include "predictor/pipeline.h"
#include "predictor/work_list.h"

namespace ftax {

using GraphAtBatch = std::function<Expected<Graph>(int64_t batch)>;

struct PredictRequest {
  std::vector<Framework> frameworks = {Framework::kPytorchEager};
  std::vector<DType> precisions = {DType::kFloat32};
  std::vector<int64_t> batches = {1};
  int interval_samples = 64;  // Monte Carlo samples of the parameters; 0: no interval
  uint64_t seed = 1;
  bool find_crossover = true;
  // Per point, keep this many of its kernel groups (PredictionPoint::kernel_groups), the
  // most expensive first; -1 all, 0 none.
  int kernel_groups = 0;
  int64_t crossover_max_batch = 8192;
};

struct PredictionPoint {
  int64_t batch = 1;
  Framework framework = Framework::kPytorchEager;
  DType precision = DType::kFloat32;
  double latency_ms = 0;
  double framework_ms = 0;  // CPU-side time (the framework tax)
  double launch_ms = 0;     // of which kernel launches beyond each dispatch's first
  // Of framework_ms: the CPU waiting for the GPU's queued kernels at a copy of a CPU tensor
  // to the GPU (DispatchWork::waits_for_gpu); 0 where the model makes none.
  double sync_wait_ms = 0;
  double compute_ms = 0;    // GPU kernel time
  std::string bound;        // "framework" or "compute"
  double gpu_util = 0;      // compute / latency
  double interval_lo_ms = 0, interval_hi_ms = 0;  // p10..p90 over parameter uncertainty
  int dispatches = 0;
  int kernels = 0;
  int module_calls = 0;
  // torch.compile (default mode): the tensors of model state that are inputs of the compiled
  // graph (WorkList::graph_inputs), and what they cost the call, of framework_ms; 0 elsewhere.
  int graph_inputs = 0;
  double graph_input_ms = 0;
  // torch.compile (default mode): what the modules cost outside the generated code
  // (module_calls x FrameworkParams::module_us, 0 where the profile has none) and the cost of
  // the call itself, of framework_ms; reduce-overhead read as its wrapper's work before the
  // replay (FrameworkParams::call_before_replay): the same two parts of that work, and the
  // replay's gaps between its nodes (node_gap_ms); 0 elsewhere.
  double module_ms = 0;
  double call_ms = 0;
  double node_gap_ms = 0;
  std::array<double, kNumKernelClasses> class_ms{};
  // Where the profile prices ops by their type (FrameworkParams::op_us): the CPU time of the
  // dispatches of each op type so priced (launches beyond its bench's included), and their
  // count; empty otherwise.
  std::map<std::string, std::pair<double, int>> op_framework_ms;
  // GPU time (ms) and kernels launched per op type of the graph ("conv2d", "Conv"; kernels
  // a framework adds of its own, such as Inductor's layout copies, under "(framework)"), so
  // a kernel count can be traced to the ops that make it. Filled where the graph is known
  // (PredictPoint, PredictWork given the graph).
  std::map<std::string, std::pair<double, int>> op_compute_ms;
  // The point's kernels grouped by op type, class and shape, most GPU time first (pipeline.h
  // KernelGroups); filled where the graph is known, trimmed by PredictRequest::kernel_groups.
  std::vector<KernelGroup> kernel_groups;
  // Op types the lowering had no rule for (work_list.h): priced from counts, or guessed.
  std::map<std::string, int> generic_ops;
  std::map<std::string, int> unpriced_ops;
};

struct Crossover {
  Framework framework;
  DType precision;
  // Smallest batch at which compute exceeds framework overhead; nullopt if none up to
  // `searched_to`.
  std::optional<int64_t> batch;
  int64_t searched_to = 0;
};

struct PredictionReport {
  std::vector<PredictionPoint> points;
  std::vector<Crossover> crossovers;
  std::vector<std::string> notes;  // deduplicated notes from lowering and the profile
  // Over all points (the most nodes any point had): op types priced by the generic rule from
  // their counts, and op types ftax does not know at all (priced as a guess).
  std::map<std::string, int> generic_ops;
  std::map<std::string, int> unpriced_ops;
};

class ProfileCache;  // pipeline.h

// One point. `cache` (may be null) keeps what the profile decides (class parameters, anchor
// corrections) across calls with that profile; the point is the same with or without it.
Expected<PredictionPoint> PredictPoint(const Graph& graph, const HostProfile& profile,
                                       Framework framework, DType precision, int samples,
                                       uint64_t seed, std::vector<std::string>* notes,
                                       ProfileCache* cache = nullptr);
// The same point from the graph's work list for `framework` and `precision` (Lower, with the
// profile's kernel_facts): what PredictPoint does after lowering, for callers that keep work
// lists (one lowering, many profiles with equal kernel facts, or intervals).
// With `graph` (the one lowered), the point's op_compute_ms is filled.
Expected<PredictionPoint> PredictWork(const WorkList& work, const HostProfile& profile,
                                      Framework framework, DType precision, int samples,
                                      uint64_t seed, std::vector<std::string>* notes,
                                      ProfileCache* cache = nullptr, const Graph* graph = nullptr);

Expected<PredictionReport> PredictSweep(const GraphAtBatch& model, const HostProfile& profile,
                                        const PredictRequest& request);

}  // namespace ftax
