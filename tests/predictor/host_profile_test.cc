#include "predictor/host_profile.h"

#include <gtest/gtest.h>

#include "synthetic_profile.h"

namespace ftax {
namespace {

using json = nlohmann::json;

TEST(HostProfileTest, RoundTripsThroughJson) {
  HostProfile p = testing::SyntheticProfile();
  json j = HostProfileToJson(p);
  Expected<HostProfile> q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_TRUE(q->synthetic);
  EXPECT_EQ(q->gpu.num_sms, 100);
  const KernelParams* g = q->gpu.Find(KernelClass::kGemm, DType::kFloat16);
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->rate_tflops.value, 100);
  EXPECT_DOUBLE_EQ(g->rate_tflops.std_error, 5);
  EXPECT_DOUBLE_EQ(q->FindFramework(Framework::kTorchscript)->dispatch_us[1].value, 5);
}

TEST(HostProfileTest, AnchorsRoundTripAndArePreparedOnLoad) {
  HostProfile p = testing::SyntheticProfile();
  KernelAnchor a;
  a.variant = KernelVariant::kGemmNN;
  a.m = 4096;
  a.n = 768;
  a.k = 768;
  a.flops = 2.0 * 4096 * 768 * 768;
  a.bytes = 2.0 * (4096 * 768 * 2 + 768 * 768);
  a.us = 50;
  a.kernels = 3;
  p.gpu.kernels.at("gemm/fp16").anchors = {a};
  Expected<HostProfile> q = HostProfileFromJson(HostProfileToJson(p));
  ASSERT_TRUE(q.ok()) << q.status().message();
  const KernelParams* g = q->gpu.Find(KernelClass::kGemm, DType::kFloat16);
  ASSERT_EQ(g->anchors.size(), 1u);
  EXPECT_EQ(g->anchors[0].variant, KernelVariant::kGemmNN);
  EXPECT_EQ(g->anchors[0].m, 4096);
  EXPECT_DOUBLE_EQ(g->anchors[0].us, 50);
  EXPECT_DOUBLE_EQ(g->anchors[0].kernels, 3);
  EXPECT_DOUBLE_EQ(g->anchors[0].lm, 12);  // log2(4096), set on load
  EXPECT_NE(g->anchors[0].log_ratio, 0);
}

// cuDNN ran an fp32 NHWC convolution of 256 groups over 8 images as 1024 kernels a call (host
// run ct's bench, 2026-11-28): calibrate keeps that count in the anchor, and the profile loads.
TEST(HostProfileTest, AnAnchorOfOneKernelPerGroupAndImageLoads) {
  json j = HostProfileToJson(testing::SyntheticProfile());
  j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"m", 392}, {"n", 4}, {"k", 36}, {"batch", 256}, {"us", 2048}, {"kernels", 1024}}};
  Expected<HostProfile> p = HostProfileFromJson(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->gpu.Find(KernelClass::kGemm, DType::kFloat16)->anchors.at(0).kernels, 1024);
}

struct BadCase {
  const char* what;
  std::function<void(json&)> mutate;
  const char* expect_in_message;
};

// Each case mutates the JSON of a valid profile; loading it must fail with a message that
// contains the case's text.
void ExpectEachRefused(const std::vector<BadCase>& cases) {
  for (const BadCase& c : cases) {
    json j = HostProfileToJson(testing::SyntheticProfile());
    c.mutate(j);
    Expected<HostProfile> p = HostProfileFromJson(j);
    ASSERT_FALSE(p.ok()) << c.what;
    EXPECT_NE(p.status().message().find(c.expect_in_message), std::string::npos)
        << c.what << ": " << p.status().message();
  }
}

