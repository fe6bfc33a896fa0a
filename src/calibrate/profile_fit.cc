// The parts of profile fitting that need no Ceres: options, error statistics, quality gates
// and the summary. The fits themselves are in profile_fit_ceres.cc.
#include "calibrate/profile_fit.h"

#include <algorithm>
#include <cmath>

namespace ftax {
namespace {

using json = nlohmann::json;

json NumOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json ParamJson(const Param& p) {
  return {{"value", NumOrNull(p.value)}, {"stderr", NumOrNull(p.std_error)}};
}

json ErrorJson(const ErrorStats& e) {
  return {{"points", e.points},
          {"median_abs_err_pct", NumOrNull(e.median_abs_pct)},
          {"p90_abs_err_pct", NumOrNull(e.p90_abs_pct)}};
}

// Quantile q of sorted values, linear interpolation between closest ranks.
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

double R2(const std::vector<double>& pred, const std::vector<double>& meas) {
  if (pred.size() != meas.size() || meas.size() < 2) return std::nan("");
  double mean = 0;
  for (double y : meas) mean += y;
  mean /= double(meas.size());
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < meas.size(); ++i) {
    ss_res += (meas[i] - pred[i]) * (meas[i] - pred[i]);
    ss_tot += (meas[i] - mean) * (meas[i] - mean);
  }
  if (!(ss_tot > 1e-12 * std::max(1.0, mean * mean))) return std::nan("");
  return 1 - ss_res / ss_tot;
}

}  // namespace

const char* FitLossName(FitLoss l) {
  switch (l) {
    case FitLoss::kNone: return "none";
    case FitLoss::kHuber: return "huber";
    case FitLoss::kCauchy: return "cauchy";
  }
  return "?";
}

Status FitOptions::Validate() const {
  if (!(holdout_fraction >= 0 && holdout_fraction < 1))
    return InvalidInput("holdout fraction must be in [0, 1)");
  if (holdout_repeats < 1 || holdout_repeats > 100)
    return InvalidInput("holdout repeats must be in [1, 100]");
  if (!(loss_scale > 0)) return InvalidInput("loss scale must be > 0");
  if (!(min_r2 <= 1) || !(min_framework_r2 <= 1)) return InvalidInput("minimum R² must be <= 1");
  if (!(max_holdout_median_err_pct > 0))
    return InvalidInput("maximum holdout error must be > 0 %");
  if (num_sms < 0) return InvalidInput("SM count must be >= 0 (0: from the measurements)");
  if (tile_candidates.empty()) return InvalidInput("at least one tile candidate is needed");
  for (const auto& [tm, tn] : tile_candidates)
    if (tm <= 0 || tn <= 0) return InvalidInput("tile sizes must be > 0");
  if (max_iterations <= 0) return InvalidInput("max iterations must be > 0");
  return Status::Ok();
}

ErrorStats ComputeErrorStats(const std::vector<double>& predicted,
                             const std::vector<double>& measured) {
  ErrorStats e;
  std::vector<double> err;
  for (size_t i = 0; i < predicted.size() && i < measured.size(); ++i)
    err.push_back(100.0 * std::abs(predicted[i] / measured[i] - 1));
  e.points = int(err.size());
  e.median_abs_pct = Quantile(err, 0.5);
  e.p90_abs_pct = Quantile(err, 0.9);
  return e;
}

double LogR2(const std::vector<double>& predicted, const std::vector<double>& measured) {
  std::vector<double> lp, lm;
  for (size_t i = 0; i < predicted.size() && i < measured.size(); ++i) {
    if (!(predicted[i] > 0) || !(measured[i] > 0)) return std::nan("");
    lp.push_back(std::log(predicted[i]));
    lm.push_back(std::log(measured[i]));
  }
  return R2(lp, lm);
}

double LinearR2(const std::vector<double>& predicted, const std::vector<double>& measured) {
  return R2(predicted, measured);
}

bool KernelClassPassesGates(const KernelFit& k, const FitOptions& options) {
  if (!k.params.floor_us.known()) return false;
  if (std::isfinite(k.params.r2) && k.params.r2 < options.min_r2) return false;
  return !(k.holdout_error.points > 0 && k.holdout_error.median_abs_pct > options.max_holdout_median_err_pct);
}

