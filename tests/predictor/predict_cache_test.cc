// What the fast paths of prediction keep or reuse changes no number: a ProfileCache (class
// parameters and anchor corrections kept across calls), a work list predicted apart from its
// lowering (PredictWork), and graphs built again and again into one Graph
// (BuildArchGraphInto, as the Python module's fast path builds them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "calibrate/profile_file.h"
#include "graph/arch_spec.h"
#include "predictor/lowering.h"
#include "predictor/pipeline.h"
#include "predictor/predict.h"
#include "synthetic_profile.h"

namespace ftax {
namespace {

const std::vector<std::string> kSpecs = {
    "bert:layers=2,hidden=256,heads=4",   "bert:layers=5,hidden=320,heads=5,ffn=1000",
    "gpt:layers=3,hidden=512,heads=8",    "gpt:layers=2,kv_cache=1,past=100,lm_head=1",
    "resnet:depth=18,width=32",           "mobilenet:width_mult=0.75",
    "vit:layers=2,hidden=384,heads=6",    "bert:layers=12,hidden=768,heads=12,ffn=3072",
};

HostProfile Shipped(const char* name) {
  Expected<HostProfile> p = LoadHostProfile(std::string(FTAX_SOURCE_DIR "/data/profiles/") + name + ".json");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : HostProfile();
}

Graph Build(const std::string& spec, int64_t batch) {
  Expected<Graph> g = BuildArchGraph(spec, {{"batch", batch}, {"seq", 64}}, ArchFlavor::kTorch);
  EXPECT_TRUE(g.ok()) << spec << ": " << g.status().message();
  return g.ok() ? g.value() : Graph();
}

// Every number of a point, compared exactly.
void ExpectSame(const PredictionPoint& a, const PredictionPoint& b, const std::string& what) {
  EXPECT_EQ(a.latency_ms, b.latency_ms) << what;
  EXPECT_EQ(a.framework_ms, b.framework_ms) << what;
  EXPECT_EQ(a.launch_ms, b.launch_ms) << what;
  EXPECT_EQ(a.compute_ms, b.compute_ms) << what;
  EXPECT_EQ(a.bound, b.bound) << what;
  EXPECT_EQ(a.gpu_util, b.gpu_util) << what;
  EXPECT_EQ(a.interval_lo_ms, b.interval_lo_ms) << what;
  EXPECT_EQ(a.interval_hi_ms, b.interval_hi_ms) << what;
  EXPECT_EQ(a.dispatches, b.dispatches) << what;
  EXPECT_EQ(a.kernels, b.kernels) << what;
  EXPECT_EQ(a.module_calls, b.module_calls) << what;
  EXPECT_EQ(a.class_ms, b.class_ms) << what;
  EXPECT_EQ(a.generic_ops, b.generic_ops) << what;
  EXPECT_EQ(a.unpriced_ops, b.unpriced_ops) << what;
}

TEST(PredictCacheTest, ACachedProfileGivesTheSamePointsAndNotesColdAndWarm) {
  const HostProfile prof = Shipped("h200");
  ProfileCache cache;
  for (int pass = 0; pass < 2; ++pass)  // cold, then every value from the cache
    for (const std::string& spec : kSpecs) {
      const Graph g = Build(spec, 2);
      for (Framework f : {Framework::kPytorchEager, Framework::kLibtorchEager, Framework::kTorchscript,
                          Framework::kCudaGraph})
        for (DType d : {DType::kFloat16, DType::kFloat32, DType::kBFloat16})
          for (int samples : {0, 16}) {
            std::vector<std::string> plain_notes, cached_notes;
            auto plain = PredictPoint(g, prof, f, d, samples, 1, &plain_notes);
            auto cached = PredictPoint(g, prof, f, d, samples, 1, &cached_notes, &cache);
            ASSERT_TRUE(plain.ok() && cached.ok()) << spec;
            const std::string what = spec + " " + FrameworkName(f) + " " + DTypeName(d) + " pass " +
                                     std::to_string(pass);
            ExpectSame(plain.value(), cached.value(), what);
            EXPECT_EQ(plain_notes, cached_notes) << what;
          }
    }
  EXPECT_GT(cache.size(), 0u);
}

TEST(PredictCacheTest, ACacheServesOnlyTheProfileItWasFirstUsedWith) {
  const HostProfile h200 = Shipped("h200");
  const HostProfile h100 = Shipped("h100");
  ProfileCache cache;
  EXPECT_TRUE(cache.Serves(h200));
  EXPECT_FALSE(cache.Serves(h100));
  const Graph g = Build(kSpecs[7], 8);
  for (Framework f : {Framework::kPytorchEager, Framework::kCudaGraph}) {
    auto warm = PredictPoint(g, h200, f, DType::kFloat16, 0, 1, nullptr, &cache);
    auto other = PredictPoint(g, h100, f, DType::kFloat16, 0, 1, nullptr, &cache);
    auto plain = PredictPoint(g, h100, f, DType::kFloat16, 0, 1, nullptr);
    ASSERT_TRUE(warm.ok() && other.ok() && plain.ok());
    ExpectSame(other.value(), plain.value(), FrameworkName(f));
  }
}

TEST(PredictCacheTest, PredictWorkOfALoweredGraphIsPredictPoint) {
  const HostProfile prof = testing::SyntheticProfile();
  for (const std::string& spec : kSpecs) {
    const Graph g = Build(spec, 4);
    for (Framework f : AllFrameworks())
      for (DType d : {DType::kFloat16, DType::kFloat32}) {
        LoweringOptions lo;
        lo.framework = f;
        lo.precision = d;
        Expected<WorkList> w = Lower(g, lo);
        ASSERT_TRUE(w.ok()) << spec;
        auto a = PredictPoint(g, prof, f, d, 8, 1, nullptr);
        auto b = PredictWork(w.value(), prof, f, d, 8, 1, nullptr);
        ASSERT_TRUE(a.ok() && b.ok()) << spec;
        ExpectSame(a.value(), b.value(), spec + " " + FrameworkName(f));
      }
  }
}

// The fast path's graphs: one Graph rebuilt for spec after spec (deeper, shallower, another
// family) predicts exactly as a graph built fresh for each.
TEST(PredictCacheTest, GraphsBuiltIntoOneReusedGraphPredictAsFreshOnes) {
  const HostProfile prof = Shipped("h200");
  ProfileCache cache;
  Graph reused;
  const std::vector<std::string> order = {kSpecs[7], kSpecs[0], kSpecs[4], kSpecs[1], kSpecs[7],
                                          kSpecs[2], kSpecs[3], kSpecs[6], kSpecs[5], kSpecs[0]};
  for (const std::string& spec : order) {
    ASSERT_TRUE(BuildArchGraphInto(spec, {{"batch", 1}, {"seq", 64}}, ArchFlavor::kTorch, DType::kFloat32,
                                   &reused).ok()) << spec;
    const Graph fresh = Build(spec, 1);
    EXPECT_EQ(reused.ops.size(), fresh.ops.size()) << spec;
    EXPECT_EQ(reused.tensors.size(), fresh.tensors.size()) << spec;
    for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph}) {
      auto a = PredictPoint(fresh, prof, f, DType::kFloat16, 0, 1, nullptr);
      auto b = PredictPoint(reused, prof, f, DType::kFloat16, 0, 1, nullptr, &cache);
      ASSERT_TRUE(a.ok() && b.ok()) << spec;
      ExpectSame(a.value(), b.value(), spec + " " + FrameworkName(f));
    }
  }
}

}  // namespace
}  // namespace ftax
