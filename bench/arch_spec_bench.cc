// How many architecture specs per second ftax builds and counts: the rate a NAS loop gets.
//
//   build-arch/bench/arch_spec_bench --benchmark_filter=BertBase
//
// items_per_second is architectures per second on one core (the benchmark is single
// threaded). Target for BERT-base-sized specs: >= 10,000/s.
//   BuildAndCount      fresh Graph per spec (BuildArchGraph) + MAC count from the shapes
//   BuildIntoAndCount  the search-loop API (BuildArchGraphInto, storage reused) + MAC count
//   BuildIntoAndComputeStats  reuse + the full inspect statistics (when graph_stats.h exists)
//   BertSearchLoop     reuse, cycling through four different BERT-base-sized specs
#include <benchmark/benchmark.h>

#include <string>

#include "graph/arch_spec.h"
#if __has_include("graph/graph_stats.h")
#include "graph/graph_stats.h"
#define FTAX_ARCH_BENCH_STATS 1
#endif

namespace ftax {
namespace {

// MACs from the generated shapes (matmul-like ops only): the part of counting every search
// loop needs.
double CountMacs(const Graph& g) {
  double macs = 0;
  for (const Op& op : g.ops) {
    const std::string& t = op.type;
    bool mm = t == "MatMul" || t == "Gemm" || t == "linear" || t == "addmm";
    bool conv = t == "Conv" || t == "conv2d";
    if (!mm && !conv) continue;
    const TensorInfo* out = g.Find(op.outputs[0]);
    const TensorInfo* a = g.Find(op.inputs[t == "addmm" ? 1 : conv ? 1 : 0]);
    if (!out || !a) continue;
    double n = static_cast<double>(NumElements(out->shape).value_or(0));
    if (mm) {
      macs += n * a->shape.back().value;
    } else {
      macs += n * a->shape[1].value * a->shape[2].value * a->shape[3].value;
    }
  }
  return macs;
}

void BuildAndCount(benchmark::State& state, const std::string& spec, ArchFlavor flavor,
                   DimBindings dims) {
  double macs = 0;
  size_t ops = 0;
  for (auto _ : state) {
    Expected<Graph> g = BuildArchGraph(spec, dims, flavor);
    if (!g.ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    macs = CountMacs(g.value());
    ops = g->ops.size();
    benchmark::DoNotOptimize(macs);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["GMACs"] = macs / 1e9;
}

void BuildOnly(benchmark::State& state, const std::string& spec, ArchFlavor flavor,
               DimBindings dims) {
  for (auto _ : state) {
    Expected<Graph> g = BuildArchGraph(spec, dims, flavor);
    benchmark::DoNotOptimize(g.ok());
  }
  state.SetItemsProcessed(state.iterations());
}

// The search-loop API: build into the same Graph each time, reusing its storage.
void BuildIntoAndCount(benchmark::State& state, const std::string& spec, ArchFlavor flavor,
                       DimBindings dims) {
  Graph g;
  double macs = 0;
  for (auto _ : state) {
    Status s = BuildArchGraphInto(spec, dims, flavor, DType::kFloat32, &g);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    macs = CountMacs(g);
    benchmark::DoNotOptimize(macs);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["GMACs"] = macs / 1e9;
}

#ifdef FTAX_ARCH_BENCH_STATS
// Build (reusing the graph) + the full `ftax inspect` statistics (ComputeStats: every op
// through the counting registry, params, bytes, depth).
void BuildIntoAndComputeStats(benchmark::State& state, const std::string& spec,
                              ArchFlavor flavor, DimBindings dims) {
  Graph g;
  double macs = 0;
  for (auto _ : state) {
    Status s = BuildArchGraphInto(spec, dims, flavor, DType::kFloat32, &g);
    Expected<GraphStats> st = ComputeStats(g);
    if (!s.ok() || !st.ok()) {
      state.SkipWithError("build or stats failed");
      return;
    }
    macs = st->totals.macs;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["GMACs"] = macs / 1e9;
}
BENCHMARK_CAPTURE(BuildIntoAndComputeStats, BertBase_onnx,
                  "bert:layers=12,hidden=768,heads=12,ffn=3072", ArchFlavor::kOnnx,
                  DimBindings{{"batch", 1}, {"seq", 128}});
#endif

// A search loop varies the candidate each time; cycle through a few BERT-base-sized specs.
void BertSearchLoop(benchmark::State& state) {
  const char* specs[] = {
      "bert:layers=12,hidden=768,heads=12,ffn=3072",
      "bert:layers=10,hidden=768,heads=12,ffn=2048",
      "bert:layers=12,hidden=640,heads=10,ffn=2560",
      "bert:layers=14,hidden=768,heads=12,ffn=3072",
  };
  size_t i = 0;
  double macs = 0;
  Graph g;
  const DimBindings dims = {{"batch", 1}, {"seq", 128}};
  for (auto _ : state) {
    Status s = BuildArchGraphInto(specs[i++ % 4], dims, ArchFlavor::kOnnx, DType::kFloat32, &g);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    macs += CountMacs(g);
  }
  benchmark::DoNotOptimize(macs);
  state.SetItemsProcessed(state.iterations());
}

const DimBindings kBertDims = {{"batch", 1}, {"seq", 128}};

BENCHMARK_CAPTURE(BuildAndCount, BertBase_onnx, "bert:layers=12,hidden=768,heads=12,ffn=3072",
                  ArchFlavor::kOnnx, kBertDims);
BENCHMARK_CAPTURE(BuildAndCount, BertBase_torch, "bert:layers=12,hidden=768,heads=12,ffn=3072",
                  ArchFlavor::kTorch, kBertDims);
BENCHMARK_CAPTURE(BuildOnly, BertBase_onnx, "bert:layers=12,hidden=768,heads=12,ffn=3072",
                  ArchFlavor::kOnnx, kBertDims);
BENCHMARK_CAPTURE(BuildIntoAndCount, BertBase_onnx, "bert:layers=12,hidden=768,heads=12,ffn=3072",
                  ArchFlavor::kOnnx, kBertDims);
BENCHMARK_CAPTURE(BuildIntoAndCount, BertBase_torch, "bert:layers=12,hidden=768,heads=12,ffn=3072",
                  ArchFlavor::kTorch, kBertDims);
BENCHMARK_CAPTURE(BuildIntoAndCount, ResNet50_onnx, "resnet:depth=50", ArchFlavor::kOnnx,
                  DimBindings{});
BENCHMARK(BertSearchLoop);

}  // namespace
}  // namespace ftax

BENCHMARK_MAIN();
