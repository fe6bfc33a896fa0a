#include "calibrate/measurement_rounds.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace ftax {
namespace {

TEST(MeasurementRoundsTest, OneRoundKeepsTheGivenOrder) {
  EXPECT_EQ(VisitOrder(4, 0, 1, 7), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(MeasurementRoundsTest, EveryRoundVisitsEveryPointOnceInItsOwnOrder) {
  const size_t n = 24;
  std::set<std::vector<size_t>> orders;
  for (int r = 0; r < 4; ++r) {
    std::vector<size_t> o = VisitOrder(n, r, 4, 1);
    std::vector<size_t> sorted = o;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], i) << "round " << r;
    orders.insert(o);
  }
  EXPECT_EQ(orders.size(), 4u);  // 24! orders: four rounds that agree would be a broken shuffle
  EXPECT_EQ(VisitOrder(n, 2, 4, 1), VisitOrder(n, 2, 4, 1));
  EXPECT_NE(VisitOrder(n, 2, 4, 1), VisitOrder(n, 2, 4, 2));
}

TEST(MeasurementRoundsTest, RepsSpreadTheMinimumSampleOverTheRounds) {
  EXPECT_EQ(RepsPerVisit(0.5, 0.005, 1), 50);    // budget allows 100, capped
  EXPECT_EQ(RepsPerVisit(0.125, 0.005, 4), 25);  // a quarter of the budget per visit
  EXPECT_EQ(RepsPerVisit(0.5, 0.2, 1), 10);      // slow point: the minimum sample
  EXPECT_EQ(RepsPerVisit(0.125, 0.2, 4), 3);     // ... reached over four visits (12 >= 10)
  EXPECT_EQ(RepsPerVisit(0.1, 0.2, 3), 4);
}

TEST(MeasurementRoundsTest, PooledRowIsTheSpreadOfAllVisitsSamples) {
  RoundedPoint p;
  p.row = {{"model", "m"}, {"batch", 1}, {"kernel_ms", 1.0}};
  EXPECT_TRUE(PooledRow(p).is_null());
  // A fast stretch of the host and a slow one: the pooled median lies between the visits'.
  AddVisit({2.0, 2.1, 2.2}, {1.5, 1.5, 1.5}, &p, 5.0, 3);
  AddVisit({4.0, 4.1, 4.2}, {1.6, 1.6, 1.6}, &p, 9.5, 17);
  nlohmann::json row = PooledRow(p);
  EXPECT_EQ(row["model"], "m");
  EXPECT_DOUBLE_EQ(row["latency_ms"]["median"].get<double>(), (2.2 + 4.0) / 2);
  EXPECT_EQ(row["latency_ms"]["n"].get<int>(), 6);
  EXPECT_NEAR(row["latency_ms"]["p10"].get<double>(), 2.05, 1e-9);
  EXPECT_NEAR(row["latency_ms"]["p90"].get<double>(), 4.15, 1e-9);
  EXPECT_DOUBLE_EQ(row["event_ms"]["median"].get<double>(), 1.55);
  EXPECT_DOUBLE_EQ(row["framework_ms_measured"].get<double>(), 3.1 - 1.0);
  ASSERT_EQ(row["visit_medians_ms"].size(), 2u);
  EXPECT_DOUBLE_EQ(row["visit_medians_ms"][0].get<double>(), 2.1);
  EXPECT_DOUBLE_EQ(row["visit_medians_ms"][1].get<double>(), 4.1);
  EXPECT_EQ(row["samples_ms"].size(), 6u);
  ASSERT_EQ(row["visit_probe_us"].size(), 2u);
  EXPECT_DOUBLE_EQ(row["visit_probe_us"][1].get<double>(), 9.5);
  EXPECT_EQ(row["visit_order"], nlohmann::json::array({3, 17}));
  EXPECT_DOUBLE_EQ(row["host_probe_us"].get<double>(), (5.0 + 9.5) / 2);  // the visits' median
}

// One visit (one round): the row still says how fast the CPU ran while it was measured.
TEST(MeasurementRoundsTest, OneVisitKeepsItsProbe) {
  RoundedPoint p;
  AddVisit({1.0, 1.2}, {1.0, 1.0}, &p, 6.5);
  nlohmann::json row = PooledRow(p);
  EXPECT_DOUBLE_EQ(row["host_probe_us"].get<double>(), 6.5);
  EXPECT_FALSE(row.contains("visit_probe_us"));
  RoundedPoint q;
  AddVisit({1.0}, {1.0}, &q);
  EXPECT_FALSE(PooledRow(q).contains("host_probe_us"));
}

TEST(MeasurementRoundsTest, ProbesAreWrittenOnlyWhenEveryVisitHasOne) {
  RoundedPoint p;
  AddVisit({1.0}, {1.0}, &p, 5.0);
  AddVisit({2.0}, {1.0}, &p);  // this visit was not probed
  EXPECT_FALSE(PooledRow(p).contains("visit_probe_us"));
  EXPECT_FALSE(PooledRow(p).contains("visit_order"));
  EXPECT_EQ(PooledRow(p)["visit_medians_ms"].size(), 2u);
}

TEST(MeasurementRoundsTest, OneVisitWritesThePlainRow) {
  RoundedPoint p;
  p.row = {{"model", "m"}};
  AddVisit({3.0, 1.0, 2.0}, {0.5, 0.5, 0.5}, &p);
  nlohmann::json row = PooledRow(p);
  EXPECT_DOUBLE_EQ(row["latency_ms"]["median"].get<double>(), 2.0);
  EXPECT_FALSE(row.contains("samples_ms"));
  EXPECT_FALSE(row.contains("visit_medians_ms"));
  EXPECT_DOUBLE_EQ(row["framework_ms_measured"].get<double>(), 2.0);  // no kernel_ms: all host
}

TEST(MeasurementRoundsTest, PooledRowsSkipPointsWithoutSamples) {
  std::vector<RoundedPoint> pts(3);
  for (int i = 0; i < 3; ++i) pts[i].row = {{"batch", i}};
  AddVisit({1.0}, {1.0}, &pts[0]);
  AddVisit({1.0}, {1.0}, &pts[2]);
  nlohmann::json rows = PooledRows(pts);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["batch"], 0);
  EXPECT_EQ(rows[1]["batch"], 2);
}

}  // namespace
}  // namespace ftax
