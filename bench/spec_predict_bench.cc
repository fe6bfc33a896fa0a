// Predictions of distinct BERT-sized arch specs per second, one point each, as a NAS loop
// makes them (the C++ side of bench/python_predict_bench.py), and the stages one such
// prediction goes through, timed apart:
//
//   build-py/bench/spec_predict_bench [--benchmark_filter=Stage]
//
//   Stage_Build        BuildArchGraph: a fresh Graph from the spec (what the module did)
//   Stage_BuildInto    BuildArchGraphInto: the same into a reused Graph
//   Stage_Lower        Lower(graph, cuda-graph, fp16): the work list
//   Stage_Resolve      ResolveParams with the shipped h200 profile (anchors included)
//   Stage_Simulate     Simulate: the pipeline simulation
//   Stage_PredictPoint Lower + ResolveParams + Simulate (PredictPoint, no interval)
//   DistinctSpecs_*    the whole loop over 2,000 specs drawn as bench/python_predict_bench.py
//                      draws them: `Sweep` builds each spec twice (the probe and the point, as
//                      the Python module did before it had a fast path) and calls PredictSweep;
//                      `BuildIntoPredict` builds once into a reused Graph and calls PredictPoint
//                      with a shared anchor cache (the module's fast path).
//
// items_per_second is predictions per second on one core. Target: >= 10,000 for the loop.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "calibrate/profile_file.h"
#include "graph/arch_spec.h"
#include "predictor/lowering.h"
#include "predictor/pipeline.h"
#include "predictor/predict.h"

