#include "predictor/kernel_cost.h"

#include <algorithm>
#include <cmath>

namespace ftax {

double EffectiveFlops(const KernelWork& k, int tile_m, int tile_n, int num_sms) {
  if (k.m <= 0 || k.n <= 0 || k.k <= 0 || num_sms <= 0) return k.flops;
  const double tiles = std::ceil(double(k.m) / tile_m) * std::ceil(double(k.n) / tile_n) *
                       double(std::max<int64_t>(k.batch, 1));
  const double waves = std::ceil(tiles / num_sms);
  const double padded = waves * num_sms * 2.0 * tile_m * tile_n * double(k.k);
  return std::max(k.flops, padded);
}

double KernelTimeUs(const KernelWork& k, const KernelTheta& theta, int tile_m, int tile_n,
                    int num_sms) {
  // TFLOP/s = 1e6 FLOP/µs; GB/s = 1e3 B/µs.
  double t_mem = theta.bandwidth_gbps > 0 ? k.bytes / (theta.bandwidth_gbps * 1e3) : 0;
  double t_math = 0;
  if (theta.rate_tflops > 0)
    t_math = EffectiveFlops(k, tile_m, tile_n, num_sms) / (theta.rate_tflops * 1e6);
  return theta.floor_us + std::max(t_math, t_mem);
}

double ModelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms) {
  KernelTheta theta;
  theta.floor_us = p.floor_us.value;
  theta.rate_tflops = p.rate_tflops.known() ? p.rate_tflops.value : 0;
  theta.bandwidth_gbps = p.bandwidth_gbps.value;
  return KernelTimeUs(k, theta, p.tile_m, p.tile_n, num_sms);
}

namespace {

// Interpolation width and reach, in octaves of the shape (or of the bytes).
constexpr double kSigma = 0.5;
constexpr double kReach = 1.0;
constexpr double kFade = 1.0;

double Log2Pos(double v) { return std::log2(std::max(v, 1.0)); }

bool Shaped(int64_t m, int64_t n, int64_t k) { return m > 0 && n > 0 && k > 0; }

// The variants whose anchors may price a kernel of variant `v`, in order: its own; then the
// variant it is a case of (pointwise_odd and pointwise_nhwc: pointwise; strided: broadcast;
// grouped_non_pow2: grouped; nhwc_grouped_non_pow2: nhwc), for profiles
// measured before it had rows of its own; then the plain class.
struct AnchorVariants {
  explicit AnchorVariants(KernelVariant v) {
    list[n++] = v;
    if (v == KernelVariant::kPointwiseOdd || v == KernelVariant::kPointwiseNhwc) list[n++] = KernelVariant::kPointwise;
    if (v == KernelVariant::kStrided) list[n++] = KernelVariant::kBroadcast;
    if (v == KernelVariant::kGroupedNonPow2) list[n++] = KernelVariant::kGrouped;
    if (v == KernelVariant::kNhwcGroupedNonPow2) list[n++] = KernelVariant::kNhwc;
    if (v != KernelVariant::kPlain) list[n++] = KernelVariant::kPlain;
  }
  const KernelVariant* begin() const { return list; }
  const KernelVariant* end() const { return list + n; }
  KernelVariant list[3] = {};
  int n = 0;
};

}  // namespace

