// Ceres fits of a host profile (see profile_fit.h for the models).
//
// Kernel classes: for each class/dtype, minimize sum_i rho(log(model_i / measured_i)^2) over
// theta = {floor_us, bandwidth_gbps, rate_tflops}, where model_i calls the predictor's
// KernelTimeUs. The model is piecewise (max of a compute and a memory term, wave-quantized
// FLOPs), so its derivatives come from central differences (DynamicNumericDiffCostFunction).
//
// Frameworks: y ~ x . beta with beta >= 0, on relative residuals (y - x.beta) / y; the
// residual is a small templated functor (DynamicAutoDiffCostFunction).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <Eigen/Dense>
#include <ceres/ceres.h>

#include "calibrate/holdout.h"
#include "calibrate/profile_fit.h"
#include "common/percentile.h"
#include "predictor/kernel_cost.h"

namespace ftax {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------
// Kernel rows

// One measured row as the fit sees it: `kernels_per_call` identical kernels, each doing
// 1/kernels_per_call of the row's work. The GEMM-like shape is split along the batch when the
// batch divides evenly; otherwise the shape is dropped (no wave quantization for that row).
struct KernelRow {
  KernelWork per_kernel;
  int kernels_per_call = 1;
  double measured_us = 0;
};

KernelRow MakeKernelRow(const KernelMeasurement& m) {
  KernelRow r;
  r.per_kernel = m.work;
  r.kernels_per_call = std::max(1, m.kernels_per_call);
  r.measured_us = m.kernel_us.median;
  const int kpc = r.kernels_per_call;
  if (kpc > 1) {
    r.per_kernel.flops /= kpc;
    r.per_kernel.bytes /= kpc;
    if (r.per_kernel.batch % kpc == 0) {
      r.per_kernel.batch /= kpc;
    } else {
      r.per_kernel.m = r.per_kernel.n = r.per_kernel.k = 0;
      r.per_kernel.batch = 1;
    }
  }
  return r;
}

bool HasShape(const KernelWork& w) { return w.m > 0 && w.n > 0 && w.k > 0; }

struct TileChoice {
  int tile_m = 128, tile_n = 128;
};

double RowModelUs(const KernelRow& r, const KernelTheta& theta, TileChoice tiles, int num_sms) {
  return r.kernels_per_call * KernelTimeUs(r.per_kernel, theta, tiles.tile_m, tiles.tile_n, num_sms);
}

// Residual of one kernel row: log(model / measured). Parameter blocks: floor_us,
// bandwidth_gbps and, for compute classes, rate_tflops (one scalar each).
struct KernelRowResidual {
  KernelRow row;
  bool has_rate = false;
  TileChoice tiles;
  int num_sms = 0;

