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
  EXPECT_DOUBLE_EQ(n.typical_us, 3.0);  // the median of twelve readings, eleven of them 3 us
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

// A reduce-overhead row's time before its replay is the CPU's and is scaled with the call; the
// replay's time on the GPU is not.
TEST(CpuGaugeTest, TheCpusTimeBeforeAReplayIsScaledAndTheReplayIsNot) {
  Measurements m;
  for (int i = 0; i < 11; ++i) m.dispatch.push_back(Row(100, 3.0));
  DispatchMeasurement slow = Row(200, 6.0);
  slow.framework = Framework::kTorchCompileReduceOverhead;
  slow.issue_us.reset();
  slow.before_replay_us = Spread{120, 110, 130};
  slow.replay_gpu_us = Spread{70, 68, 72};
  m.dispatch.push_back(slow);
  NormalizeToCpuGauge(&m);
  EXPECT_DOUBLE_EQ(m.dispatch[11].before_replay_us->median, 60);
  EXPECT_DOUBLE_EQ(m.dispatch[11].replay_gpu_us->median, 70);
}

// The C++ bench's chains read the host probe, not the Python gauge: brought to the p10 of
// their own probes, apart from the Python rows.
TEST(CpuGaugeTest, CppChainsAreBroughtToTheFastStateByTheHostProbe) {
  Measurements m;
  for (int i = 0; i < 4; ++i) m.dispatch.push_back(Row(100, 3.0));
  for (int i = 0; i < 9; ++i) {
    DispatchMeasurement d = Row(60, -1);
    d.framework = Framework::kTorchscript;
    d.host_probe_us = i < 8 ? 6.0 : 9.0;  // the last chain ran 1.5x slow
    m.dispatch.push_back(d);
  }
  CpuGaugeNormalization n = NormalizeToCpuGauge(&m);
  EXPECT_DOUBLE_EQ(n.reference_us, 3.0);
  EXPECT_EQ(n.rows, 4);
  EXPECT_DOUBLE_EQ(n.probe.reference_us, 6.0);
  EXPECT_DOUBLE_EQ(n.probe.typical_us, 6.0);
  EXPECT_EQ(n.probe.rows, 9);
  EXPECT_NEAR(n.probe.min_scale, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.dispatch.back().call_us.median, 40, 1e-9);
  EXPECT_DOUBLE_EQ(m.dispatch.back().host_probe_us, 6.0);
  EXPECT_DOUBLE_EQ(m.dispatch[4].call_us.median, 60);
  EXPECT_DOUBLE_EQ(m.dispatch[0].call_us.median, 100);  // the Python rows by their own gauge
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

namespace ftax {
namespace {

HostProfile WithReadings(const std::string& cpu, double gauge, double probe) {
  HostProfile p;
  p.host = {{"cpu", cpu}, {"gpu", "NVIDIA H200"}};
  p.cpu_gauge_us = gauge;
  p.host_probe_us = probe;
  return p;
}

// A bench whose fast state sits well above what other hosts of its CPU recorded is flagged,
// reading by reading: host run ay's gauge (3.48 us against 2.89 and 2.91) and probe (8.11
// against 6.16 and 5.91). Within 15%, with fewer than two such hosts, or against another CPU
// model, nothing is said.
TEST(CpuGaugeTest, ABenchSlowerThanOtherHostsOfItsCpuIsFlagged) {
  const std::string xeon = "Intel(R) Xeon(R) Processor";
  const std::vector<HostProfile> others = {WithReadings(xeon, 2.8919, 6.1602), WithReadings(xeon, 2.9098, 5.9144),
                                           WithReadings(xeon, -1, -1)};
  std::vector<std::string> w = SlowBenchWarnings(WithReadings(xeon, 3.48, 8.11), others);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("CPU gauge (Python eager) read 3.48 us"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("1.20x the median of 2 other hosts"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("host probe"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find("1.34x"), std::string::npos) << w[1];
  // Host run az: 2.77 and 6.11, as fast as the others.
  EXPECT_TRUE(SlowBenchWarnings(WithReadings(xeon, 2.77, 6.11), others).empty());
  // 3.22 us (host run am) is 1.11x: within the ratio.
  EXPECT_TRUE(SlowBenchWarnings(WithReadings(xeon, 3.22, -1), others).empty());
  // One other host of the CPU is no median; another CPU model is not compared.
  EXPECT_TRUE(SlowBenchWarnings(WithReadings(xeon, 3.48, 8.11), {others[0]}).empty());
  EXPECT_TRUE(SlowBenchWarnings(WithReadings("AMD EPYC 9654", 3.48, 8.11), others).empty());
}

}  // namespace
}  // namespace ftax