TEST(HostProfileTest, RejectsBadFieldsNamingThem) {
  const std::vector<BadCase> cases = {
      {"version", [](json& j) { j["schema_version"] = 99; }, "schema_version 99"},
      {"no version", [](json& j) { j.erase("schema_version"); }, "schema_version"},
      {"kind", [](json& j) { j["kind"] = "other"; }, "kind"},
      {"sms", [](json& j) { j["gpu"]["num_sms"] = 0; }, "num_sms"},
      {"unit", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["floor_us"]["unit"] = "ms"; }, "gemm/fp16.floor_us.unit"},
      {"rate", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["rate_tflops"]["value"] = -1; }, "rate_tflops"},
      {"class", [](json& j) { j["gpu"]["kernels"]["warp/fp16"] = j["gpu"]["kernels"]["gemm/fp16"]; }, "warp"},
      {"dtype", [](json& j) { j["gpu"]["kernels"]["gemm/fp13"] = j["gpu"]["kernels"]["gemm/fp16"]; }, "fp13"},
      {"framework", [](json& j) { j["frameworks"]["tensorflow"] = json::object(); }, "tensorflow"},
      {"negative", [](json& j) { j["frameworks"]["torchscript"]["call_us"]["value"] = -3; }, "torchscript"},
      {"stderr", [](json& j) { j["frameworks"]["torchscript"]["call_us"]["stderr"] = "x"; }, "call_us.stderr"},
      {"not object", [](json& j) { j["gpu"] = 3; }, "gpu"},
      {"anchor time", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"m", 8}, {"n", 8}, {"k", 8}, {"us", 0}}}; },
       "gemm/fp16.anchors[0].us"},
      {"anchor variant", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"m", 8}, {"n", 8}, {"k", 8}, {"us", 2}, {"variant", "tn"}}}; },
       "anchors[0].variant: unknown variant 'tn'"},
      {"anchor where", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"us", 2}}}; },
       "anchors[0]: needs a shape or bytes"},
      {"anchor kernels", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"m", 8}, {"n", 8}, {"k", 8}, {"us", 2}, {"kernels", 0}}}; },
       "gemm/fp16.anchors[0].kernels"},
      {"anchor kernels above the bound", [](json& j) { j["gpu"]["kernels"]["gemm/fp16"]["anchors"] = {{{"m", 8}, {"n", 8}, {"k", 8}, {"us", 2}, {"kernels", 2e6}}}; },
       "gemm/fp16.anchors[0].kernels: must be between 1 and 1000000"},
      {"reading of a replay", [](json& j) { j["frameworks"]["torchscript"]["call_before_replay"] = true; },
       "torchscript.call_before_replay: only torch-compile-reduce-overhead has it"},
  };
  ExpectEachRefused(cases);
}

TEST(HostProfileTest, NullValuesStayUnknown) {
  json j = HostProfileToJson(testing::SyntheticProfile());
  j["frameworks"]["pytorch-eager"]["module_us"]["value"] = nullptr;
  Expected<HostProfile> p = HostProfileFromJson(j);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->FindFramework(Framework::kPytorchEager)->module_us.known());
}

// Kernel facts (kernel_facts.h): absent means the defaults, and a profile at the defaults
// writes none, so that profiles of hosts that run as the defaults say keep their form.
TEST(HostProfileTest, KernelFactsAbsentAreTheDefaultsAndAreNotWritten) {
  json j = HostProfileToJson(testing::SyntheticProfile());
  EXPECT_FALSE(j.contains("kernel_facts"));
  Expected<HostProfile> p = HostProfileFromJson(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->kernel_facts == KernelFacts());
  // The defaults are the constants the lowering held before they became facts.
  const KernelFacts d;
  EXPECT_EQ(d.attention_eager_memsets, 1);
  EXPECT_DOUBLE_EQ(d.attention_memset_bytes_per_row, 4);
  EXPECT_EQ(d.attention_mask_wheres, 1);
  EXPECT_DOUBLE_EQ(d.attention_mask_where_extra_bytes, 1);
  EXPECT_EQ(d.attention_mask_fills, 2);
  EXPECT_DOUBLE_EQ(d.attention_mask_fill_bytes_per_row, 4);
  EXPECT_EQ(d.batch_norm_half_stat_kernels, 2);
  EXPECT_DOUBLE_EQ(d.batch_norm_stat_bytes_per_channel, 8);
  EXPECT_TRUE(d.conv_bias_kernel);
  EXPECT_TRUE(d.roll_kernel_per_dim);
  EXPECT_DOUBLE_EQ(d.extrapolated_beyond, 1.5);
  // Given explicitly at the defaults: read, and not written back.
  j["kernel_facts"] = {{"attention_eager_memsets", 1}, {"conv_bias_kernel", true}};
  p = HostProfileFromJson(j);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->kernel_facts == KernelFacts());
  EXPECT_FALSE(HostProfileToJson(p.value()).contains("kernel_facts"));
}

