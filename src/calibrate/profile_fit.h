// Profile fitting: turns measurements of one host into a HostProfile (`ftax calibrate`).
//
// GPU side, per kernel class and dtype present in the measurements, it fits
//   theta = {floor_us >= 0, rate_tflops > 0 (gemm, conv, attention only), bandwidth_gbps > 0}
// of the predictor's own kernel cost model, KernelTimeUs (predictor/kernel_cost.h), so fit and
// prediction share one model. A row measures one call of `kernels_per_call` kernels; it is
// modelled as that many identical kernels, each doing 1/kernels_per_call of the row's work:
//   kernel_us.median ~ kernels_per_call * KernelTimeUs(work / kernels_per_call, theta, ...)
// Residuals are log(predicted / measured) under a robust loss (Huber by default); standard
// errors come from ceres::Covariance scaled by the residual variance. For compute classes
// with GEMM-like shapes the tile pair (tile_m x tile_n) is chosen among a few candidates by
// the lowest final cost.
//
// CPU side, per framework, a linear least-squares fit with non-negative parameters of
//   call_us.median ~ call_us + sum_c n_ops(c) * dispatch_us[c] + modules * module_us
// on relative residuals. For cuda-graph, call_us is the replay cost (intercept) and
// node_gap_us the slope of (gpu_span_us - gpu_kernel_us) against n_ops; the GPU gap between
// back-to-back kernels (gpu.kernel_gap_us) comes from libtorch-eager rows where the GPU, not
// the CPU, was the bottleneck, and stays null otherwise.
//
// A random, seeded 20% of the kernel rows of each class is held out, the class is fitted on
// the rest and its error on the held-out rows reported (pooled over a few independent
// splits); the written profile is then refitted on all rows. A class whose fit is poor (see FitOptions) makes the calibration fail unless
// forced, naming the class.
//
//   FitOptions options;                        // defaults as documented in docs/calibration.md
//   Expected<Calibration> c = Calibrate(measurements, options);
//   if (c.ok() && c->quality_failures.empty()) SaveProfile(c->profile);
//
// The fits need Ceres (profile_fit_ceres.cc). Without Ceres, CalibrateAvailable() is false and
// Calibrate() returns an Unsupported status; the rest of this header works everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/measurements.h"
#include "common/status.h"
#include "predictor/host_profile.h"

namespace ftax {

enum class FitLoss { kNone, kHuber, kCauchy };
const char* FitLossName(FitLoss l);

struct FitOptions {
  // Held-out share of the kernel rows of each class (0 disables the holdout), and how many
  // independent random splits (seeds seed, seed+1, ...) pool their held-out errors: with
  // 10-20 rows per class one split scores only 2-4 rows.
  double holdout_fraction = 0.2;
  int holdout_repeats = 5;
  uint64_t seed = 1;
  // Robust loss on log residuals; scale in log units (0.1 ~ 10% error).
  FitLoss loss = FitLoss::kHuber;
  double loss_scale = 0.1;
  // Quality gates, per kernel class: R² of log(time) and median |error| on held-out rows.
  double min_r2 = 0.9;
  double max_holdout_median_err_pct = 25;
  // Same R² gate for each framework's linear fit (on call_us).
  double min_framework_r2 = 0.9;
  // SM count for wave quantization; 0 takes it from the measurements' host.sm_count.
  int num_sms = 0;
  // Tile pairs tried for compute classes whose rows carry GEMM-like shapes.
  std::vector<std::pair<int, int>> tile_candidates = {{128, 128}, {128, 64}, {64, 128},
                                                      {64, 64},   {256, 128}, {128, 256}};
  int max_iterations = 200;
  // Keep the measured rows in the profile as anchors of the kernel model (kernel_cost.h);
  // false gives the bare analytic fit.
  bool anchors = true;

  Status Validate() const;
};

// |predicted / measured - 1| in percent, summarized.
struct ErrorStats {
  int points = 0;
  double median_abs_pct = std::nan("");
  double p90_abs_pct = std::nan("");
};
ErrorStats ComputeErrorStats(const std::vector<double>& predicted,
                             const std::vector<double>& measured);
// R² of log(predicted) against log(measured); NaN with fewer than 2 points or no spread.
double LogR2(const std::vector<double>& predicted, const std::vector<double>& measured);
// R² of predicted against measured on the linear scale.
double LinearR2(const std::vector<double>& predicted, const std::vector<double>& measured);

struct KernelFit {
  KernelClass cls = KernelClass::kGemm;
  DType dtype = DType::kFloat32;
  KernelParams params;  // as written to the profile: values, SEs, tiles, ranges, R², points
  ErrorStats fit_error;      // on all rows, final fit
  ErrorStats holdout_error;  // on held-out rows, fit on the others (points 0: no holdout)
  // On the anchors (every row, variants included): the bare model, and each anchor predicted
  // from the others.
  ErrorStats anchor_model_error;
  ErrorStats anchor_loo_error;
  std::vector<std::string> notes;
  std::string solver_report;  // Ceres BriefReport of the final fit
};

struct FrameworkFit {
  Framework framework = Framework::kLibtorchEager;
  FrameworkParams params;  // as written to the profile
  ErrorStats fit_error;
  // cuda-graph only: slope of call time per node (GPU work included), for information. (The
  // per-node host cost of a replay is params.replay_per_node_us.)
  double per_node_total_us = std::nan("");
  std::vector<std::string> notes;
  std::vector<std::string> solver_reports;
};

struct Calibration {
  HostProfile profile;
  std::vector<KernelFit> kernels;
  std::vector<FrameworkFit> frameworks;
  std::vector<std::string> notes;  // whole-run notes (kernel gap, skipped rows, ...)
  std::vector<std::string> gap_solver_reports;
  // One line per class or framework that failed a quality gate, naming it; empty if all pass.
  std::vector<std::string> quality_failures;
};

// True when this build can fit (Ceres found at build time).
bool CalibrateAvailable();

// Fits every parameter the measurements determine. Errors name what is missing (e.g. an SM
// count). A class with too few rows is not an error but a quality failure. The profile's host
// is copied from the measurements; provenance (files, date, commit) is left to the caller.
Expected<Calibration> Calibrate(const Measurements& m, const FitOptions& options);

// Applies the quality gates to the fit results; one line per failing class or framework.
// The gates do not stop a profile from being written: a kernel class that fails them is
// recorded as not trusted ("trusted": false, with its held-out error), predictions that use
// it widen their interval by that error and name the class, and `ftax calibrate` warns.
std::vector<std::string> QualityFailures(const Calibration& c, const FitOptions& options);

// Whether one kernel class passes the gates (fitted, R² of log(time) and held-out error).
bool KernelClassPassesGates(const KernelFit& k, const FitOptions& options);

// The summary that both the text table and `--format json` render, also stored as the
// profile's "fit" object.
nlohmann::json CalibrationSummaryJson(const Calibration& c, const FitOptions& options);

}  // namespace ftax
