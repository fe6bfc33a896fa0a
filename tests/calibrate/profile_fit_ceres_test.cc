// Fits on SYNTHETIC measurements generated from known parameters (synthetic_measurements.h):
// the fits must recover them, report plausible standard errors and held-out errors, and
// refuse data that the model cannot explain.
#include "calibrate/cpu_gauge.h"
#include "calibrate/profile_fit.h"

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "predictor/kernel_cost.h"
#include "synthetic_measurements.h"

namespace ftax {
namespace {

using json = nlohmann::json;
using testing::H200LikeSpec;
using testing::MakeSyntheticMeasurements;
using testing::SyntheticSpec;

// Defaults, but one holdout split: these tests are about the fits, not the holdout.
FitOptions TestOptions() {
  FitOptions o;
  o.holdout_repeats = 1;
  return o;
}

Measurements FromSpec(const SyntheticSpec& spec) {
  Expected<Measurements> m = MeasurementsFromJson(MakeSyntheticMeasurements(spec));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

// Does the memory term of the TRUE model bind on any generated row of this class? If not,
// no fit can determine the bandwidth and it must come back as a marked lower bound.
bool MemoryBindsSomewhere(const testing::SyntheticKernelClass& c, int num_sms) {
  if (!IsComputeClass(c.cls)) return true;
  for (const KernelWork& w : testing::SyntheticWorks(c))
    if (w.bytes / (c.theta.bandwidth_gbps * 1e3) >
        EffectiveFlops(w, c.tile_m, c.tile_n, num_sms) / (c.theta.rate_tflops * 1e6))
      return true;
  return false;
}

bool HasNote(const KernelFit& k, const std::string& text) {
  for (const std::string& n : k.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

const KernelFit* FindKernel(const Calibration& c, KernelClass cls, DType t) {
  for (const KernelFit& k : c.kernels)
    if (k.cls == cls && k.dtype == t) return &k;
  return nullptr;
}

const FrameworkFit* FindFramework(const Calibration& c, Framework f) {
  for (const FrameworkFit& x : c.frameworks)
    if (x.framework == f) return &x;
  return nullptr;
}

// |fitted - truth| within `rel` of the truth, and within `k_se` standard errors (+ 1e-9).
void ExpectRecovered(const Param& p, double truth, double rel, const char* what) {
  ASSERT_TRUE(p.known()) << what;
  EXPECT_NEAR(p.value, truth, rel * truth) << what;
}

void ExpectPlausibleStdError(const Param& p, double truth, const char* what) {
  ASSERT_TRUE(std::isfinite(p.std_error)) << what << ": standard error missing";
  EXPECT_GT(p.std_error, 0) << what;
  EXPECT_LT(p.std_error, 0.2 * std::abs(p.value)) << what << ": implausibly large";
  // The truth lies within 5 standard errors (a loose, but falsifiable, coverage check).
  EXPECT_LT(std::abs(p.value - truth), 5 * p.std_error + 1e-9)
      << what << ": fitted " << p.value << " ± " << p.std_error << ", truth " << truth;
}

TEST(ProfileFitTest, RecoversKernelParametersFromNoisyData) {
  SyntheticSpec spec = H200LikeSpec();  // 3% log-normal noise
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  for (const auto& truth : spec.classes) {
    const KernelFit* k = FindKernel(c.value(), truth.cls, truth.dtype);
    ASSERT_NE(k, nullptr) << KernelKey(truth.cls, truth.dtype);
    const std::string key = KernelKey(truth.cls, truth.dtype);
    SCOPED_TRACE(key);
    ExpectRecovered(k->params.floor_us, truth.theta.floor_us, 0.10, "floor_us");
    ExpectPlausibleStdError(k->params.floor_us, truth.theta.floor_us, "floor_us");
    if (MemoryBindsSomewhere(truth, spec.num_sms)) {
      ExpectRecovered(k->params.bandwidth_gbps, truth.theta.bandwidth_gbps, 0.06, "bandwidth_gbps");
      ExpectPlausibleStdError(k->params.bandwidth_gbps, truth.theta.bandwidth_gbps, "bandwidth_gbps");
    } else {
      // gemm/fp32: at 48 TFLOP/s every generated GEMM is compute bound.
      EXPECT_LE(k->params.bandwidth_gbps.value, truth.theta.bandwidth_gbps);
      EXPECT_FALSE(std::isfinite(k->params.bandwidth_gbps.std_error));
      EXPECT_TRUE(HasNote(*k, "bandwidth_gbps not determined")) << key;
    }
    if (IsComputeClass(truth.cls)) {
      ExpectRecovered(k->params.rate_tflops, truth.theta.rate_tflops, 0.05, "rate_tflops");
      ExpectPlausibleStdError(k->params.rate_tflops, truth.theta.rate_tflops, "rate_tflops");
      EXPECT_EQ(k->params.tile_m, truth.tile_m);
      EXPECT_EQ(k->params.tile_n, truth.tile_n);
    } else {
      EXPECT_FALSE(k->params.rate_tflops.known());
    }
    EXPECT_GT(k->params.r2, 0.99);
    EXPECT_LT(k->fit_error.median_abs_pct, 4.0);  // noise sigma 3%: median |error| ~ 2%
    EXPECT_GT(k->fit_error.median_abs_pct, 0.5);  // ... but not zero: the noise is there
  }
  EXPECT_TRUE(c->quality_failures.empty());
}

TEST(ProfileFitTest, NoiseFreeDataIsRecoveredExactly) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  for (const auto& truth : spec.classes) {
    const KernelFit* k = FindKernel(c.value(), truth.cls, truth.dtype);
    ASSERT_NE(k, nullptr);
    SCOPED_TRACE(KernelKey(truth.cls, truth.dtype));
    EXPECT_NEAR(k->params.floor_us.value, truth.theta.floor_us, 1e-3 * truth.theta.floor_us);
    if (MemoryBindsSomewhere(truth, spec.num_sms))
      EXPECT_NEAR(k->params.bandwidth_gbps.value, truth.theta.bandwidth_gbps,
                  1e-3 * truth.theta.bandwidth_gbps);
    else
      EXPECT_LE(k->params.bandwidth_gbps.value, truth.theta.bandwidth_gbps * (1 + 1e-6));
    if (IsComputeClass(truth.cls))
      EXPECT_NEAR(k->params.rate_tflops.value, truth.theta.rate_tflops,
                  1e-3 * truth.theta.rate_tflops);
    EXPECT_LT(k->fit_error.p90_abs_pct, 0.1);
  }
}

TEST(ProfileFitTest, FittedProfilePredictsThroughTheSameModel) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok());
  // A kernel the fit never saw: the profile's prediction matches the generating truth.
  KernelWork w;
  w.cls = KernelClass::kGemm;
  w.dtype = DType::kFloat16;
  w.m = 300;
  w.n = 2304;
  w.k = 768;
  w.flops = 2.0 * 300 * 2304 * 768;
  w.bytes = 2.0 * (300 * 768 + 768 * 2304 + 300 * 2304);
  const KernelParams* p = c->profile.gpu.Find(KernelClass::kGemm, DType::kFloat16);
  ASSERT_NE(p, nullptr);
  const double truth = KernelTimeUs(w, spec.classes[0].theta, 128, 128, spec.num_sms);
  EXPECT_NEAR(KernelTimeUs(w, *p, c->profile.gpu.num_sms), truth, 1e-3 * truth);
}

TEST(ProfileFitTest, HoldoutErrorIsReportedPerClass) {
  SyntheticSpec spec = H200LikeSpec();
  FitOptions options;
  Expected<Calibration> c = Calibrate(FromSpec(spec), options);
  ASSERT_TRUE(c.ok());
  for (const KernelFit& k : c->kernels) {
    SCOPED_TRACE(KernelKey(k.cls, k.dtype));
    EXPECT_EQ(k.holdout_error.points,
              options.holdout_repeats * int(std::lround(0.2 * k.params.points)));
    EXPECT_TRUE(std::isfinite(k.holdout_error.median_abs_pct));
    EXPECT_GT(k.holdout_error.median_abs_pct, 0.0);
    EXPECT_LT(k.holdout_error.median_abs_pct, 6.0);
    EXPECT_GE(k.holdout_error.p90_abs_pct, k.holdout_error.median_abs_pct);
  }
  // Same seed, same split, same numbers; another seed, another split.
  Expected<Calibration> again = Calibrate(FromSpec(spec), options);
  options.seed = 99;
  Expected<Calibration> other = Calibrate(FromSpec(spec), options);
  ASSERT_TRUE(again.ok() && other.ok());
  EXPECT_EQ(c->kernels[0].holdout_error.median_abs_pct,
            again->kernels[0].holdout_error.median_abs_pct);
  EXPECT_NE(c->kernels[0].holdout_error.median_abs_pct,
            other->kernels[0].holdout_error.median_abs_pct);
  // One split only: a fifth of the rows, and a different (noisier) estimate.
  options.seed = 1;
  options.holdout_repeats = 1;
  Expected<Calibration> single = Calibrate(FromSpec(spec), options);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->kernels[0].holdout_error.points, int(std::lround(0.2 * 25)));
  // No holdout when disabled.
  options.holdout_fraction = 0;
  Expected<Calibration> none = Calibrate(FromSpec(spec), options);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->kernels[0].holdout_error.points, 0);
}