  bool operator()(double const* const* p, double* residual) const {
    KernelTheta theta;
    theta.floor_us = p[0][0];
    theta.bandwidth_gbps = p[1][0];
    theta.rate_tflops = has_rate ? p[2][0] : 0;
    const double t = RowModelUs(row, theta, tiles, num_sms);
    if (!std::isfinite(t)) return false;
    // A model time of zero (floor 0 and a row with no work) has no logarithm; 1e-6 µs keeps
    // the residual finite and large.
    residual[0] = std::log(std::max(t, 1e-6) / row.measured_us);
    return true;
  }
};

ceres::LossFunction* MakeLoss(const FitOptions& o) {
  switch (o.loss) {
    case FitLoss::kNone: return nullptr;
    case FitLoss::kHuber: return new ceres::HuberLoss(o.loss_scale);
    case FitLoss::kCauchy: return new ceres::CauchyLoss(o.loss_scale);
  }
  return nullptr;
}

ceres::Solver::Options SolverOptions(const FitOptions& o) {
  ceres::Solver::Options s;
  s.linear_solver_type = ceres::DENSE_QR;
  s.max_num_iterations = o.max_iterations;
  s.function_tolerance = 1e-10;
  s.gradient_tolerance = 1e-12;
  s.parameter_tolerance = 1e-10;
  s.logging_type = ceres::SILENT;
  s.num_threads = 1;
  return s;
}

// ceres::Covariance refuses a near-singular J'J (and logs an error through glog); the same
// test done first turns an undetermined parameter into a null standard error quietly.
// Criterion as in Ceres' DENSE_SVD covariance: (sigma_min / sigma_max)² of J, a bit stricter.
bool CovarianceDefined(ceres::Problem* problem, const std::vector<double*>& blocks) {
  ceres::Problem::EvaluateOptions eo;
  eo.parameter_blocks = blocks;
  ceres::CRSMatrix crs;
  if (!problem->Evaluate(eo, nullptr, nullptr, nullptr, &crs)) return false;
  if (crs.num_rows < crs.num_cols || crs.num_cols == 0) return false;
  Eigen::MatrixXd jacobian = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
  for (int r = 0; r < crs.num_rows; ++r)
    for (int k = crs.rows[r]; k < crs.rows[r + 1]; ++k) jacobian(r, crs.cols[k]) = crs.values[k];
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(jacobian);
  const Eigen::VectorXd& sigma = svd.singularValues();
  if (!(sigma(0) > 0) || !std::isfinite(sigma(0))) return false;
  const double ratio = sigma(sigma.size() - 1) / sigma(0);
  return ratio * ratio > 1e-13;
}

struct ThetaFit {
  bool ok = false;
  KernelTheta theta;
  TileChoice tiles;
  double cost = INFINITY;
  Param floor_us, rate_tflops, bandwidth_gbps;  // with standard errors when available
  std::string report;
  std::vector<std::string> notes;
};

// Residual variance estimate s² = sum r_i² / (n - p) of the log residuals; Ceres' covariance
// assumes unit-variance residuals, so parameter variances are scaled by it.
double ResidualVariance(const std::vector<KernelRow>& rows, const KernelTheta& theta,
                        TileChoice tiles, int num_sms, int num_params) {
  if (int(rows.size()) <= num_params) return std::nan("");
  double ss = 0;
  for (const KernelRow& r : rows) {
    const double e = std::log(std::max(RowModelUs(r, theta, tiles, num_sms), 1e-6) / r.measured_us);
    ss += e * e;
  }
  return ss / double(int(rows.size()) - num_params);
}

// One Ceres solve from one start point and one tile pair.
// `fix_bandwidth` / `fix_rate` hold that parameter at its start value (used when its term of
// the model binds on no row, so the data do not determine it).
ThetaFit SolveTheta(const std::vector<KernelRow>& rows, bool has_rate, TileChoice tiles,
                    int num_sms, const KernelTheta& start, const FitOptions& options,
                    bool with_covariance, bool fix_bandwidth = false, bool fix_rate = false) {
  ThetaFit fit;
  fit.tiles = tiles;
  double floor_us = start.floor_us, bandwidth = start.bandwidth_gbps, rate = start.rate_tflops;
  ceres::Problem problem;
  ceres::LossFunction* loss = MakeLoss(options);  // shared by all blocks, owned by problem
  for (const KernelRow& r : rows) {
    auto* cost = new ceres::DynamicNumericDiffCostFunction<KernelRowResidual, ceres::CENTRAL>(
        new KernelRowResidual{r, has_rate, tiles, num_sms});
    cost->AddParameterBlock(1);
    cost->AddParameterBlock(1);
    if (has_rate) cost->AddParameterBlock(1);
    cost->SetNumResiduals(1);
    std::vector<double*> blocks = {&floor_us, &bandwidth};
    if (has_rate) blocks.push_back(&rate);
    problem.AddResidualBlock(cost, loss, blocks);
  }
  // Positivity: the floor may be zero, rates and bandwidths must stay above it.
  problem.SetParameterLowerBound(&floor_us, 0, 0.0);
  problem.SetParameterLowerBound(&bandwidth, 0, 1e-6);
  if (has_rate) problem.SetParameterLowerBound(&rate, 0, 1e-9);
  if (fix_bandwidth) problem.SetParameterBlockConstant(&bandwidth);
  if (has_rate && fix_rate) problem.SetParameterBlockConstant(&rate);

  ceres::Solver::Summary summary;
  ceres::Solve(SolverOptions(options), &problem, &summary);
  fit.report = summary.BriefReport();
  fit.ok = summary.IsSolutionUsable() && std::isfinite(summary.final_cost);
  if (summary.termination_type == ceres::NO_CONVERGENCE)
    fit.notes.push_back("solver stopped at its iteration limit (cost still changing slightly)");
  fit.cost = summary.final_cost;
  fit.theta.floor_us = floor_us;
  fit.theta.bandwidth_gbps = bandwidth;
  fit.theta.rate_tflops = has_rate ? rate : 0;
  fit.floor_us = Param::Of(floor_us);
  fit.bandwidth_gbps = Param::Of(bandwidth);
  if (has_rate) fit.rate_tflops = Param::Of(rate);
  if (!fit.ok || !with_covariance) return fit;

  const int num_params = 1 + (fix_bandwidth ? 0 : 1) + (has_rate && !fix_rate ? 1 : 0);
  const double s2 = ResidualVariance(rows, fit.theta, tiles, num_sms, num_params);
  if (!std::isfinite(s2)) {
    fit.notes.push_back("standard errors unavailable: no more rows than parameters");
    return fit;
  }
  ceres::Covariance::Options cov_options;
  cov_options.algorithm_type = ceres::DENSE_SVD;
  ceres::Covariance covariance(cov_options);
  std::vector<double*> params = {&floor_us};
  if (!fix_bandwidth) params.push_back(&bandwidth);
  if (has_rate && !fix_rate) params.push_back(&rate);
  std::vector<std::pair<const double*, const double*>> pairs;
  for (double* q : params) pairs.emplace_back(q, q);
  if (!CovarianceDefined(&problem, params) || !covariance.Compute(pairs, &problem)) {
    fit.notes.push_back(
        "standard errors unavailable: covariance rank deficient (a parameter is not determined "
        "by these rows)");
    return fit;
  }
  auto standard_error = [&](double* q, Param* out, const char* name, double bound) {
    double var = 0;
    covariance.GetCovarianceBlock(q, q, &var);
    if (*q <= bound * (1 + 1e-9) + 1e-12) {
      fit.notes.push_back(std::string(name) + " at its bound: standard error not meaningful");
      return;
    }
    if (std::isfinite(var) && var >= 0) out->std_error = std::sqrt(var * s2);
  };
  standard_error(&floor_us, &fit.floor_us, "floor_us", 0.0);
  if (!fix_bandwidth) standard_error(&bandwidth, &fit.bandwidth_gbps, "bandwidth_gbps", 1e-6);
  if (has_rate && !fix_rate) standard_error(&rate, &fit.rate_tflops, "rate_tflops", 1e-9);
  return fit;
}

// Start values from the data: the floor at half the shortest per-kernel time; bandwidth and
// rate at the highest values any row achieves after the floor (lower bounds on the true ones).
KernelTheta StartTheta(const std::vector<KernelRow>& rows, bool has_rate, TileChoice tiles,
                       int num_sms) {
  double t_min = INFINITY;
  for (const KernelRow& r : rows) t_min = std::min(t_min, r.measured_us / r.kernels_per_call);
  KernelTheta theta;
  theta.floor_us = 0.5 * t_min;
  double bw = 0, rate = 0;
  for (const KernelRow& r : rows) {
    const double busy_us = std::max(r.measured_us / r.kernels_per_call - theta.floor_us, 1e-3);
    bw = std::max(bw, r.per_kernel.bytes / busy_us / 1e3);
    if (has_rate)
      rate = std::max(rate, EffectiveFlops(r.per_kernel, tiles.tile_m, tiles.tile_n, num_sms) /
                                busy_us / 1e6);
  }
  theta.bandwidth_gbps = bw > 0 ? bw : 1.0;
  theta.rate_tflops = rate > 0 ? rate : 1.0;
  return theta;
}

// Fits theta for one class: every tile candidate (compute classes with shapes) and a few
// start points; the lowest final cost wins. Covariance only for the winner.
ThetaFit FitKernelClass(const std::vector<KernelRow>& rows, bool has_rate, int num_sms,
                        const FitOptions& options, bool with_covariance) {
  std::vector<TileChoice> tiles = {TileChoice{128, 128}};
  bool any_shape = false;
  for (const KernelRow& r : rows) any_shape = any_shape || HasShape(r.per_kernel);
  if (has_rate && any_shape) {
    tiles.clear();
    for (const auto& [tm, tn] : options.tile_candidates) tiles.push_back(TileChoice{tm, tn});
  }
  // Start multipliers on (bandwidth, rate): the max() in the model hides one term's gradient
  // wherever the other dominates, so a single start can stall on the wrong side.
  std::vector<std::pair<double, double>> starts = {{1, 1}, {3, 1}, {1, 3}};
  if (!has_rate) starts = {{1, 1}, {3, 1}};
  ThetaFit best;
  for (TileChoice t : tiles) {
    const KernelTheta base = StartTheta(rows, has_rate, t, num_sms);
    for (const auto& [mb, mr] : starts) {
      KernelTheta start = base;
      start.bandwidth_gbps *= mb;
      start.rate_tflops *= mr;
      ThetaFit f = SolveTheta(rows, has_rate, t, num_sms, start, options, false);
      // Prefer the earlier candidate on (near) ties so 128x128 wins when tiles do not matter.
      if (f.ok && f.cost < best.cost * (1 - 1e-9)) best = f;
    }
  }
  if (!best.ok || !has_rate) {
    if (best.ok && with_covariance)
      return SolveTheta(rows, has_rate, best.tiles, num_sms, best.theta, options, true);
    return best;
  }
  // Which term of max(compute, memory) binds on which row? A term that binds on no row leaves
  // its parameter undetermined (any larger value fits as well): it is written as the smallest
  // value that leaves every prediction unchanged, a lower bound, with no standard error.
  int memory_binds = 0, compute_binds = 0;
  double bandwidth_floor = 0, rate_floor = 0;
  for (const KernelRow& r : rows) {
    const double flops = EffectiveFlops(r.per_kernel, best.tiles.tile_m, best.tiles.tile_n, num_sms);
    const double t_mem = r.per_kernel.bytes / (best.theta.bandwidth_gbps * 1e3);
    const double t_math = flops / (best.theta.rate_tflops * 1e6);
    (t_mem > t_math ? memory_binds : compute_binds)++;
    if (t_math > 0) bandwidth_floor = std::max(bandwidth_floor, r.per_kernel.bytes / t_math / 1e3);
    if (t_mem > 0) rate_floor = std::max(rate_floor, flops / t_mem / 1e6);
  }
  KernelTheta start = best.theta;
  const bool fix_bandwidth = memory_binds == 0 && bandwidth_floor > 0;
  const bool fix_rate = compute_binds == 0 && rate_floor > 0;
  if (fix_bandwidth) start.bandwidth_gbps = bandwidth_floor;
  if (fix_rate) start.rate_tflops = rate_floor;
  ThetaFit out = SolveTheta(rows, has_rate, best.tiles, num_sms, start, options, with_covariance,
                            fix_bandwidth, fix_rate);
  if (fix_bandwidth)
    out.notes.push_back(
        "bandwidth_gbps not determined: the memory term binds on no row; written as the "
        "smallest value consistent with the fit (a lower bound)");
  if (fix_rate)
    out.notes.push_back(
        "rate_tflops not determined: the compute term binds on no row; written as the smallest "
        "value consistent with the fit (a lower bound)");
  return out;
}

// ---------------------------------------------------------------------------------------
// Linear fits with non-negative coefficients (frameworks, GPU gaps)

struct LinearRow {
  std::vector<double> x;
  double y = 0;
  double scale = 1;  // residual = (x . beta - y) / scale
};

struct LinearRowResidual {
  LinearRow row;
  template <typename T>
  bool operator()(T const* const* beta, T* residual) const {
    T sum = T(0);
    for (size_t j = 0; j < row.x.size(); ++j) sum += beta[0][j] * row.x[j];
    residual[0] = (sum - row.y) / row.scale;
    return true;
  }
};

struct LinearFit {
  bool ok = false;
  std::vector<double> beta;
  std::vector<double> std_error;  // NaN where unavailable
  bool covariance_ok = false;
  std::string report;
};

LinearFit FitLinearNonNegative(const std::vector<LinearRow>& rows, int num_params,
                               const FitOptions& options, bool robust) {
  LinearFit fit;
  fit.beta.assign(num_params, 1.0);
  fit.std_error.assign(num_params, std::nan(""));
  if (rows.empty()) return fit;
  ceres::Problem problem;
  ceres::LossFunction* loss = robust ? MakeLoss(options) : nullptr;
  for (const LinearRow& r : rows) {
    auto* cost = new ceres::DynamicAutoDiffCostFunction<LinearRowResidual>(
        new LinearRowResidual{r});
    cost->AddParameterBlock(num_params);
    cost->SetNumResiduals(1);
    problem.AddResidualBlock(cost, loss, fit.beta.data());
  }
  for (int j = 0; j < num_params; ++j) problem.SetParameterLowerBound(fit.beta.data(), j, 0.0);
  ceres::Solver::Summary summary;
  ceres::Solve(SolverOptions(options), &problem, &summary);
  fit.report = summary.BriefReport();
  fit.ok = summary.IsSolutionUsable();
  if (!fit.ok || int(rows.size()) <= num_params) return fit;

  double ss = 0;
  for (const LinearRow& r : rows) {
    double sum = 0;
    for (int j = 0; j < num_params; ++j) sum += fit.beta[j] * r.x[j];
    ss += (sum - r.y) / r.scale * (sum - r.y) / r.scale;
  }
  const double s2 = ss / double(int(rows.size()) - num_params);
  ceres::Covariance::Options cov_options;
  cov_options.algorithm_type = ceres::DENSE_SVD;
  ceres::Covariance covariance(cov_options);
  std::vector<std::pair<const double*, const double*>> pairs = {{fit.beta.data(), fit.beta.data()}};
  if (!CovarianceDefined(&problem, {fit.beta.data()}) || !covariance.Compute(pairs, &problem))
    return fit;
  std::vector<double> cov(size_t(num_params) * num_params);
  covariance.GetCovarianceBlock(fit.beta.data(), fit.beta.data(), cov.data());
  fit.covariance_ok = true;
  for (int j = 0; j < num_params; ++j) {
    const double var = cov[size_t(j) * num_params + j];
    // A coefficient pinned at its bound 0 has no meaningful symmetric error.
    if (fit.beta[j] > 1e-9 && std::isfinite(var) && var >= 0) fit.std_error[j] = std::sqrt(var * s2);
  }
  return fit;
}

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), f, a, b, c);
  return buf;
}

// Per-op kernel time of a dispatch row, if known.
double KernelPerOpUs(const DispatchMeasurement& d) {
  return d.gpu_kernel_us >= 0 ? d.gpu_kernel_us / d.n_ops : std::nan("");
}

// torch.compile's chains of parameters (bench_eager.py): the kernel chain with tensors of model
// state that its kernels read, each an input of the compiled graph.
bool IsParameterChain(const DispatchMeasurement& d) {
  return d.cls == DispatchClass::kKernel && d.graph_inputs > 0;
}

