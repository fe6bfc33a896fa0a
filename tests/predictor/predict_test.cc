#include "predictor/predict.h"

#include <gtest/gtest.h>

#include "graph/arch_spec.h"
#include "synthetic_profile.h"
#include "test_graph.h"

namespace ftax {
namespace {

GraphAtBatch Bert(const std::string& spec, ArchFlavor flavor = ArchFlavor::kTorch) {
  return [spec, flavor](int64_t b) { return BuildArchGraph(spec, {{"batch", b}, {"seq", 128}}, flavor); };
}

TEST(PredictTest, LatencyNeverDecreasesWithBatchNorFallsBelowEitherTerm) {
  HostProfile prof = testing::SyntheticProfile();
  PredictRequest req;
  req.frameworks = AllFrameworks();
  req.precisions = {DType::kFloat16, DType::kFloat32};
  req.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  req.interval_samples = 16;
  Expected<PredictionReport> r = PredictSweep(Bert("bert:layers=4"), prof, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), AllFrameworks().size() * 2u * 9u);
  for (size_t i = 0; i < r->points.size(); ++i) {
    const PredictionPoint& p = r->points[i];
    EXPECT_GE(p.latency_ms + 1e-9, p.compute_ms);
    if (p.framework != Framework::kCudaGraph) EXPECT_GE(p.latency_ms + 1e-9, p.framework_ms);
    EXPECT_LE(p.interval_lo_ms, p.latency_ms);
    EXPECT_GE(p.interval_hi_ms, p.latency_ms);
    if (i > 0 && r->points[i - 1].framework == p.framework && r->points[i - 1].precision == p.precision)
      EXPECT_GE(p.latency_ms + 1e-9, r->points[i - 1].latency_ms) << "batch " << p.batch;
  }
}

// A ResNet's batch norms under torch.compile's default mode: each one's weight, bias and
// running statistics are inputs of the compiled graph, and the point says how many and what
// they cost the call (input_us each); no other framework reports them.
TEST(PredictTest, ACompiledPointSaysWhatItsGraphInputsCost) {
  HostProfile prof = testing::SyntheticProfile();
  prof.frameworks.at("torch-compile").input_us = Param::Of(2.0, 0);
  PredictRequest req;
  req.frameworks = {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead, Framework::kPytorchEager};
  req.precisions = {DType::kFloat16};
  req.batches = {1};
  auto resnet = [](int64_t b) { return BuildArchGraph("resnet:depth=18", {{"batch", b}}, ArchFlavor::kTorch); };
  Expected<PredictionReport> r = PredictSweep(resnet, prof, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), 3u);
  // The default mode's price says that whole models have run slower than its chains.
  int short_notes = 0;
  for (const std::string& n : r->notes)
    if (n.find("likely short") != std::string::npos) {
      ++short_notes;
      EXPECT_EQ(n.rfind("torch-compile: ", 0), 0u) << n;
    }
  EXPECT_EQ(short_notes, 1);
  for (const PredictionPoint& p : r->points) {
    SCOPED_TRACE(FrameworkName(p.framework));
    if (p.framework == Framework::kTorchCompile) {
      EXPECT_EQ(p.graph_inputs, 20 * 4);  // ResNet-18's 20 batch norms, four tensors each
      EXPECT_NEAR(p.graph_input_ms, 2.0 * 80 / 1e3, 1e-12);
    } else {
      EXPECT_EQ(p.graph_inputs, 0);
      EXPECT_EQ(p.graph_input_ms, 0);
    }
  }
}