TEST(ProfileFitTest, FrameworkLinearFitRecoversInterceptAndSlopes) {
  SyntheticSpec spec = H200LikeSpec();
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok());
  for (const auto& truth : spec.frameworks) {
    if (truth.framework == Framework::kCudaGraph) continue;
    const FrameworkFit* f = FindFramework(c.value(), truth.framework);
    ASSERT_NE(f, nullptr);
    SCOPED_TRACE(FrameworkName(truth.framework));
    ExpectRecovered(f->params.call_us, truth.call_us, 0.10, "call_us");
    for (int i = 0; i < kNumDispatchClasses; ++i)
      ExpectRecovered(f->params.dispatch_us[i], truth.dispatch_us[i], 0.05,
                      DispatchClassName(DispatchClass(i)));
    if (truth.module_us > 0) {
      ExpectRecovered(f->params.module_us, truth.module_us, 0.08, "module_us");
      EXPECT_TRUE(std::isfinite(f->params.module_us.std_error));
    } else {
      EXPECT_FALSE(f->params.module_us.known());
    }
    EXPECT_TRUE(std::isfinite(f->params.call_us.std_error));
    EXPECT_GT(f->params.r2, 0.99);
  }
}

TEST(ProfileFitTest, CudaGraphReplayCostAndNodeGap) {
  SyntheticSpec spec = H200LikeSpec();
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* g = FindFramework(c.value(), Framework::kCudaGraph);
  ASSERT_NE(g, nullptr);
  ExpectRecovered(g->params.call_us, 9.0, 0.05, "replay call_us");
  ExpectRecovered(g->params.node_gap_us, 0.9, 0.10, "node_gap_us");
  EXPECT_TRUE(std::isfinite(g->params.node_gap_us.std_error));
  for (const Param& d : g->params.dispatch_us) EXPECT_FALSE(d.known());
  EXPECT_NEAR(g->per_node_total_us, 1.5 + 0.9, 0.1);
  // The synthetic replay has no per-node host cost beyond kernels and gaps...
  ASSERT_TRUE(g->params.replay_per_node_us.known());
  EXPECT_LT(g->params.replay_per_node_us.value, 0.1);
  // ... and when it has one, the fit finds it and the profile carries it.
  for (auto& f : spec.frameworks)
    if (f.framework == Framework::kCudaGraph) f.replay_per_node_us = 0.7;
  Expected<Calibration> with = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(with.ok());
  const FrameworkParams* p = with->profile.FindFramework(Framework::kCudaGraph);
  ASSERT_NE(p, nullptr);
  ExpectRecovered(p->replay_per_node_us, 0.7, 0.08, "replay_per_node_us");
  EXPECT_TRUE(std::isfinite(p->replay_per_node_us.std_error));
  ExpectRecovered(p->call_us, 9.0, 0.05, "replay call_us with per-node cost");
}

// torch.compile's reduce-overhead chains: a call's wrapper time overlaps its replay, so call
// times stay flat until the GPU span passes them. call_us is the CPU-bound chains' call time and
// node_gap_us the slope of span - kernels (which also holds the input copy's lead, an intercept).
// Reduce-overhead chains of 2 to 65 nodes whose profiled spans grow `slope` us a node.
void AddReduceOverheadChains(json& j, double slope) {
  for (int n : {2, 9, 17, 33, 65}) {
    const double kernel = 1.2 * n, span = kernel + 18.0 + slope * n;
    j["dispatch"].push_back({{"framework", "torch-compile-reduce-overhead"}, {"class", "kernel"},
                             {"n_ops", n}, {"modules", 0},
                             {"call_us", {{"median", std::max(150.0, span) + 4.0}, {"p10", 150.0}, {"p90", 400.0}}},
                             {"gpu_kernel_us", kernel}, {"gpu_span_us", span}});
  }
}

// The bench's gap chains: adds over a large tensor, `gap` us apart by their unprofiled call time.
void AddGapChains(json& j, double gap) {
  for (int n : {16, 64}) {
    const double kernel = n * 5.0;  // 5 us a kernel: near the dispatch cost, not 1.2x above it
    const double span = kernel + (n - 1) * 25.0;  // the profiled pass, CPU paced
    j["dispatch"].push_back({{"framework", "libtorch-eager"}, {"class", "kernel"}, {"n_ops", n},
                             {"modules", 0}, {"elements", 8388608},
                             {"call_us", {{"median", 30.0 + kernel + (n - 1) * gap}}},
                             {"gpu_kernel_us", kernel}, {"gpu_span_us", span}});
  }
}

// Calibrates measurements given as JSON.
Expected<Calibration> CalibrateJson(const json& j) {
  Expected<Measurements> m = MeasurementsFromJson(j);
  if (!m.ok()) return m.status();
  return Calibrate(m.value(), TestOptions());
}

TEST(ProfileFitTest, ReduceOverheadWrapperTimeAndNodeGap) {
  json j = testing::MakeSyntheticMeasurements(testing::H200LikeSpec());
  AddReduceOverheadChains(j, 2.0);
  Expected<Calibration> c = CalibrateJson(j);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const FrameworkParams* p = c->profile.FindFramework(Framework::kTorchCompileReduceOverhead);
  ASSERT_NE(p, nullptr);
  ExpectRecovered(p->call_us, 154.0, 0.01, "wrapper call_us");
  ExpectRecovered(p->node_gap_us, 2.0, 0.02, "node_gap_us");
  EXPECT_DOUBLE_EQ(p->replay_per_node_us.value, 0.0);
  EXPECT_FALSE(p->call_before_replay);  // no marks, no module cost: the older reading
}

// Reduce-overhead chains whose replays were marked (bench_eager.py, replay_marks.py): the CPU's
// time before the replay is a + b per module (chains of layers give b), the replay's time on
// the GPU beyond its kernels c + a gap per node; call_us is a + c.
void AddMarkedReduceOverheadChains(json& j) {
  auto row = [&](const char* cls, const char* layers, int n, int modules) {
    const double kernel = 1.2 * n, before = 60.0 + 0.7 * modules, replay = kernel + 15.0 + 0.45 * n;
    json r = {{"framework", "torch-compile-reduce-overhead"}, {"class", cls}, {"n_ops", n}, {"modules", modules},
              {"call_us", {{"median", before + replay + 5.0}}}, {"gpu_kernel_us", kernel},
              {"gpu_span_us", kernel + 18.0 + 1.5 * n},
              {"before_replay_us", {{"median", before}}}, {"replay_gpu_us", {{"median", replay}}}};
    if (layers) r["layers"] = layers;
    j["dispatch"].push_back(r);
  };
  for (int n : {2, 9, 33, 65}) {
    row("kernel", nullptr, n, 0);
    row("library", nullptr, n, 0);
  }
  row("library", "convbn", 26, 33);
  row("library", "convbn", 98, 129);
  row("library", "lnlinear", 18, 33);
  row("library", "lnlinear", 66, 129);
}

