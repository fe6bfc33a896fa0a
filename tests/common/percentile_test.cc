// Percentile: linear interpolation between closest ranks. scripts/spread.py (the GPU host's
// Python scripts' copy) is held to the same hand-computed cases by
// tests/scripts/spread_test.py, so the two agree.
#include "common/percentile.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

TEST(PercentileTest, InterpolatesBetweenClosestRanks) {
  // Sorted 1, 2, 3: p10 at rank 0.2 -> 1.2; median 2; p90 at rank 1.8 -> 2.8.
  EXPECT_DOUBLE_EQ(Percentile({3, 1, 2}, 0.1), 1.2);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Percentile({3, 1, 2}, 0.9), 2.8);
  // 1, 2, 3, 4: ranks 0.3, 1.5, 2.7.
  EXPECT_DOUBLE_EQ(Percentile({4, 3, 2, 1}, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(Median({4, 3, 2, 1}), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({4, 3, 2, 1}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(Percentile({5}, 0.9), 5.0);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0.0);  // an empty sample
}

}  // namespace
}  // namespace ftax
