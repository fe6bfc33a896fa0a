#include "calibrate/op_scale_fit.h"

#include <gtest/gtest.h>

#include "../predictor/synthetic_profile.h"

namespace ftax {
namespace {

// A CPU-bound TorchScript row whose predicted CPU time is conv + linear + rest ms, measured
// at `measured` ms.
ValidationRow Row(double conv, double linear, double rest, double measured, double compute = 0.1) {
  ValidationRow r;
  r.model = "m";
  r.framework = "torchscript";
  r.precision = "fp16";
  r.measured_ms = measured;
  r.predicted.op_framework_ms = {{"conv", {conv, 10}}, {"linear", {linear, 4}}};
  r.predicted.framework_ms = conv + linear + rest;
  r.predicted.compute_ms = compute;
  r.predicted.latency_ms = r.predicted.framework_ms + compute;
  return r;
}

HostProfile PerOpProfile() {
  HostProfile p = testing::SyntheticProfile();
  p.frameworks.at("torchscript").op_us["conv"] = Param::Of(30, 1);
  return p;
}

// Rows made from known scales (conv 0.8, linear 0.9, the rest 1.5, all x1.2): with almost no
// ridge the fit finds their ratios; groups no row holds stay at the common scale.
TEST(OpScaleFitTest, FindsTheScalesTheRowsWereMadeWith) {
  std::vector<ValidationRow> rows;
  for (int i = 0; i < 12; ++i) {
    const double conv = 1 + 0.3 * i, linear = 2 - 0.1 * i, rest = 0.5 + 0.4 * (i % 3);
    rows.push_back(Row(conv, linear, rest, 1.2 * (0.8 * conv + 0.9 * linear + 1.5 * rest)));
  }
  rows.push_back(Row(1, 1, 1, 100, 50));  // compute-bound: not fitted
  rows.push_back(Row(1, 2, 3, 50));       // a CPU reading 3x the profile's: not fitted
  rows.back().cpu_speed_factor = 3;
  OpScaleOptions opt;
  opt.ridge = 1e-9;
  std::vector<OpScaleFit> fits = FitOpScales(rows, PerOpProfile(), opt);
  ASSERT_EQ(fits.size(), 1u);
  const OpScaleFit& f = fits[0];
  ASSERT_TRUE(f.fitted()) << f.why_not;
  EXPECT_EQ(f.framework, "torchscript");
  EXPECT_EQ(f.rows, 12);
  ASSERT_EQ(f.group_scale.size(), 5u);
  EXPECT_NEAR(f.group_scale[0] / f.group_scale[4], 0.8 / 1.5, 1e-6);  // conv ... over the rest
  EXPECT_NEAR(f.group_scale[1] / f.group_scale[4], 0.9 / 1.5, 1e-6);  // linear, matmul
  EXPECT_NEAR(f.group_scale[2], 1.0, 1e-6);                           // layer norm: no row has it
  EXPECT_NEAR(f.group_scale[0] * f.common_scale, 1.2 * 0.8, 1e-6);
  EXPECT_DOUBLE_EQ(f.op_scale.at("batch_norm"), f.group_scale[0]);
  EXPECT_DOUBLE_EQ(f.op_scale.at("matmul"), f.group_scale[1]);
  EXPECT_DOUBLE_EQ(f.op_scale.at("*"), f.group_scale[4]);
  EXPECT_GT(f.median_abs_error_before, 0.01);
  EXPECT_LT(f.median_abs_error_after, 1e-6);
  EXPECT_NE(DescribeOpScaleFit(f).find("op scales from 12 CPU-bound rows"), std::string::npos);
  EXPECT_EQ(OpScaleFitToJson(f)["groups"]["the rest"].get<double>(), f.group_scale[4]);
}

// The ridge pulls each scale toward the common one: with a strong pull they all come near 1.
TEST(OpScaleFitTest, TheRidgePullsTowardOneCommonScale) {
  std::vector<ValidationRow> rows;
  for (int i = 0; i < 12; ++i) {
    const double conv = 1 + 0.3 * i, linear = 2 - 0.1 * i, rest = 0.5 + 0.4 * (i % 3);
    rows.push_back(Row(conv, linear, rest, 0.8 * conv + 0.9 * linear + 1.5 * rest));
  }
  OpScaleOptions strong;
  strong.ridge = 1e6;
  const OpScaleFit f = FitOpScales(rows, PerOpProfile(), strong)[0];
  for (double g : f.group_scale) EXPECT_NEAR(g, 1.0, 1e-3);
}

// Too few CPU-bound rows, or a framework priced by class: no scales, and why.
TEST(OpScaleFitTest, SaysWhyItDidNotFit) {
  std::vector<ValidationRow> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(Row(1 + i, 1, 1, 4 + i));
  std::vector<OpScaleFit> fits = FitOpScales(rows, PerOpProfile());
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_FALSE(fits[0].fitted());
  EXPECT_EQ(fits[0].why_not, "5 CPU-bound rows; at least 8 are needed");
  EXPECT_TRUE(fits[0].op_scale.empty());
  EXPECT_EQ(OpScaleFitToJson(fits[0])["not_fitted"], fits[0].why_not);
  // The synthetic profile prices TorchScript by class: nothing to scale, no entry.
  EXPECT_TRUE(FitOpScales(rows, testing::SyntheticProfile()).empty());
}

// Scales fitted on a profile that already had some multiply them, op type by op type.
TEST(OpScaleFitTest, ComposedScalesMultiplyOpByOp) {
  const std::map<std::string, double> first = {{"conv", 0.8}, {"*", 1.5}};
  const std::map<std::string, double> then = {{"conv", 0.5}, {"linear", 2.0}, {"*", 0.9}};
  const auto c = ComposeOpScales(first, then);
  EXPECT_DOUBLE_EQ(c.at("conv"), 0.4);
  EXPECT_DOUBLE_EQ(c.at("linear"), 1.5 * 2.0);
  EXPECT_DOUBLE_EQ(c.at("*"), 1.5 * 0.9);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(ComposeOpScales({}, then), then);
  EXPECT_TRUE(ComposeOpScales({}, {}).empty());
}

}  // namespace
}  // namespace ftax