// What one tensor of model state and one nn.Module cost a compiled call: the parameter
// chains' time beyond what the framework's fit (made without them) prices their kernels at,
// against their inputs and their modules, a least-squares fit through the origin with both
// slopes non-negative. The chains of parameters are the kernel chain plus inputs (the module
// chains the same inputs held by nested submodules, whose guards Dynamo checks every call),
// so they do not move the kernel cost. input_us needs two rows; module_us two rows with
// modules whose counts are not proportional to their inputs (else it stays unknown).
struct StateCost {
  Param input_us, module_us;
};

StateCost FitStateCost(const std::vector<const DispatchMeasurement*>& param_rows, const FrameworkParams& fitted) {
  StateCost out;
  const Param& kernel = fitted.dispatch_us[int(DispatchClass::kKernel)];
  if (param_rows.size() < 2 || !fitted.call_us.known() || !kernel.known()) return out;
  struct Point {
    double inputs, modules, beyond;
  };
  std::vector<Point> points;
  for (const auto* d : param_rows)
    points.push_back({double(d->graph_inputs), double(d->modules),
                      d->call_us.median - fitted.call_us.value - kernel.value * d->n_ops});
  // Sums of the normal equations of beyond = a * inputs + b * modules.
  double sii = 0, smm = 0, sim = 0, siy = 0, smy = 0;
  for (const auto& p : points) {
    sii += p.inputs * p.inputs;
    smm += p.modules * p.modules;
    sim += p.inputs * p.modules;
    siy += p.inputs * p.beyond;
    smy += p.modules * p.beyond;
  }
  const double det = sii * smm - sim * sim;
  const bool joint = smm > 0 && det > 1e-9 * sii * smm && points.size() >= 3;
  auto sum_sq = [&](double a, double b) {
    double ss = 0;
    for (const auto& p : points) ss += (p.beyond - a * p.inputs - b * p.modules) * (p.beyond - a * p.inputs - b * p.modules);
    return ss;
  };
  const double n = double(points.size());
  if (joint) {
    const double a = (siy * smm - smy * sim) / det, b = (smy * sii - siy * sim) / det;
    if (a >= 0 && b >= 0) {
      const double var = n > 2 ? sum_sq(a, b) / (n - 2) : 0;
      out.input_us = Param::Of(a, std::sqrt(var * smm / det));
      out.module_us = Param::Of(b, std::sqrt(var * sii / det));
      return out;
    }
  }
  // One slope: inputs alone, or (where the pair came out with inputs negative) modules alone.
  const double a = std::max(0.0, siy / sii);
  const double b = smm > 0 ? std::max(0.0, smy / smm) : 0;
  const double var_a = n > 1 ? sum_sq(a, 0) / (n - 1) : 0, var_b = n > 1 ? sum_sq(0, b) / (n - 1) : 0;
  if (joint && var_b < var_a) {
    out.input_us = Param::Of(0, 0);
    out.module_us = Param::Of(b, std::sqrt(var_b / smm));
  } else {
    out.input_us = Param::Of(a, std::sqrt(var_a / sii));
    if (joint) out.module_us = Param::Of(0, 0);
  }
  return out;
}

// torch.compile's default mode: the time of a call outside Inductor's generated code
// (outside_us, every chain of a bench that measured it) as a + b * graph inputs + c * modules,
// non-negative, residuals in microseconds. The kernel and parameter chains (one module, up to
// 257 inputs) separate a and b; the chains of real layers (convolution + batch norm + ReLU,
// layer norm + linear + GELU: 4 modules a layer) give c, what a model's module adds to a call.
// Only c is used: a and b are inside call_us and input_us, fitted from the chains' whole calls.
Param FitModuleFromOutside(const std::vector<const DispatchMeasurement*>& rows, const FitOptions& options,
                           std::string* note) {
  std::vector<LinearRow> lin;
  int layer_rows = 0, most_modules = 0;
  for (const auto* d : rows) {
    lin.push_back(LinearRow{{1.0, double(d->graph_inputs), double(d->modules)}, d->outside_us->median, 10.0});
    if (d->modules > 1) ++layer_rows;
    most_modules = std::max(most_modules, d->modules);
  }
  if (layer_rows < 2 || lin.size() < 4) {
    *note = "module_us: too few chains with outside_us (" + std::to_string(lin.size()) + ", " +
            std::to_string(layer_rows) + " of layers) to price a module";
    return {};
  }
  const LinearFit lf = FitLinearNonNegative(lin, 3, options, /*robust=*/false);
  if (!lf.ok) {
    *note = "module_us: solver failed: " + lf.report;
    return {};
  }
  const Param c = Param::Of(lf.beta[2], std::isfinite(lf.std_error[2]) ? lf.std_error[2] : 0.0);
  *note = Fmt("module_us: %.2f ± %.2f us per nn.Module of the compiled model, from the time outside the "
              "generated code of %.0f chains",
              c.value, c.std_error, double(lin.size())) +
          Fmt(" (layer chains of up to %.0f modules; %.1f us a call and %.2f us a graph input outside it besides)",
              double(most_modules), lf.beta[0], lf.beta[1]);
  return c;
}

// CPU-side fit of one framework that issues dispatches (everything but cuda-graph). Rows
// where the GPU, not the CPU, set the pace (kernel time per op above the fitted dispatch
// cost) are dropped and the fit repeated once; their indices go to `gpu_bound_rows`.
// torch.compile's chains of parameters stay out of this fit and price input_us and module_us
// after it (FitStateCost).
FrameworkFit FitDispatchFramework(Framework fw, const std::vector<const DispatchMeasurement*>& given_rows,
                                  const FitOptions& options,
                                  std::vector<const DispatchMeasurement*>* gpu_bound_rows) {
  FrameworkFit out;
  out.framework = fw;
  std::vector<const DispatchMeasurement*> all_rows, param_rows, outside_rows;
  for (const auto* d : given_rows) {
    if (d->outside_us) outside_rows.push_back(d);
    if (!d->layers.empty()) continue;  // priced only by the time outside the generated code
    (IsParameterChain(*d) ? param_rows : all_rows).push_back(d);
  }
  std::vector<const DispatchMeasurement*> rows = all_rows;
  for (int pass = 0; pass < 2; ++pass) {
    // Columns: call, then each dispatch class present, then modules if any row has some.
    std::vector<int> class_column(kNumDispatchClasses, -1);
    int num_params = 1;
    for (const auto* d : rows)
      if (class_column[int(d->cls)] < 0) class_column[int(d->cls)] = num_params++;
    int module_column = -1;
    for (const auto* d : rows)
      if (d->modules > 0 && module_column < 0) module_column = num_params++;
    std::vector<LinearRow> lin;
    for (const auto* d : rows) {
      LinearRow r;
      r.x.assign(num_params, 0.0);
      r.x[0] = 1;
      r.x[class_column[int(d->cls)]] = d->n_ops;
      if (module_column >= 0) r.x[module_column] = d->modules;
      r.y = d->call_us.median;
      r.scale = d->call_us.median;
      lin.push_back(r);
    }
    FrameworkFit f;
    f.framework = fw;
    if (int(rows.size()) < num_params) {
      f.notes.push_back("too few rows (" + std::to_string(rows.size()) + ") for " +
                        std::to_string(num_params) + " parameters");
      return f;
    }
    LinearFit lf = FitLinearNonNegative(lin, num_params, options, /*robust=*/true);
    f.solver_reports.push_back(lf.report);
    if (!lf.ok) {
      f.notes.push_back("solver failed: " + lf.report);
      return f;
    }
    f.params.call_us = Param::Of(lf.beta[0], lf.std_error[0]);
    for (int c = 0; c < kNumDispatchClasses; ++c)
      if (class_column[c] >= 0)
        f.params.dispatch_us[c] = Param::Of(lf.beta[class_column[c]], lf.std_error[class_column[c]]);
    if (module_column >= 0)
      f.params.module_us = Param::Of(lf.beta[module_column], lf.std_error[module_column]);
    if (!lf.covariance_ok)
      f.notes.push_back(
          "standard errors unavailable: parameters not separable from these rows (e.g. modules "
          "always proportional to n_ops, or one n_ops value per class)");
    std::vector<double> pred, meas;
    for (const LinearRow& r : lin) {
      double s = 0;
      for (int j = 0; j < num_params; ++j) s += lf.beta[j] * r.x[j];
      pred.push_back(s);
      meas.push_back(r.y);
    }
    f.params.points = int(rows.size());
    f.params.r2 = LinearR2(pred, meas);
    f.fit_error = ComputeErrorStats(pred, meas);
    out = f;

    // GPU-bound rows: the GPU needs longer per op than the CPU takes to issue it.
    std::vector<const DispatchMeasurement*> cpu_bound;
    gpu_bound_rows->clear();
    for (const auto* d : all_rows) {
      const Param& disp = f.params.dispatch_us[int(d->cls)];
      const double k = KernelPerOpUs(*d);
      if (disp.known() && std::isfinite(k) && k > 1.2 * disp.value)
        gpu_bound_rows->push_back(d);
      else
        cpu_bound.push_back(d);
    }
    if (gpu_bound_rows->empty() || pass == 1 || cpu_bound.empty()) break;
    rows = cpu_bound;
  }
  if (!gpu_bound_rows->empty())
    out.notes.push_back(std::to_string(gpu_bound_rows->size()) +
                        " GPU-bound row(s) (kernel time per op > 1.2x the dispatch cost) left out "
                        "of the CPU fit");
  if (!param_rows.empty()) {
    const StateCost state = FitStateCost(param_rows, out.params);
    out.params.input_us = state.input_us;
    int most = 0, most_modules = 0;
    for (const auto* d : param_rows) {
      most = std::max(most, d->graph_inputs);
      most_modules = std::max(most_modules, d->modules);
    }
    out.notes.push_back(
        out.params.input_us.known()
            ? Fmt("input_us: %.2f ± %.2f us per tensor of model state a compiled kernel reads (chains of up to "
                  "%.0f such tensors, beyond the kernel chain's price)",
                  out.params.input_us.value, out.params.input_us.std_error, double(most))
            : std::to_string(param_rows.size()) + " chain(s) of parameters: too few for input_us");
    if (most_modules > 0) {
      out.params.module_us = state.module_us;
      out.notes.push_back(
          state.module_us.known()
              ? Fmt("module_us: %.2f ± %.2f us per nn.Module of the compiled model (Dynamo's guards and "
                    "argument gathering each call; chains of up to %.0f nested modules)",
                    state.module_us.value, state.module_us.std_error, double(most_modules))
              : std::string("module_us: the module chains do not separate modules from inputs"));
    }
  }
  if (!outside_rows.empty()) {  // a bench that timed the code outside the generated call
    std::string note;
    const Param module = FitModuleFromOutside(outside_rows, options, &note);
    if (module.known()) out.params.module_us = module;
    out.notes.push_back(note);
  }
  return out;
}

