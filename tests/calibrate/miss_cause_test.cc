#include "calibrate/miss_cause.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

// A point's latency and kernel time, measured and predicted (15% tolerance).
MissEvidence Evidence(double measured_ms = 10.0, double measured_kernel_ms = 4.0, double predicted_ms = 7.0,
                      double predicted_compute_ms = 4.0) {
  MissEvidence e;
  e.tolerance_pct = 15;
  e.measured_ms = measured_ms;
  e.measured_kernel_ms = measured_kernel_ms;
  e.predicted_ms = predicted_ms;
  e.predicted_compute_ms = predicted_compute_ms;
  return e;
}

TEST(MissCauseTest, OverheadThatDiffersMoreThanKernelTimeIsTheCause) {
  MissCause c = ExplainMiss(Evidence());  // 6 ms of overhead measured, 3 predicted
  EXPECT_EQ(c.kind, "framework overhead");
  EXPECT_DOUBLE_EQ(c.overhead_delta_ms, 3.0);
  EXPECT_DOUBLE_EQ(c.kernel_delta_ms, 0.0);
  EXPECT_NE(c.detail.find("6.000 ms"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("3.000 ms"), std::string::npos) << c.detail;
}

// A reduce-overhead point whose replay was marked: the miss says how much of the overhead was
// the wrapper's CPU time before the replay; without the measurement it says nothing of it.
TEST(MissCauseTest, AReduceOverheadMissSaysWhatCameBeforeTheReplay) {
  MissEvidence e = Evidence(1.0, 0.6, 0.7, 0.6);
  EXPECT_EQ(ExplainMiss(e).detail.find("before the replay"), std::string::npos);
  e.measured_before_replay_ms = 0.31;
  e.predicted_before_replay_ms = 0.05;
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "framework overhead");
  EXPECT_NE(c.detail.find("before the replay: measured 0.310 ms, predicted 0.050 ms"), std::string::npos) << c.detail;
}

TEST(MissCauseTest, KernelTimeNamesTheClassThatMovedTheWayTheTotalDid) {
  MissEvidence e = Evidence(5.0, 4.5, 3.5, 3.0);
  // Measured kernels run 1.5 ms longer in all; conv is 0.3 ms under, copy 1.0 ms over, gemm 0.8 over.
  e.measured_class_ms[int(KernelClass::kConv)] = 1.0;
  e.predicted_class_ms[int(KernelClass::kConv)] = 1.3;
  e.measured_class_ms[int(KernelClass::kCopy)] = 1.0;
  e.measured_class_ms[int(KernelClass::kGemm)] = 2.5;
  e.predicted_class_ms[int(KernelClass::kGemm)] = 1.7;
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "kernel time");
  EXPECT_DOUBLE_EQ(c.kernel_delta_ms, 1.5);
  EXPECT_NE(c.detail.find("most in copy"), std::string::npos) << c.detail;
}

// MobileNetV2 under reduce-overhead at batch 8 (host run cs's report): its 1x1 convolutions ran
// as cuBLAS GEMM kernels and its depthwise ones under names that say conv, where the prediction
// has them in conv and depthwise. Conv, gemm and depthwise moving opposite ways are one bucket
// (here within 3%, so the element-wise kernels are the cause); moving the same way, apart.
TEST(MissCauseTest, ConvolutionsRunAsGemmKernelsAreNamedWithConv) {
  MissEvidence e = Evidence(0.667, 0.431, 0.581, 0.359);
  auto set = [&](KernelClass k, double measured, double predicted) {
    e.measured_class_ms[int(k)] = measured;
    e.predicted_class_ms[int(k)] = predicted;
  };
  set(KernelClass::kConv, 0.140, 0.142);
  set(KernelClass::kGemm, 0.116, 0.005);
  set(KernelClass::kDepthwise, 0.0, 0.102);
  set(KernelClass::kElementwise, 0.158, 0.104);
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "kernel time");
  EXPECT_NE(c.detail.find("most in elementwise (0.158 ms measured, 0.104 ms predicted)"), std::string::npos)
      << c.detail;
  // The GEMM kernels 0.06 ms longer: the bucket moved most, and is named with its sums.
  set(KernelClass::kGemm, 0.176, 0.005);
  c = ExplainMiss(e);
  EXPECT_NE(c.detail.find("most in convolution and GEMM kernels"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("(0.316 ms measured, 0.249 ms predicted)"), std::string::npos) << c.detail;
  // Each over its price: apart, and gemm moved most.
  set(KernelClass::kConv, 0.150, 0.142);
  set(KernelClass::kDepthwise, 0.110, 0.102);
  c = ExplainMiss(e);
  EXPECT_NE(c.detail.find("most in gemm (0.176 ms measured"), std::string::npos) << c.detail;
}