TEST(ProfileFitTest, ReduceOverheadMarkedReplaysPriceTheCallBeforeTheReplay) {
  json j = testing::MakeSyntheticMeasurements(testing::H200LikeSpec());
  AddMarkedReduceOverheadChains(j);
  Expected<Calibration> c = CalibrateJson(j);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const FrameworkParams* p = c->profile.FindFramework(Framework::kTorchCompileReduceOverhead);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->call_before_replay);
  ExpectRecovered(p->call_us, 75.0, 0.01, "call_us before the replay");
  ExpectRecovered(p->module_us, 0.7, 0.02, "module_us");
  ExpectRecovered(p->node_gap_us, 0.45, 0.02, "node_gap_us");
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(c->profile));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->FindFramework(Framework::kTorchCompileReduceOverhead)->call_before_replay);

  // Only reduce-overhead rows mark a replay, and a chain of layers needs a time to price.
  json other = j;
  other["dispatch"].back()["framework"] = "torch-compile";
  Expected<Measurements> bad = MeasurementsFromJson(other);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(".before_replay_us: only a torch.compile reduce-overhead chain"),
            std::string::npos)
      << bad.status().message();
  json unmarked = j;
  unmarked["dispatch"].back().erase("before_replay_us");
  Expected<Measurements> bad2 = MeasurementsFromJson(unmarked);
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.status().message().find(".layers"), std::string::npos) << bad2.status().message();
}

// Without marks, a bench that priced a module in the default mode reads reduce-overhead the same
// way: call_us from the longest chain, its call less its kernels and cuda-graph's gap a node;
// the node gap and module cost are left to cuda-graph's and the default mode's.
TEST(ProfileFitTest, ReduceOverheadWithoutMarksTakesTheLongestChainLessItsReplay) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  for (int n : {1, 8, 32, 64})
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "kernel"},
                             {"n_ops", n}, {"graph_inputs", 4 * n}, {"modules", 0},
                             {"call_us", {{"median", 38.0 + 14.0 * n + 1.5 * 4 * n}}},
                             {"outside_us", {{"median", 90.0 + 1.2 * n}}}});
  for (int n : {8, 32})
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "library"},
                             {"layers", "convbn"}, {"n_ops", 2 * n}, {"graph_inputs", 5 * n}, {"modules", 4 * n + 1},
                             {"call_us", {{"median", 5000.0 * n}}},
                             {"outside_us", {{"median", 90.0 + 1.5 * n + 1.2 * (4 * n + 1)}}}});
  AddReduceOverheadChains(j, 2.0);
  Expected<Calibration> c = CalibrateJson(j);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->profile.frameworks.at("torch-compile").module_us.known());
  const FrameworkParams* p = c->profile.FindFramework(Framework::kTorchCompileReduceOverhead);
  const FrameworkParams* cg = c->profile.FindFramework(Framework::kCudaGraph);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(cg, nullptr);
  EXPECT_TRUE(p->call_before_replay);
  // The 65-node chain: span 78 + 18 + 2 x 65, called in 4 us more; its kernels take 78.
  const double call = 78.0 + 18.0 + 130.0 + 4.0;
  ExpectRecovered(p->call_us, call - 78.0 - 65 * cg->node_gap_us.value, 0.01, "call_us");
  EXPECT_FALSE(p->node_gap_us.known());
  EXPECT_FALSE(p->module_us.known());
}

// A replayed node waits at least the GPU's gap between dependent kernels: a chain slope under
// the gap chains' gap is raised to it, with a note; one above it is kept.
TEST(ProfileFitTest, ReduceOverheadNodeGapIsAtLeastTheKernelGap) {
  for (double slope : {1.2, 2.4}) {
    json j = testing::MakeSyntheticMeasurements(testing::H200LikeSpec());
    AddReduceOverheadChains(j, slope);
    AddGapChains(j, 1.7);
    Expected<Calibration> c = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
    ASSERT_TRUE(c.ok()) << c.status().message();
    ExpectRecovered(c->profile.gpu.kernel_gap_us, 1.7, 0.01, "kernel_gap_us");
    const FrameworkParams* p = c->profile.FindFramework(Framework::kTorchCompileReduceOverhead);
    ASSERT_NE(p, nullptr);
    ExpectRecovered(p->node_gap_us, std::max(slope, 1.7), 0.02, "node_gap_us");
    const FrameworkFit* f = FindFramework(c.value(), Framework::kTorchCompileReduceOverhead);
    ASSERT_NE(f, nullptr);
    EXPECT_DOUBLE_EQ(f->params.node_gap_us.value, p->node_gap_us.value);
    bool noted = false;
    for (const std::string& n : f->notes) noted = noted || n.find("raised from the chains' 1.20 us") != std::string::npos;
    EXPECT_EQ(noted, slope < 1.7) << "slope " << slope;
  }
}

// Graphs of model-sized blocks are reported, not fitted: adding them leaves the cuda-graph
// parameters as they were, and a note per chain gives their per-node cost.
TEST(ProfileFitTest, ModelSizedGraphChainsAreReportedNotFitted) {
  json m = testing::MakeSyntheticMeasurements(H200LikeSpec());
  Expected<Measurements> bare = MeasurementsFromJson(m);
  ASSERT_TRUE(bare.ok());
  Expected<Calibration> before = Calibrate(bare.value(), TestOptions());
  ASSERT_TRUE(before.ok());
  const double call = before->profile.FindFramework(Framework::kCudaGraph)->call_us.value;
  // 4 nodes per block, 10 us of kernels per block, 3 us per node beyond the kernels of which
  // 0.5 us GPU idle: far from the tiny chains', so a fit that used them would move.
  for (int blocks : {4, 16, 48}) {
    const double nodes = 4.0 * blocks, kern = 10.0 * blocks, t = call + kern + 3.0 * nodes;
    m["dispatch"].push_back({{"framework", "cuda-graph"}, {"class", "kernel"}, {"chain", "transformer"},
                             {"dtype", "fp16"}, {"n_ops", blocks}, {"nodes", nodes}, {"modules", 0},
                             {"call_us", {{"median", t}, {"p10", t}, {"p90", t}}},
                             {"gpu_kernel_us", kern}, {"gpu_span_us", kern + 0.5 * nodes}});
  }
  Expected<Measurements> with_chains = MeasurementsFromJson(m);
  ASSERT_TRUE(with_chains.ok()) << with_chains.status().message();
  Expected<Calibration> after = Calibrate(with_chains.value(), TestOptions());
  ASSERT_TRUE(after.ok());
  const FrameworkParams* a = after->profile.FindFramework(Framework::kCudaGraph);
  const FrameworkParams* b = before->profile.FindFramework(Framework::kCudaGraph);
  EXPECT_DOUBLE_EQ(a->call_us.value, b->call_us.value);
  EXPECT_DOUBLE_EQ(a->replay_per_node_us.value, b->replay_per_node_us.value);
  EXPECT_DOUBLE_EQ(a->node_gap_us.value, b->node_gap_us.value);
  const FrameworkFit* g = FindFramework(after.value(), Framework::kCudaGraph);
  ASSERT_NE(g, nullptr);
  bool found = false;
  for (const std::string& n : g->notes)
    if (n.find("transformer fp16: 3.00 us per node") != std::string::npos &&
        n.find("0.50 us of it GPU idle") != std::string::npos && n.find("not fitted") != std::string::npos)
      found = true;
  EXPECT_TRUE(found) << "no note for the transformer chain";
}