namespace {

// Where a kernel sits among the anchors: log2 of its shape (or of its bytes, for classes
// without a GEMM-like shape). Dist2 is the squared distance in octaves (-1: not comparable).
struct AnchorQuery {
  explicit AnchorQuery(const KernelWork& k)
      : shaped(Shaped(k.m, k.n, k.k)),
        qm(shaped ? Log2Pos(double(k.m)) : 0),
        qn(shaped ? Log2Pos(double(k.n)) : 0),
        qk(shaped ? Log2Pos(double(k.k)) : 0),
        qb(shaped ? Log2Pos(double(std::max<int64_t>(k.batch, 1))) : 0),
        qbytes(Log2Pos(k.bytes)) {}
  double Dist2(const KernelAnchor& a) const {
    // An anchor without a shape is compared by bytes (a shaped large-kernel depthwise kernel
    // falling back to the class's plain anchors); a shaped anchor only with a shaped kernel.
    if (!Shaped(a.m, a.n, a.k)) return (qbytes - a.lbytes) * (qbytes - a.lbytes);
    if (!shaped) return -1.0;
    return (qm - a.lm) * (qm - a.lm) + (qn - a.ln) * (qn - a.ln) + (qk - a.lk) * (qk - a.lk) +
           (qb - a.lb) * (qb - a.lb);
  }
  bool shaped;
  double qm, qn, qk, qb, qbytes;
};

// The nearest anchor of variant v (squared octaves; -1: none comparable).
double NearestOf(const AnchorQuery& q, const KernelParams& p, KernelVariant v, bool* any) {
  double best = -1;
  *any = false;
  for (const KernelAnchor& a : p.anchors) {
    if (a.variant != v) continue;
    *any = true;
    const double d2 = q.Dist2(a);
    if (d2 >= 0 && (best < 0 || d2 < best)) best = d2;
  }
  return best;
}

// The variants that price a kernel, as AnchorVariants lists them; for a grouped convolution of
// a width that is not a power of two, less its own variant where all of its own anchors lie
// beyond reach and the grouped ones have a nearer one (a 2-D layer of 24 channels a group,
// where the bench's only such rows are 1-D: WavLM's positional convolution). A channels-last
// depthwise kernel whose kernel area no channels-last depthwise point has (a 3x3 or 5x5 one
// under torch.compile, where benches before 2026-11-28 timed only ConvNeXt's 7x7 ones
// channels-last) is priced by the plain depthwise points, by its bytes, as the NCHW kernel is;
// one of a measured area keeps its own points, faded with distance (ConvNeXt's 7x7 layers of
// other sizes). A pointwise_odd kernel keeps its own faded anchors: the aligned pointwise
// kernels are another kind.
struct PricingVariants : AnchorVariants {
  PricingVariants(const AnchorQuery& q, const KernelWork& k, const KernelParams& p) : AnchorVariants(k.variant) {
    const auto near = [](double d2) { return d2 >= 0 && std::sqrt(d2) <= kReach; };
    if (k.cls == KernelClass::kDepthwise && k.variant == KernelVariant::kNhwc && n == 2) {
      const bool same_area = std::any_of(p.anchors.begin(), p.anchors.end(), [&](const KernelAnchor& a) {
        return a.variant == KernelVariant::kNhwc && a.k == k.k;
      });
      if (!same_area) {
        list[0] = list[1];
        n = 1;
      }
      return;
    }
    if (n < 3 || k.variant != KernelVariant::kGroupedNonPow2) return;
    bool own_any = false, parent_any = false;
    const double own = NearestOf(q, p, list[0], &own_any);
    const double parent = NearestOf(q, p, list[1], &parent_any);
    if (own_any && !near(own) && parent_any && parent >= 0 && (own < 0 || parent < own)) {
      list[0] = list[1];
      list[1] = list[2];
      n = 2;
    }
  }
};

}  // namespace

int AnchorKernels(const KernelWork& k, const KernelParams& p) {
  const AnchorQuery q(k);
  for (KernelVariant v : PricingVariants(q, k, p)) {
    double best = -1, kernels = 1;
    bool any_of_variant = false;
    for (const KernelAnchor& a : p.anchors) {
      if (a.variant != v) continue;
      any_of_variant = true;
      const double d2 = q.Dist2(a);
      if (d2 < 0) continue;
      if (best < 0 || d2 < best - 1e-9) {
        best = d2;
        kernels = a.kernels;
      } else if (d2 <= best + 1e-9) {
        // Equally near anchors that disagree (a split-K GEMM at m = 128, none at m = 512,
        // asked for m = 256): the library switches somewhere between; take the fewer.
        kernels = std::min(kernels, a.kernels);
      }
    }
    if (!any_of_variant) continue;
    if (best < 0 || std::sqrt(best) > kReach) return 1;
    return std::max(1, int(std::lround(kernels)));
  }
  return 1;
}

