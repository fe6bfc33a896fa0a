// Speed of the predictor itself: kernel-cost evaluations per second, and a BERT-base sweep
// (9 batches x 4 frameworks x 2 precisions) after the graph is built.
// Targets: >= 1 M kernel-cost evaluations/s; the sweep in <= 10 ms.
#include <benchmark/benchmark.h>

#include <random>

#include "graph/arch_spec.h"
#include "calibrate/profile_file.h"
#include "predictor/host_profile.h"
#include "predictor/kernel_cost.h"
#include "predictor/lowering.h"
#include "predictor/pipeline.h"
#include "predictor/predict.h"

namespace ftax {
namespace {

// A synthetic profile (made-up numbers of plausible size): speed does not depend on them.
HostProfile BenchProfile() {
  HostProfile p;
  p.synthetic = true;
  p.gpu.num_sms = 132;
  for (DType d : {DType::kFloat32, DType::kFloat16})
    for (KernelClass c : AllKernelClasses()) {
      KernelParams k;
      k.floor_us = Param::Of(2.5, 0.1);
      k.bandwidth_gbps = Param::Of(3000, 100);
      if (IsComputeClass(c)) k.rate_tflops = Param::Of(500, 10);
      p.gpu.kernels[KernelKey(c, d)] = k;
    }
  for (Framework f : AllFrameworks()) {
    FrameworkParams fp;
    fp.call_us = Param::Of(10, 1);
    for (auto& d : fp.dispatch_us) d = Param::Of(5, 0.2);
    fp.module_us = Param::Of(3, 0.3);
    fp.node_gap_us = Param::Of(0.3, 0.01);
    fp.replay_per_node_us = Param::Of(0.9, 0.05);
    p.frameworks[FrameworkName(f)] = fp;
  }
  return p;
}

void BM_KernelCost(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> dim(1, 8192);
  std::vector<KernelWork> ks(4096);
  for (auto& k : ks) {
    k.cls = KernelClass::kGemm;
    k.m = dim(rng);
    k.n = dim(rng);
    k.k = dim(rng);
    k.flops = 2.0 * k.m * k.n * k.k;
    k.bytes = 2.0 * (k.m * k.k + k.k * k.n + k.m * k.n);
  }
  KernelTheta theta{2.5, 700, 3000};
  size_t i = 0;
  double sum = 0;
  for (auto _ : state) {
    sum += KernelTimeUs(ks[i++ & 4095], theta, 128, 128, 132);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KernelCost);

// BERT-base at batch 1..256, built once: the sweeps below time prediction only.
std::vector<Graph> BertGraphs() {
  std::vector<Graph> graphs;
  for (int64_t b : {1, 2, 4, 8, 16, 32, 64, 128, 256})
    graphs.push_back(BuildArchGraph("bert:layers=12,hidden=768,heads=12,ffn=3072",
                                    {{"batch", b}, {"seq", 128}}, ArchFlavor::kTorch)
                         .value());
  return graphs;
}

// 9 batches x 4 frameworks x 2 precisions = 72 points, no interval.
void Sweep(benchmark::State& state, const HostProfile& prof) {
  const std::vector<Graph> graphs = BertGraphs();
  for (auto _ : state) {
    double total = 0;
    for (const Graph& g : graphs)
      for (Framework f : AllFrameworks())
        for (DType d : {DType::kFloat16, DType::kFloat32}) {
          auto p = PredictPoint(g, prof, f, d, /*samples=*/0, 1, nullptr);
          total += p->latency_ms;
        }
    benchmark::DoNotOptimize(total);
  }
}

void BM_BertSweep(benchmark::State& state) {
  Sweep(state, BenchProfile());
  state.SetLabel("72 points, graphs prebuilt, no interval");
}
BENCHMARK(BM_BertSweep)->Unit(benchmark::kMillisecond);

// The same sweep with a shipped profile, whose measured anchors correct every kernel.
void BM_BertSweepShippedProfile(benchmark::State& state) {
  Expected<HostProfile> prof = LoadHostProfile(FTAX_SOURCE_DIR "/validation/h200/2026-11-22f/profile.json");
  if (!prof.ok()) {
    state.SkipWithError(prof.status().message().c_str());
    return;
  }
  Sweep(state, prof.value());
  state.SetLabel("72 points, validation/h200/2026-11-22f/profile.json (anchored)");
}
BENCHMARK(BM_BertSweepShippedProfile)->Unit(benchmark::kMillisecond);

void BM_BertSweepWithInterval(benchmark::State& state) {
  const HostProfile prof = BenchProfile();
  Graph g = BuildArchGraph("bert:layers=12", {{"batch", 8}, {"seq", 128}}, ArchFlavor::kTorch).value();
  for (auto _ : state) {
    auto p = PredictPoint(g, prof, Framework::kPytorchEager, DType::kFloat16, 64, 1, nullptr);
    benchmark::DoNotOptimize(p->latency_ms);
  }
  state.SetLabel("one point with a 64-sample interval");
}
BENCHMARK(BM_BertSweepWithInterval)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ftax

BENCHMARK_MAIN();