TEST(ProfileFitTest, KernelGapNullWhenEagerRowsAreCpuBound) {
  SyntheticSpec spec = H200LikeSpec();  // tiny ops: 1.5 µs kernels behind 4.5 µs dispatches
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->profile.gpu.kernel_gap_us.known());
  bool explained = false;
  for (const std::string& n : c->notes) explained = explained || n.find("CPU bound") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(ProfileFitTest, KernelGapFromGpuBoundEagerRows) {
  SyntheticSpec spec = H200LikeSpec();
  spec.kernel_gap_us = 1.2;
  Expected<Calibration> c = Calibrate(FromSpec(spec), TestOptions());
  ASSERT_TRUE(c.ok());
  ExpectRecovered(c->profile.gpu.kernel_gap_us, 1.2, 0.15, "kernel_gap_us");
  // The GPU-bound rows must not bend the CPU dispatch fit.
  const FrameworkFit* f = FindFramework(c.value(), Framework::kLibtorchEager);
  ASSERT_NE(f, nullptr);
  ExpectRecovered(f->params.dispatch_us[int(DispatchClass::kKernel)], 4.5, 0.05, "dispatch kernel");
}

// The bench's gap chains (`elements`: adds over a tensor large enough that the GPU sets the
// pace) give the gap from their unprofiled call time, whatever their profiled span (CUPTI slows
// the launches) or their kernels' time per op, and never enter the CPU's fit.
TEST(ProfileFitTest, KernelGapFromTheBenchsGapChains) {
  SyntheticSpec spec = H200LikeSpec();  // every 8x8 chain CPU bound: no gap from them
  json j = MakeSyntheticMeasurements(spec);
  Expected<Calibration> without = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
  ASSERT_TRUE(without.ok());
  ASSERT_FALSE(without->profile.gpu.kernel_gap_us.known());
  AddGapChains(j, 1.7);
  Expected<Calibration> with = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
  ASSERT_TRUE(with.ok());
  ExpectRecovered(with->profile.gpu.kernel_gap_us, 1.7, 0.01, "kernel_gap_us");
  const FrameworkFit* a = FindFramework(without.value(), Framework::kLibtorchEager);
  const FrameworkFit* b = FindFramework(with.value(), Framework::kLibtorchEager);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(a->params.dispatch_us[int(DispatchClass::kKernel)].value,
                   b->params.dispatch_us[int(DispatchClass::kKernel)].value);
  EXPECT_DOUBLE_EQ(a->params.call_us.value, b->params.call_us.value);
  EXPECT_EQ(a->params.points, b->params.points);
}

TEST(ProfileFitTest, InconsistentClassFailsTheQualityGateByName) {
  SyntheticSpec spec = H200LikeSpec();
  json j = MakeSyntheticMeasurements(spec);
  // Scramble the reduction times: same values, assigned to the wrong sizes.
  std::vector<json*> rows;
  for (json& r : j["kernels"])
    if (r["class"] == "reduction") rows.push_back(&r);
  ASSERT_GT(rows.size(), 10u);
  std::vector<json> times;
  for (json* r : rows) times.push_back((*r)["kernel_us"]);
  for (size_t i = 0; i < rows.size(); ++i) (*rows[i])["kernel_us"] = times[(i * 7 + 3) % rows.size()];
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok());
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  ASSERT_FALSE(c->quality_failures.empty());
  for (const std::string& f : c->quality_failures)
    EXPECT_NE(f.find("reduction/fp16"), std::string::npos) << f;
  // The gates are options: relaxed far enough, the same data passes.
  FitOptions lax;
  lax.min_r2 = -100;
  lax.max_holdout_median_err_pct = 1e6;
  Expected<Calibration> relaxed = Calibrate(m.value(), lax);
  ASSERT_TRUE(relaxed.ok());
  EXPECT_TRUE(relaxed->quality_failures.empty());
}

TEST(ProfileFitTest, TooFewRowsIsAQualityFailureNotACrash) {
  SyntheticSpec spec = H200LikeSpec();
  json j = MakeSyntheticMeasurements(spec);
  json kept = json::array();
  int copies = 0;
  for (const json& r : j["kernels"])
    if (r["class"] != "reduction" || copies++ < 2) kept.push_back(r);
  j["kernels"] = kept;
  Expected<Calibration> c = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->quality_failures.size(), 1u);
  EXPECT_NE(c->quality_failures[0].find("reduction/fp16: not fitted"), std::string::npos)
      << c->quality_failures[0];
  EXPECT_EQ(c->profile.gpu.Find(KernelClass::kReduction, DType::kFloat16), nullptr);
}

TEST(ProfileFitTest, MissingSmCountIsAnError) {
  json j = MakeSyntheticMeasurements(H200LikeSpec());
  j["host"].erase("sm_count");
  Measurements m = MeasurementsFromJson(j).value();
  Expected<Calibration> c = Calibrate(m, TestOptions());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("sm_count"), std::string::npos);
  FitOptions with_sms;
  with_sms.num_sms = 132;
  EXPECT_TRUE(Calibrate(m, with_sms).ok());
}

TEST(ProfileFitTest, WrittenProfileValidatesAndCarriesFitQuality) {
  Expected<Calibration> c = Calibrate(FromSpec(H200LikeSpec()), TestOptions());
  ASSERT_TRUE(c.ok());
  json pj = HostProfileToJson(c->profile);
  Expected<HostProfile> back = HostProfileFromJson(pj);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->synthetic);
  EXPECT_EQ(back->gpu.num_sms, 132);
  EXPECT_EQ(back->gpu.kernels.size(), 4u);
  ASSERT_TRUE(pj["fit"].contains("kernels"));
  EXPECT_TRUE(pj["fit"]["kernels"][0]["holdout"]["median_abs_err_pct"].is_number());
  const KernelParams* gemm = back->gpu.Find(KernelClass::kGemm, DType::kFloat16);
  ASSERT_NE(gemm, nullptr);
  EXPECT_GT(gemm->max_flops, gemm->min_flops);
  EXPECT_EQ(gemm->points, 77);
}

// torch.compile's convolutions in several geometries, each chain with the CPU gauge read around
// it: the chains are brought to the host's fast state (the gauges' 10th percentile) and fitted
// together, one cost for the fewest launches and one per further launch. By hand: 20 us a
// convolution plus 8 per further launch at the fast state (gauge 3.0); the 3x3 chain (a
// weight copy beside each convolution: 2 launches) ran at gauge 6.0, twice as slow, so it
// measured 2 x (20 + 8) = 56 us a convolution; the 1x1 and depthwise chains (1 launch) ran
// fast, 20 us. Without its gauge the 3x3 chain would price each further launch at 36.
TEST(ProfileFitTest, TorchCompileConvolutionGeometriesAreBroughtToTheFastStateAndFittedTogether) {
  SyntheticSpec spec = H200LikeSpec();
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  struct Chain {
    const char* geometry;
    double kernels, slope, gauge;
    std::vector<int> lengths;
  };
  for (const Chain& g : {Chain{"", 2, 56.0, 6.0, {1, 16, 48}}, Chain{"1x1", 1, 20.0, 3.0, {1, 16}},
                         Chain{"dw", 1, 20.0, 3.0, {1, 16}}})
    for (int n : g.lengths) {
      const double slow = g.gauge / 3.0;
      json r = {{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "library"}, {"op", "conv"},
                {"n_ops", n}, {"modules", 0}, {"issue_us", {{"median", 50 * slow + g.slope * n}}},
                {"call_us", {{"median", 60 * slow + g.slope * n}}}, {"cpu_gauge_us", g.gauge}};
      if (*g.geometry) r["geometry"] = g.geometry;
      if (n == g.lengths.back()) r["kernels_per_call"] = g.kernels * n;
      j["dispatch"].push_back(r);
    }
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const CpuGaugeNormalization n = NormalizeToCpuGauge(&m.value());  // as `ftax calibrate` does
  EXPECT_DOUBLE_EQ(n.reference_us, 3.0);
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kTorchCompile);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->params.op_us.at("conv").value, 20.0, 1e-6);
  EXPECT_NEAR(f->params.op_launch_us.at("conv").value, 8.0, 1e-6);
  EXPECT_DOUBLE_EQ(f->params.op_kernels.at("conv"), 1.0);
  // The same chains without their gauges (benches before 2026-11-28): the slow chain prices
  // the further launch several times over.
  for (json& r : j["dispatch"]) r.erase("cpu_gauge_us");
  Expected<Measurements> raw = MeasurementsFromJson(j);
  ASSERT_TRUE(raw.ok());
  NormalizeToCpuGauge(&raw.value());
  Expected<Calibration> c2 = Calibrate(raw.value(), TestOptions());
  ASSERT_TRUE(c2.ok());
  const FrameworkFit* f2 = FindFramework(c2.value(), Framework::kTorchCompile);
  ASSERT_NE(f2, nullptr);
  EXPECT_GT(f2->params.op_launch_us.at("conv").value, 3 * 8.0);
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

