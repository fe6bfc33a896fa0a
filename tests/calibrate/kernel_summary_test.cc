#include <gtest/gtest.h>

#include "calibrate/kernel_tracer.h"

namespace ftax {
namespace {

KernelRecord R(uint64_t start_us, uint64_t end_us) {
  KernelRecord r;
  r.name = "k";
  r.start_ns = start_us * 1000;
  r.end_ns = end_us * 1000;
  return r;
}

// Kernels one after another: their busy time is their summed durations; kernels that overlap
// count once, in any order of the records.
TEST(KernelSummaryTest, BusyTimeCountsAnOverlapOnce) {
  EXPECT_DOUBLE_EQ(BusyUs({R(0, 10), R(12, 20), R(30, 31)}), 10 + 8 + 1);
  EXPECT_DOUBLE_EQ(BusyUs({R(5, 30), R(0, 10), R(8, 12), R(40, 50)}), 30 + 10);
  EXPECT_DOUBLE_EQ(BusyUs({R(0, 100), R(10, 20), R(30, 40)}), 100);
  EXPECT_DOUBLE_EQ(BusyUs({}), 0);
  const KernelSummary s = SummarizeKernels({R(0, 10), R(5, 15), R(100, 110), R(105, 115)}, 2);
  EXPECT_DOUBLE_EQ(s.kernels_per_call, 2);
  EXPECT_DOUBLE_EQ(s.kernel_us_per_call, 20);
  EXPECT_DOUBLE_EQ(s.busy_us_per_call, 15);
  EXPECT_DOUBLE_EQ(s.span_us_per_call, 115.0 / 2);
}

}  // namespace
}  // namespace ftax