// Per-op dispatch costs: for each op of the bench's per-op chains, the slope of the host
// time until the chain returned (issue_us; call_us in rows without it) against the chain's
// length, fitted with an intercept. An op needs rows of at least two lengths.
std::map<std::string, Param> FitOpCosts(const std::vector<const DispatchMeasurement*>& rows,
                                        const FitOptions& options, std::map<std::string, double>* kernels,
                                        std::map<std::string, Param>* launch_us,
                                        std::vector<std::string>* notes) {
  std::map<std::string, std::vector<const DispatchMeasurement*>> by_op;
  for (const auto* d : rows) by_op[d->op].push_back(d);
  std::map<std::string, Param> out;
  std::vector<std::string> short_ops;
  bool synced = false;
  for (auto& [op, rs] : by_op) {
    std::set<int> lengths;
    for (const auto* d : rs) lengths.insert(d->n_ops);
    if (lengths.size() < 2) {
      short_ops.push_back(op);
      continue;
    }
    // Kernels per call of the op, per geometry: from its longest chain with GPU records.
    std::map<std::string, const DispatchMeasurement*> longest;
    for (const auto* d : rs) {
      const DispatchMeasurement*& l = longest[d->geometry];
      if (d->kernels_per_call >= 0 && (!l || d->n_ops > l->n_ops)) l = d;
    }
    std::map<std::string, double> per_op;
    for (const auto& [g, l] : longest)
      if (l) per_op[g] = l->kernels_per_call / l->n_ops;
    // A geometry launching over twice the kernels of every other one, where the others
    // already differ (a grouped layer the library runs group by group: SqueezeBERT's, 13
    // kernels a call against the others' 1 to 4), is left out of the shared fit: each of its
    // groups is a library call of its own, not one layout kernel more, and its chain cost is
    // reported beside what the fit prices it at.
    std::set<std::string> apart;
    for (const auto& [g, k] : per_op) {
      double lo = -1, hi = 0;
      for (const auto& [g2, k2] : per_op)
        if (g2 != g) lo = lo < 0 ? k2 : std::min(lo, k2), hi = std::max(hi, k2);
      if (lo >= 0 && hi > lo + 0.25 && k > 2 * hi) apart.insert(g);
    }
    std::vector<const DispatchMeasurement*> kept, left_out;
    for (const auto* d : rs) (apart.count(d->geometry) ? left_out : kept).push_back(d);
    for (const std::string& g : apart) per_op.erase(g), longest.erase(g);
    rs = kept;
    double fewest = -1;
    for (const auto& [g, k] : per_op) fewest = fewest < 0 ? k : std::min(fewest, k);
    if (fewest >= 0 && rs.front()->cls != DispatchClass::kView && fewest < 0.5) {
      notes->push_back("op_us." + op + ": left out: its chain launched " + std::to_string(fewest).substr(0, 4) +
                       " kernels per op (the framework optimized it away)");
      continue;
    }
    // Chains of several geometries that launch different numbers of kernels per op (cuDNN's
    // 3x3 convolutions over NCHW add layout transposes, 1x1 and depthwise ones do not): the
    // cost is fitted for the fewest launches, each further launch a cost of its own (a third
    // column), as the pipeline prices a model's op (op_us covers op_kernels launches, each
    // further one costs a launch).
    bool extra_column = false;
    for (const auto& [g, k] : per_op) extra_column = extra_column || k > fewest + 0.25;
    std::vector<LinearRow> lin;
    for (const auto* d : rs) {
      const Spread& t = d->issue_us ? *d->issue_us : d->call_us;
      synced = synced || !d->issue_us;
      LinearRow r{{1.0, double(d->n_ops)}, t.median, std::max(1.0, t.median)};
      if (extra_column) {
        auto k = per_op.find(d->geometry);
        r.x.push_back(k == per_op.end() ? 0.0 : (k->second - fewest) * d->n_ops);
      }
      lin.push_back(r);
    }
    LinearFit lf = FitLinearNonNegative(lin, extra_column ? 3 : 2, options, /*robust=*/false);
    if (!lf.ok) {
      notes->push_back("op_us." + op + ": solver failed: " + lf.report);
      continue;
    }
    out[op] = Param::Of(lf.beta[1], lf.std_error[1]);
    for (const std::string& g : apart) {
      std::vector<LinearRow> own;
      double k = -1;
      for (const auto* d : left_out)
        if (d->geometry == g) {
          const Spread& t = d->issue_us ? *d->issue_us : d->call_us;
          own.push_back(LinearRow{{1.0, double(d->n_ops)}, t.median, std::max(1.0, t.median)});
          if (d->kernels_per_call >= 0) k = d->kernels_per_call / d->n_ops;
        }
      LinearFit g_fit = FitLinearNonNegative(own, 2, options, /*robust=*/false);
      if (!g_fit.ok || k < 0) continue;
      const double priced = lf.beta[1] + (extra_column ? (k - fewest) * lf.beta[2] : 0.0);
      notes->push_back("op_us." + op + ": geometry " + g + Fmt(" (%.0f kernels per op) left out of the fit: its chain "
                                                               "cost %.1f us per op, where the fit prices %.1f",
                                                               k, g_fit.beta[1], priced));
    }
    if (fewest >= 0) (*kernels)[op] = std::round(fewest * 100) / 100;
    if (extra_column) (*launch_us)[op] = Param::Of(lf.beta[2], lf.std_error[2]);
    if (extra_column)
      notes->push_back("op_us." + op + ": " + std::to_string(longest.size()) + " geometries launching " +
                       Fmt("%.2g to %.2g kernels per op; each launch beyond the fewest cost %.1f us", fewest,
                           [&] {
                             double m = fewest;
                             for (const auto& [g, k] : per_op) m = std::max(m, k);
                             return m;
                           }(),
                           lf.beta[2]));
  }
  // A chain of two ops ("batch_norm+relu": a batch norm before an in-place ReLU, which
  // TorchScript's fuser leaves alone) gives its first op's cost where that op's own chain gave
  // none: its slope less the second op's cost; its kernels less the second op's.
  for (auto it = out.begin(); it != out.end();) {
    const size_t plus = it->first.find('+');
    if (plus == std::string::npos) {
      ++it;
      continue;
    }
    const std::string first = it->first.substr(0, plus), second = it->first.substr(plus + 1);
    auto b = out.find(second);
    if (!out.count(first) && b != out.end() && b->second.known()) {
      const double v = it->second.value - b->second.value;
      const double se = std::hypot(std::isnan(it->second.std_error) ? 0 : it->second.std_error,
                                   std::isnan(b->second.std_error) ? 0 : b->second.std_error);
      if (v > 0) {
        out[first] = Param::Of(v, se);
        auto kp = kernels->find(it->first), kb = kernels->find(second);
        if (kp != kernels->end())
          (*kernels)[first] = std::max(0.0, kp->second - (kb != kernels->end() ? kb->second : 1.0));
        notes->push_back("op_us." + first + ": from the chain " + it->first + " less " + second + "'s cost");
      }
    }
    kernels->erase(it->first);
    launch_us->erase(it->first);
    it = out.erase(it);
  }
  if (!short_ops.empty()) {
    std::string list;
    for (const std::string& op : short_ops) list += (list.empty() ? "" : ", ") + op;
    notes->push_back("op_us: no cost for " + list + " (chains of one length only)");
  }
  if (!out.empty())
    notes->push_back("op_us: " + std::to_string(out.size()) + " op types priced from their own chains" +
                     (synced ? " (some rows lack issue_us: their synchronized call time is used)" : ""));
  return out;
}

// The host time of one kernel launch: the slope of the time until n empty kernels launched
// back to back returned, over n, fitted with an intercept (the timer's and the loop's own
// cost). Needs two lengths at least; unknown (the pipeline's older estimate) otherwise.
Param FitLaunch(const std::vector<LaunchMeasurement>& rows, const FitOptions& options,
                std::vector<std::string>* notes) {
  std::set<int> lengths;
  std::vector<LinearRow> lin;
  for (const LaunchMeasurement& l : rows) {
    lengths.insert(l.n);
    lin.push_back(LinearRow{{1.0, double(l.n)}, l.issue_us.median, std::max(1.0, l.issue_us.median)});
  }
  if (lengths.size() < 2) {
    notes->push_back(rows.empty() ? "gpu.launch_us null: the bench timed no kernel launches"
                                  : "gpu.launch_us null: launches timed at one length only");
    return Param{};
  }
  LinearFit lf = FitLinearNonNegative(lin, 2, options, /*robust=*/false);
  if (!lf.ok) {
    notes->push_back("gpu.launch_us null: solver failed: " + lf.report);
    return Param{};
  }
  notes->push_back(Fmt("gpu.launch_us from %.0f rows of empty kernels launched back to back: %.2f us a launch",
                       double(rows.size()), lf.beta[1]));
  return Param::Of(lf.beta[1], lf.std_error[1]);
}