TEST(ProfileFitTest, InseparableModuleCostHasNoStandardError) {
  // Every Python eager chain runs one module per op: module_us and dispatch_us cannot be told
  // apart, so their standard errors must be null (not invented) and the fit must say why.
  json j = testing::MakeSyntheticMeasurements(testing::H200LikeSpec());
  json kept = json::array();
  for (json r : j["dispatch"]) {
    if (r["framework"] == "pytorch-eager") {
      if (r["modules"] == 0) continue;
      r["modules"] = r["n_ops"];
    }
    kept.push_back(r);
  }
  j["dispatch"] = kept;
  Expected<Calibration> c = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kPytorchEager);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(std::isfinite(f->params.module_us.std_error));
  EXPECT_FALSE(std::isfinite(f->params.dispatch_us[int(DispatchClass::kKernel)].std_error));
  bool explained = false;
  for (const std::string& n : f->notes) explained = explained || n.find("not separable") != std::string::npos;
  EXPECT_TRUE(explained);
  // The sum per op is still determined: call time per op of a kernel chain (the rows were
  // generated with n/2 modules of 6 us and relabeled as n modules).
  EXPECT_NEAR(f->params.module_us.value + f->params.dispatch_us[int(DispatchClass::kKernel)].value,
              9.0 + 6.0 / 2, 0.5);  // generated with n/2 modules, relabeled as n
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

// Rows of `kernels_per_call` kernels: a batched GEMM call of 4 kernels, each one batch entry.
TEST(ProfileFitTest, RowsOfSeveralKernelsAreSplitIntoIdenticalKernels) {
  const KernelTheta truth{3.0, 400.0, 3000.0};
  json j = {{"schema_version", 1}, {"kind", "ftax-measurements"},
            {"host", {{"gpu", "SYNTHETIC"}, {"sm_count", 100}, {"synthetic", true}}}};
  json rows = json::array();
  for (int64_t m : {16, 64, 256, 1024, 2048})
    for (int64_t nk : {512, 1024, 4096})
      for (int kpc : {1, 4}) {
        KernelWork per;  // one kernel's work
        per.cls = KernelClass::kGemm;
        per.dtype = DType::kBFloat16;
        per.m = m;
        per.n = per.k = nk;
        per.batch = 2;
        per.flops = 2.0 * m * nk * nk * 2;
        per.bytes = 2.0 * 2 * (m * nk + nk * nk + m * nk);
        const double t = kpc * KernelTimeUs(per, truth, 128, 128, 100);
        rows.push_back({{"class", "gemm"}, {"dtype", "bf16"}, {"m", m}, {"n", nk}, {"k", nk},
                        {"batch", per.batch * kpc}, {"flops", per.flops * kpc},
                        {"bytes", per.bytes * kpc}, {"kernels_per_call", kpc},
                        {"kernel_us", {{"median", t}}}});
      }
  j["kernels"] = rows;
  Expected<Calibration> c = Calibrate(MeasurementsFromJson(j).value(), TestOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const KernelParams* p = c->profile.gpu.Find(KernelClass::kGemm, DType::kBFloat16);
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->floor_us.value, 3.0, 3e-3);
  EXPECT_NEAR(p->rate_tflops.value, 400.0, 0.4);
  EXPECT_EQ(p->tile_m, 128);
  EXPECT_EQ(p->tile_n, 128);
  // Ranges are per kernel: the 4-kernel rows add nothing beyond the 1-kernel ones.
  EXPECT_DOUBLE_EQ(p->max_flops, 2.0 * 2048 * 4096 * 4096 * 2);
}

TEST(ProfileFitTest, RobustLossResistsOutlierRows) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0.01;
  json j = MakeSyntheticMeasurements(spec);
  // Three elementwise rows disturbed 3x (another process on the GPU, say).
  int disturbed = 0;
  for (json& r : j["kernels"])
    if (r["class"] == "elementwise" && r["label"].get<std::string>().find("B") != std::string::npos &&
        disturbed < 3 && r["kernel_us"]["median"].get<double>() > 20) {
      r["kernel_us"] = testing::Spread(3 * r["kernel_us"]["median"].get<double>());
      ++disturbed;
    }
  ASSERT_EQ(disturbed, 3);
  Measurements m = MeasurementsFromJson(j).value();
  auto bandwidth_error = [&](FitLoss loss) {
    FitOptions o;
    o.loss = loss;
    Expected<Calibration> c = Calibrate(m, o);
    EXPECT_TRUE(c.ok());
    const KernelParams* p = c->profile.gpu.Find(KernelClass::kElementwise, DType::kFloat16);
    return std::abs(p->bandwidth_gbps.value / 3600.0 - 1);
  };
  const double huber = bandwidth_error(FitLoss::kHuber);
  const double cauchy = bandwidth_error(FitLoss::kCauchy);
  const double plain = bandwidth_error(FitLoss::kNone);
  std::printf("elementwise/fp16 bandwidth error with 3 outlier rows: huber %.2f%%, cauchy %.2f%%, "
              "none %.2f%%\n", 100 * huber, 100 * cauchy, 100 * plain);
  EXPECT_LT(cauchy, 0.03);
  EXPECT_LT(huber, plain);
  EXPECT_LT(cauchy, plain);
  EXPECT_GT(plain, 0.05);  // the outliers do bias a plain least-squares fit
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

