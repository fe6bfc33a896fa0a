// The GPU kernel cost model: time of one kernel from its work and its class's parameters.
//
//   t = floor + max(flops_eff / rate, bytes / bandwidth)
//
// For classes with a GEMM-like shape (m, n, k, batch), flops_eff pads the work to whole
// waves: tiles = ceil(m / tile_m) * ceil(n / tile_n) * batch, waves = ceil(tiles / SMs), and
// flops_eff = max(flops, waves * SMs * 2 * tile_m * tile_n * k) — a GEMM with fewer tiles
// than SMs runs no faster than one tile on one SM. Memory-bound classes have no rate.
//
// A profile may keep measured points ("anchors") per class. The time of a kernel near them is
// the model's, times the measured-over-modelled ratio of the nearest anchors of its variant,
// interpolated in log space over (m, n, k, batch), or over bytes for anchors without a GEMM
// shape: exact at an anchor, a geometric blend between anchors, and fading back to the bare
// model beyond one octave from the nearest. A variant without anchors uses the plain ones.
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
// Kernel time in µs with the anchors' correction.
double KernelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms);
// The bare model, without anchors.
double ModelTimeUs(const KernelWork& k, const KernelParams& p, int num_sms);
// The anchors' factor for `k` (1 without anchors).
double AnchorFactor(const KernelWork& k, const KernelParams& p);
// Kernels that `k`'s call launches: those of the nearest anchor (of k's variant, else plain)
// within one octave, else 1. Used for classes whose library picks its kernels
// (LibraryChoosesKernels: cuBLAS GEMMs, cuDNN convolutions); ATen's own kernels are the
// lowering's to count.
int AnchorKernels(const KernelWork& k, const KernelParams& p);
bool LibraryChoosesKernels(KernelClass c);

// Whether `k` lies among what the profile measured for its class: near a measured point of its
// own variant (within the one octave an anchor reaches), beyond every one of them (the fitted
// curve prices it), or of a variant with no measured points (the plain ones price it). A
// variant priced by the one it is a case of (pointwise_odd by pointwise, strided by broadcast)
// is placed among that one's points. A class without anchors is kNoAnchors.
enum class AnchorReach : uint8_t { kNear, kFar, kVariantUnmeasured, kNoAnchors };
AnchorReach ReachOf(const KernelWork& k, const KernelParams& p);

// An anchor at the work of `w` (variant, shape, FLOPs, bytes), measured at `us`; and back: the
// work an anchor stands for (class and dtype are the caller's).
KernelAnchor AnchorOfWork(const KernelWork& w, double us, double kernels = 1);
KernelWork WorkOfAnchor(const KernelAnchor& a);

// Fills the derived fields of every anchor from its class's parameters; call after changing
// them (HostProfileFromJson and the calibration do).
void PrepareAnchors(GpuParams* gpu);

}  // namespace ftax