// Slope g of (gpu_span - gpu_kernel) = g * (n_ops - 1), one estimate per row weighted equally
// (residual (g (n-1) - y) / (n-1)). Rows need n_ops >= 2 and both GPU numbers.
Param FitGap(const std::vector<const DispatchMeasurement*>& rows, const FitOptions& options,
             std::vector<std::string>* reports, int* used) {
  std::vector<LinearRow> lin;
  for (const auto* d : rows) {
    if (d->n_ops < 2 || d->gpu_span_us < 0 || d->gpu_kernel_us < 0) continue;
    LinearRow r;
    r.x = {double(d->n_ops - 1)};
    r.y = d->gpu_span_us - d->gpu_kernel_us;
    r.scale = double(d->n_ops - 1);
    lin.push_back(r);
  }
  *used = int(lin.size());
  if (lin.empty()) return Param{};
  LinearFit lf = FitLinearNonNegative(lin, 1, options, /*robust=*/false);
  reports->push_back(lf.report);
  if (!lf.ok) return Param{};
  return Param::Of(lf.beta[0], lf.std_error[0]);
}

// torch.compile's reduce-overhead, the older reading (benches that neither marked their replays
// nor priced a module; FrameworkParams::call_before_replay false): the compiled wrapper's
// bookkeeping runs on the CPU while the graph runs on the GPU, so a call takes
// max(call_us, nodes x node_gap + kernels) (pipeline.h). The
// bench's chains show it: their call time stays flat while their GPU span is below it and
// follows the span above it. node_gap_us is the slope of span - kernel time against nodes,
// with an intercept (the span also covers the copy of the input into the graph's buffer,
// made before the replay); call_us is the median call time of the chains whose GPU span is
// under 70% of their call time.
FrameworkFit FitReduceOverheadOverlap(FrameworkFit f, const std::vector<const DispatchMeasurement*>& rows,
                               const FitOptions& options) {
  std::vector<LinearRow> gap;
  for (const auto* d : rows) {
    if (d->n_ops < 2 || d->gpu_span_us < 0 || d->gpu_kernel_us < 0) continue;
    gap.push_back(LinearRow{{1.0, double(d->n_ops)}, d->gpu_span_us - d->gpu_kernel_us, 1.0});
  }
  if (gap.size() < 3) {
    f.notes.push_back("node_gap_us null: fewer than 3 rows with n_ops >= 2 and GPU records");
    return f;
  }
  LinearFit lf = FitLinearNonNegative(gap, 2, options, /*robust=*/true);
  f.solver_reports.push_back(lf.report);
  if (!lf.ok) {
    f.notes.push_back("node_gap_us: solver failed: " + lf.report);
    return f;
  }
  f.params.node_gap_us = Param::Of(lf.beta[1], lf.std_error[1]);
  std::vector<double> cpu;
  for (const auto* d : rows)
    if (d->gpu_span_us >= 0 && d->gpu_span_us < 0.7 * d->call_us.median) cpu.push_back(d->call_us.median);
  if (cpu.empty()) {
    f.notes.push_back("call_us null: every chain's GPU span is near its call time");
    f.params.node_gap_us = Param{};
    return f;
  }
  std::sort(cpu.begin(), cpu.end());
  const double med = Percentile(cpu, 0.5);
  const double se = cpu.size() > 1 ? (Percentile(cpu, 0.9) - Percentile(cpu, 0.1)) / 2.56 : 0.0;
  f.params.call_us = Param::Of(med, se);
  f.params.replay_per_node_us = Param::Of(0.0, 0.0);
  f.params.points = int(rows.size());
  std::vector<double> pred, meas;
  for (const auto* d : rows) {
    if (d->gpu_kernel_us < 0) continue;
    pred.push_back(std::max(med, d->gpu_kernel_us + f.params.node_gap_us.value * d->n_ops));
    meas.push_back(d->call_us.median);
  }
  f.params.r2 = LinearR2(pred, meas);
  f.fit_error = ComputeErrorStats(pred, meas);
  f.notes.push_back("reduce-overhead: call_us is the CPU time of a call, overlapping the replay (median of " +
                    std::to_string(cpu.size()) + " CPU-bound chains); node_gap_us: slope of span - kernel "
                    "time against nodes, with an intercept");
  return f;
}

FrameworkFit FitCudaGraph(Framework fw, const std::vector<const DispatchMeasurement*>& rows,
                          const FitOptions& options);

// torch.compile's reduce-overhead: the compiled wrapper's work (Dynamo's guards on every
// module, the graph tree's checks and copies of its inputs) runs on the CPU before the graph
// replays, the GPU idle, so a call takes call_us + module_us * modules + kernels + nodes x
// node_gap (pipeline.h). A bench that marked its chains' replays (before_replay_us,
// replay_gpu_us; scripts/replay_marks.py) gives each part directly:
//   before_replay_us ~ a + module_us * modules   (the chains of layers give the slope)
//   replay_gpu_us - gpu_kernel_us ~ c + node_gap_us * n_ops
// and call_us = a + c. A bench that marked no replay but priced a module in the default mode
// (chains of layers) leaves node_gap_us to cuda-graph's (the same driver replays both; the
// predictor borrows it as a prior scales it by what real CUDA-graph replays of calibration
// models took a node: 0.49 us on cs's bench against its own chains' 0.26, where the calibration
// models' replays on host run cv took 0.32-1.03 us a node beyond their kernels, median 0.67)
// and module_us to the default mode's (Dynamo checks the same guards),
// and takes call_us from each class's longest chain, where the replay outlasts the wrapper's
// work after it: call - kernels - n_ops x cuda-graph's node gap. A bench with neither keeps
// the older reading (FitReduceOverheadOverlap): without a module's cost the new one prices
// only the chains' few modules. On host run cv (H200, 15
// calibration models, validation/README.md) a model's call was its time before the replay plus
// the replay's within 3%, where the earlier max(call_us, replay) fit had priced nodes at up to
// 2.8 us each against the 0.3-1.0 us the replays took beyond their kernels.
FrameworkFit FitReduceOverhead(const std::vector<const DispatchMeasurement*>& rows, const Param& graph_gap,
                               bool modules_priced, const FitOptions& options) {
  bool marked = false;
  for (const auto* d : rows) marked = marked || d->before_replay_us;
  if (!marked && !modules_priced) {  // the older reading, from the chains alone
    std::vector<const DispatchMeasurement*> chains;
    for (const auto* d : rows)
      if (d->layers.empty()) chains.push_back(d);
    return FitCudaGraph(Framework::kTorchCompileReduceOverhead, chains, options);
  }
  FrameworkFit f;
  f.framework = Framework::kTorchCompileReduceOverhead;
  f.params.call_before_replay = true;
  f.params.replay_per_node_us = Param::Of(0.0, 0.0);
  std::vector<LinearRow> before, gpu;
  int layer_rows = 0;
  for (const auto* d : rows) {
    if (d->before_replay_us) {
      before.push_back(LinearRow{{1.0, double(d->modules)}, d->before_replay_us->median, 1.0});
      layer_rows += d->modules > 0;
    }
    if (d->replay_gpu_us && d->gpu_kernel_us >= 0)
      gpu.push_back(LinearRow{{1.0, double(d->n_ops)}, d->replay_gpu_us->median - d->gpu_kernel_us, 1.0});
  }
  if (before.size() >= 3 && gpu.size() >= 3) {
    const LinearFit lb = FitLinearNonNegative(before, layer_rows >= 2 ? 2 : 1, options, /*robust=*/true);
    const LinearFit lg = FitLinearNonNegative(gpu, 2, options, /*robust=*/true);
    f.solver_reports.push_back(lb.report);
    f.solver_reports.push_back(lg.report);
    if (!lb.ok || !lg.ok) {
      f.notes.push_back("reduce-overhead: solver failed: " + (lb.ok ? lg.report : lb.report));
      return f;
    }
    auto se = [](const LinearFit& lf, int j) { return std::isfinite(lf.std_error[j]) ? lf.std_error[j] : 0.0; };
    f.params.call_us = Param::Of(lb.beta[0] + lg.beta[0], std::hypot(se(lb, 0), se(lg, 0)));
    if (layer_rows >= 2) f.params.module_us = Param::Of(lb.beta[1], se(lb, 1));
    f.params.node_gap_us = Param::Of(lg.beta[1], se(lg, 1));
    f.notes.push_back(Fmt("reduce-overhead: %.1f us of CPU before the replay", lb.beta[0]) +
                      (layer_rows >= 2 ? Fmt(" and %.2f us a module (%.0f chains of layers)", lb.beta[1], double(layer_rows))
                                       : std::string(" (no chains of layers: module_us left to the default mode's)")) +
                      Fmt("; the replay %.1f us plus %.2f us a node beyond its kernels (CUDA events around the "
                          "replay, %.0f chains)", lg.beta[0], lg.beta[1], double(gpu.size())));
  } else {
    // Older benches: each class's longest chain, whose replay outlasts the wrapper's work after it.
    if (!graph_gap.known()) {
      f.notes.push_back("reduce-overhead: call_us null: the bench marked no replay and cuda-graph has no node_gap_us");
      return f;
    }
    std::map<int, const DispatchMeasurement*> longest;
    for (const auto* d : rows) {
      if (!d->layers.empty() || d->gpu_kernel_us < 0) continue;
      const DispatchMeasurement*& l = longest[int(d->cls)];
      if (!l || d->n_ops > l->n_ops) l = d;
    }
    std::vector<double> cpu;
    for (const auto& [cls, d] : longest)
      cpu.push_back(std::max(0.0, d->call_us.median - d->gpu_kernel_us - d->n_ops * graph_gap.value));
    if (cpu.empty()) {
      f.notes.push_back("reduce-overhead: call_us null: no chain with GPU records");
      return f;
    }
    std::sort(cpu.begin(), cpu.end());
    const double se = cpu.size() > 1 ? (cpu.back() - cpu.front()) / 2 : 0.0;
    f.params.call_us = Param::Of(Percentile(cpu, 0.5), se);
    f.notes.push_back(Fmt("reduce-overhead: call_us %.1f us from the %.0f longest chains' calls less their kernels and "
                          "cuda-graph's node gap (%.2f us; the bench marked no replay); node_gap_us and module_us "
                          "left to cuda-graph's and the default mode's",
                          f.params.call_us.value, double(cpu.size()), graph_gap.value));
  }
  std::vector<double> pred, meas;
  const double gap = f.params.node_gap_us.known() ? f.params.node_gap_us.value : graph_gap.known() ? graph_gap.value : 0;
  const double module = f.params.module_us.known() ? f.params.module_us.value : 0;
  for (const auto* d : rows) {
    if (d->gpu_kernel_us < 0 || (!d->layers.empty() && !d->before_replay_us)) continue;
    pred.push_back(f.params.call_us.value + module * d->modules + d->gpu_kernel_us + gap * d->n_ops);
    meas.push_back(d->call_us.median);
  }
  f.params.points = int(pred.size());
  f.params.r2 = LinearR2(pred, meas);
  f.fit_error = ComputeErrorStats(pred, meas);
  return f;
}