AnchorReach ReachOf(const KernelWork& k, const KernelParams& p) {
  if (p.anchors.empty()) return AnchorReach::kNoAnchors;
  const AnchorQuery q(k);
  for (KernelVariant v : PricingVariants(q, k, p)) {
    if (v == KernelVariant::kPlain && k.variant != KernelVariant::kPlain) break;
    bool any_of_variant = false;
    double best = -1;
    for (const KernelAnchor& a : p.anchors) {
      if (a.variant != v) continue;
      any_of_variant = true;
      const double d2 = q.Dist2(a);
      if (d2 >= 0 && (best < 0 || d2 < best)) best = d2;
    }
    if (!any_of_variant) continue;
    return best >= 0 && std::sqrt(best) <= kReach ? AnchorReach::kNear : AnchorReach::kFar;
  }
  return k.variant == KernelVariant::kPlain ? AnchorReach::kFar : AnchorReach::kVariantUnmeasured;
}

bool VariantBelongsTo(KernelVariant v, KernelClass c) {
  switch (v) {
    case KernelVariant::kPlain: return true;
    case KernelVariant::kGemmNN:
    case KernelVariant::kGemmNNBias: return c == KernelClass::kGemm;
    case KernelVariant::kBroadcast:
    case KernelVariant::kStrided: return c == KernelClass::kElementwise;
    case KernelVariant::kPointwise:
    case KernelVariant::kPointwiseOdd:
    case KernelVariant::kPointwiseNhwc:
    case KernelVariant::kGrouped:
    case KernelVariant::kGroupedNonPow2:
    case KernelVariant::kNhwcGroupedNonPow2:
    case KernelVariant::kPatchify: return c == KernelClass::kConv;
    case KernelVariant::kLargeKernel: return c == KernelClass::kDepthwise;
    case KernelVariant::kPool: return c == KernelClass::kReduction;
    case KernelVariant::kNhwc: return c == KernelClass::kConv || c == KernelClass::kDepthwise;
    case KernelVariant::kBatchNorm:
    case KernelVariant::kLayerNorm: return c == KernelClass::kNorm;
    case KernelVariant::kContiguous:
    case KernelVariant::kPermute: return c == KernelClass::kCopy;
  }
  return false;
}

KernelVariant GroupedVariant(int64_t channels_per_group) {
  const bool pow2 = channels_per_group > 0 && (channels_per_group & (channels_per_group - 1)) == 0;
  return pow2 ? KernelVariant::kGrouped : KernelVariant::kGroupedNonPow2;
}

KernelVariant ChannelsLastVariant(int64_t groups, int64_t channels_per_group) {
  return groups > 1 && GroupedVariant(channels_per_group) == KernelVariant::kGroupedNonPow2
             ? KernelVariant::kNhwcGroupedNonPow2
             : KernelVariant::kNhwc;
}

bool LibraryChoosesKernels(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kConv;
}

// Variants whose time does not follow the class curve between their measured points, so that
// a kernel near them is priced by their times, not by their ratios to the curve: a batch
// norm's transform kernel over few channels runs as long as one over many at the same
// positions per channel (64 channels of 112x112 took 6.2 us, 32 channels 7.4, 128 channels of
// 56x56 2.8; CUPTI, H100), where the curve follows the bytes. Tried on grouped convolutions too,
// it cost RegNetX-1.6GF what the grouped_non_pow2 variant gained (validation/README.md).
static bool InterpolatesTime(KernelVariant v) { return v == KernelVariant::kBatchNorm; }

double AnchorFactor(const KernelWork& k, const KernelParams& p) {
  if (p.anchors.empty()) return 1.0;
  const AnchorQuery q(k);
  const PricingVariants variants(q, k, p);
  for (KernelVariant v : variants) {
    double best = -1;
    bool any_of_variant = false, best_shaped = false;
    for (const KernelAnchor& a : p.anchors) {
      if (a.variant != v) continue;
      any_of_variant = true;
      const double d2 = q.Dist2(a);
      if (d2 >= 0 && (best < 0 || d2 < best)) {
        best = d2;
        best_shaped = Shaped(a.m, a.n, a.k);
      }
    }
    if (!any_of_variant) continue;  // fall back to the plain anchors
    if (best < 0) return 1.0;
    double sw = 0, swr = 0, swt = 0;
    for (const KernelAnchor& a : p.anchors) {
      if (a.variant != v) continue;
      const double d2 = q.Dist2(a);
      if (d2 < 0) continue;
      const double e = (d2 - best) / (2 * kSigma * kSigma);
      if (e > 20 || (best < 1e-12 && d2 > 1e-12)) continue;  // on an anchor: that one alone
      const double w = std::exp(-e);
      sw += w;
      swr += w * a.log_ratio;
      swt += w * std::log(std::max(a.us, 1e-9));
    }
    const double beyond = std::max(0.0, std::sqrt(best) - kReach) / kFade;
    // Anchors of older profiles, located by their bytes alone, keep the ratio.
    if (beyond == 0 && q.shaped && best_shaped && InterpolatesTime(v) && p.anchor_sms > 0) {
      const double model = ModelTimeUs(k, p, p.anchor_sms);
      if (model > 0) return std::exp(swt / sw) / model;
    }
    return std::exp(swr / sw * std::exp(-0.5 * beyond * beyond));
  }
  return 1.0;
}

double KernelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms) {
  const double t = ModelTimeUs(k, p, num_sms);
  return p.anchors.empty() ? t : t * AnchorFactor(k, p);
}

KernelAnchor AnchorOfWork(const KernelWork& w, double us, double kernels) {
  KernelAnchor a;
  a.kernels = kernels;
  a.variant = w.variant;
  a.m = w.m;
  a.n = w.n;
  a.k = w.k;
  a.batch = std::max<int64_t>(w.batch, 1);
  a.flops = w.flops;
  a.bytes = w.bytes;
  a.us = us;
  return a;
}

KernelWork WorkOfAnchor(const KernelAnchor& a) {
  KernelWork w;
  w.variant = a.variant;
  w.m = a.m;
  w.n = a.n;
  w.k = a.k;
  w.batch = a.batch;
  w.flops = a.flops;
  w.bytes = a.bytes;
  return w;
}

void PrepareAnchors(GpuParams* gpu) {
  for (auto& [key, p] : gpu->kernels) {
    for (KernelAnchor& a : p.anchors) {
      const KernelWork w = WorkOfAnchor(a);
      a.lm = Log2Pos(double(a.m));
      a.ln = Log2Pos(double(a.n));
      a.lk = Log2Pos(double(a.k));
      a.lb = Log2Pos(double(std::max<int64_t>(a.batch, 1)));
      a.lbytes = Log2Pos(a.bytes);
      const double model = ModelTimeUs(w, p, gpu->num_sms);
      a.log_ratio = model > 0 && a.us > 0 ? std::log(a.us / model) : 0.0;
    }
    p.anchor_sms = gpu->num_sms;
  }
}

const char* KernelVariantName(KernelVariant v) {
  switch (v) {
    case KernelVariant::kPlain: return "";
    case KernelVariant::kGemmNN: return "nn";
    case KernelVariant::kGemmNNBias: return "nn_bias";
    case KernelVariant::kBroadcast: return "broadcast";
    case KernelVariant::kPointwise: return "pointwise";
    case KernelVariant::kBatchNorm: return "batch_norm";
    case KernelVariant::kContiguous: return "contiguous";
    case KernelVariant::kGrouped: return "grouped";
    case KernelVariant::kPatchify: return "patchify";
    case KernelVariant::kLargeKernel: return "large_kernel";
    case KernelVariant::kPool: return "pool";
    case KernelVariant::kNhwc: return "nhwc";
    case KernelVariant::kLayerNorm: return "layer_norm";
    case KernelVariant::kPermute: return "permute";
    case KernelVariant::kPointwiseOdd: return "pointwise_odd";
    case KernelVariant::kStrided: return "strided";
    case KernelVariant::kGroupedNonPow2: return "grouped_non_pow2";
    case KernelVariant::kPointwiseNhwc: return "pointwise_nhwc";
    case KernelVariant::kNhwcGroupedNonPow2: return "nhwc_grouped_non_pow2";
  }
  return "";
}

std::optional<KernelVariant> ParseKernelVariant(const std::string& name) {
  for (int i = 0; i < kNumKernelVariants; ++i)
    if (name == KernelVariantName(KernelVariant(i))) return KernelVariant(i);
  if (name == "plain") return KernelVariant::kPlain;
  return std::nullopt;
}

}  // namespace ftax