TEST(MissCauseTest, VisitsThatSpreadPastTheToleranceWithOneAgreeingAreHostDrift) {
  MissEvidence e = Evidence();
  e.visit_medians_ms = {7.5, 11.0, 12.0, 10.5};  // 1.6x apart; 7.5 is within 15% of 7.0
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "host drift");
  EXPECT_NE(c.detail.find("4 visits ranged 1.60x"), std::string::npos) << c.detail;
}

// BART's encoder under Python eager (host run cd): 250 kernels a call where the trace holds
// 189, its per-layer check on the host dropped by the trace; measured 11.1 ms, predicted 6.9.
TEST(MissCauseTest, FarMoreKernelsThanPredictedAreTheCause) {
  MissEvidence e = Evidence();
  e.measured_kernels = 250;
  e.predicted_kernels = 189;
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "unpredicted kernels");
  EXPECT_NE(c.detail.find("250 kernels ran a call where 189 are predicted"), std::string::npos) << c.detail;
  // Not when the point ran faster than predicted, nor for a few kernels or a small share more.
  MissEvidence fast = e;
  fast.measured_ms = 6.0;
  EXPECT_NE(ExplainMiss(fast).kind, "unpredicted kernels");
  e.measured_kernels = 198;  // 9 more
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
  e.measured_kernels = 1100;
  e.predicted_kernels = 1000;  // 10% more
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
  e.measured_kernels = 0;  // unknown
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
}

// RegNetX-1.6GF under reduce-overhead (host run cs): 226 records a call where 194 kernels are
// predicted, 36 of them cuDNN's memsets around its grouped convolutions, which the profiler
// counts with the kernels and the bench's CUPTI kernel records do not hold. Memsets aside the
// call ran 190 kernels: not another program, so the miss goes on to the parts.
TEST(MissCauseTest, MemsetsAreNotUnpredictedKernels) {
  MissEvidence e = Evidence();
  e.measured_kernels = 226;
  e.predicted_kernels = 194;
  EXPECT_EQ(ExplainMiss(e).kind, "unpredicted kernels");  // counted with the memsets
  e.measured_memsets = 36;
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
  // Far more kernels besides the memsets are still the cause, and the detail says how many.
  e.measured_kernels = 286;
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "unpredicted kernels");
  EXPECT_NE(c.detail.find("286 kernels (250 without memsets) ran a call where 194 are predicted"), std::string::npos)
      << c.detail;
}

TEST(MissCauseTest, SpreadVisitsNoneAgreeingFallBackToTheParts) {
  MissEvidence e = Evidence();
  e.visit_medians_ms = {9.0, 12.0};  // wide, but no visit within 15% of 7.0
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
  e.visit_medians_ms = {7.5, 7.9};  // one agrees, but the visits held still
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
}

// A point measured slower than predicted while its process's probe ran 1.25x or more the
// bench's cost for the same chain is put on the process; a probe at the bench's cost, or a point
// measured faster than predicted, falls back to the parts.
TEST(MissCauseTest, AProbeFarAboveTheBenchsChainIsASlowProcess) {
  MissEvidence e = Evidence();  // measured 10 ms, predicted 7
  e.bench_probe_us = 6.4;
  e.host_probe_us = 9.6;
  MissCause c = ExplainMiss(e);
  EXPECT_EQ(c.kind, "slow process");
  EXPECT_NE(c.detail.find("9.6 us per op"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("1.50x the bench's 6.4 us"), std::string::npos) << c.detail;
  e.host_probe_us = 7.0;  // 1.09x: the process ran as the bench did
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
  e.host_probe_us = 9.6;
  e.measured_ms = 5.0;  // measured faster than predicted: a slow process does not explain it
  e.measured_kernel_ms = 2.0;
  EXPECT_NE(ExplainMiss(e).kind, "slow process");
  e = Evidence();
  e.host_probe_us = 9.6;  // no bench cost to compare with
  EXPECT_EQ(ExplainMiss(e).kind, "framework overhead");
}

}  // namespace
}  // namespace ftax