FrameworkFit FitCudaGraph(Framework fw, const std::vector<const DispatchMeasurement*>& rows,
                          const FitOptions& options) {
  FrameworkFit f;
  f.framework = fw;
  // call_us.median ~ replay + per-class per-node slope (GPU work included); only the intercept
  // is a CPU cost. dispatch_us stays null: a graph replay issues no per-op dispatches.
  std::vector<int> class_column(kNumDispatchClasses, -1);
  int num_params = 1;
  for (const auto* d : rows)
    if (class_column[int(d->cls)] < 0) class_column[int(d->cls)] = num_params++;
  std::vector<LinearRow> lin;
  for (const auto* d : rows) {
    LinearRow r;
    r.x.assign(num_params, 0.0);
    r.x[0] = 1;
    r.x[class_column[int(d->cls)]] = d->n_ops;
    r.y = r.scale = d->call_us.median;
    lin.push_back(r);
  }
  if (int(rows.size()) < num_params) {
    f.notes.push_back("too few rows (" + std::to_string(rows.size()) + ") for " +
                      std::to_string(num_params) + " parameters");
    return f;
  }
  LinearFit lf = FitLinearNonNegative(lin, num_params, options, /*robust=*/true);
  f.solver_reports.push_back(lf.report);
  if (!lf.ok) {
    f.notes.push_back("solver failed: " + lf.report);
    return f;
  }
  f.params.call_us = Param::Of(lf.beta[0], lf.std_error[0]);
  for (int c = 0; c < kNumDispatchClasses; ++c) {
    if (class_column[c] < 0) continue;
    if (!std::isfinite(f.per_node_total_us)) f.per_node_total_us = lf.beta[class_column[c]];
    f.notes.push_back(std::string("per-node call time (GPU work included), ") +
                      DispatchClassName(DispatchClass(c)) + Fmt(": %.3f us", lf.beta[class_column[c]]));
  }
  std::vector<double> pred, meas;
  for (const LinearRow& r : lin) {
    double s = 0;
    for (int j = 0; j < num_params; ++j) s += lf.beta[j] * r.x[j];
    pred.push_back(s);
    meas.push_back(r.y);
  }
  f.params.points = int(rows.size());
  f.params.r2 = LinearR2(pred, meas);
  f.fit_error = ComputeErrorStats(pred, meas);
  int used = 0;
  if (fw == Framework::kTorchCompileReduceOverhead) return FitReduceOverheadOverlap(std::move(f), rows, options);
  f.params.node_gap_us = FitGap(rows, options, &f.solver_reports, &used);
  if (!f.params.node_gap_us.known()) {
    f.notes.push_back("node_gap_us null: no rows with n_ops >= 2 and gpu_span_us/gpu_kernel_us");
    f.notes.push_back("call_us: intercept of call_us.median against n_ops (no GPU records)");
    return f;
  }
  f.notes.push_back("node_gap_us from " + std::to_string(used) + " rows");
  // The predictor prices a replay as call_us + n * replay_per_node_us + sum(kernel times) +
  // n * node_gap_us, so call_us and replay_per_node_us are the intercept and slope of
  // call_us.median - gpu_kernel_us - n_ops * node_gap_us against n_ops.
  bool all_kernels = true;
  for (const auto* d : rows) all_kernels = all_kernels && d->gpu_kernel_us >= 0;
  if (!all_kernels) {
    f.notes.push_back("call_us: intercept of call_us.median against n_ops (rows lack "
                      "gpu_kernel_us)");
    return f;
  }
  const double gap = f.params.node_gap_us.value;
  std::vector<LinearRow> over;
  for (const auto* d : rows)
    over.push_back(LinearRow{{1.0, double(d->n_ops)},
                             d->call_us.median - d->gpu_kernel_us - d->n_ops * gap,
                             d->call_us.median});
  LinearFit of = FitLinearNonNegative(over, 2, options, /*robust=*/true);
  f.solver_reports.push_back(of.report);
  if (of.ok) {
    f.params.call_us = Param::Of(of.beta[0], of.std_error[0]);
    f.params.replay_per_node_us = Param::Of(of.beta[1], of.std_error[1]);
    f.notes.push_back("call_us and replay_per_node_us: intercept and slope of call - gpu_kernel "
                      "- n_ops * node_gap against n_ops");
  }
  return f;
}

// One note per chain and dtype of the bench's graphs of model-sized blocks: what a node cost
// there (medians over the chain's rows), against the per-node cost fitted on the tiny chains.
std::vector<std::string> GraphChainNotes(const std::vector<const DispatchMeasurement*>& chains,
                                         const FrameworkParams& fitted) {
  std::map<std::string, std::vector<const DispatchMeasurement*>> by_chain;
  for (const auto* d : chains) by_chain[d->chain + (d->dtype.empty() ? "" : " " + d->dtype)].push_back(d);
  const double call = fitted.call_us.known() ? fitted.call_us.value : 0;
  std::vector<std::string> notes;
  for (const auto& [name, rows] : by_chain) {
    std::vector<double> outside, idle;
    for (const auto* d : rows) {
      if (!(d->nodes > 0)) continue;
      outside.push_back((d->call_us.median - call - d->gpu_kernel_us) / d->nodes);
      if (d->gpu_span_us >= 0) idle.push_back((d->gpu_span_us - d->gpu_kernel_us) / d->nodes);
    }
    if (outside.empty()) continue;
    std::string n = "graph of model-sized blocks, " + name + ": " + Fmt("%.2f", Median(outside)) +
                    " us per node beyond its kernels";
    if (!idle.empty()) n += Fmt(" (%.2f us of it GPU idle between kernels)", Median(idle));
    n += " over " + std::to_string(rows.size()) + " rows; not fitted";
    notes.push_back(n);
  }
  if (!notes.empty() && fitted.replay_per_node_us.known() && fitted.node_gap_us.known())
    notes.push_back(Fmt("fitted per-node cost (tiny adds): %.2f us",
                        fitted.replay_per_node_us.value + fitted.node_gap_us.value));
  return notes;
}

std::string KernelGroupKey(const KernelMeasurement& k) { return KernelKey(k.work.cls, k.work.dtype); }

int NumParams(KernelClass c) { return IsComputeClass(c) ? 3 : 2; }

