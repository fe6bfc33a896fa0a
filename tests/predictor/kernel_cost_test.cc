// The kernel cost model's anchors: measured points that correct the analytic model near them.
#include "predictor/kernel_cost.h"

#include <cmath>

#include <gtest/gtest.h>

#include "predictor/host_profile.h"
#include "synthetic_profile.h"

namespace ftax {
namespace {

constexpr int kSms = 132;

KernelParams GemmParams() {
  KernelParams p;
  p.floor_us = Param::Of(3);
  p.rate_tflops = Param::Of(500);
  p.bandwidth_gbps = Param::Of(3000);
  p.tile_m = p.tile_n = 128;
  return p;
}

KernelWork Gemm(int64_t m, int64_t n, int64_t k, KernelVariant v = KernelVariant::kPlain) {
  return testing::GemmWork(m, n, k, v);
}

KernelAnchor AnchorAt(const KernelWork& w, double us) { return AnchorOfWork(w, us); }

// Prepares anchors as a loaded profile would.
KernelParams Prepared(KernelParams p) {
  GpuParams g;
  g.num_sms = kSms;
  g.kernels["gemm/fp16"] = p;
  PrepareAnchors(&g);
  return g.kernels["gemm/fp16"];
}

TEST(KernelCostTest, WithoutAnchorsTheModelIsUnchanged) {
  KernelParams p = GemmParams();
  KernelWork w = Gemm(4096, 768, 768);
  EXPECT_DOUBLE_EQ(KernelTimeUs(w, p, kSms), ModelTimeUs(w, p, kSms));
  EXPECT_DOUBLE_EQ(AnchorFactor(w, p), 1.0);
}

TEST(KernelCostTest, AnAnchorIsReproducedExactly) {
  KernelParams p = GemmParams();
  KernelWork a = Gemm(4096, 768, 768), b = Gemm(4096, 3072, 768);
  const double ma = ModelTimeUs(a, p, kSms), mb = ModelTimeUs(b, p, kSms);
  p.anchors = {AnchorAt(a, 1.3 * ma), AnchorAt(b, 0.8 * mb)};
  p = Prepared(p);
  EXPECT_NEAR(KernelTimeUs(a, p, kSms), 1.3 * ma, 1e-6 * ma);
  EXPECT_NEAR(KernelTimeUs(b, p, kSms), 0.8 * mb, 1e-6 * mb);
}

TEST(KernelCostTest, BetweenAnchorsTheRatioIsBlendedAndFadesFarAway) {
  KernelParams p = GemmParams();
  KernelWork lo = Gemm(1024, 768, 768), hi = Gemm(4096, 768, 768);
  p.anchors = {AnchorAt(lo, 1.5 * ModelTimeUs(lo, p, kSms)),
               AnchorAt(hi, 1.1 * ModelTimeUs(hi, p, kSms))};
  p = Prepared(p);
  // Halfway in log2(m): the geometric mean of the two ratios.
  const double mid = AnchorFactor(Gemm(2048, 768, 768), p);
  EXPECT_NEAR(mid, std::sqrt(1.5 * 1.1), 1e-9);
  // Closer to `lo`: nearer its ratio.
  const double near_lo = AnchorFactor(Gemm(1300, 768, 768), p);
  EXPECT_GT(near_lo, mid);
  EXPECT_LT(near_lo, 1.5 + 1e-12);
  // One octave beyond the last anchor still takes its ratio; four octaves beyond, almost none.
  EXPECT_NEAR(AnchorFactor(Gemm(8192, 768, 768), p), 1.1, 1e-6);
  const double far = AnchorFactor(Gemm(65536, 768, 768), p);
  EXPECT_LT(std::abs(std::log(far)), 0.05 * std::log(1.1) + 1e-12);
}

TEST(KernelCostTest, AVariantUsesItsOwnAnchorsOrElseThePlainOnes) {
  KernelParams p = GemmParams();
  KernelWork plain = Gemm(2048, 768, 768);
  KernelWork nn = Gemm(2048, 768, 768, KernelVariant::kGemmNN);
  p.anchors = {AnchorAt(plain, 2.0 * ModelTimeUs(plain, p, kSms))};
  p = Prepared(p);
  // No nn anchors: priced with the plain ones.
  EXPECT_NEAR(AnchorFactor(nn, p), 2.0, 1e-9);
  p.anchors.push_back(AnchorAt(nn, 0.5 * ModelTimeUs(nn, p, kSms)));
  p = Prepared(p);
  EXPECT_NEAR(AnchorFactor(nn, p), 0.5, 1e-9);
  EXPECT_NEAR(AnchorFactor(plain, p), 2.0, 1e-9);
}

// A 1x1 convolution over odd positions, or one torch.compile runs channels-last, is priced by
// its own anchors; a profile measured before it had any prices it by the pointwise ones, and
// only without those by the plain.
TEST(KernelCostTest, OddAndChannelsLastPointwiseConvolutionsFallBackToThePointwiseAnchors) {
  for (KernelVariant v : {KernelVariant::kPointwiseOdd, KernelVariant::kPointwiseNhwc}) {
    SCOPED_TRACE(KernelVariantName(v));
    KernelParams p = GemmParams();
    KernelWork plain = Gemm(9800, 64, 192);
    KernelWork pw = Gemm(9800, 64, 192, KernelVariant::kPointwise);
    KernelWork odd = Gemm(9800, 64, 192, v);
    p.anchors = {AnchorAt(plain, 2.0 * ModelTimeUs(plain, p, kSms))};
    p = Prepared(p);
    EXPECT_NEAR(AnchorFactor(odd, p), 2.0, 1e-9);
    EXPECT_EQ(ReachOf(odd, p), AnchorReach::kVariantUnmeasured);
    p.anchors.push_back(AnchorAt(pw, 0.8 * ModelTimeUs(pw, p, kSms)));
    p = Prepared(p);
    EXPECT_NEAR(AnchorFactor(odd, p), 0.8, 1e-9);
    EXPECT_EQ(ReachOf(odd, p), AnchorReach::kNear);
    p.anchors.push_back(AnchorAt(odd, 3.0 * ModelTimeUs(odd, p, kSms)));
    p = Prepared(p);
    EXPECT_NEAR(AnchorFactor(odd, p), 3.0, 1e-9);
    EXPECT_NEAR(AnchorFactor(pw, p), 0.8, 1e-9);
    EXPECT_NEAR(AnchorFactor(plain, p), 2.0, 1e-9);
  }
}

// A strided add (a transposed operand and a contiguous one) is priced by its own anchors,
// else by the broadcast ones: both are ATen's unvectorized kernel.
TEST(KernelCostTest, AStridedAddFallsBackToTheBroadcastAnchors) {
  KernelParams p;
  p.floor_us = Param::Of(2);
  p.bandwidth_gbps = Param::Of(3000);
  auto add = [](KernelVariant v) {
    KernelWork w;
    w.cls = KernelClass::kElementwise;
    w.variant = v;
    w.bytes = 3.7e7;
    return w;
  };
  KernelAnchor b;
  b.variant = KernelVariant::kBroadcast;
  b.bytes = 3.7e7;
  b.us = 1.5 * ModelTimeUs(add(KernelVariant::kBroadcast), p, kSms);
  GpuParams g;
  g.num_sms = kSms;
  g.kernels["elementwise/fp16"] = p;
  g.kernels["elementwise/fp16"].anchors = {b};
  PrepareAnchors(&g);
  EXPECT_NEAR(AnchorFactor(add(KernelVariant::kStrided), g.kernels["elementwise/fp16"]), 1.5, 1e-9);
  KernelAnchor s = b;
  s.variant = KernelVariant::kStrided;
  s.us = 2.5 * ModelTimeUs(add(KernelVariant::kStrided), p, kSms);
  g.kernels["elementwise/fp16"].anchors = {b, s};
  PrepareAnchors(&g);
  EXPECT_NEAR(AnchorFactor(add(KernelVariant::kStrided), g.kernels["elementwise/fp16"]), 2.5, 1e-9);
  EXPECT_NEAR(AnchorFactor(add(KernelVariant::kBroadcast), g.kernels["elementwise/fp16"]), 1.5, 1e-9);
  EXPECT_NEAR(AnchorFactor(add(KernelVariant::kPlain), g.kernels["elementwise/fp16"]), 1.0, 1e-9);
}

TEST(KernelCostTest, MemoryBoundAnchorsAreLocatedByBytes) {
  KernelParams p;
  p.floor_us = Param::Of(2);
  p.bandwidth_gbps = Param::Of(3000);
  KernelWork w;
  w.cls = KernelClass::kElementwise;
  w.variant = KernelVariant::kBroadcast;
  w.bytes = 1e8;
  KernelAnchor a;
  a.variant = KernelVariant::kBroadcast;
  a.bytes = 1e8;
  a.us = 2.0 * ModelTimeUs(w, p, kSms);
  p.anchors = {a};
  p = Prepared(p);
  EXPECT_NEAR(KernelTimeUs(w, p, kSms), a.us, 1e-6 * a.us);
  // A plain element-wise kernel of the same size is not corrected by broadcast anchors.
  KernelWork plain = w;
  plain.variant = KernelVariant::kPlain;
  EXPECT_DOUBLE_EQ(AnchorFactor(plain, p), 1.0);
}

TEST(KernelCostTest, KernelCountsComeFromTheNearestAnchor) {
  KernelParams p = GemmParams();
  // cuBLAS ran the m = 128 GEMM as a split-K pair and the m = 512 one as one kernel.
  KernelAnchor split = AnchorOfWork(Gemm(128, 768, 768), 20, 2);
  KernelAnchor one = AnchorOfWork(Gemm(512, 768, 768), 30, 1);
  EXPECT_EQ(AnchorKernels(Gemm(128, 768, 768), p), 1);  // no anchors: one kernel
  p.anchors = {split, one};
  p = Prepared(p);
  EXPECT_EQ(AnchorKernels(Gemm(128, 768, 768), p), 2);  // on an anchor
  EXPECT_EQ(AnchorKernels(Gemm(150, 768, 768), p), 2);  // nearer the split one
  EXPECT_EQ(AnchorKernels(Gemm(450, 768, 768), p), 1);  // nearer the single one
  // Exactly between two anchors that disagree: the library switches somewhere in between,
  // and the fewer kernels are taken.
  EXPECT_EQ(AnchorKernels(Gemm(256, 768, 768), p), 1);
  // More than an octave from every anchor: nothing is known, one kernel.
  EXPECT_EQ(AnchorKernels(Gemm(32, 768, 768), p), 1);
  // A variant without anchors of its own counts with the plain ones; with its own, by them.
  EXPECT_EQ(AnchorKernels(Gemm(128, 768, 768, KernelVariant::kGemmNN), p), 2);
  p.anchors.push_back(AnchorOfWork(Gemm(128, 768, 768, KernelVariant::kGemmNN), 18, 1));
  p = Prepared(p);
  EXPECT_EQ(AnchorKernels(Gemm(128, 768, 768, KernelVariant::kGemmNN), p), 1);
  // Only the libraries' classes take their counts from the bench.
  EXPECT_TRUE(LibraryChoosesKernels(KernelClass::kGemm));
  EXPECT_TRUE(LibraryChoosesKernels(KernelClass::kConv));
  EXPECT_FALSE(LibraryChoosesKernels(KernelClass::kNorm));
  EXPECT_FALSE(LibraryChoosesKernels(KernelClass::kElementwise));
}

// Whether a kernel lies among the measured points of its kind, for the prediction's notes.
TEST(KernelCostTest, ReachSaysWhetherAKernelWasMeasuredNearby) {
  KernelParams p = GemmParams();
  EXPECT_EQ(ReachOf(Gemm(512, 512, 512), p), AnchorReach::kNoAnchors);
  p.anchors = {AnchorAt(Gemm(512, 512, 512), 20), AnchorAt(Gemm(512, 512, 512, KernelVariant::kGemmNN), 25)};
  p = Prepared(p);
  EXPECT_EQ(ReachOf(Gemm(512, 512, 512), p), AnchorReach::kNear);
  EXPECT_EQ(ReachOf(Gemm(700, 512, 512), p), AnchorReach::kNear);  // under half an octave
  EXPECT_EQ(ReachOf(Gemm(4096, 512, 512), p), AnchorReach::kFar);  // three octaves in m
  EXPECT_EQ(ReachOf(Gemm(512, 512, 512, KernelVariant::kGemmNN), p), AnchorReach::kNear);
  EXPECT_EQ(ReachOf(Gemm(512, 512, 4096, KernelVariant::kGemmNN), p), AnchorReach::kFar);
  EXPECT_EQ(ReachOf(Gemm(512, 512, 512, KernelVariant::kGemmNNBias), p), AnchorReach::kVariantUnmeasured);
  // A shaped kernel among anchors without a shape is placed by its bytes.
  KernelParams dw;
  dw.floor_us = Param::Of(2);
  dw.bandwidth_gbps = Param::Of(1000);
  KernelWork a;
  a.cls = KernelClass::kDepthwise;
  a.bytes = 1 << 20;
  dw.anchors = {AnchorAt(a, 5)};
  GpuParams g;
  g.num_sms = kSms;
  g.kernels["depthwise/fp16"] = dw;
  PrepareAnchors(&g);
  dw = g.kernels["depthwise/fp16"];
  KernelWork large = a;
  large.m = 3136;
  large.n = 96;
  large.k = 49;
  EXPECT_EQ(ReachOf(a, dw), AnchorReach::kNear);
  EXPECT_GT(AnchorFactor(large, dw), 0.0);
  EXPECT_NEAR(AnchorFactor(large, dw), AnchorFactor(a, dw), 1e-12);
}

TEST(KernelCostTest, VariantNamesRoundTrip) {
  for (int i = 0; i < kNumKernelVariants; ++i) {
    auto v = ParseKernelVariant(KernelVariantName(KernelVariant(i)));
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(int(*v), i);
  }
  EXPECT_FALSE(ParseKernelVariant("transposed").has_value());
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

KernelParams Prepared(KernelParams p, const char* key) {
  GpuParams g;
  g.num_sms = kSms;
  g.kernels[key] = p;
  PrepareAnchors(&g);
  return g.kernels[key];
}

KernelWork BatchNorm(int64_t positions, int64_t channels, bool shaped = true) {
  KernelWork w;
  w.cls = KernelClass::kNorm;
  w.variant = KernelVariant::kBatchNorm;
  w.bytes = 2.0 * 2 * double(positions * channels);
  w.flops = double(positions * channels);
  if (shaped) {
    w.m = positions;
    w.n = channels;
    w.k = 1;
  }
  return w;
}

// A batch norm's transform runs as long over 32 channels as over 64 at the same positions per
// channel: near its shaped anchors it is priced by their times, not by the bytes curve.
TEST(KernelCostTest, ABatchNormIsPricedByItsNeighboursTimes) {
  KernelParams p;
  p.floor_us = Param::Of(2);
  p.bandwidth_gbps = Param::Of(1500);
  const KernelWork at112 = BatchNorm(12544, 64), at56 = BatchNorm(3136, 128);
  p.anchors = {AnchorOfWork(at112, 6.2), AnchorOfWork(at56, 2.8)};
  p = Prepared(p, "norm/fp16");
  const KernelWork few = BatchNorm(12544, 32);
  // One octave from the 112x112 anchor, two from the other: near 6.2 us, though its bytes are
  // those of the 56x56 one (which the curve alone would price near 2.8 us times its ratio).
  const double t = KernelTimeUs(few, p, kSms);
  EXPECT_GT(t, 5.5);
  EXPECT_LT(t, 6.2);
  EXPECT_NEAR(KernelTimeUs(at112, p, kSms), 6.2, 1e-9);
  // Anchors of an older profile carry no shape: the ratio to the curve prices it, by bytes.
  KernelParams old;
  old.floor_us = Param::Of(2);
  old.bandwidth_gbps = Param::Of(1500);
  old.anchors = {AnchorOfWork(BatchNorm(12544, 64, false), 6.2), AnchorOfWork(BatchNorm(3136, 128, false), 2.8)};
  old = Prepared(old, "norm/fp16");
  EXPECT_LT(KernelTimeUs(few, old, kSms), 4.0);
}

KernelWork GroupedConv(int64_t m, int64_t n, int64_t k, int64_t groups, KernelVariant v) {
  KernelWork w = testing::GemmWork(m, n, k, v);
  w.cls = KernelClass::kConv;
  w.batch = groups;
  w.flops = 2.0 * double(m * n * k * groups);
  w.bytes = 2.0 * double(m * n * groups) * 2;
  return w;
}

// A grouped convolution of 24 channels a group takes the grouped_non_pow2 anchors near it;
// where its own lie far (a 1-D layer) and a grouped one is nearer, the grouped one prices it.
TEST(KernelCostTest, AGroupedConvolutionOfAnUnevenWidthFallsBackToTheNearerGroupedAnchors) {
  KernelParams p = GemmParams();
  const KernelWork layer = GroupedConv(3136, 24, 216, 3, KernelVariant::kGroupedNonPow2);
  const KernelWork near_grouped = GroupedConv(3136, 24, 216, 4, KernelVariant::kGrouped);
  const KernelWork far_own = GroupedConv(100, 48, 6144, 16, KernelVariant::kGroupedNonPow2);
  p.anchors = {AnchorOfWork(near_grouped, 3 * ModelTimeUs(near_grouped, p, kSms)),
               AnchorOfWork(far_own, 0.5 * ModelTimeUs(far_own, p, kSms))};
  KernelParams q = Prepared(p, "conv/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 3.0, 0.3);
  // An own anchor within reach prices it.
  const KernelWork near_own = GroupedConv(3136, 24, 216, 2, KernelVariant::kGroupedNonPow2);
  p.anchors.push_back(AnchorOfWork(near_own, 2 * ModelTimeUs(near_own, p, kSms)));
  q = Prepared(p, "conv/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 2.0, 0.2);
}

// A channels-last depthwise 3x3 kernel (torch.compile's MobileNets) where the only channels-last
// depthwise points are ConvNeXt's 7x7 layers (kernel area 49) is priced by the plain depthwise
// points, by its bytes; with a channels-last 3x3 point, by that one. A 7x7 one far from the 7x7
// points keeps their ratio, faded with the distance.
TEST(KernelCostTest, AChannelsLastDepthwiseKernelOfAnUnmeasuredKernelAreaTakesThePlainPoints) {
  KernelParams p;
  p.floor_us = Param::Of(2);
  p.bandwidth_gbps = Param::Of(1500);
  auto dw = [](int64_t m, int64_t c, int64_t area, KernelVariant v) {
    KernelWork w;
    w.cls = KernelClass::kDepthwise;
    w.dtype = DType::kFloat16;
    w.variant = v;
    if (v != KernelVariant::kPlain) {
      w.m = m;
      w.n = c;
      w.k = area;
    }
    w.flops = 2.0 * double(m * c * area);
    w.bytes = 2.0 * 2.0 * double(m * c);
    return w;
  };
  const KernelWork layer = dw(784, 96, 9, KernelVariant::kNhwc);
  const KernelWork convnext = dw(784, 96, 49, KernelVariant::kNhwc);
  const KernelWork plain = dw(784, 96, 9, KernelVariant::kPlain);
  p.anchors = {AnchorOfWork(convnext, 5 * ModelTimeUs(convnext, p, kSms)),
               AnchorOfWork(plain, 1.5 * ModelTimeUs(plain, p, kSms))};
  KernelParams q = Prepared(p, "depthwise/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 1.5, 1e-6);
  EXPECT_NEAR(AnchorFactor(convnext, q), 5.0, 1e-6);
  const double far_7x7 = AnchorFactor(dw(12544, 96, 49, KernelVariant::kNhwc), q);  // 4 octaves of m away
  EXPECT_GT(far_7x7, 1.0);
  EXPECT_LT(far_7x7, 5.0);
  p.anchors.push_back(AnchorOfWork(dw(784, 96, 9, KernelVariant::kNhwc), 2 * ModelTimeUs(layer, p, kSms)));
  q = Prepared(p, "depthwise/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 2.0, 1e-6);
}

// A channels-last grouped convolution of 24 channels a group (torch.compile's RegNetX) is priced
// by its own anchors, not blended with the one-kernel layers of 32 channels a group beside them
// (the bench's rows at 14x14: 30.3 us and 4.1 us); a profile without such anchors prices it by
// the nhwc ones, its layout's.
TEST(KernelCostTest, AChannelsLastGroupedConvolutionOfAnUnevenWidthHasItsOwnAnchors) {
  KernelParams p = GemmParams();
  const KernelWork layer = GroupedConv(196, 24, 216, 17, KernelVariant::kNhwcGroupedNonPow2);
  const KernelWork own = GroupedConv(196, 24, 216, 16, KernelVariant::kNhwcGroupedNonPow2);
  const KernelWork pow2 = GroupedConv(196, 32, 288, 16, KernelVariant::kNhwc);
  p.anchors = {AnchorOfWork(pow2, 0.8 * ModelTimeUs(pow2, p, kSms))};
  KernelParams q = Prepared(p, "conv/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 0.8, 0.05);  // no own anchors: the nhwc ones
  p.anchors.push_back(AnchorOfWork(own, 6 * ModelTimeUs(own, p, kSms)));
  q = Prepared(p, "conv/fp16");
  EXPECT_NEAR(AnchorFactor(layer, q), 6.0, 0.1);
  EXPECT_NEAR(AnchorFactor(pow2, q), 0.8, 1e-9);
  // Read as its own variant from a bench that wrote it as nhwc.
  EXPECT_EQ(ChannelsLastVariant(16, 24), KernelVariant::kNhwcGroupedNonPow2);
  EXPECT_EQ(ChannelsLastVariant(16, 32), KernelVariant::kNhwc);
  EXPECT_EQ(ChannelsLastVariant(1, 24), KernelVariant::kNhwc);
  EXPECT_EQ(ParseKernelVariant("nhwc_grouped_non_pow2"), KernelVariant::kNhwcGroupedNonPow2);
  EXPECT_TRUE(VariantBelongsTo(KernelVariant::kNhwcGroupedNonPow2, KernelClass::kConv));
  EXPECT_FALSE(VariantBelongsTo(KernelVariant::kNhwcGroupedNonPow2, KernelClass::kDepthwise));
}

}  // namespace
}  // namespace ftax