// A bench with chains of real layers prices the modules outside the generated code: the note
// no longer says the price is likely short, and says what a process can still pay beyond it.
TEST(PredictTest, ADefaultModePriceWithModulesSaysSoInsteadOfLikelyShort) {
  HostProfile prof = testing::SyntheticProfile();
  prof.frameworks.at("torch-compile").input_us = Param::Of(1.3, 0.1);
  prof.frameworks.at("torch-compile").module_us = Param::Of(0.7, 0.1);
  PredictRequest req;
  req.frameworks = {Framework::kTorchCompile};
  req.precisions = {DType::kFloat16};
  req.batches = {1};
  req.interval_samples = 0;
  auto resnet = [](int64_t b) { return BuildArchGraph("resnet:depth=18", {{"batch", b}}, ArchFlavor::kTorch); };
  Expected<PredictionReport> r = PredictSweep(resnet, prof, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  int priced = 0;
  for (const std::string& n : r->notes) {
    EXPECT_EQ(n.find("likely short"), std::string::npos) << n;
    if (n.find("outside the generated code for each graph input and each module") != std::string::npos) ++priced;
  }
  EXPECT_EQ(priced, 1);
  ASSERT_EQ(r->points.size(), 1u);
  EXPECT_GT(r->points[0].module_ms, 0);  // and the modules are priced in the point
}

TEST(PredictTest, CrossoverIsTheFirstComputeBoundBatch) {
  // Slow dispatch, slow GPU: crossover exists; check it against a brute-force scan.
  HostProfile prof = testing::SyntheticProfile(/*dispatch_us=*/20, /*gemm_tflops=*/50);
  PredictRequest req;
  req.frameworks = {Framework::kPytorchEager};
  req.precisions = {DType::kFloat16};
  req.batches = {1, 64};
  req.interval_samples = 0;
  auto model = Bert("bert:layers=2");
  Expected<PredictionReport> r = PredictSweep(model, prof, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->crossovers.size(), 1u);
  ASSERT_TRUE(r->crossovers[0].batch.has_value());
  const int64_t x = *r->crossovers[0].batch;
  auto compute_bound = [&](int64_t b) {
    Expected<Graph> g = model(b);
    auto p = PredictPoint(g.value(), prof, Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
    return p->compute_ms > p->framework_ms;
  };
  EXPECT_TRUE(compute_bound(x));
  if (x > 1) EXPECT_FALSE(compute_bound(x - 1));
}

TEST(PredictTest, FasterDispatchMovesCrossoverDown) {
  PredictRequest req;
  req.frameworks = {Framework::kLibtorchEager};
  req.precisions = {DType::kFloat16};
  req.batches = {1};
  req.interval_samples = 0;
  auto slow = PredictSweep(Bert("bert:layers=2"), testing::SyntheticProfile(40), req);
  auto fast = PredictSweep(Bert("bert:layers=2"), testing::SyntheticProfile(2), req);
  ASSERT_TRUE(slow.ok() && fast.ok());
  ASSERT_TRUE(slow->crossovers[0].batch && fast->crossovers[0].batch);
  EXPECT_GT(*slow->crossovers[0].batch, *fast->crossovers[0].batch);
}

TEST(PredictTest, SmallBatchIsFramworkBoundAndFlatInWidthUnderSlowDispatch) {
  HostProfile prof = testing::SyntheticProfile(30, 400);
  auto at = [&](const std::string& spec) {
    Expected<Graph> g = BuildArchGraph(spec, {{"batch", 1}, {"seq", 128}}, ArchFlavor::kTorch);
    return PredictPoint(g.value(), prof, Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
  };
  auto narrow = at("bert:layers=12,hidden=768,heads=12,ffn=3072");
  auto wide = at("bert:layers=12,hidden=1536,heads=12,ffn=6144");
  ASSERT_TRUE(narrow.ok() && wide.ok());
  EXPECT_EQ(narrow->bound, "framework");
  EXPECT_NEAR(wide->latency_ms, narrow->latency_ms, 0.1 * narrow->latency_ms);
  auto deep = at("bert:layers=24,hidden=768,heads=12,ffn=3072");
  EXPECT_GT(deep->latency_ms, 1.8 * narrow->latency_ms);  // depth adds dispatches
}

// A prediction lowers with its profile's kernel facts: a host whose eager fp16 attention
// runs no statistics memset has one kernel fewer per layer (4 layers: 4 kernels), and is
// no slower.
TEST(PredictTest, PointsLowerWithTheProfilesKernelFacts) {
  HostProfile prof = testing::SyntheticProfile();
  Expected<Graph> g = Bert("bert:layers=4")(1);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Expected<PredictionPoint> base = PredictPoint(g.value(), prof, Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
  prof.kernel_facts.attention_eager_memsets = 0;
  Expected<PredictionPoint> none = PredictPoint(g.value(), prof, Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
  ASSERT_TRUE(base.ok() && none.ok());
  EXPECT_EQ(base->kernels - none->kernels, 4);
  EXPECT_EQ(base->dispatches, none->dispatches);
  EXPECT_LE(none->compute_ms, base->compute_ms);
}

using testing::MakeOp;
using testing::T;

// A long GPU op, then positions made on the CPU and copied to the GPU (WavLM's relative
// positions): the prediction says how long the CPU waits for the GPU there, as part of its
// framework time, and the latency holds that wait. With the copy's device not named (a trace
// made on the CPU) nothing waits.
TEST(PredictTest, APointSaysHowLongTheCpuWaitsForTheGpuAtACopyToIt) {
  HostProfile prof = testing::SyntheticProfile();
  Graph g;
  g.tensors["x"] = T("x", {64, 1024, 1024}, DType::kFloat16);
  g.tensors["y"] = T("y", {64, 1024, 1024}, DType::kFloat16);
  g.tensors["pos"] = T("pos", {49}, DType::kInt64);
  g.tensors["idx"] = T("idx", {49}, DType::kInt64);
  g.tensors["w"] = T("w", {320, 12}, DType::kFloat16, true);
  g.tensors["bias"] = T("bias", {49, 12}, DType::kFloat16);
  g.inputs = {"x"};
  g.ops.push_back(MakeOp("aten", "add", {"x", "x"}, {"y"}));
  g.ops.push_back(MakeOp("aten", "arange", {}, {"pos"}));
  Op to = MakeOp("aten", "to", {"pos"}, {"idx"});
  to.attrs["device"].kind = Attribute::Kind::kString;
  to.attrs["device"].s = "cuda:0";
  g.ops.push_back(to);
  g.ops.push_back(MakeOp("aten", "embedding", {"w", "idx"}, {"bias"}));
  g.outputs = {"y", "bias"};
  Expected<PredictionPoint> waits = PredictPoint(g, prof, Framework::kTorchscript, DType::kFloat16, 0, 1, nullptr);
  ASSERT_TRUE(waits.ok()) << waits.status().message();
  EXPECT_GT(waits->sync_wait_ms, 0.5 * waits->compute_ms);
  EXPECT_LE(waits->sync_wait_ms, waits->framework_ms);
  EXPECT_GE(waits->latency_ms, waits->compute_ms + 1e-9);
  g.ops[2].attrs["device"].s = "cpu";
  Expected<PredictionPoint> free = PredictPoint(g, prof, Framework::kTorchscript, DType::kFloat16, 0, 1, nullptr);
  ASSERT_TRUE(free.ok()) << free.status().message();
  EXPECT_EQ(free->sync_wait_ms, 0);
  EXPECT_LT(free->framework_ms, waits->framework_ms);
}

// The GPU time and kernels by op type add up to the point's compute time and kernels, and
// name the graph's op types.
TEST(PredictTest, ComputeByOpTypeAddsUpToThePoint) {
  HostProfile prof = testing::SyntheticProfile();
  Expected<Graph> g = Bert("bert:layers=2")(4);
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (Framework f : {Framework::kPytorchEager, Framework::kCudaGraph}) {
    Expected<PredictionPoint> p = PredictPoint(g.value(), prof, f, DType::kFloat16, 0, 1, nullptr);
    ASSERT_TRUE(p.ok()) << p.status().message();
    double ms = 0;
    int kernels = 0;
    for (const auto& [op, v] : p->op_compute_ms) {
      ms += v.first;
      kernels += v.second;
    }
    EXPECT_NEAR(ms, p->compute_ms, 1e-9 + 1e-9 * p->compute_ms);
    EXPECT_EQ(kernels, p->kernels);
    ASSERT_TRUE(p->op_compute_ms.count("linear"));
    EXPECT_EQ(p->op_compute_ms.at("linear").second, 2 * 6 + 1);  // q, k, v, out, 2 FFN; pooler
  }
}

}  // namespace
}  // namespace ftax
