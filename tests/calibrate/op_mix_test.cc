// A model's op mix priced into a profile: a Python eager framework's per-op and per-class
// dispatch costs scale by the median of its mixes' ratios pooled with five other hosts' (one
// pass varies between hosts of one CPU as much as they do), recorded as mix_scale; module calls,
// other frameworks and frameworks without a mix keep their costs. TorchScript's mix is priced
// from its class costs and launches at the profile's CPU speed. And the measurement file's mix
// rows load as mixes, never as chains to fit.
#include "calibrate/op_mix.h"

#include <gtest/gtest.h>

#include "../predictor/synthetic_profile.h"

namespace ftax {
namespace {

TEST(OpMixTest, ScalesPythonEagerDispatchByThePooledMedianRatio) {
  HostProfile p = testing::SyntheticProfile();
  p.frameworks["pytorch-eager"].op_us["conv"] = Param::Of(30, 2);
  Measurements m;
  for (double r : {1.2, 1.8, 1.5}) m.mixes.push_back({Framework::kPytorchEager, 108, r});
  // TorchScript's ratio comes from pricing its pass (PriceTorchscriptMix), never from the row:
  // a mix without a pass time changes nothing.
  m.mixes.push_back({Framework::kTorchscript, 108, 3.0});
  std::vector<std::string> lines = ApplyOpMix(m, &p);
  // Pooled with x1.82, 1.80, 1.55, 1.75 and 1.65: the median of eight is (1.65 + 1.75) / 2.
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("op mix x1.70, the median of this bench's (x1.50, 3 mixes of 108 calls)"),
            std::string::npos)
      << lines[0];
  const FrameworkParams& e = p.frameworks.at("pytorch-eager");
  EXPECT_DOUBLE_EQ(e.mix_scale, 1.7);
  EXPECT_DOUBLE_EQ(e.op_us.at("conv").value, 51);
  EXPECT_DOUBLE_EQ(e.op_us.at("conv").std_error, 3.4);
  EXPECT_DOUBLE_EQ(e.dispatch_us[int(DispatchClass::kKernel)].value, 17);
  EXPECT_DOUBLE_EQ(e.module_us.value, 5);  // module calls are priced by their own chains
  EXPECT_DOUBLE_EQ(p.frameworks.at("torchscript").dispatch_us[int(DispatchClass::kKernel)].value, 5);
  EXPECT_TRUE(std::isnan(p.frameworks.at("pytorch-eager-no-grad").mix_scale));
  // The scale survives the profile file.
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->frameworks.at("pytorch-eager").mix_scale, 1.7);
}

// A mix timed while the CPU ran slow is flagged and left out; a framework with no other mix
// takes the median of the five other hosts' mixes timed at their fast state.
TEST(OpMixTest, AMixTimedInTheSlowStateIsFlagged) {
  HostProfile p = testing::SyntheticProfile();
  p.cpu_gauge_us = 3.0;
  Measurements m;
  MixMeasurement x{Framework::kPytorchEager, 108, 2.05};
  x.cpu_gauge_us = 4.33;
  m.mixes.push_back(x);
  std::vector<std::string> lines = ApplyOpMix(m, &p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("warning: the op mix (x2.05) was timed while the CPU ran slow (gauge 4.33"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("op mix x1.75, the median of five other hosts' mixes"), std::string::npos) << lines[1];
  // Its ratio is left out: with no other mix, the other hosts' median scales the costs.
  EXPECT_DOUBLE_EQ(p.frameworks.at("pytorch-eager").mix_scale, 1.75);
  EXPECT_DOUBLE_EQ(p.frameworks.at("pytorch-eager").dispatch_us[int(DispatchClass::kKernel)].value, 10 * 1.75);
  // Beside a mix timed at the fast state, that one alone is pooled with the other hosts'.
  HostProfile r = testing::SyntheticProfile();
  r.cpu_gauge_us = 3.0;
  MixMeasurement fast{Framework::kPytorchEager, 108, 1.6};
  fast.cpu_gauge_us = 3.2;
  m.mixes.push_back(fast);
  ApplyOpMix(m, &r);
  EXPECT_DOUBLE_EQ(r.frameworks.at("pytorch-eager").mix_scale, (1.65 + 1.75) / 2);
  HostProfile q = testing::SyntheticProfile();
  q.cpu_gauge_us = 3.0;
  m.mixes.pop_back();
  m.mixes[0].cpu_gauge_us = 3.3;  // 1.1x: within the fast state's spread
  EXPECT_EQ(ApplyOpMix(m, &q).size(), 1u);
  EXPECT_DOUBLE_EQ(q.frameworks.at("pytorch-eager").mix_scale, (1.75 + 1.80) / 2);
}

TEST(OpMixTest, TorchscriptMixIsPricedAsThePredictorWouldAndReportedNotApplied) {
  HostProfile p = testing::SyntheticProfile();
  FrameworkParams& ts = p.frameworks["torchscript"];
  ts.call_us = Param::Of(2, 0.1);
  ts.dispatch_us[int(DispatchClass::kKernel)] = Param::Of(5, 0.2);
  ts.dispatch_us[int(DispatchClass::kView)] = Param::Of(3, 0.1);
  ts.dispatch_us[int(DispatchClass::kLibrary)] = Param::Of(10, 0.4);
  ts.op_us["conv"] = Param::Of(20, 0.5);
  ts.op_kernels["conv"] = 2;
  p.gpu.launch_us = Param::Of(2, 0.1);
  p.cpu_gauge_us = 3.0;
  MixMeasurement x;
  x.framework = Framework::kTorchscript;
  x.n_ops = 18;
  // Both convolution geometries take the op's cost and cover its 2 kernels; the rest their
  // class's (a view covers none).
  x.calls = {{"conv", DispatchClass::kLibrary, 3}, {"conv:1x1", DispatchClass::kLibrary, 3},
             {"gelu", DispatchClass::kKernel, 6}, {"view", DispatchClass::kView, 3},
             {"linear", DispatchClass::kLibrary, 3}};
  x.kernels = 31;        // 21 covered: 10 further launches at 2 us
  x.issue_us = 560;      // at gauge 4.0: 420 us at the profile's 3.0, 418 less the call
  x.cpu_gauge_us = 4.0;
  x.add_us = 2.5;
  const TorchscriptMixPrice price = PriceTorchscriptMix(x, p);
  EXPECT_DOUBLE_EQ(price.ops_us, 6 * 20 + 6 * 5 + 3 * 3 + 3 * 10);
  EXPECT_DOUBLE_EQ(price.launches_us, 20);
  EXPECT_DOUBLE_EQ(price.measured_us, 418);
  EXPECT_DOUBLE_EQ(price.ratio, 2.0);
  EXPECT_DOUBLE_EQ(price.chain_speed, 2.0);
  Measurements m;
  m.mixes.push_back(x);
  const HostProfile before = p;
  std::vector<std::string> lines = ApplyOpMix(m, &p);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("torchscript: op mix x2.00, not applied"), 0u) << lines[0];
  EXPECT_DOUBLE_EQ(p.frameworks.at("torchscript").op_us.at("conv").value, 20);
  EXPECT_DOUBLE_EQ(p.frameworks.at("torchscript").dispatch_us[int(DispatchClass::kLibrary)].value, 10);
  EXPECT_TRUE(std::isnan(p.frameworks.at("torchscript").mix_scale));
  // A class the profile has no cost for leaves the mix unpriced.
  p.frameworks["torchscript"].dispatch_us[int(DispatchClass::kView)] = Param{};
  EXPECT_LT(PriceTorchscriptMix(x, p).ratio, 0);
}

