#include "predictor/predict.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "common/percentile.h"
#include "predictor/lowering.h"
#include "predictor/pipeline.h"

namespace ftax {
namespace {

void AddNotes(const std::vector<std::string>& from, std::vector<std::string>* to) {
  if (!to) return;
  for (const auto& n : from)
    if (std::find(to->begin(), to->end(), n) == to->end()) to->push_back(n);
}

}  // namespace

Expected<PredictionPoint> PredictPoint(const Graph& graph, const HostProfile& profile,
                                       Framework framework, DType precision, int samples,
                                       uint64_t seed, std::vector<std::string>* notes,
                                       ProfileCache* cache) {
  LoweringOptions lo;
  lo.framework = framework;
  lo.precision = precision;
  lo.facts = profile.kernel_facts;
  Expected<WorkList> work = Lower(graph, lo);
  if (!work.ok()) return work.status();
  return PredictWork(work.value(), profile, framework, precision, samples, seed, notes, cache, &graph);
}

Expected<PredictionPoint> PredictWork(const WorkList& work, const HostProfile& profile,
                                      Framework framework, DType precision, int samples,
                                      uint64_t seed, std::vector<std::string>* notes,
                                      ProfileCache* cache, const Graph* graph) {
  Expected<ResolvedParams> rp = ResolveParams(work, profile, framework, cache);
  if (!rp.ok()) return rp.status();
  AddNotes(work.notes, notes);
  AddNotes(rp->notes, notes);
  Timing t = Simulate(work, rp.value());
  PredictionPoint p;
  p.framework = framework;
  p.precision = precision;
  p.latency_ms = t.latency_us / 1e3;
  p.framework_ms = t.framework_us / 1e3;
  p.launch_ms = t.launch_us / 1e3;
  p.sync_wait_ms = t.sync_wait_us / 1e3;
  p.compute_ms = t.compute_us / 1e3;
  p.bound = t.compute_us > t.framework_us ? "compute" : "framework";
  p.gpu_util = t.latency_us > 0 ? t.compute_us / t.latency_us : 0;
  p.dispatches = t.dispatches;
  p.kernels = t.kernels;
  p.module_calls = work.module_calls;
  if (framework == Framework::kTorchCompile) {
    p.graph_inputs = work.graph_inputs;
    p.graph_input_ms = rp->input_us * work.graph_inputs / 1e3;
    p.module_ms = rp->module_us * work.module_calls / 1e3;
    p.call_ms = rp->call_us / 1e3;
  }
  if (framework == Framework::kTorchCompileReduceOverhead && rp->call_before_replay) {
    p.module_ms = rp->module_us * work.module_calls / 1e3;
    p.call_ms = rp->call_us / 1e3;
    p.node_gap_ms = rp->node_gap_us * t.kernels / 1e3;
  }
  for (int c = 0; c < kNumKernelClasses; ++c) p.class_ms[c] = t.class_us[c] / 1e3;
  for (const auto& [op, v] : OpFrameworkUs(work, rp.value())) p.op_framework_ms[op] = {v.first / 1e3, v.second};
  if (graph) {
    for (const auto& [index, v] : KernelUsByOp(work, rp.value())) {
      const bool known = index >= 0 && size_t(index) < graph->ops.size();
      auto& [ms, kernels] = p.op_compute_ms[known ? graph->ops[size_t(index)].type : "(framework)"];
      ms += v.first / 1e3;
      kernels += v.second;
    }
    std::vector<std::string> types;
    types.reserve(graph->ops.size());
    for (const auto& op : graph->ops) types.push_back(op.type);
    p.kernel_groups = KernelGroups(work, rp.value(), types);
  }
  p.generic_ops = work.generic_ops;
  p.unpriced_ops = work.unpriced_ops;
  p.interval_lo_ms = p.interval_hi_ms = p.latency_ms;
  if (samples > 0) {
    std::mt19937_64 rng(seed);
    std::vector<double> lat;
    lat.reserve(samples);
    for (int i = 0; i < samples; ++i)
      lat.push_back(Simulate(work, SampleParams(rp.value(), rng)).latency_us / 1e3);
    p.interval_lo_ms = std::min(Percentile(lat, 0.1), p.latency_ms);
    p.interval_hi_ms = std::max(Percentile(lat, 0.9), p.latency_ms);
  }
  return p;
}

Expected<PredictionReport> PredictSweep(const GraphAtBatch& model, const HostProfile& profile,
                                        const PredictRequest& req) {
  PredictionReport report;
  std::map<int64_t, Graph> graphs;
  auto graph_at = [&](int64_t b) -> Expected<const Graph*> {
    auto it = graphs.find(b);
    if (it != graphs.end()) return &it->second;
    Expected<Graph> g = model(b);
    if (!g.ok()) return g.status().WithContext("batch " + std::to_string(b));
    return &graphs.emplace(b, std::move(g.value())).first->second;
  };
  // framework_us vs compute_us at one batch, without interval (for the crossover search).
  auto compute_bound = [&](int64_t b, Framework f, DType d) -> Expected<bool> {
    Expected<const Graph*> g = graph_at(b);
    if (!g.ok()) return g.status();
    Expected<PredictionPoint> p = PredictPoint(*g.value(), profile, f, d, 0, req.seed, nullptr);
    if (!p.ok()) return p.status();
    return p->compute_ms > p->framework_ms;
  };

  std::vector<int64_t> batches = req.batches;
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  for (Framework f : req.frameworks) {
    for (DType d : req.precisions) {
      std::optional<int64_t> last_framework_bound, first_compute_bound;
      for (int64_t b : batches) {
        Expected<const Graph*> g = graph_at(b);
        if (!g.ok()) return g.status();
        Expected<PredictionPoint> p =
            PredictPoint(*g.value(), profile, f, d, req.interval_samples, req.seed, &report.notes);
        if (!p.ok()) return p.status();
        p->batch = b;
        if (req.kernel_groups >= 0 && p->kernel_groups.size() > size_t(req.kernel_groups))
          p->kernel_groups.resize(size_t(req.kernel_groups));
        if (p->bound == "compute") {
          if (!first_compute_bound) first_compute_bound = b;
        } else if (!first_compute_bound) {
          last_framework_bound = b;
        }
        for (const auto& [type, n] : p->generic_ops)
          report.generic_ops[type] = std::max(report.generic_ops[type], n);
        for (const auto& [type, n] : p->unpriced_ops)
          report.unpriced_ops[type] = std::max(report.unpriced_ops[type], n);
        report.points.push_back(p.value());
      }
      if (!req.find_crossover) continue;
      Crossover c{f, d, std::nullopt, 0};
      // Bracket: lo framework-bound, hi compute-bound; extend upward if needed.
      int64_t lo = last_framework_bound.value_or(0);
      std::optional<int64_t> hi = first_compute_bound;
      if (first_compute_bound && !last_framework_bound) {
        hi = first_compute_bound;
        lo = 0;
        if (*hi > 1) {
          Expected<bool> one = compute_bound(1, f, d);
          if (!one.ok()) return one.status();
          if (!one.value()) lo = 1;
          else hi = 1;
        }
      }
      int64_t probe = std::max<int64_t>(batches.empty() ? 1 : batches.back(), 1);
      while (!hi && probe < req.crossover_max_batch) {
        probe = std::min(probe * 2, req.crossover_max_batch);
        Expected<bool> cb = compute_bound(probe, f, d);
        if (!cb.ok()) return cb.status();
        if (cb.value()) hi = probe;
        else lo = probe;
      }
      c.searched_to = hi ? *hi : probe;
      if (hi) {
        while (*hi - lo > 1) {
          int64_t mid = lo + (*hi - lo) / 2;
          Expected<bool> cb = compute_bound(mid, f, d);
          if (!cb.ok()) return cb.status();
          if (cb.value()) hi = mid;
          else lo = mid;
        }
        c.batch = *hi;
      }
      report.crossovers.push_back(c);
    }
  }
  return report;
}

}  // namespace ftax
