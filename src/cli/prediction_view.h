// Views of prediction reports: one report rendered as a table, JSON or CSV; a what-if
// (`predict --whatif`) rendered beside its base with deltas; several models (`ftax compare`)
// side by side with deltas against the first; many arch specs (`predict --specs`) as one row
// per spec, framework, precision and batch; and a latency-vs-batch plot drawn by gnuplot.
// Compute once, render many: views never predict anything.
//
//   ReportSide base{"base", "bert:layers=12", "h200", {}, report};
//   ReportSide alt{"whatif", "bert:layers=12", "h200", {{"seq", "256"}}, aligned_report};
//   std::cout << PairedTable(base, alt);                 // or PairedJson / PairedCsv
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "predictor/predict.h"

namespace ftax::cli {

struct WidthHeadroom {
  Framework framework;
  DType precision;
  int64_t batch = 1;
  double factor = 1;  // widest width multiple within `tolerance` of the base latency
  double tolerance_pct = 5;
};

nlohmann::json PredictionToJson(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom);
std::string PredictionTable(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom);
std::string PredictionCsv(const PredictionReport& r);
// One line for the top of any rendering when the report priced ops ftax does not know (op
// types and node counts); empty when there are none.
std::string UnpricedWarning(const PredictionReport& r);
// --strict: InvalidInput naming `what` and the op types ftax cannot price, with their node
// counts; Ok when there are none. kUnpricedHint says what happens without --strict.
Status RefuseUnpriced(const std::string& what, const PredictionReport& r);
extern const char kUnpricedHint[];

// One side of a side-by-side view: a report and what it was predicted for.
struct ReportSide {
  std::string label;    // column label: "base", "whatif", "A", "B", ...
  std::string model;    // what was predicted: a model file or an arch spec
  std::string profile;  // the host profile, as the user named it
  // The what-if knobs this side changed, in the order given ({"seq", "256"}); empty for a
  // base or a compared model.
  std::vector<std::pair<std::string, std::string>> changed;
  PredictionReport report;
};

// What a side's rows are labelled with: every knob it changed and its profile
// ("seq=256,framework=cuda-graph on h200"), or "LABEL on PROFILE" when it changed none.
std::string RowLabel(const ReportSide& side);

// The profile a prediction used, for JSON: name as given, resolved path, GPU and fit date.
nlohmann::json ProfileJson(const std::string& name_or_path, const HostProfile& profile);

// A what-if beside its base: point i of `b` is the what-if of point i of `a` (the caller
// aligns them), so a changed framework, precision or batch shows in `b`'s own columns and
// every row of `b` carries RowLabel(b).
std::string PairedTable(const ReportSide& a, const ReportSide& b);
nlohmann::json PairedJson(const ReportSide& a, const ReportSide& b);
std::string PairedCsv(const ReportSide& a, const ReportSide& b);

// Two or more models predicted with one request (so point i is the same framework, precision
// and batch in every report), side by side with the delta of each against the first.
std::string ComparisonTable(const std::vector<ReportSide>& sides);
nlohmann::json ComparisonJson(const std::vector<ReportSide>& sides);
// One row per model and point, with the delta against the first model's point.
std::string ComparisonCsv(const std::vector<ReportSide>& sides);

// One arch spec of a spec list (`predict --specs`): its line number in the list and its report.
struct SpecReport {
  int line = 0;
  std::string spec;
  PredictionReport report;
};

// One row per spec, framework, precision and batch.
std::string SpecsTable(const std::vector<SpecReport>& specs);
nlohmann::json SpecsJson(const std::vector<SpecReport>& specs);
std::string SpecsCsv(const std::vector<SpecReport>& specs);

// Latency, framework and compute terms against batch per framework/precision, with the
// crossover marked; writes `path` (.svg, .png or .pdf) through gnuplot (cli/plot_script.h).
Status PlotPrediction(const PredictionReport& r, const std::string& title, const std::string& path);

}  // namespace ftax::cli
