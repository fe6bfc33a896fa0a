// A profile at another CPU speed: every CPU-side cost of the framework scales by the factor,
// nothing of the GPU's or of other frameworks does, and a Python eager prediction's framework
// time scales with it while its GPU time stays.
#include "predictor/cpu_speed.h"

#include <gtest/gtest.h>

#include "graph/arch_spec.h"
#include "predictor/predict.h"
#include "synthetic_profile.h"

namespace ftax {
namespace {

TEST(CpuSpeedTest, ScalesTheFrameworksCpuCostsAndNothingElse) {
  HostProfile p = testing::SyntheticProfile();
  p.cpu_gauge_us = 3.0;
  p.gpu.launch_us = Param::Of(4.0, 0.1);
  FrameworkParams& eager = p.frameworks[FrameworkName(Framework::kPytorchEager)];
  eager.op_us["conv"] = Param::Of(30, 1);
  eager.op_launch_us["conv"] = Param::Of(5, 0.5);
  HostProfile slow = AtCpuSpeed(p, Framework::kPytorchEager, 1.5);
  const FrameworkParams& e = *slow.FindFramework(Framework::kPytorchEager);
  EXPECT_DOUBLE_EQ(e.call_us.value, 30);
  EXPECT_DOUBLE_EQ(e.dispatch_us[int(DispatchClass::kKernel)].value, 15);
  EXPECT_DOUBLE_EQ(e.module_us.value, 7.5);
  EXPECT_DOUBLE_EQ(e.op_us.at("conv").value, 45);
  EXPECT_DOUBLE_EQ(e.op_launch_us.at("conv").value, 7.5);
  EXPECT_DOUBLE_EQ(slow.gpu.launch_us.value, 6.0);
  EXPECT_DOUBLE_EQ(slow.cpu_gauge_us, 4.5);
  // The GPU's kernels and the other frameworks are untouched.
  EXPECT_DOUBLE_EQ(slow.gpu.Find(KernelClass::kGemm, DType::kFloat16)->rate_tflops.value, 100);
  EXPECT_DOUBLE_EQ(slow.FindFramework(Framework::kTorchscript)->dispatch_us[int(DispatchClass::kKernel)].value, 5);
  // A factor of 1 (or none that makes sense) changes nothing.
  EXPECT_DOUBLE_EQ(AtCpuSpeed(p, Framework::kPytorchEager, 0).frameworks.at("pytorch-eager").module_us.value, 5);
}

// At the bench's typical speed: the Python frameworks by the gauge's median over its fast state
// (4.5 / 3 = 1.5), the C++ ones and the launch by the probe's (8 / 6.4 = 1.25); a profile
// without the readings is an error that says what to give instead.
TEST(CpuSpeedTest, AtTheTypicalSpeedEachFrameworkMovesByItsOwnReading) {
  HostProfile p = testing::SyntheticProfile();
  p.gpu.launch_us = Param::Of(4.0, 0.1);
  Expected<HostProfile> none = AtTypicalCpuSpeed(p);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("cpu=1.14"), std::string::npos);
  p.cpu_gauge_us = 3.0;
  p.cpu_gauge_typical_us = 4.5;
  p.host_probe_us = 6.4;
  p.host_probe_typical_us = 8.0;
  Expected<HostProfile> t = AtTypicalCpuSpeed(p);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->FindFramework(Framework::kPytorchEager)->module_us.value, 7.5);
  EXPECT_DOUBLE_EQ(t->FindFramework(Framework::kTorchscript)->dispatch_us[int(DispatchClass::kKernel)].value, 6.25);
  EXPECT_DOUBLE_EQ(t->gpu.launch_us.value, 5.0);
  EXPECT_DOUBLE_EQ(t->cpu_gauge_us, 4.5);
  EXPECT_DOUBLE_EQ(t->host_probe_us, 8.0);
  EXPECT_DOUBLE_EQ(t->gpu.Find(KernelClass::kGemm, DType::kFloat16)->rate_tflops.value, 100);
  EXPECT_TRUE(ReadsCpuGauge(Framework::kTorchCompile));
  EXPECT_FALSE(ReadsCpuGauge(Framework::kCudaGraph));
}

TEST(CpuSpeedTest, APythonEagerPredictionsFrameworkTimeFollowsTheCpuAndItsGpuTimeDoesNot) {
  HostProfile p = testing::SyntheticProfile();
  p.cpu_gauge_us = 3.0;
  Expected<Graph> g = BuildArchGraph("bert:layers=2", {{"batch", 1}, {"seq", 128}}, ArchFlavor::kTorch);
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<std::string> notes;
  Expected<PredictionPoint> base =
      PredictPoint(g.value(), p, Framework::kPytorchEager, DType::kFloat16, 16, 1, &notes);
  Expected<PredictionPoint> slow =
      PredictPoint(g.value(), AtCpuSpeed(p, Framework::kPytorchEager, 2.0), Framework::kPytorchEager,
                   DType::kFloat16, 16, 1, &notes);
  ASSERT_TRUE(base.ok() && slow.ok());
  EXPECT_NEAR(slow->framework_ms, 2 * base->framework_ms, 1e-9 + 1e-6 * base->framework_ms);
  EXPECT_DOUBLE_EQ(slow->compute_ms, base->compute_ms);
  EXPECT_GT(slow->latency_ms, base->latency_ms);
}

}  // namespace
}  // namespace ftax