std::vector<std::string> QualityFailures(const Calibration& c, const FitOptions& options) {
  std::vector<std::string> out;
  char buf[256];
  for (const KernelFit& k : c.kernels) {
    const std::string key = KernelKey(k.cls, k.dtype);
    if (!k.params.floor_us.known()) {
      out.push_back(key + ": not fitted (" + (k.notes.empty() ? "no fit" : k.notes.front()) + ")");
      continue;
    }
    if (std::isfinite(k.params.r2) && k.params.r2 < options.min_r2) {
      std::snprintf(buf, sizeof(buf), "%s: R² of log(time) %.3f < %.3f", key.c_str(),
                    k.params.r2, options.min_r2);
      out.push_back(buf);
    }
    if (k.holdout_error.points > 0 &&
        k.holdout_error.median_abs_pct > options.max_holdout_median_err_pct) {
      std::snprintf(buf, sizeof(buf), "%s: held-out median |error| %.1f%% > %.1f%%",
                    key.c_str(), k.holdout_error.median_abs_pct,
                    options.max_holdout_median_err_pct);
      out.push_back(buf);
    }
  }
  for (const FrameworkFit& f : c.frameworks) {
    const std::string name = FrameworkName(f.framework);
    if (!f.params.call_us.known()) {
      out.push_back(name + ": not fitted (" + (f.notes.empty() ? "no fit" : f.notes.front()) + ")");
      continue;
    }
    if (std::isfinite(f.params.r2) && f.params.r2 < options.min_framework_r2) {
      std::snprintf(buf, sizeof(buf), "%s: R² of call time %.3f < %.3f", name.c_str(),
                    f.params.r2, options.min_framework_r2);
      out.push_back(buf);
    }
  }
  return out;
}

json CalibrationSummaryJson(const Calibration& c, const FitOptions& options) {
  json j;
  json ks = json::array();
  for (const KernelFit& k : c.kernels) {
    json kj;
    kj["class"] = KernelClassName(k.cls);
    kj["dtype"] = DTypeName(k.dtype);
    kj["points"] = k.params.points;
    kj["tile_m"] = k.params.tile_m;
    kj["tile_n"] = k.params.tile_n;
    kj["floor_us"] = ParamJson(k.params.floor_us);
    kj["rate_tflops"] = ParamJson(k.params.rate_tflops);
    kj["bandwidth_gbps"] = ParamJson(k.params.bandwidth_gbps);
    kj["r2_log_time"] = NumOrNull(k.params.r2);
    kj["fit"] = ErrorJson(k.fit_error);
    kj["holdout"] = ErrorJson(k.holdout_error);
    kj["anchors"] = {{"points", int(k.params.anchors.size())},
                     {"model", ErrorJson(k.anchor_model_error)},
                     {"leave_one_out", ErrorJson(k.anchor_loo_error)}};
    kj["range"] = {{"min_flops", k.params.min_flops}, {"max_flops", k.params.max_flops},
                   {"min_bytes", k.params.min_bytes}, {"max_bytes", k.params.max_bytes}};
    kj["notes"] = k.notes;
    ks.push_back(kj);
  }
  j["kernels"] = ks;
  json fs = json::array();
  for (const FrameworkFit& f : c.frameworks) {
    json fj;
    fj["framework"] = FrameworkName(f.framework);
    fj["points"] = f.params.points;
    fj["call_us"] = ParamJson(f.params.call_us);
    json d = json::object();
    for (int i = 0; i < kNumDispatchClasses; ++i)
      d[DispatchClassName(DispatchClass(i))] = ParamJson(f.params.dispatch_us[i]);
    fj["dispatch_us"] = d;
    fj["module_us"] = ParamJson(f.params.module_us);
    fj["node_gap_us"] = ParamJson(f.params.node_gap_us);
    fj["per_node_total_us"] = NumOrNull(f.per_node_total_us);
    fj["replay_per_node_us"] = ParamJson(f.params.replay_per_node_us);
    if (f.params.input_us.known()) fj["input_us"] = ParamJson(f.params.input_us);
    if (!f.params.op_us.empty()) {
      json ops = json::object();
      for (const auto& [op, q] : f.params.op_us) ops[op] = ParamJson(q);
      fj["op_us"] = ops;
    }
    fj["r2"] = NumOrNull(f.params.r2);
    fj["fit"] = ErrorJson(f.fit_error);
    fj["notes"] = f.notes;
    fs.push_back(fj);
  }
  j["frameworks"] = fs;
  j["kernel_gap_us"] = ParamJson(c.profile.gpu.kernel_gap_us);
  j["launch_us"] = ParamJson(c.profile.gpu.launch_us);
  j["num_sms"] = c.profile.gpu.num_sms;
  j["options"] = {{"holdout_fraction", options.holdout_fraction},
                  {"holdout_repeats", options.holdout_repeats},
                  {"seed", options.seed},
                  {"loss", FitLossName(options.loss)},
                  {"loss_scale", options.loss_scale},
                  {"min_r2", options.min_r2},
                  {"max_holdout_median_err_pct", options.max_holdout_median_err_pct},
                  {"min_framework_r2", options.min_framework_r2}};
  j["quality_failures"] = c.quality_failures;
  j["notes"] = c.notes;
  return j;
}

#if !FTAX_HAVE_CERES
bool CalibrateAvailable() { return false; }

Expected<Calibration> Calibrate(const Measurements&, const FitOptions&) {
  return Unsupported("this ftax was built without Ceres Solver, which the fits need");
}
#endif

}  // namespace ftax
