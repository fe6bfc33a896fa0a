// Bench rows brought to one CPU speed: a row timed while the gauge read slow is scaled down
// by reference / its gauge, the reference is the fast state (10th percentile of the gauges),
// and rows without a gauge are left alone.
#include "calibrate/cpu_gauge.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

DispatchMeasurement Row(double call, double gauge) {
  DispatchMeasurement d;
  d.framework = Framework::kPytorchEager;
  d.n_ops = 64;
  d.call_us = {call, call * 0.9, call * 1.2};
  d.issue_us = Spread{call * 0.8, call * 0.7, call};
  d.cpu_gauge_us = gauge;
  return d;
}

TEST(CpuGaugeTest, RowsTimedSlowAreBroughtToTheFastState) {
  Measurements m;
  // Eleven rows at the fast gauge (3 us), one at 6 us (the host ran at half speed), one with none.
  for (int i = 0; i < 11; ++i) m.dispatch.push_back(Row(100, 3.0));
  m.dispatch.push_back(Row(200, 6.0));
  m.dispatch.push_back(Row(500, -1));
  CpuGaugeNormalization n = NormalizeToCpuGauge(&m);
  EXPECT_DOUBLE_EQ(n.reference_us, 3.0);
  EXPECT_EQ(n.rows, 12);
  EXPECT_DOUBLE_EQ(n.min_scale, 0.5);
  EXPECT_DOUBLE_EQ(n.max_scale, 1.0);
  EXPECT_DOUBLE_EQ(m.dispatch[11].call_us.median, 100);
  EXPECT_DOUBLE_EQ(m.dispatch[11].call_us.p90, 120);
  EXPECT_DOUBLE_EQ(m.dispatch[11].issue_us->median, 80);
  EXPECT_DOUBLE_EQ(m.dispatch[11].cpu_gauge_us, 3.0);
  EXPECT_DOUBLE_EQ(m.dispatch[0].call_us.median, 100);
  EXPECT_DOUBLE_EQ(m.dispatch[12].call_us.median, 500);  // no gauge: as measured
}

TEST(CpuGaugeTest, NoGaugeNoChange) {
  Measurements m;
  m.dispatch.push_back(Row(100, -1));
  CpuGaugeNormalization n = NormalizeToCpuGauge(&m);
  EXPECT_LT(n.reference_us, 0);
  EXPECT_EQ(n.rows, 0);
  EXPECT_DOUBLE_EQ(m.dispatch[0].call_us.median, 100);
}

}  // namespace
}  // namespace ftax