// Keeps the measured rows of the class as anchors of the fitted model, per variant, where
// they help: each anchor is predicted from the others (leave-one-out, how well the anchors
// interpolate to a shape that was not measured) and the variant's anchors are kept only if
// that beats the bare model on the same rows. Benchmarks of different ops at interleaved
// sizes (layer norm and batch norm rows in "norm") interpolate worse than the fit and drop.
void AttachAnchors(const Measurements& m, const std::vector<size_t>& idx, int num_sms,
                   KernelFit* kf) {
  KernelParams& p = kf->params;
  p.anchors.clear();
  for (size_t i : idx) {
    const KernelMeasurement& r = m.kernels[i];
    if (!(r.kernel_us.median > 0)) continue;
    const KernelAnchor a = AnchorOfWork(r.work, r.kernel_us.median, r.kernels_per_call);
    if (a.m <= 0 && !(a.bytes > 0)) continue;
    p.anchors.push_back(a);
  }
  GpuParams g;
  g.num_sms = num_sms;
  g.kernels["x"] = p;
  PrepareAnchors(&g);
  const std::vector<KernelAnchor> all = g.kernels["x"].anchors;
  p.anchors.clear();
  std::vector<double> model_kept, loo_kept, meas_kept;
  for (int v = 0; v < kNumKernelVariants; ++v) {
    KernelParams only = p;
    only.anchors.clear();
    for (const KernelAnchor& a : all)
      if (int(a.variant) == v) only.anchors.push_back(a);
    if (only.anchors.empty()) continue;
    std::vector<double> model, loo, meas;
    for (size_t i = 0; i < only.anchors.size(); ++i) {
      const KernelAnchor& a = only.anchors[i];
      KernelWork w = WorkOfAnchor(a);
      w.cls = kf->cls;
      w.dtype = kf->dtype;
      KernelParams without = only;
      without.anchors.erase(without.anchors.begin() + long(i));
      model.push_back(ModelTimeUs(w, p, num_sms));
      loo.push_back(without.anchors.empty() ? model.back() : KernelTimeUs(w, without, num_sms));
      meas.push_back(a.us);
    }
    const ErrorStats em = ComputeErrorStats(model, meas), el = ComputeErrorStats(loo, meas);
    const std::string name = v == 0 ? "plain" : KernelVariantName(KernelVariant(v));
    char buf[200];
    std::snprintf(buf, sizeof(buf), "anchors %s: %d rows, median |error| model %.1f%%, leave-one-out %.1f%%%s",
                  name.c_str(), int(meas.size()), em.median_abs_pct, el.median_abs_pct,
                  el.median_abs_pct < em.median_abs_pct ? "" : ": not kept");
    kf->notes.push_back(buf);
    if (!(el.median_abs_pct < em.median_abs_pct)) continue;
    p.anchors.insert(p.anchors.end(), only.anchors.begin(), only.anchors.end());
    model_kept.insert(model_kept.end(), model.begin(), model.end());
    loo_kept.insert(loo_kept.end(), loo.begin(), loo.end());
    meas_kept.insert(meas_kept.end(), meas.begin(), meas.end());
  }
  kf->anchor_model_error = ComputeErrorStats(model_kept, meas_kept);
  kf->anchor_loo_error = ComputeErrorStats(loo_kept, meas_kept);
}

}  // namespace

bool CalibrateAvailable() { return true; }

// One kernel class at one dtype (one group of the bench's rows, `idx`): its parameters fitted
// on all its plain rows, with the held-out error of fits on part of them (`held`: one mask
// per repeat). `fitted` says whether the parameters may enter the profile.
static KernelFit FitKernelGroup(const Measurements& m, const std::vector<size_t>& idx,
                                const std::vector<std::vector<bool>>& held, int num_sms,
                                const FitOptions& options,
                                bool* fitted) {
  *fitted = false;
  KernelFit kf;
  kf.cls = m.kernels[idx.front()].work.cls;
  kf.dtype = m.kernels[idx.front()].work.dtype;
  const bool has_rate = IsComputeClass(kf.cls);
  // The class's fit sees its plain rows; rows of a variant (another layout or path of the
  // same class) only become anchors.
  std::vector<KernelRow> all;
  std::vector<size_t> fit_idx;
  for (size_t i : idx) {
    if (m.kernels[i].work.variant != KernelVariant::kPlain) continue;
    all.push_back(MakeKernelRow(m.kernels[i]));
    fit_idx.push_back(i);
  }
  kf.params.points = int(all.size());
  kf.params.min_flops = kf.params.min_bytes = INFINITY;
  kf.params.max_flops = kf.params.max_bytes = 0;
  for (const KernelRow& r : all) {
    kf.params.min_flops = std::min(kf.params.min_flops, r.per_kernel.flops);
    kf.params.max_flops = std::max(kf.params.max_flops, r.per_kernel.flops);
    kf.params.min_bytes = std::min(kf.params.min_bytes, r.per_kernel.bytes);
    kf.params.max_bytes = std::max(kf.params.max_bytes, r.per_kernel.bytes);
  }
  const int p = NumParams(kf.cls);
  bool any_bytes = false, any_flops = false;
  for (const KernelRow& r : all) {
    any_bytes = any_bytes || r.per_kernel.bytes > 0;
    any_flops = any_flops || r.per_kernel.flops > 0;
  }
  if (int(all.size()) < p + 1) {
    kf.notes.push_back(std::to_string(all.size()) + " rows, at least " + std::to_string(p + 1) +
                       " needed");
  } else if (!any_bytes) {
    kf.notes.push_back("no row moves any bytes: bandwidth cannot be fitted");
  } else if (has_rate && !any_flops) {
    kf.notes.push_back("no row has FLOPs: rate cannot be fitted");
  }
  if (!kf.notes.empty()) {
    return kf;
  }
  // Holdout: per repeat, fit on the training rows and score the held-out ones; the errors
  // of all repeats are pooled.
  std::vector<double> held_pred, held_meas;
  for (const std::vector<bool>& mask : held) {
    std::vector<KernelRow> train, test;
    for (size_t j = 0; j < fit_idx.size(); ++j) (mask[fit_idx[j]] ? test : train).push_back(all[j]);
    if (test.empty()) continue;
    ThetaFit tf = FitKernelClass(train, has_rate, num_sms, options, false);
    if (!tf.ok) {
      kf.notes.push_back("holdout fit failed: " + tf.report);
      continue;
    }
    for (const KernelRow& r : test) {
      held_pred.push_back(RowModelUs(r, tf.theta, tf.tiles, num_sms));
      held_meas.push_back(r.measured_us);
    }
  }
  if (!held_pred.empty())
    kf.holdout_error = ComputeErrorStats(held_pred, held_meas);
  else if (options.holdout_fraction > 0)
    kf.notes.push_back("too few rows for a holdout");
  // Final fit on all rows.
  ThetaFit tf = FitKernelClass(all, has_rate, num_sms, options, true);
  kf.solver_report = tf.report;
  if (!tf.ok) {
    kf.notes.push_back("solver failed: " + tf.report);
    return kf;
  }
  kf.params.floor_us = tf.floor_us;
  kf.params.bandwidth_gbps = tf.bandwidth_gbps;
  kf.params.rate_tflops = has_rate ? tf.rate_tflops : Param{};
  kf.params.tile_m = tf.tiles.tile_m;
  kf.params.tile_n = tf.tiles.tile_n;
  kf.notes.insert(kf.notes.end(), tf.notes.begin(), tf.notes.end());
  std::vector<double> pred, meas;
  for (const KernelRow& r : all) {
    pred.push_back(RowModelUs(r, tf.theta, tf.tiles, num_sms));
    meas.push_back(r.measured_us);
  }
  kf.params.r2 = LogR2(pred, meas);
  kf.fit_error = ComputeErrorStats(pred, meas);
  kf.params.median_abs_err_pct = kf.fit_error.median_abs_pct;
  if (!std::isfinite(kf.params.r2))
    kf.notes.push_back("R² undefined: measured times do not vary");
  if (options.anchors) AttachAnchors(m, idx, num_sms, &kf);
  *fitted = true;
  return kf;
}

// The frameworks' CPU costs: per dispatch class from the chains of tiny ops, per op type from
// the per-op chains (Python eager, torch.compile's library calls), a replay's costs for the graph
// frameworks. Returns libtorch-eager's GPU-bound rows, from which the GPU's own gap is fitted.
static std::vector<const DispatchMeasurement*> FitFrameworks(const Measurements& m, const FitOptions& options,
                                                             Calibration* c) {
  HostProfile& profile = c->profile;
  std::map<Framework, std::vector<const DispatchMeasurement*>> rows_of_framework;
  std::map<Framework, std::vector<const DispatchMeasurement*>> op_rows_of_framework;
  std::vector<const DispatchMeasurement*> graph_chains;  // model-sized kernels, cuda-graph
  std::vector<const DispatchMeasurement*> gpu_bound_eager;
  for (const DispatchMeasurement& d : m.dispatch) {
    if (d.elements > 0)  // made for the GPU's gap: the GPU set its pace, not the CPU
      gpu_bound_eager.push_back(&d);
    else if (!d.chain.empty())
      graph_chains.push_back(&d);
    else if (!d.op.empty())
      op_rows_of_framework[d.framework].push_back(&d);
    else
      rows_of_framework[d.framework].push_back(&d);
  }
  for (const auto& [fw, rows] : rows_of_framework) {
    FrameworkFit f;
    if (fw == Framework::kTorchCompileReduceOverhead) {
      // cuda-graph and the default mode are fitted first (the map's order).
      const FrameworkParams* cg = profile.FindFramework(Framework::kCudaGraph);
      const FrameworkParams* tc = profile.FindFramework(Framework::kTorchCompile);
      f = FitReduceOverhead(rows, cg ? cg->node_gap_us : Param{}, tc && tc->module_us.known(), options);
    } else if (IsCudaGraph(fw)) {  // cuda-graph
      f = FitCudaGraph(fw, rows, options);
    } else {
      std::vector<const DispatchMeasurement*> gpu_bound;
      f = FitDispatchFramework(fw, rows, options, &gpu_bound);
      if (fw == Framework::kLibtorchEager)
        gpu_bound_eager.insert(gpu_bound_eager.end(), gpu_bound.begin(), gpu_bound.end());
      // Per-op costs price Python eager, and the library calls of torch.compile's default mode
      // (its compiled chains of convolutions, linear layers, ...: a compiled CNN's wrapper
      // spends 25-30 us per kernel where chains of matrix products cost 15). TorchScript's
      // chains (run with the TensorExpr fuser on, as traced models run) price it only where
      // every row carried the CPU gauge, so that all were brought to the host's fast state:
      // chains timed at an unknown CPU speed ran 1.1-2.4x slower per op on host run ai than
      // the gauged ones of host run ap while ai's models ran as fast or faster, and priced ai's
      // traced evaluation models 50-90% slow (2 of 58 points within tolerance against 45 by
      // class); the gauged ones of ap priced ap's 39 of 58 against 2 by class.
      auto ops = op_rows_of_framework.find(fw);
      if (ops != op_rows_of_framework.end()) {
        const bool gauged = std::all_of(ops->second.begin(), ops->second.end(),
                                        [](const DispatchMeasurement* d) { return d->cpu_gauge_us > 0; });
        if (IsPythonEager(fw) || fw == Framework::kTorchCompile || (fw == Framework::kTorchscript && gauged))
          f.params.op_us =
              FitOpCosts(ops->second, options, &f.params.op_kernels, &f.params.op_launch_us, &f.notes);
        else if (fw == Framework::kTorchscript)
          f.notes.push_back(std::to_string(ops->second.size()) +
                            " per-op chain row(s) not fitted: timed without the CPU gauge, so at an "
                            "unknown CPU speed; priced by class");
        else
          f.notes.push_back(std::to_string(ops->second.size()) +
                            " per-op chain row(s) not fitted: per-op costs price Python eager, "
                            "TorchScript and torch.compile's library calls only");
      }
    }
    if (f.params.call_us.known()) profile.frameworks[FrameworkName(fw)] = f.params;
    c->frameworks.push_back(f);
  }
  // Graphs of model-sized blocks: reported, not fitted (docs/calibration.md).
  for (FrameworkFit& f : c->frameworks) {
    if (f.framework != Framework::kCudaGraph || graph_chains.empty()) continue;
    for (const std::string& note : GraphChainNotes(graph_chains, f.params)) f.notes.push_back(note);
  }

  return gpu_bound_eager;
}