// Rows of a variant (here GEMMs with the weight stored [k, n], measured twice as slow) stay
// out of the class's fit and become anchors that correct the model for that variant; plain
// anchors that only carry measurement noise do not beat the fit and are dropped.
TEST(ProfileFitTest, VariantRowsBecomeAnchorsAndStayOutOfTheFit) {
  SyntheticSpec spec = H200LikeSpec();
  json m = testing::MakeSyntheticMeasurements(spec);
  json extra = json::array();
  for (const json& r : m["kernels"]) {
    if (r["class"] != "gemm" || r["dtype"] != "fp16") continue;
    json v = r;
    v["variant"] = "nn";
    for (const char* q : {"median", "p10", "p90"})
      if (v["kernel_us"].contains(q)) v["kernel_us"][q] = 2.0 * v["kernel_us"][q].get<double>();
    extra.push_back(v);
  }
  ASSERT_GT(extra.size(), 5u);
  for (const json& v : extra) m["kernels"].push_back(v);
  Expected<Measurements> meas = MeasurementsFromJson(m);
  ASSERT_TRUE(meas.ok()) << meas.status().message();
  Expected<Calibration> c = Calibrate(meas.value(), TestOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const KernelFit* k = FindKernel(c.value(), KernelClass::kGemm, DType::kFloat16);
  ASSERT_NE(k, nullptr);
  const auto& truth = spec.classes[0];
  ASSERT_EQ(truth.cls, KernelClass::kGemm);
  ExpectRecovered(k->params.rate_tflops, truth.theta.rate_tflops, 0.05, "rate_tflops");
  size_t nn = 0, plain = 0;
  for (const KernelAnchor& a : k->params.anchors) (a.variant == KernelVariant::kGemmNN ? nn : plain)++;
  EXPECT_EQ(nn, extra.size());
  EXPECT_EQ(plain, 0u);
  EXPECT_TRUE(HasNote(*k, "anchors plain")) << "the dropped plain anchors are reported";
  // An nn GEMM between the measured shapes is priced at about twice the plain model.
  const KernelParams* p = c->profile.gpu.Find(KernelClass::kGemm, DType::kFloat16);
  ASSERT_NE(p, nullptr);
  KernelWork w;
  w.cls = KernelClass::kGemm;
  w.dtype = DType::kFloat16;
  w.variant = KernelVariant::kGemmNN;
  w.m = extra[2]["m"].get<int64_t>() * 3 / 2;
  w.n = extra[2]["n"].get<int64_t>();
  w.k = extra[2]["k"].get<int64_t>();
  w.flops = 2.0 * double(w.m) * double(w.n) * double(w.k);
  w.bytes = 2.0 * double(w.m * w.k + w.n * w.k + w.m * w.n);
  const double ratio = KernelTimeUs(w, *p, c->profile.gpu.num_sms) / ModelTimeUs(w, *p, c->profile.gpu.num_sms);
  EXPECT_NEAR(ratio, 2.0, 0.2);
  EXPECT_LT(k->anchor_loo_error.median_abs_pct, 10.0);
  EXPECT_GT(k->anchor_model_error.median_abs_pct, 40.0);
}


// Per-op chains: each op's cost is the slope of its issue time against the chain's length, with
// the kernels its longest chain launched per op; a chain the framework optimized away (fewer
// kernels than ops) and an op timed at one length only get no cost; the class fit is as it
// was without them.
TEST(ProfileFitTest, PerOpChainsGiveEachOpItsOwnCost) {
  json j = testing::MakeSyntheticMeasurements(H200LikeSpec());
  Expected<Measurements> bare = MeasurementsFromJson(j);
  ASSERT_TRUE(bare.ok());
  auto op_row = [](const std::string& op, const char* cls, int n, double issue, double kernels) {
    json r = {{"framework", "pytorch-eager"}, {"class", cls}, {"op", op}, {"n_ops", n}, {"modules", 0},
              {"issue_us", {{"median", issue}}}, {"call_us", {{"median", issue + 8}}}};
    if (kernels >= 0) r["kernels_per_call"] = kernels;
    return r;
  };
  for (int n : {1, 8, 32, 64}) {
    j["dispatch"].push_back(op_row("conv", "library", n, 20 + 25.0 * n, n == 64 ? 2.0 * n : -1));
    j["dispatch"].push_back(op_row("cat", "kernel", n, 5 + 1.0 * n, n == 64 ? 0.5 : -1));
  }
  j["dispatch"].push_back(op_row("view", "view", 16, 30, 0));
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  Expected<Calibration> c0 = Calibrate(bare.value(), TestOptions());
  ASSERT_TRUE(c.ok() && c0.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kPytorchEager);
  const FrameworkFit* f0 = FindFramework(c0.value(), Framework::kPytorchEager);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->params.op_us.size(), 1u);
  EXPECT_NEAR(f->params.op_us.at("conv").value, 25.0, 1e-6);
  EXPECT_DOUBLE_EQ(f->params.op_kernels.at("conv"), 2.0);
  for (int i = 0; i < kNumDispatchClasses; ++i)
    EXPECT_DOUBLE_EQ(f->params.dispatch_us[i].value, f0->params.dispatch_us[i].value);
  EXPECT_DOUBLE_EQ(f->params.call_us.value, f0->params.call_us.value);
  std::string notes;
  for (const std::string& n : f->notes) notes += n + "\n";
  EXPECT_NE(notes.find("op_us.cat: left out"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no cost for view (chains of one length only)"), std::string::npos) << notes;
  // The profile keeps them, and reads them back.
  json pj = HostProfileToJson(c->profile);
  EXPECT_NEAR(pj["frameworks"]["pytorch-eager"]["op_us"]["conv"]["value"].get<double>(), 25.0, 1e-6);
  Expected<HostProfile> back = HostProfileFromJson(pj);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->frameworks.at("pytorch-eager").op_kernels.at("conv"), 2.0);
  pj["frameworks"]["pytorch-eager"]["op_kernels"]["conv"] = -1;
  Expected<HostProfile> bad = HostProfileFromJson(pj);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("frameworks.pytorch-eager.op_kernels.conv"), std::string::npos);
  pj["frameworks"]["cuda-graph"]["op_us"] = {{"conv", {{"value", 3}, {"stderr", nullptr}, {"unit", "us"}}}};
  pj["frameworks"]["pytorch-eager"]["op_kernels"]["conv"] = 2;
  bad = HostProfileFromJson(pj);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("frameworks.cuda-graph.op_us"), std::string::npos);
}


// A chain of two ops ("batch_norm+relu") gives its first op's cost less the second's where the
// first op's own chain gave none (here: fused away, fewer kernels than ops); TorchScript's
// chains are read (their "fuser" flag too) and price it per op only where every one carried
// the CPU gauge (chains at an unknown CPU speed are reported, not fitted).
TEST(ProfileFitTest, ChainsOfTwoOpsAndTorchScriptChains) {
  SyntheticSpec spec = H200LikeSpec();
  spec.frameworks.push_back({Framework::kTorchscript, 20.0, {1.0, 7.0, 10.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  auto row = [](const char* fw, const std::string& op, int n, double issue, double kernels) {
    json r = {{"framework", fw}, {"class", "kernel"}, {"op", op}, {"n_ops", n}, {"modules", 0},
              {"issue_us", {{"median", issue}}}, {"call_us", {{"median", issue + 8}}}};
    if (kernels >= 0) r["kernels_per_call"] = kernels;
    return r;
  };
  for (int n : {1, 8, 32}) {
    const bool last = n == 32;
    j["dispatch"].push_back(row("pytorch-eager", "relu", n, 10 + 5.0 * n, last ? n : -1));
    j["dispatch"].push_back(row("pytorch-eager", "batch_norm", n, 10 + 1.0 * n, last ? 1 : -1));  // fused away
    j["dispatch"].push_back(row("pytorch-eager", "batch_norm+relu", n, 10 + 27.0 * n, last ? 3.0 * n : -1));
    json ts = row("torchscript", "linear", n, 10 + 30.0 * n, last ? n : -1);
    ts["fuser"] = true;
    j["dispatch"].push_back(ts);
  }
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dispatch.back().fuser, std::optional<bool>(true));
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kPytorchEager);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->params.op_us.at("relu").value, 5.0, 1e-6);
  ASSERT_TRUE(f->params.op_us.count("batch_norm"));
  EXPECT_NEAR(f->params.op_us.at("batch_norm").value, 22.0, 1e-6);
  EXPECT_DOUBLE_EQ(f->params.op_kernels.at("batch_norm"), 2.0);
  EXPECT_FALSE(f->params.op_us.count("batch_norm+relu"));
  std::string notes;
  for (const std::string& n : f->notes) notes += n + "\n";
  EXPECT_NE(notes.find("op_us.batch_norm: from the chain batch_norm+relu less relu's cost"), std::string::npos) << notes;
  const FrameworkFit* ts = FindFramework(c.value(), Framework::kTorchscript);
  ASSERT_NE(ts, nullptr);
  EXPECT_TRUE(ts->params.op_us.empty());
  std::string ts_notes;
  for (const std::string& n : ts->notes) ts_notes += n + "\n";
  EXPECT_NE(ts_notes.find("3 per-op chain row(s) not fitted: timed without the CPU gauge"),
            std::string::npos) << ts_notes;
  // The same chains, gauged: TorchScript's linear layers are priced by their own chain.
  json gauged = j;
  for (json& r : gauged["dispatch"])
    if (r["framework"] == "torchscript" && r.contains("op")) r["cpu_gauge_us"] = 3.0;
  Expected<Measurements> mg = MeasurementsFromJson(gauged);
  ASSERT_TRUE(mg.ok()) << mg.status().message();
  Expected<Calibration> cg = Calibrate(mg.value(), TestOptions());
  ASSERT_TRUE(cg.ok());
  const FrameworkFit* tsg = FindFramework(cg.value(), Framework::kTorchscript);
  ASSERT_NE(tsg, nullptr);
  ASSERT_TRUE(tsg->params.op_us.count("linear"));
  EXPECT_NEAR(tsg->params.op_us.at("linear").value, 30.0, 1e-6);
  json bad = j;
  bad["dispatch"].back()["fuser"] = "yes";
  EXPECT_FALSE(MeasurementsFromJson(bad).ok());
}

