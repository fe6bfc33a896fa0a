#include "calibrate/op_scale_fit.h"

#include <algorithm>
#include <cstdio>

#include <Eigen/Dense>

#include "common/percentile.h"
#include "predictor/framework.h"

namespace ftax {

const std::vector<OpScaleGroup>& OpScaleGroups() {
  static const std::vector<OpScaleGroup> groups = {
      {"conv, batch norm, relu, pooling", {"conv", "batch_norm", "relu", "max_pool2d", "adaptive_avg_pool2d"}},
      {"linear, matmul", {"linear", "matmul"}},
      {"layer norm", {"layer_norm"}},
      {"attention", {"scaled_dot_product_attention", "multi_head_attention"}},
  };
  return groups;
}

namespace {

// The row's predicted CPU time split into the groups, then the rest.
Eigen::VectorXd Features(const PredictionPoint& p) {
  const auto& groups = OpScaleGroups();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(Eigen::Index(groups.size() + 1));
  double used = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const std::string& op : groups[g].ops) {
      auto it = p.op_framework_ms.find(op);
      if (it != p.op_framework_ms.end()) x[Eigen::Index(g)] += it->second.first;
    }
    used += x[Eigen::Index(g)];
  }
  x[Eigen::Index(groups.size())] = std::max(0.0, p.framework_ms - used);
  return x;
}

double MedianAbsError(const std::vector<Eigen::VectorXd>& xs, const std::vector<double>& ys,
                      const Eigen::VectorXd& w) {
  std::vector<double> e;
  for (size_t i = 0; i < xs.size(); ++i) e.push_back(std::fabs(xs[i].dot(w) - ys[i]) / ys[i]);
  return Median(e);
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f%%", 100 * v);
  return b;
}

}  // namespace

std::vector<OpScaleFit> FitOpScales(const std::vector<ValidationRow>& rows, const HostProfile& profile,
                                    const OpScaleOptions& opt) {
  std::map<std::string, std::pair<std::vector<Eigen::VectorXd>, std::vector<double>>> data;
  for (const ValidationRow& r : rows) {
    auto fw = ParseFramework(r.framework);
    if (!fw || IsCudaGraph(*fw)) continue;
    const FrameworkParams* f = profile.FindFramework(*fw);
    if (!f || f->op_us.empty()) continue;
    auto& [xs, ys] = data[r.framework];  // every framework priced per op type gets an entry
    const PredictionPoint& p = r.predicted;
    if (!(p.latency_ms > 0) || p.compute_ms >= opt.max_compute_share * p.latency_ms) continue;
    if (!(r.measured_ms > 0) || !(r.cpu_speed_factor > 0) || p.op_framework_ms.empty()) continue;
    // A reading this far from the profile's may not be the state the run met (framework_refit.h).
    if (r.cpu_speed_factor > opt.max_cpu_speed_factor || r.cpu_speed_factor < 1 / opt.max_cpu_speed_factor) continue;
    // A row predicted at its own CPU speed (CompareOptions::at_row_cpu_speed) has every CPU
    // cost scaled by its factor: both sides go back to the profile's speed.
    xs.push_back(Features(p) / r.cpu_speed_factor);
    ys.push_back(r.measured_ms / r.cpu_speed_factor);
  }
  const Eigen::Index k = Eigen::Index(OpScaleGroups().size() + 1);
  std::vector<OpScaleFit> out;
  for (const auto& [name, d] : data) {
    const auto& [xs, ys] = d;
    OpScaleFit fit;
    fit.framework = name;
    fit.rows = int(xs.size());
    if (fit.rows < opt.min_rows) {
      fit.why_not = std::to_string(fit.rows) + " CPU-bound rows; at least " + std::to_string(opt.min_rows) +
                    " are needed";
      out.push_back(fit);
      continue;
    }
    std::vector<double> ratios;
    for (size_t i = 0; i < xs.size(); ++i) ratios.push_back(ys[i] / xs[i].sum());
    const double s0 = Median(ratios);
    // Minimize sum ((x.w - y) / y)^2 + ridge * |w - s0|^2: the normal equations
    // (U'U + ridge I) w = U'1 + ridge s0, with U's rows x / y.
    Eigen::MatrixXd a = opt.ridge * Eigen::MatrixXd::Identity(k, k);
    Eigen::VectorXd b = Eigen::VectorXd::Constant(k, opt.ridge * s0);
    for (size_t i = 0; i < xs.size(); ++i) {
      const Eigen::VectorXd u = xs[i] / ys[i];
      a += u * u.transpose();
      b += u;
    }
    const Eigen::VectorXd w = a.ldlt().solve(b);
    fit.common_scale = s0;
    for (Eigen::Index g = 0; g < k; ++g) {
      // A scale is a cost ratio: kept inside what a profile accepts (host_profile.h).
      const double rel = std::clamp(w[g] / s0, 0.05, 20.0);
      fit.group_scale.push_back(rel);
      if (g + 1 < k) {
        for (const std::string& op : OpScaleGroups()[size_t(g)].ops) fit.op_scale[op] = rel;
      } else {
        fit.op_scale["*"] = rel;
      }
    }
    fit.median_abs_error_before = MedianAbsError(xs, ys, Eigen::VectorXd::Constant(k, s0));
    Eigen::VectorXd wr(k);
    for (Eigen::Index g = 0; g < k; ++g) wr[g] = fit.group_scale[size_t(g)] * s0;
    fit.median_abs_error_after = MedianAbsError(xs, ys, wr);
    out.push_back(fit);
  }
  return out;
}

