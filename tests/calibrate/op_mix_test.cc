// A model's op mix priced into a profile: a Python eager framework's per-op and per-class
// dispatch costs scale by the median of its mixes' ratios, recorded as mix_scale; module calls,
// other frameworks and frameworks without a mix keep their costs. And the measurement file's
// mix rows load as mixes, never as chains to fit.
#include "calibrate/op_mix.h"

#include <gtest/gtest.h>

#include "../predictor/synthetic_profile.h"

namespace ftax {
namespace {

TEST(OpMixTest, ScalesPythonEagerDispatchByTheMedianRatio) {
  HostProfile p = testing::SyntheticProfile();
  p.frameworks["pytorch-eager"].op_us["conv"] = Param::Of(30, 2);
  Measurements m;
  for (double r : {1.2, 1.8, 1.5}) m.mixes.push_back({Framework::kPytorchEager, 108, r});
  m.mixes.push_back({Framework::kTorchscript, 108, 3.0});  // not Python eager: ignored
  std::vector<std::string> lines = ApplyOpMix(m, &p);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("x1.50"), std::string::npos) << lines[0];
  const FrameworkParams& e = p.frameworks.at("pytorch-eager");
  EXPECT_DOUBLE_EQ(e.mix_scale, 1.5);
  EXPECT_DOUBLE_EQ(e.op_us.at("conv").value, 45);
  EXPECT_DOUBLE_EQ(e.op_us.at("conv").std_error, 3);
  EXPECT_DOUBLE_EQ(e.dispatch_us[int(DispatchClass::kKernel)].value, 15);
  EXPECT_DOUBLE_EQ(e.module_us.value, 5);  // module calls are priced by their own chains
  EXPECT_DOUBLE_EQ(p.frameworks.at("torchscript").dispatch_us[int(DispatchClass::kKernel)].value, 5);
  EXPECT_TRUE(std::isnan(p.frameworks.at("pytorch-eager-no-grad").mix_scale));
  // The scale survives the profile file.
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->frameworks.at("pytorch-eager").mix_scale, 1.5);
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
}

}  // namespace
}  // namespace ftax
