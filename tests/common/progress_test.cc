// Progress with an injected clock: the count, the time left from the mean time per finished
// point, the budget, and durations as they are printed.
#include "common/progress.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

struct FakeClock {
  double now = 1000;  // an arbitrary origin: only differences may matter
  Progress::ClockFn Fn() {
    return [this] { return now; };
  }
};

TEST(ProgressTest, TimeLeftIsTheMeanTimePerFinishedPointTimesThePointsLeft) {
  FakeClock clock;
  Progress p(10, 0, clock.Fn());
  clock.now += 4;  // first point: 4 s
  EXPECT_EQ(p.Tick("bert-base b1"), "[1 of 10] bert-base b1, 36 s left");
  clock.now += 2;  // second point: 2 s, mean 3 s, 8 left
  EXPECT_EQ(p.Tick("bert-base b2"), "[2 of 10] bert-base b2, 24 s left");
  EXPECT_DOUBLE_EQ(p.SecondsLeft(), 24);
  EXPECT_DOUBLE_EQ(p.ElapsedSeconds(), 6);
  EXPECT_EQ(p.finished(), 2u);
}

TEST(ProgressTest, LastPointSaysHowLongTheRunTook) {
  FakeClock clock;
  Progress p(2, 0, clock.Fn());
  clock.now += 30;
  p.Tick("a");
  clock.now += 45;
  EXPECT_EQ(p.Tick("b"), "[2 of 2] b, done in 1 min 15 s");
  // Never past the total, never back.
  EXPECT_EQ(p.Tick("c"), "[2 of 2] c, done in 1 min 15 s");
  EXPECT_EQ(p.At(1, "d"), "[2 of 2] d, done in 1 min 15 s");
}

TEST(ProgressTest, SeveralPointsAtOnce) {
  FakeClock clock;
  Progress p(100, 0, clock.Fn());
  clock.now += 50;
  EXPECT_EQ(p.At(25, "worker 1"), "[25 of 100] worker 1, 2 min 30 s left");
  clock.now += 150;  // 200 s for 50 points: 4 s each, 50 left
  EXPECT_EQ(p.At(50, "worker 2"), "[50 of 100] worker 2, 3 min 20 s left");
}

TEST(ProgressTest, NothingFinishedYetGivesNoEstimate) {
  FakeClock clock;
  Progress plain(5, 0, clock.Fn());
  EXPECT_LT(plain.SecondsLeft(), 0);
  EXPECT_EQ(plain.At(0, "starting"), "[0 of 5] starting");
  Progress budgeted(5, 90, clock.Fn());
  EXPECT_EQ(budgeted.At(0, "starting"), "[0 of 5] starting, budget 1 min 30 s");
}

TEST(ProgressTest, BudgetIsNamedOnlyWhenTheEstimateRunsPastIt) {
  FakeClock clock;
  Progress p(4, 60, clock.Fn());
  clock.now += 10;
  EXPECT_EQ(p.Tick("x"), "[1 of 4] x, 30 s left");  // 40 s in all: within 60
  clock.now += 30;  // 40 s for 2 points: 20 each, 40 left, 80 in all
  EXPECT_EQ(p.Tick("y"), "[2 of 4] y, 40 s left, 20 s past the 1 min 00 s budget");
}

TEST(ProgressTest, DurationsRoundToSecondsAndGrowUnits) {
  EXPECT_EQ(FormatDuration(-3), "0 s");
  EXPECT_EQ(FormatDuration(0.4), "0 s");
  EXPECT_EQ(FormatDuration(11.6), "12 s");
  EXPECT_EQ(FormatDuration(59.4), "59 s");
  EXPECT_EQ(FormatDuration(59.6), "1 min 00 s");
  EXPECT_EQ(FormatDuration(185), "3 min 05 s");
  EXPECT_EQ(FormatDuration(3600 * 2 + 60 * 4 + 30), "2 h 04 min");
}

TEST(ProgressTest, DefaultClockRuns) {
  Progress p(3);
  EXPECT_GE(p.ElapsedSeconds(), 0);
  EXPECT_EQ(p.Tick("a").rfind("[1 of 3] a, ", 0), 0u);
}

TEST(ProgressTest, EmptyRunIsDone) {
  FakeClock clock;
  Progress p(0, 0, clock.Fn());
  EXPECT_EQ(p.Tick("nothing"), "[0 of 0] nothing, done in 0 s");
}

}  // namespace
}  // namespace ftax