// Python eager convolution chains of 1, 8, 32 and 64 ops per geometry ("" is the first chain),
// each op costing `slope` us, the longest carrying its kernels.
struct ConvGeometry {
  const char* geometry;
  double kernels, slope;
};
void AddConvChains(json* j, std::initializer_list<ConvGeometry> geometries) {
  for (const ConvGeometry& g : geometries)
    for (int n : {1, 8, 32, 64}) {
      json r = {{"framework", "pytorch-eager"}, {"mode", "inference"}, {"class", "library"}, {"op", "conv"},
                {"n_ops", n}, {"modules", 0}, {"issue_us", {{"median", 9 + g.slope * n}}},
                {"call_us", {{"median", 20 + g.slope * n}}}};
      if (*g.geometry) r["geometry"] = g.geometry;
      if (n == 64) r["kernels_per_call"] = g.kernels * n;
      (*j)["dispatch"].push_back(r);
    }
}

// Convolution chains of several geometries (bench_eager.py's "conv:GEOMETRY" rows): a 3x3
// convolution over NCHW launches four kernels per op, a 1x1 or depthwise one launches one. The
// cost is fitted for one launch, and each further launch costs its own: by hand, 18 us per
// op plus 3.5 us per extra launch gives slopes of 28.5, 18 and 18 us.
TEST(ProfileFitTest, GeometriesLaunchingMoreKernelsPayPerLaunch) {
  json j = testing::MakeSyntheticMeasurements(H200LikeSpec());
  AddConvChains(&j, {{"", 4, 28.5}, {"1x1", 1, 18.0}, {"dw", 1, 18.0}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->dispatch.back().geometry, "dw");
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kPytorchEager);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->params.op_us.at("conv").value, 18.0, 1e-6);
  EXPECT_DOUBLE_EQ(f->params.op_kernels.at("conv"), 1.0);
  std::string notes;
  for (const std::string& n : f->notes) notes += n + "\n";
  EXPECT_NE(notes.find("op_us.conv: 3 geometries launching 1 to 4 kernels per op; each launch beyond the fewest cost 3.5 us"),
            std::string::npos) << notes;
  // That launch cost is the op's own: its further launches in a model cost it.
  EXPECT_NEAR(f->params.op_launch_us.at("conv").value, 3.5, 1e-6);
  EXPECT_NEAR(c->profile.frameworks.at("pytorch-eager").op_launch_us.at("conv").value, 3.5, 1e-6);
  // A geometry that is not a string is refused, naming the row.
  j["dispatch"].back()["geometry"] = 7;
  Expected<Measurements> bad = MeasurementsFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(".geometry"), std::string::npos) << bad.status().message();
}

// A geometry launching over twice the kernels of every other (SqueezeBERT's grouped layer,
// which the library runs group by group: 13 kernels a call) is left out of the shared fit and
// reported beside it. By hand: the three geometries above fit 18 us plus 3.5 per further
// launch, which would price 13 kernels at 18 + 12 x 3.5 = 60 us; its chain's 90 us per op
// would otherwise pull the launch cost up.
TEST(ProfileFitTest, AGroupByGroupGeometryIsLeftOutOfTheSharedFitAndReported) {
  json j = testing::MakeSyntheticMeasurements(H200LikeSpec());
  AddConvChains(&j, {{"", 4, 28.5}, {"1x1", 1, 18.0}, {"dw", 1, 18.0}, {"g4", 13, 90.0}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kPytorchEager);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->params.op_us.at("conv").value, 18.0, 1e-6);
  EXPECT_NEAR(f->params.op_launch_us.at("conv").value, 3.5, 1e-6);
  EXPECT_DOUBLE_EQ(f->params.op_kernels.at("conv"), 1.0);
  std::string notes;
  for (const std::string& n : f->notes) notes += n + "\n";
  EXPECT_NE(notes.find("op_us.conv: geometry g4 (13 kernels per op) left out of the fit: its chain cost 90.0 us per op, "
                       "where the fit prices 60.0"),
            std::string::npos) << notes;
  EXPECT_NE(notes.find("op_us.conv: 3 geometries launching 1 to 4 kernels per op"), std::string::npos) << notes;
  // Beside one geometry alone (or others that all launch alike) nothing marks it as the odd
  // one: the shared fit takes it, its 9 launches beyond the 3x3's four priced (90 - 28.5) / 9.
  json two = j;
  json kept = json::array();
  for (const json& r : two["dispatch"])
    if (r.value("geometry", "") != "dw" && r.value("geometry", "") != "1x1") kept.push_back(r);
  two["dispatch"] = kept;
  Expected<Measurements> m2 = MeasurementsFromJson(two);
  ASSERT_TRUE(m2.ok());
  Expected<Calibration> c2 = Calibrate(m2.value(), TestOptions());
  ASSERT_TRUE(c2.ok());
  const FrameworkFit* f2 = FindFramework(c2.value(), Framework::kPytorchEager);
  ASSERT_NE(f2, nullptr);
  EXPECT_NEAR(f2->params.op_launch_us.at("conv").value, 61.5 / 9, 1e-6);
}

// Empty kernels launched back to back: the slope of the time to launch n of them is one
// launch's host cost (gpu.launch_us). By hand: 0.8 + 2.25 n us; one length alone gives none.
TEST(ProfileFitTest, KernelLaunchCostIsTheSlopeOfBackToBackLaunches) {
  json j = testing::MakeSyntheticMeasurements(H200LikeSpec());
  Expected<Measurements> none = MeasurementsFromJson(j);
  ASSERT_TRUE(none.ok());
  Expected<Calibration> c0 = Calibrate(none.value(), TestOptions());
  ASSERT_TRUE(c0.ok());
  EXPECT_FALSE(c0->profile.gpu.launch_us.known());
  j["launches"] = json::array();
  for (int n : {1, 16, 64, 256})
    j["launches"].push_back({{"n", n}, {"issue_us", {{"median", 0.8 + 2.25 * n}, {"p10", 0.7 + 2.2 * n},
                                                     {"p90", 1.0 + 2.4 * n}}}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->launches.size(), 4u);
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->profile.gpu.launch_us.value, 2.25, 1e-6);
  EXPECT_NEAR(HostProfileFromJson(HostProfileToJson(c->profile))->gpu.launch_us.value, 2.25, 1e-6);
  // A row without n, or with a negative time, is refused, naming the row.
  j["launches"][2].erase("n");
  Expected<Measurements> bad = MeasurementsFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("launches[2].n"), std::string::npos) << bad.status().message();
  j["launches"][2]["n"] = 64;
  j["launches"][2]["issue_us"]["median"] = -1;
  EXPECT_FALSE(MeasurementsFromJson(j).ok());
}