TEST(HostProfileTest, KernelFactsRoundTripWholeWhenAnyDiffers) {
  HostProfile p = testing::SyntheticProfile();
  p.kernel_facts.attention_eager_memsets = 0;
  p.kernel_facts.attention_mask_fill_bytes_per_row = 8;
  p.kernel_facts.batch_norm_half_stat_kernels = 3;
  p.kernel_facts.conv_bias_kernel = false;
  p.kernel_facts.extrapolated_beyond = 2.25;
  json j = HostProfileToJson(p);
  ASSERT_TRUE(j.contains("kernel_facts"));
  EXPECT_EQ(j["kernel_facts"].size(), 11u);  // every fact, the unchanged ones too
  EXPECT_EQ(j["kernel_facts"]["attention_eager_memsets"], 0);
  EXPECT_EQ(j["kernel_facts"]["attention_mask_fills"], 2);
  EXPECT_EQ(j["kernel_facts"]["conv_bias_kernel"], false);
  EXPECT_EQ(j["kernel_facts"]["roll_kernel_per_dim"], true);
  Expected<HostProfile> q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_TRUE(q->kernel_facts == p.kernel_facts);
  EXPECT_DOUBLE_EQ(q->kernel_facts.extrapolated_beyond, 2.25);
  EXPECT_EQ(q->kernel_facts.batch_norm_half_stat_kernels, 3);
  // One fact given alone: the others keep their defaults.
  json one = HostProfileToJson(testing::SyntheticProfile());
  one["kernel_facts"] = {{"roll_kernel_per_dim", false}};
  q = HostProfileFromJson(one);
  ASSERT_TRUE(q.ok()) << q.status().message();
  KernelFacts expected;
  expected.roll_kernel_per_dim = false;
  EXPECT_TRUE(q->kernel_facts == expected);
}

