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

double KernelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms) {
  KernelTheta theta;
  theta.floor_us = p.floor_us.value;
  theta.rate_tflops = p.rate_tflops.known() ? p.rate_tflops.value : 0;
  theta.bandwidth_gbps = p.bandwidth_gbps.value;
  return KernelTimeUs(k, theta, p.tile_m, p.tile_n, num_sms);
}

}  // namespace ftax