// torch.compile's default mode: its compiled chains of library ops (each convolution with the
// Triton copy of its weight Inductor adds) price a compiled model's library calls by op type,
// beside the class costs its class chains give; reduce-overhead replays keep no per-op cost.
TEST(ProfileFitTest, TorchCompileLibraryCallsPricedByOpType) {
  SyntheticSpec spec = H200LikeSpec();
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  for (int n : {1, 16, 48}) {
    const bool last = n == 48;
    json conv = {{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "library"}, {"op", "conv"},
                 {"n_ops", n}, {"modules", 0}, {"issue_us", {{"median", 60 + 41.0 * n}}},
                 {"call_us", {{"median", 70 + 41.0 * n}}}};
    json mm = conv;
    mm["op"] = "matmul";
    mm["issue_us"] = {{"median", 60 + 16.0 * n}};
    if (last) {
      conv["kernels_per_call"] = 2.0 * n + 1;
      mm["kernels_per_call"] = double(n);
    }
    j["dispatch"].push_back(conv);
    j["dispatch"].push_back(mm);
  }
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkFit* f = FindFramework(c.value(), Framework::kTorchCompile);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->params.op_us.count("conv"));
  EXPECT_NEAR(f->params.op_us.at("conv").value, 41.0, 1e-6);
  EXPECT_NEAR(f->params.op_us.at("matmul").value, 16.0, 1e-6);
  EXPECT_NEAR(f->params.op_kernels.at("conv"), 2.02, 1e-9);  // (2 * 48 + 1) / 48, to 2 places
  EXPECT_NEAR(f->params.dispatch_us[int(DispatchClass::kLibrary)].value, 15.0, 2.0);  // class chains: unchanged
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(c->profile));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_NEAR(back->frameworks.at("torch-compile").op_us.at("conv").value, 41.0, 1e-6);
}

// bench_eager.py's parameter chain: the kernel chain with tensors of model state read by its
// kernels, each an input of the compiled graph. The slope beyond the kernel chain's is what one
// such input costs a call; a bench without the chain fits no input cost.
TEST(ProfileFitTest, TorchCompileParameterChainsGiveTheCostOfAGraphInput) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  Expected<Measurements> m0 = MeasurementsFromJson(j);
  ASSERT_TRUE(m0.ok()) << m0.status().message();
  Expected<Calibration> c0 = Calibrate(m0.value(), TestOptions());
  ASSERT_TRUE(c0.ok());
  EXPECT_FALSE(c0->profile.frameworks.at("torch-compile").input_us.known());
  for (int n : {1, 8, 32, 64})
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "kernel"},
                             {"n_ops", n}, {"graph_inputs", 4 * n}, {"modules", 0},
                             {"call_us", {{"median", 38.0 + 14.0 * n + 2.5 * 4 * n}}}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkParams& f = c->profile.frameworks.at("torch-compile");
  ASSERT_TRUE(f.input_us.known());
  EXPECT_NEAR(f.input_us.value, 2.5, 0.05);
  EXPECT_NEAR(f.dispatch_us[int(DispatchClass::kKernel)].value, 14.0, 0.2);  // the kernel chain's slope
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(c->profile));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_NEAR(back->frameworks.at("torch-compile").input_us.value, f.input_us.value, 1e-9);
}

}  // namespace
// bench_eager.py's module chain: the parameter chain with each kernel's four tensors held by a
// module nested in a module of its own (two modules per kernel), whose guards Dynamo checks
// every call. Fitted with the parameter chains, it separates what a module costs the call
// from what a tensor costs it; without module chains module_us stays unknown.
TEST(ProfileFitTest, TorchCompileModuleChainsGiveTheCostOfAModule) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  auto chain = [&](int n, int modules) {
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "kernel"},
                             {"n_ops", n}, {"graph_inputs", 4 * n}, {"modules", modules},
                             {"call_us", {{"median", 38.0 + 14.0 * n + 1.5 * 4 * n + 3.0 * modules}}}});
  };
  for (int n : {1, 8, 32, 64}) chain(n, 0);
  {
    Expected<Measurements> m = MeasurementsFromJson(j);
    ASSERT_TRUE(m.ok()) << m.status().message();
    Expected<Calibration> c = Calibrate(m.value(), TestOptions());
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(c->profile.frameworks.at("torch-compile").module_us.known());
    EXPECT_NEAR(c->profile.frameworks.at("torch-compile").input_us.value, 1.5, 0.05);
  }
  for (int n : {1, 8, 32, 64}) chain(n, 2 * n);
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkParams& f = c->profile.frameworks.at("torch-compile");
  ASSERT_TRUE(f.module_us.known());
  EXPECT_NEAR(f.module_us.value, 3.0, 0.05);
  EXPECT_NEAR(f.input_us.value, 1.5, 0.05);
  EXPECT_NEAR(f.dispatch_us[int(DispatchClass::kKernel)].value, 14.0, 0.2);  // the kernel chain's slope
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(c->profile));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_NEAR(back->frameworks.at("torch-compile").module_us.value, f.module_us.value, 1e-9);
}

// A bench that timed each default-mode chain's call outside the generated code prices a module
// from those times: the chains of real layers are in no other fit, and the kernel and
// parameter chains pin the time a call and a graph input take outside it.
TEST(ProfileFitTest, TorchCompileLayerChainsPriceAModuleFromTheTimeOutsideTheGeneratedCode) {
  SyntheticSpec spec = H200LikeSpec();
  spec.noise_sigma = 0;
  spec.frameworks.push_back({Framework::kTorchCompile, 38.0, {0.6, 14.0, 15.0}, 0, 1.5, 0});
  json j = testing::MakeSyntheticMeasurements(spec);
  auto outside = [](int inputs, int modules) { return 90.0 + 0.3 * inputs + 1.2 * modules; };
  for (int n : {1, 8, 32, 64})
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "kernel"},
                             {"n_ops", n}, {"graph_inputs", 4 * n}, {"modules", 0},
                             {"call_us", {{"median", 38.0 + 14.0 * n + 1.5 * 4 * n}}},
                             {"outside_us", {{"median", outside(4 * n, 0)}}}});
  // Layers: 4 modules and 5 graph inputs each, a call far dearer than any kernel chain's (its
  // convolutions): were it in the dispatch fit, the kernel's price would move.
  for (int n : {8, 32})
    j["dispatch"].push_back({{"framework", "torch-compile"}, {"mode", "inference"}, {"class", "library"},
                             {"layers", "convbn"}, {"n_ops", 2 * n}, {"graph_inputs", 5 * n}, {"modules", 4 * n + 1},
                             {"call_us", {{"median", 5000.0 * n}}},
                             {"outside_us", {{"median", outside(5 * n, 4 * n + 1)}}}});
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Calibration> c = Calibrate(m.value(), TestOptions());
  ASSERT_TRUE(c.ok());
  const FrameworkParams& f = c->profile.frameworks.at("torch-compile");
  ASSERT_TRUE(f.module_us.known());
  EXPECT_NEAR(f.module_us.value, 1.2, 0.05);
  EXPECT_NEAR(f.input_us.value, 1.5, 0.05);
  EXPECT_NEAR(f.dispatch_us[int(DispatchClass::kKernel)].value, 14.0, 0.2);
  EXPECT_NEAR(f.dispatch_us[int(DispatchClass::kLibrary)].value, 15.0, 1.0);

  // A chain of layers must say what it measured outside the generated code.
  json bad = j;
  bad["dispatch"].back().erase("outside_us");
  Expected<Measurements> m2 = MeasurementsFromJson(bad);
  ASSERT_FALSE(m2.ok());
  EXPECT_NE(m2.status().message().find(".layers"), std::string::npos) << m2.status().message();
  // Only torch.compile's default mode times the code outside a generated call.
  json eager = j;
  eager["dispatch"].back()["framework"] = "pytorch-eager";
  eager["dispatch"].back().erase("layers");
  eager["dispatch"].back().erase("graph_inputs");
  Expected<Measurements> m3 = MeasurementsFromJson(eager);
  ASSERT_FALSE(m3.ok());
  EXPECT_NE(m3.status().message().find(".outside_us"), std::string::npos) << m3.status().message();
}

}  // namespace