TEST(HostProfileTest, RejectsBadKernelFactsNamingThem) {
  auto facts = [](json f) { return [f](json& j) { j["kernel_facts"] = f; }; };
  const std::vector<BadCase> cases = {
      {"not an object", facts(json::array({1})), "kernel_facts: expected an object"},
      {"count as string", facts({{"attention_eager_memsets", "one"}}),
       "kernel_facts.attention_eager_memsets: expected an integer"},
      {"count as float", facts({{"attention_mask_fills", 1.5}}), "kernel_facts.attention_mask_fills: expected an integer"},
      {"count too large", facts({{"batch_norm_half_stat_kernels", 65}}),
       "kernel_facts.batch_norm_half_stat_kernels: must be between 0 and 64"},
      {"negative count", facts({{"attention_mask_wheres", -1}}), "kernel_facts.attention_mask_wheres: must be between 0 and 64"},
      {"bytes as bool", facts({{"attention_memset_bytes_per_row", true}}),
       "kernel_facts.attention_memset_bytes_per_row: expected a number from 0 to 1024"},
      {"negative bytes", facts({{"batch_norm_stat_bytes_per_channel", -8}}),
       "kernel_facts.batch_norm_stat_bytes_per_channel: expected a number from 0 to 1024"},
      {"bytes too large", facts({{"attention_mask_where_extra_bytes", 1e30}}),
       "kernel_facts.attention_mask_where_extra_bytes: expected a number from 0 to 1024"},
      {"margin below 1", facts({{"extrapolated_beyond", 0.5}}), "kernel_facts.extrapolated_beyond: expected a number from 1 to"},
      {"flag as number", facts({{"conv_bias_kernel", 1}}), "kernel_facts.conv_bias_kernel: expected true or false"},
      {"unknown fact", facts({{"conv_bias_kernels", false}}), "kernel_facts.conv_bias_kernels: unknown kernel fact"},
  };
  ExpectEachRefused(cases);
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

TEST(HostProfileTest, CpuGaugeRoundTripsAndIsChecked) {
  HostProfile p = testing::SyntheticProfile();
  nlohmann::json j = HostProfileToJson(p);
  EXPECT_FALSE(j.contains("cpu_gauge_us"));  // unknown: not written
  p.cpu_gauge_us = 3.2;
  j = HostProfileToJson(p);
  Expected<HostProfile> q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_DOUBLE_EQ(q->cpu_gauge_us, 3.2);
  j["cpu_gauge_us"] = 0;
  Expected<HostProfile> bad = HostProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu_gauge_us"), std::string::npos);
  j["cpu_gauge_us"] = 3.2;
  j["frameworks"]["pytorch-eager"]["mix_scale"] = -1;
  bad = HostProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mix_scale"), std::string::npos);
  // The host probe the C++ chains are priced at, likewise.
  j["frameworks"]["pytorch-eager"].erase("mix_scale");
  EXPECT_FALSE(j.contains("host_probe_us"));
  p.host_probe_us = 6.4;
  j = HostProfileToJson(p);
  q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_DOUBLE_EQ(q->host_probe_us, 6.4);
  j["host_probe_us"] = "fast";
  bad = HostProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("host_probe_us"), std::string::npos);
  // The bench's median readings (the host's typical speed), likewise.
  EXPECT_FALSE(HostProfileToJson(p).contains("cpu_gauge_typical_us"));
  p.cpu_gauge_typical_us = 3.9;
  p.host_probe_typical_us = 7.7;
  j = HostProfileToJson(p);
  q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_DOUBLE_EQ(q->cpu_gauge_typical_us, 3.9);
  EXPECT_DOUBLE_EQ(q->host_probe_typical_us, 7.7);
  j["host_probe_typical_us"] = -2;
  bad = HostProfileFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("host_probe_typical_us"), std::string::npos);
}

// Relative op scales round-trip; a bad one, or one on a replayed graph, is an error naming it.
TEST(HostProfileTest, OpScalesRoundTripAndAreChecked) {
  HostProfile p = testing::SyntheticProfile();
  nlohmann::json j = HostProfileToJson(p);
  EXPECT_FALSE(j["frameworks"]["torchscript"].contains("op_scale"));  // none: not written
  p.frameworks["torchscript"].op_scale = {{"conv", 0.88}, {"*", 1.5}};
  j = HostProfileToJson(p);
  Expected<HostProfile> q = HostProfileFromJson(j);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->frameworks.at("torchscript").op_scale, p.frameworks.at("torchscript").op_scale);
  for (const nlohmann::json& bad_value : {nlohmann::json(0), nlohmann::json(-2), nlohmann::json("x"), nlohmann::json(50)}) {
    nlohmann::json b = j;
    b["frameworks"]["torchscript"]["op_scale"]["conv"] = bad_value;
    Expected<HostProfile> bad = HostProfileFromJson(b);
    ASSERT_FALSE(bad.ok()) << bad_value.dump();
    EXPECT_NE(bad.status().message().find("frameworks.torchscript.op_scale.conv"), std::string::npos)
        << bad.status().message();
  }
  nlohmann::json g = j;
  g["frameworks"]["cuda-graph"]["op_scale"] = {{"conv", 1.0}};
  Expected<HostProfile> graph = HostProfileFromJson(g);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("frameworks.cuda-graph.op_scale"), std::string::npos);
}

}  // namespace
}  // namespace ftax
