// The GPU kernel cost model: time of one kernel from its work and its class's parameters.
//
//   t = floor + max(flops_eff / rate, bytes / bandwidth)
//
// For classes with a GEMM-like shape (m, n, k, batch), flops_eff pads the work to whole
// waves: tiles = ceil(m / tile_m) * ceil(n / tile_n) * batch, waves = ceil(tiles / SMs), and
// flops_eff = max(flops, waves * SMs * 2 * tile_m * tile_n * k) — a GEMM with fewer tiles
// than SMs runs no faster than one tile on one SM. Memory-bound classes have no rate.
//
// The same function is used by prediction and by the fits in src/calibrate, so a fitted
// profile and the predictor can never disagree about the model.
#pragma once

#include "predictor/host_profile.h"
#include "predictor/work_list.h"

namespace ftax {

// Parameter vector of one class, in profile units: floor (µs), rate (TFLOP/s, <= 0 for
// "none"), bandwidth (GB/s).
struct KernelTheta {
  double floor_us = 0;
  double rate_tflops = 0;
  double bandwidth_gbps = 1;
};

double EffectiveFlops(const KernelWork& k, int tile_m, int tile_n, int num_sms);

// Kernel time in µs.
double KernelTimeUs(const KernelWork& k, const KernelTheta& theta, int tile_m, int tile_n,
                    int num_sms);
double KernelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms);

}  // namespace ftax
