// Relative per-op scales of a framework priced per op type, learned from whole-model runs.
//
// TorchScript and Python eager price each op by the bench's chains of that op alone. Whole
// models do not pay those costs in the same proportions: on host run av (H100) the traced
// calibration models' convolutions, batch norms, ReLUs and pools cost 0.88 of their chain
// price relative to the rest, linear and matmul 0.74, and the ops priced by class (fused
// element-wise groups, views, launches, the call) 1.56. FitOpScales measures that shape on the
// CPU-bound rows of a validation report: each row's predicted CPU time is split into five
// groups of op types (OpScaleGroups, then "the rest"), and the measured time is fitted as a
// weighted sum of the groups by least squares on relative errors, each weight pulled toward
// one common scale s0 (the median of measured over predicted; ridge). The weights over s0 are
// the relative scales: level-free, so they carry to another host whose bench set the level
// (FrameworkParams::op_scale, applied by the predictor; `ftax calibrate --prior` carries them).
// Fit on calibration models only: the scales are as honest as the models they were not fitted
// on.
//
//   Expected<ValidationReport> rep = CompareMeasurements(calibration_rows, profile, opt);
//   for (const OpScaleFit& f : FitOpScales(rep->rows, profile))
//     if (f.fitted()) profile.frameworks[f.framework].op_scale = f.op_scale;
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/validation_report.h"
#include "predictor/host_profile.h"

namespace ftax {

struct OpScaleGroup {
  std::string name;               // "conv, batch norm, relu, pooling"
  std::vector<std::string> ops;   // op types (DispatchCostKey) it holds
};

// The groups of the fit, in order; every other CPU cost is "the rest" (op_scale key "*").
const std::vector<OpScaleGroup>& OpScaleGroups();

struct OpScaleFit {
  std::string framework;
  int rows = 0;                       // CPU-bound rows fitted
  std::string why_not;                // empty when fitted
  double common_scale = std::nan(""); // s0: median measured / predicted CPU time
  std::vector<double> group_scale;    // per OpScaleGroups() entry, then the rest; relative to s0
  std::map<std::string, double> op_scale;  // the same by op type, "*" for the rest
  // Median |error| of the fitted rows priced at s0 alone, and with the scales (times s0).
  double median_abs_error_before = std::nan(""), median_abs_error_after = std::nan("");
  bool fitted() const { return why_not.empty(); }
};

struct OpScaleOptions {
  int min_rows = 8;      // fewer CPU-bound rows: no fit
  double ridge = 0.5;    // pull of each weight toward s0, in units of summed squared relative error
  // A row is CPU-bound when its predicted GPU time is under this share of its latency.
  double max_compute_share = 0.5;
  // Rows predicted at their own CPU speed whose reading is more than this far from the
  // profile's, either way, are left out (as the dispatch scale's refit leaves them).
  double max_cpu_speed_factor = 2.0;
};

// One entry per framework of `rows` that the profile prices per op type (op_us), fitted or
// saying why not. Rows are predicted with `profile` (ValidationRow::predicted's
// op_framework_ms and framework_ms); a row's measured time is brought to the profile's CPU
// speed by its cpu_speed_factor.
std::vector<OpScaleFit> FitOpScales(const std::vector<ValidationRow>& rows, const HostProfile& profile,
                                    const OpScaleOptions& options = {});

// Op scales `then` applied on top of `first` (each map: op type -> scale, "*" for every
// other op): per op type the product of each map's scale for it (its own, else its "*").
std::map<std::string, double> ComposeOpScales(const std::map<std::string, double>& first,
                                              const std::map<std::string, double>& then);

// {"rows", "common_scale", "groups": {name: scale}, "op_scale": {op: scale},
//  "median_abs_error_before", "median_abs_error_after"} (or {"rows", "not_fitted": why}).
nlohmann::json OpScaleFitToJson(const OpScaleFit& fit);

// "torchscript: op scales from 39 rows: conv, batch norm, relu, pooling x0.88, ...; median
// |error| 17.0% -> 12.1%" (or why not).
std::string DescribeOpScaleFit(const OpScaleFit& fit);

// What `ftax validate --refined-profile` learns of op scales from a host's runs.
struct OpScaleRefinement {
  std::vector<std::string> lines;  // DescribeOpScaleFit per framework, or why none
  nlohmann::json record = nlohmann::json::object();  // framework -> OpScaleFitToJson (+ "op_scale" applied)
};

// Fits op scales on the rows of `measured` (a validation run file's JSON) whose model is one
// of `models` (every row when empty), each predicted with `profile` from its arch spec, or
// from its trace when `predict_from_file`, at the CPU speed it ran at, and composes the
// fitted scales into `refined`'s frameworks on top of the ones the profile already had.
OpScaleRefinement RefineOpScales(const nlohmann::json& measured, const std::vector<std::string>& models,
                                 const HostProfile& profile, bool predict_from_file, HostProfile* refined);

}  // namespace ftax