// The gap from the bench's gap chains (`elements`): the slope of (call time - kernel time)
// against n_ops - 1, with an intercept (the first launch and the synchronize). Their call time
// is the unprofiled one: under the CUPTI pass that records their kernels every launch costs the
// CPU tens of microseconds more and the GPU waits on it, so their span shows the profiler's
// pace, not the GPU's (an H200: 27.7 us a kernel by span at 16 adds, 2.7 by call time).
// Unknown without two chain lengths.
Param FitGapFromCalls(const std::vector<const DispatchMeasurement*>& rows, const FitOptions& options,
                      std::vector<std::string>* reports, int* used) {
  std::vector<LinearRow> lin;
  std::set<int> lengths;
  for (const auto* d : rows) {
    if (d->elements <= 0 || d->n_ops < 2 || d->gpu_kernel_us < 0) continue;
    lin.push_back(LinearRow{{1.0, double(d->n_ops - 1)}, d->call_us.median - d->gpu_kernel_us, 1.0});
    lengths.insert(d->n_ops);
  }
  *used = int(lin.size());
  if (lengths.size() < 2) return Param{};
  LinearFit lf = FitLinearNonNegative(lin, 2, options, /*robust=*/false);
  reports->push_back(lf.report);
  if (!lf.ok) return Param{};
  return Param::Of(lf.beta[1], lf.std_error[1]);
}

// The GPU's gap between two back-to-back kernels: from libtorch-eager's GPU-bound rows only (a
// CPU-bound chain shows the CPU's dispatch interval, not the GPU's gap): the chains the bench
// runs over a large tensor for it (`elements`, FitGapFromCalls), else any 8x8 chain the GPU
// paced (the slope of its span less its kernels).
static void FitKernelGap(const Measurements& m, const std::vector<const DispatchMeasurement*>& gpu_bound_eager,
                         const FitOptions& options, Calibration* c) {
  std::vector<const DispatchMeasurement*> eager;
  for (const DispatchMeasurement& d : m.dispatch)
    if (d.framework == Framework::kLibtorchEager && d.chain.empty() && d.op.empty()) eager.push_back(&d);
  if (eager.empty()) {
    c->notes.push_back("gpu.kernel_gap_us null: no libtorch-eager dispatch rows");
  } else if (gpu_bound_eager.empty()) {
    bool any_gpu = false;
    for (const auto* d : eager) any_gpu = any_gpu || (d->gpu_span_us >= 0 && d->gpu_kernel_us >= 0);
    c->notes.push_back(
        any_gpu ? "gpu.kernel_gap_us null: every libtorch-eager row is CPU bound (kernel time "
                  "per op below the dispatch cost), so the GPU waits on the CPU and its own gap "
                  "between kernels cannot be observed"
                : "gpu.kernel_gap_us null: libtorch-eager rows carry no gpu_span_us/gpu_kernel_us");
  } else {
    int used = 0;
    const Param from_calls = FitGapFromCalls(gpu_bound_eager, options, &c->gap_solver_reports, &used);
    if (from_calls.known()) {
      c->profile.gpu.kernel_gap_us = from_calls;
      c->notes.push_back(Fmt("gpu.kernel_gap_us from %.0f gap chain(s) (adds over a large tensor, timed "
                             "without the profiler): %.2f us a kernel",
                             double(used), from_calls.value));
    } else {
      c->profile.gpu.kernel_gap_us = FitGap(gpu_bound_eager, options, &c->gap_solver_reports, &used);
      c->notes.push_back("gpu.kernel_gap_us from " + std::to_string(used) +
                        " GPU-bound libtorch-eager row(s)");
    }
  }
}

// A reduce-overhead graph's nodes wait at least the GPU's gap between dependent kernels: the
// chains' slope comes from the spans of their CUPTI pass and has come out under that gap on
// some hosts (1.13-1.77 us against the 1.9-2.5 the gap chains measure on every H100 and H200).
// On the calibration models' rows of host runs ax, ba and u, whose benches predate the gap
// chains, the median gap of later benches (2.06 us) in place of the slope put 5 of 8, 3 of 4
// and 4 of 8 points right against 2, 2 and 4 (validation/README.md). The gap is the floor,
// where the bench measured it. Only the older reading (call_before_replay false) takes it: there
// the node gap also stood for the wrapper's work before the replay.
static void FloorReplayGapAtKernelGap(Calibration* c) {
  const Param& gap = c->profile.gpu.kernel_gap_us;
  if (!gap.known()) return;
  auto it = c->profile.frameworks.find(FrameworkName(Framework::kTorchCompileReduceOverhead));
  if (it == c->profile.frameworks.end() || it->second.call_before_replay || !it->second.node_gap_us.known()) return;
  Param& node_gap = it->second.node_gap_us;
  if (node_gap.value >= gap.value) return;
  const double chains = node_gap.value;
  node_gap = gap;
  for (FrameworkFit& f : c->frameworks) {
    if (f.framework != Framework::kTorchCompileReduceOverhead) continue;
    f.params.node_gap_us = gap;
    f.notes.push_back(Fmt("node_gap_us raised from the chains' %.2f us to the GPU's gap between dependent "
                          "kernels (gpu.kernel_gap_us, %.2f us), its floor",
                          chains, gap.value));
  }
}

Expected<Calibration> Calibrate(const Measurements& m, const FitOptions& options) {
  Status s = options.Validate();
  if (!s.ok()) return s;
  Calibration c;
  HostProfile& profile = c.profile;
  profile.host = m.host.is_object() ? m.host : json::object();
  profile.synthetic = profile.host.value("synthetic", json(false)) == json(true);
  profile.provenance = json::object();  // the caller knows the files, date and commit

  int num_sms = options.num_sms;
  if (num_sms == 0) {
    const json sm = profile.host.value("sm_count", json(nullptr));
    if (!sm.is_number_integer() || sm.get<int64_t>() <= 0 || sm.get<int64_t>() > 100000)
      return InvalidInput(
          "measurements: host.sm_count missing or not a positive integer (needed for wave "
          "quantization; pass the SM count explicitly to override)");
    num_sms = sm.get<int>();
  }
  profile.gpu.num_sms = num_sms;
  if (m.kernels.empty() && m.dispatch.empty())
    return InvalidInput("measurements: no kernel or dispatch rows to fit");

  // ---- kernel classes ----
  std::vector<std::string> group_of_row;
  for (const KernelMeasurement& k : m.kernels) group_of_row.push_back(KernelGroupKey(k));
  // One mask per repeat; repeat r uses seed + r, so repeat 0 is the split of `seed` alone.
  std::vector<std::vector<bool>> held;
  for (int r = 0; r < options.holdout_repeats; ++r)
    held.push_back(HoldoutMask(group_of_row, options.holdout_fraction, options.seed + uint64_t(r),
                               /*min_train=*/5));
  std::map<std::string, std::vector<size_t>> rows_of_group;
  for (size_t i = 0; i < m.kernels.size(); ++i) rows_of_group[group_of_row[i]].push_back(i);

  for (const auto& [key, idx] : rows_of_group) {
    bool fitted = false;
    KernelFit kf = FitKernelGroup(m, idx, held, num_sms, options, &fitted);
    if (fitted) profile.gpu.kernels[key] = kf.params;
    c.kernels.push_back(kf);
  }

  // ---- frameworks, and the GPU gap between back-to-back kernels ----
  const std::vector<const DispatchMeasurement*> gpu_bound_eager = FitFrameworks(m, options, &c);
  FitKernelGap(m, gpu_bound_eager, options, &c);
  FloorReplayGapAtKernelGap(&c);

  // ---- one kernel launch with nothing around it ----
  profile.gpu.launch_us = FitLaunch(m.launches, options, &c.notes);

  c.quality_failures = QualityFailures(c, options);
  for (const KernelFit& k : c.kernels) {  // the gates become what each class may be trusted for
    auto it = profile.gpu.kernels.find(KernelKey(k.cls, k.dtype));
    if (it == profile.gpu.kernels.end()) continue;
    it->second.holdout_err_pct = k.holdout_error.points > 0 ? k.holdout_error.median_abs_pct : std::nan("");
    it->second.trusted = KernelClassPassesGates(k, options);
  }
  profile.fit = CalibrationSummaryJson(c, options);
  return c;
}

}  // namespace ftax