std::map<std::string, double> ComposeOpScales(const std::map<std::string, double>& first,
                                              const std::map<std::string, double>& then) {
  auto at = [](const std::map<std::string, double>& m, const std::string& op) {
    auto it = m.find(op);
    if (it != m.end()) return it->second;
    it = m.find("*");
    return it != m.end() ? it->second : 1.0;
  };
  std::map<std::string, double> out;
  for (const auto* m : {&first, &then})
    for (const auto& [op, s] : *m) out[op] = at(first, op) * at(then, op);
  if (!first.empty() || !then.empty()) out["*"] = at(first, "*") * at(then, "*");
  return out;
}

nlohmann::json OpScaleFitToJson(const OpScaleFit& fit) {
  nlohmann::json j = {{"rows", fit.rows}};
  if (!fit.fitted()) {
    j["not_fitted"] = fit.why_not;
    return j;
  }
  j["common_scale"] = fit.common_scale;
  nlohmann::json groups = nlohmann::json::object();
  for (size_t g = 0; g < fit.group_scale.size(); ++g)
    groups[g < OpScaleGroups().size() ? OpScaleGroups()[g].name : "the rest"] = fit.group_scale[g];
  j["groups"] = groups;
  j["op_scale"] = fit.op_scale;
  j["median_abs_error_before"] = fit.median_abs_error_before;
  j["median_abs_error_after"] = fit.median_abs_error_after;
  return j;
}

std::string DescribeOpScaleFit(const OpScaleFit& fit) {
  std::string s = fit.framework + ": ";
  if (!fit.fitted()) return s + "no op scales (" + fit.why_not + ")";
  s += "op scales from " + std::to_string(fit.rows) + " CPU-bound rows: ";
  for (size_t g = 0; g < fit.group_scale.size(); ++g) {
    char b[32];
    std::snprintf(b, sizeof(b), " x%.2f", fit.group_scale[g]);
    s += (g ? ", " : "") + (g < OpScaleGroups().size() ? OpScaleGroups()[g].name : std::string("the rest")) + b;
  }
  return s + "; median |error| " + Pct(fit.median_abs_error_before) + " -> " + Pct(fit.median_abs_error_after);
}

OpScaleRefinement RefineOpScales(const nlohmann::json& measured, const std::vector<std::string>& models,
                                 const HostProfile& profile, bool predict_from_file, HostProfile* refined) {
  OpScaleRefinement out;
  nlohmann::json rows = {{"rows", nlohmann::json::array()}};
  for (const nlohmann::json& r : measured["rows"])
    if (models.empty() || std::count(models.begin(), models.end(), r.value("model", "")))
      rows["rows"].push_back(r);
  CompareOptions copt;
  copt.interval_samples = 0;
  copt.predict_from_file = predict_from_file;
  copt.at_row_cpu_speed = true;  // as the dispatch scale: the shape of costs, not the CPU state
  Expected<ValidationReport> rep = CompareMeasurements(rows, profile, copt);
  if (!rep.ok()) {
    out.lines.push_back("no op scales: " + rep.status().message());
    return out;
  }
  for (const OpScaleFit& fit : FitOpScales(rep->rows, profile)) {
    out.lines.push_back(DescribeOpScaleFit(fit));
    nlohmann::json fj = OpScaleFitToJson(fit);
    if (fit.fitted()) {
      // The rows were priced with the profile's own op scales (a prior's): the new ones
      // multiply them, op type by op type, and that product is what this host's runs say.
      std::map<std::string, double>& scale = refined->frameworks[fit.framework].op_scale;
      scale = ComposeOpScales(scale, fit.op_scale);
      fj["op_scale"] = scale;
    }
    out.record[fit.framework] = fj;
  }
  return out;
}

}  // namespace ftax
