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

struct BadCase {
  const char* what;
  std::function<void(json&)> mutate;
  const char* expect_in_message;
};

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
  };
  for (const BadCase& c : cases) {
    json j = HostProfileToJson(testing::SyntheticProfile());
    c.mutate(j);
    Expected<HostProfile> p = HostProfileFromJson(j);
    ASSERT_FALSE(p.ok()) << c.what;
    EXPECT_NE(p.status().message().find(c.expect_in_message), std::string::npos)
        << c.what << ": " << p.status().message();
  }
}

TEST(HostProfileTest, NullValuesStayUnknown) {
  json j = HostProfileToJson(testing::SyntheticProfile());
  j["frameworks"]["pytorch-eager"]["module_us"]["value"] = nullptr;
  Expected<HostProfile> p = HostProfileFromJson(j);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->FindFramework(Framework::kPytorchEager)->module_us.known());
}

}  // namespace
}  // namespace ftax
