// Views of prediction reports: one report rendered as a table, JSON or CSV; two reports
// (a what-if or `ftax compare`) rendered side by side with deltas; and a latency-vs-batch
// plot drawn by gnuplot. Compute once, render many: views never predict anything.
#pragma once

#include <string>

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

// Side by side: rows of `a` and `b` paired in order (same sweep shape).
std::string PairedTable(const PredictionReport& a, const PredictionReport& b, const std::string& label_a,
                        const std::string& label_b);
nlohmann::json PairedJson(const PredictionReport& a, const PredictionReport& b,
                          const std::string& label_a, const std::string& label_b);

// Latency, framework and compute terms against batch per framework/precision, with the
// crossover marked; writes `path` (.svg or .png) through gnuplot.
Status PlotPrediction(const PredictionReport& r, const std::string& title, const std::string& path);

}  // namespace ftax::cli