namespace ftax {
namespace {

const char* kBertBase = "bert:layers=12,hidden=768,heads=12,ffn=3072";
const DimBindings kDims = {{"batch", 1}, {"seq", 128}};

const HostProfile& H200() {
  static const HostProfile p = [] {
    Expected<HostProfile> e = LoadHostProfile(FTAX_SOURCE_DIR "/data/profiles/h200.json");
    return e.ok() ? e.value() : HostProfile();
  }();
  return p;
}

// The specs bench/python_predict_bench.py draws (its own RNG differs; the mix is the same).
std::vector<std::string> Specs(size_t n) {
  std::mt19937 rng(1);
  std::vector<std::string> specs;
  for (size_t i = 0; i < n; ++i) {
    const int heads = std::vector<int>{4, 8, 12, 16}[rng() % 4];
    const int hidden = heads * (rng() % 2 ? 64 : 32);
    const int layers = 2 + int(rng() % 23);
    specs.push_back("bert:layers=" + std::to_string(layers) + ",hidden=" + std::to_string(hidden) +
                    ",heads=" + std::to_string(heads) + ",ffn=" + std::to_string(4 * hidden));
  }
  return specs;
}

bool HaveProfile(benchmark::State& state) {
  if (H200().gpu.num_sms > 0) return true;
  state.SkipWithError("data/profiles/h200.json did not load");
  return false;
}

void Stage_Build(benchmark::State& state) {
  for (auto _ : state) {
    Expected<Graph> g = BuildArchGraph(kBertBase, kDims, ArchFlavor::kTorch);
    benchmark::DoNotOptimize(g.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_Build);

void Stage_BuildInto(benchmark::State& state) {
  Graph g;
  for (auto _ : state) {
    Status s = BuildArchGraphInto(kBertBase, kDims, ArchFlavor::kTorch, DType::kFloat32, &g);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_BuildInto);

// BERT-base's work list as a CUDA graph in fp16 (what the stages after lowering take).
WorkList BertBaseWork() {
  LoweringOptions o;
  o.framework = Framework::kCudaGraph;
  o.precision = DType::kFloat16;
  return Lower(BuildArchGraph(kBertBase, kDims, ArchFlavor::kTorch).value(), o).value();
}

void Stage_Lower(benchmark::State& state) {
  const Graph g = BuildArchGraph(kBertBase, kDims, ArchFlavor::kTorch).value();
  LoweringOptions o;
  o.framework = Framework::kCudaGraph;
  o.precision = DType::kFloat16;
  for (auto _ : state) {
    Expected<WorkList> w = Lower(g, o);
    benchmark::DoNotOptimize(w.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_Lower);

void Stage_Resolve(benchmark::State& state) {
  if (!HaveProfile(state)) return;
  const WorkList w = BertBaseWork();
  for (auto _ : state) {
    Expected<ResolvedParams> rp = ResolveParams(w, H200(), Framework::kCudaGraph);
    benchmark::DoNotOptimize(rp.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_Resolve);

void Stage_Simulate(benchmark::State& state) {
  if (!HaveProfile(state)) return;
  const WorkList w = BertBaseWork();
  const ResolvedParams rp = ResolveParams(w, H200(), Framework::kCudaGraph).value();
  for (auto _ : state) {
    Timing t = Simulate(w, rp);
    benchmark::DoNotOptimize(t.latency_us);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_Simulate);

void Stage_PredictPoint(benchmark::State& state) {
  if (!HaveProfile(state)) return;
  const Graph g = BuildArchGraph(kBertBase, kDims, ArchFlavor::kTorch).value();
  for (auto _ : state) {
    auto p = PredictPoint(g, H200(), Framework::kCudaGraph, DType::kFloat16, 0, 1, nullptr);
    benchmark::DoNotOptimize(p.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(Stage_PredictPoint);

// What the module did per spec before its fast path: a probe build, then PredictSweep, which
// builds again.
void DistinctSpecs_Sweep(benchmark::State& state) {
  if (!HaveProfile(state)) return;
  const std::vector<std::string> specs = Specs(2000);
  PredictRequest req;
  req.frameworks = {Framework::kCudaGraph};
  req.precisions = {DType::kFloat16};
  req.batches = {1};
  req.interval_samples = 0;
  req.find_crossover = false;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& spec = specs[i++ % specs.size()];
    DimBindings d = kDims;
    Expected<Graph> probe = BuildArchGraph(spec, d, ArchFlavor::kTorch);
    benchmark::DoNotOptimize(probe.ok());
    auto at = [&](int64_t b) -> Expected<Graph> {
      d["batch"] = b;
      return BuildArchGraph(spec, d, ArchFlavor::kTorch);
    };
    Expected<PredictionReport> r = PredictSweep(at, H200(), req);
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(DistinctSpecs_Sweep);

// The module's fast path: one build into a reused Graph, PredictPoint with a shared cache.
void DistinctSpecs_BuildIntoPredict(benchmark::State& state) {
  if (!HaveProfile(state)) return;
  const std::vector<std::string> specs = Specs(2000);
  ProfileCache cache;
  Graph g;
  DimBindings d = kDims;
  size_t i = 0;
  for (auto _ : state) {
    const std::string& spec = specs[i++ % specs.size()];
    Status s = BuildArchGraphInto(spec, d, ArchFlavor::kTorch, DType::kFloat32, &g);
    auto p = PredictPoint(g, H200(), Framework::kCudaGraph, DType::kFloat16, 0, 1, nullptr, &cache);
    if (!s.ok() || !p.ok()) {
      state.SkipWithError("build or prediction failed");
      return;
    }
    benchmark::DoNotOptimize(p->latency_ms);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(DistinctSpecs_BuildIntoPredict);

// The same stages one at a time over the distinct specs (where the loop's time goes).
void DistinctSpecs_BuildIntoOnly(benchmark::State& state) {
  const std::vector<std::string> specs = Specs(2000);
  Graph g;
  size_t i = 0;
  for (auto _ : state) {
    Status s = BuildArchGraphInto(specs[i++ % specs.size()], kDims, ArchFlavor::kTorch, DType::kFloat32, &g);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(DistinctSpecs_BuildIntoOnly);

}  // namespace
}  // namespace ftax

BENCHMARK_MAIN();
