// The gnuplot scripts behind `predict --plot` and `validate --plot`: what each figure shows
// and how a reader tells its series apart. Building a script is pure (no gnuplot, no files);
// drawing it is RunGnuplot's job (gnuplot_runner.h).
//
// One convention in every figure: a framework is a colour, a precision a dash type (and, for
// measured points, a marker), and the figure has one key, outside the plotted data, that
// lists each colour, each dash type and each kind of curve once, instead of one entry per
// curve (4 frameworks x 2 precisions x 3 curves would be 24). Labels are shortened and
// crossovers at nearby batches share one label, so that no text is drawn over other text.
//
//   GnuplotJob job = PredictionPlotJob(report, "bert-base on H200");
//   Status s = RunGnuplot(job.script, job.data, "latency.pdf", job.size);
#pragma once

#include <string>

#include "calibrate/validation_report.h"
#include "cli/gnuplot_runner.h"
#include "common/status.h"
#include "predictor/predict.h"

namespace ftax::cli {

// A script body for RunGnuplot, the data it reads (kGnuplotData) and the picture's size.
struct GnuplotJob {
  std::string script;
  std::string data;
  PlotSize size;
};

// Latency (with its p10..p90 interval as bars), framework overhead and GPU compute against
// batch, one colour per framework and one dash type per precision, crossovers marked.
GnuplotJob PredictionPlotJob(const PredictionReport& report, const std::string& title);

// Measured (median, p10..p90 bars) and predicted latency (line, interval shaded) against
// batch, one panel per model and precision, and beside the panels one key for all of them.
// InvalidInput when there are no rows or more than 64 panels.
Expected<GnuplotJob> ValidationPlotJob(const ValidationReport& report);

}  // namespace ftax::cli