TEST(OpMixTest, MixRowsLoadAsMixesNotChains) {
  nlohmann::json j = {
      {"schema_version", 1}, {"kind", "ftax-measurements"},
      {"dispatch",
       {{{"framework", "pytorch-eager"}, {"class", "kernel"}, {"n_ops", 64}, {"call_us", {{"median", 700}}},
         {"cpu_gauge_us", 3.1}},
        {{"framework", "pytorch-eager"}, {"class", "library"}, {"n_ops", 108}, {"mix_of", {{"conv", 3}}},
         {"mix_ratio", 1.8}, {"call_us", {{"median", 2400}}}, {"cpu_gauge_us", 3.2}}}}};
  Expected<Measurements> m = MeasurementsFromJson(j);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->dispatch.size(), 1u);
  EXPECT_DOUBLE_EQ(m->dispatch[0].cpu_gauge_us, 3.1);
  ASSERT_EQ(m->mixes.size(), 1u);
  EXPECT_DOUBLE_EQ(m->mixes[0].ratio, 1.8);
  EXPECT_EQ(m->mixes[0].n_ops, 108);
  j["dispatch"][1]["mix_of"] = "conv";
  EXPECT_FALSE(MeasurementsFromJson(j).ok());
  j["dispatch"][1]["mix_of"] = {{"conv", 3}};
  j["dispatch"][1]["mix_ratio"] = -1;
  Expected<Measurements> bad = MeasurementsFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mix_ratio"), std::string::npos) << bad.status().message();
  // TorchScript's mix: calls per op key with the class that prices each, kernels per pass.
  j["dispatch"][1] = {{"framework", "torchscript"}, {"class", "library"}, {"n_ops", 6},
                      {"mix_of", {{"conv:1x1", 3}, {"view", 3}}}, {"mix_ratio", nullptr},
                      {"mix_class_of", {{"conv:1x1", "library"}, {"view", "view"}}},
                      {"mix_kernels", 7}, {"add_us", 2.5}, {"call_us", {{"median", 2400}}},
                      {"issue_us", {{"median", 2120}}}, {"cpu_gauge_us", 4.0}};
  Expected<Measurements> t = MeasurementsFromJson(j);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->mixes.size(), 1u);
  ASSERT_EQ(t->mixes[0].calls.size(), 2u);
  EXPECT_EQ(t->mixes[0].calls[0].key, "conv:1x1");
  EXPECT_EQ(t->mixes[0].calls[0].cls, DispatchClass::kLibrary);
  EXPECT_EQ(t->mixes[0].calls[0].n, 3);
  EXPECT_EQ(t->mixes[0].calls[1].cls, DispatchClass::kView);
  EXPECT_DOUBLE_EQ(t->mixes[0].kernels, 7);
  EXPECT_DOUBLE_EQ(t->mixes[0].issue_us, 2120);
  EXPECT_DOUBLE_EQ(t->mixes[0].cpu_gauge_us, 4.0);
  EXPECT_DOUBLE_EQ(t->mixes[0].add_us, 2.5);
  j["dispatch"][1]["mix_class_of"]["view"] = "gemm";
  Expected<Measurements> bad_class = MeasurementsFromJson(j);
  ASSERT_FALSE(bad_class.ok());
  EXPECT_NE(bad_class.status().message().find("mix_class_of.view"), std::string::npos)
      << bad_class.status().message();
  j["dispatch"][1]["mix_class_of"] = {{"gelu", "kernel"}};  // a key the mix has no count for
  Expected<Measurements> no_count = MeasurementsFromJson(j);
  ASSERT_FALSE(no_count.ok());
  EXPECT_NE(no_count.status().message().find("gelu"), std::string::npos) << no_count.status().message();
}

}  // namespace
}  // namespace ftax
