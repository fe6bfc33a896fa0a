#include "calibrate/miss_cause.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace ftax {
namespace {

std::string Ms(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.3f ms", v);
  return b;
}

}  // namespace

MissCause ExplainMiss(const MissEvidence& e) {
  MissCause c;
  c.kernel_delta_ms = e.measured_kernel_ms - e.predicted_compute_ms;
  c.overhead_delta_ms = (e.measured_ms - e.measured_kernel_ms) - (e.predicted_ms - e.predicted_compute_ms);
  const double tol = e.tolerance_pct / 100;
  if (e.visit_medians_ms.size() > 1) {
    const auto [lo, hi] = std::minmax_element(e.visit_medians_ms.begin(), e.visit_medians_ms.end());
    const bool spread_wide = *lo > 0 && *hi / *lo > 1 + tol;
    const bool one_visit_agrees =
        std::any_of(e.visit_medians_ms.begin(), e.visit_medians_ms.end(),
                    [&](double v) { return v > 0 && std::fabs(e.predicted_ms - v) <= tol * v; });
    if (spread_wide && one_visit_agrees) {
      char b[200];
      std::snprintf(b, sizeof(b), "the point's %zu visits ranged %.2fx (%.3f to %.3f ms), and one is within "
                    "%.0f%% of the prediction",
                    e.visit_medians_ms.size(), *hi / *lo, *lo, *hi, e.tolerance_pct);
      c.kind = "host drift";
      c.detail = b;
      return c;
    }
  }
  // Far more kernels than the graph holds: the prediction priced another program. Memsets
  // do not count: a library's (cuDNN's around a grouped convolution) are GPU work of a
  // microsecond each, not another program.
  constexpr double kExtraShare = 1.15, kExtraKernels = 10;
  const double kernels = e.measured_kernels - std::max(0.0, e.measured_memsets);
  if (e.measured_ms > e.predicted_ms && e.predicted_kernels > 0 && e.measured_kernels > 0 &&
      kernels >= kExtraShare * e.predicted_kernels && kernels - e.predicted_kernels >= kExtraKernels) {
    char b[320];
    char memsets[64] = "";
    if (e.measured_memsets > 0) std::snprintf(memsets, sizeof(memsets), " (%.0f without memsets)", kernels);
    std::snprintf(b, sizeof(b), "%.0f kernels%s ran a call where %.0f are predicted: work the priced graph "
                  "does not hold (a branch on a tensor's value, a graph break) or kernels a library adds",
                  e.measured_kernels, memsets, e.predicted_kernels);
    c.kind = "unpredicted kernels";
    c.detail = b;
    return c;
  }
  constexpr double kSlowProbe = 1.25;
  if (e.measured_ms > e.predicted_ms && e.host_probe_us > 0 && e.bench_probe_us > 0 &&
      e.host_probe_us >= kSlowProbe * e.bench_probe_us) {
    char b[200];
    std::snprintf(b, sizeof(b), "the process's probe (64 small adds) cost %.1f us per op before the point, "
                  "%.2fx the bench's %.1f us",
                  e.host_probe_us, e.host_probe_us / e.bench_probe_us, e.bench_probe_us);
    c.kind = "slow process";
    c.detail = b;
    return c;
  }
  if (std::fabs(c.overhead_delta_ms) >= std::fabs(c.kernel_delta_ms)) {
    c.kind = "framework overhead";
    c.detail = "latency less kernel time: measured " + Ms(e.measured_ms - e.measured_kernel_ms) +
               ", predicted " + Ms(e.predicted_ms - e.predicted_compute_ms);
    if (e.measured_before_replay_ms >= 0 && e.predicted_before_replay_ms >= 0)
      c.detail += "; of it, the wrapper's CPU time before the replay: measured " + Ms(e.measured_before_replay_ms) +
                  ", predicted " + Ms(e.predicted_before_replay_ms);
    return c;
  }
  // The class that moves kernel time most the way the total moved (classes can cancel: a
  // library call's kernels may be split over conv, gemm and copy on the measured side).
  const double sign = c.kernel_delta_ms >= 0 ? 1.0 : -1.0;
  std::array<double, kNumKernelClasses> measured = e.measured_class_ms, predicted = e.predicted_class_ms;
  // cuDNN runs some convolutions as cuBLAS GEMM kernels (nvjet; 1x1 ones above all) and
  // depthwise ones under names that do not say so, which put them in gemm or conv where the
  // prediction has them in conv or depthwise: where those classes moved opposite ways, they are
  // one bucket.
  const int conv = int(KernelClass::kConv), gemm = int(KernelClass::kGemm), dw = int(KernelClass::kDepthwise);
  bool over = false, under = false;
  for (int k : {conv, gemm, dw}) {
    over = over || measured[k] > predicted[k];
    under = under || measured[k] < predicted[k];
  }
  const bool together = predicted[conv] + predicted[dw] > 0 && over && under;
  if (together) {
    for (int k : {gemm, dw}) {
      measured[conv] += measured[k];
      predicted[conv] += predicted[k];
      measured[k] = predicted[k] = 0;
    }
  }
  int worst = 0;
  for (int k = 1; k < kNumKernelClasses; ++k)
    if (sign * (measured[k] - predicted[k]) > sign * (measured[worst] - predicted[worst])) worst = k;
  const std::string name = together && worst == conv
                               ? std::string("convolution and GEMM kernels (cuDNN runs some convolutions as GEMMs)")
                               : KernelClassName(KernelClass(worst));
  c.kind = "kernel time";
  c.detail = "measured " + Ms(e.measured_kernel_ms) + ", predicted " + Ms(e.predicted_compute_ms) + "; most in " +
             name + " (" + Ms(measured[worst]) + " measured, " + Ms(predicted[worst]) + " predicted)";
  return c;
}

}  // namespace ftax
