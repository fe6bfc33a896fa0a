// Validation: predictions put beside real measurements.
//
// Measured rows (from `ftax validate MODEL.pt` on a CUDA host, or from
// scripts/validate_eager.py for Python eager) name a model's arch spec (or its TorchScript
// file and input shapes), framework, precision and batch, with the measured latency spread,
// kernel time and kernels by name. CompareMeasurements opens each row's model as every front
// end does (graph/open_model.h: at the row's batch, each file loaded once), predicts it with a
// host profile and reports per row the error, whether the prediction falls inside the measured
// p10..p90, whether the bound agrees, and per kernel class the predicted and measured kernel
// time; then per framework the share of rows within tolerance, and per model the measured and
// predicted crossover batch. Each miss carries its likeliest cause (calibrate/miss_cause.h).
//
//   Expected<ValidationReport> r = CompareMeasurements(rows_json, profile, {});
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/miss_cause.h"
#include "common/status.h"
#include "predictor/host_profile.h"
#include "predictor/predict.h"

namespace ftax {

struct CompareOptions {
  int interval_samples = 64;
  double tolerance_pct = 10;  // cuda-graph target; eager targets use tolerance_eager_pct
  double tolerance_eager_pct = 15;
  // Predict from the row's TorchScript file ("source" + "inputs") even when it names an arch
  // spec; rows without an arch spec always are.
  bool predict_from_file = false;
  // Predict each row at the CPU speed it was measured at (`ftax validate --cpu-speed row`; off:
  // every row at the profile's speed, as `ftax predict` does): where a Python eager row carries
  // the CPU gauge read while it ran ("cpu_gauge_us"), or a TorchScript or CUDA-graph row the
  // host probe ("host_probe_us", calibrate/host_probe.h), and the profile the reading it is
  // priced at, the framework's CPU-side costs are scaled by their ratio (predictor/cpu_speed.h).
  bool at_row_cpu_speed = false;
  // Predict every row at the profile's typical CPU speed instead (`--cpu-speed typical`): the
  // bench's median reading of the gauge or the probe (HostProfile::cpu_gauge_typical_us,
  // host_probe_typical_us) over its fast state, as `ftax predict --whatif cpu=typical` does.
  bool at_typical_cpu_speed = false;
};

struct ValidationRow {
  std::string model, arch, framework, precision;
  int64_t batch = 1;
  int64_t seq = 0;
  double measured_ms = 0, measured_p10 = 0, measured_p90 = 0;
  double measured_kernel_ms = 0, measured_kernels = 0, measured_framework_ms = 0;
  double measured_memsets = 0;  // of measured_kernels, the memset records (a call's)
  // GPU span of one iteration (first kernel start to last kernel end; < 0: not recorded, runs
  // before 2026-11-23): span - kernel time is the GPU's idle time between kernels, latency -
  // span the launch and synchronize around them.
  double measured_gpu_span_ms = -1;
  // torch.compile's reduce-overhead: the wrapper's CPU time before the replay, measured with
  // the replay marked (validate_eager.py's before_replay_ms; < 0: not recorded) and predicted
  // (the call and the modules' guards; < 0: the profile reads the call the older way).
  double measured_before_replay_ms = -1, predicted_before_replay_ms = -1;
  std::string measured_bound;  // "compute" when CUPTI kernel time exceeds latency - kernel time
  std::string predicted_observable_bound;  // the same rule on the prediction
  std::array<double, kNumKernelClasses> measured_class_ms{};
  double unclassified_ms = 0;
  PredictionPoint predicted;
  double error_pct = 0;       // (predicted - measured) / measured
  bool within_tolerance = false;
  bool inside_spread = false;  // predicted inside [p10, p90] of the measurement
  bool bound_agrees = false;
  std::vector<double> visit_medians_ms;  // one per visit (rounds) or pass (merged passes)
  // The row's CPU gauge over the profile's, by which its CPU-side costs were scaled (1: not
  // scaled; CompareOptions::at_row_cpu_speed).
  double cpu_speed_factor = 1;
  std::optional<MissCause> miss;         // why, for a point neither within nor inside p10..p90
};

struct FrameworkSummary {
  std::string framework;
  int rows = 0, within = 0, inside = 0, within_or_inside = 0, bound_agree = 0;
  double median_abs_error_pct = 0;
  double tolerance_pct = 0;
  std::map<std::string, int> miss_causes;  // MissCause::kind -> rows
  std::array<double, kNumKernelClasses> predicted_class_ms{}, measured_class_ms{};
};

struct CrossoverCheck {
  std::string model, framework, precision;
  std::optional<int64_t> measured, predicted;  // first compute-bound batch on the grid
  int64_t max_batch = 0;
  bool agrees = false;  // within one power of two (or both absent)
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<FrameworkSummary> frameworks;
  std::vector<CrossoverCheck> crossovers;
  std::vector<std::string> notes;
  std::vector<std::string> skipped;  // rows that could not be predicted, with the reason
};

// Checks the values of one measured row before anything is predicted from it; errors name
// the field: framework and precision strings; batch an integer in 1..2^31; seq (if given) in
// 0..2^31; latency_ms {median, p10, p90} finite, median > 0, 0 <= p10 <= median <= p90, at
// most 1e9 ms; kernel_ms, kernels_per_iter, gpu_span_ms finite and >= 0 (or null);
// visit_medians_ms / pass_medians_ms entries finite and > 0 (or null); kernels entries
// [count, total_us, ...] with finite, non-negative numbers (docs/profile-format.md).
Status CheckMeasuredRow(const nlohmann::json& row);

// The GPU time of one iteration of a measured row (0 when it has none). Runs that write
// kernel_sum_ms give kernel_ms as the time at least one kernel ran; older runs wrote the
// kernels' summed durations, and where those overlapped (a sum over the row's GPU span, or
// over its latency: the per-group kernels of wav2vec2's and WavLM's positional convolution)
// the GPU was busy for at most that span or latency, which is returned instead.
double MeasuredKernelMs(const nlohmann::json& row);

Expected<ValidationReport> CompareMeasurements(const nlohmann::json& measured,
                                               const HostProfile& profile,
                                               const CompareOptions& options);

// (Re)computes the per-framework summaries and crossover checks from report->rows.
void SummarizeReport(ValidationReport* report, const CompareOptions& options);

nlohmann::json ValidationReportToJson(const ValidationReport& r);

}  // namespace ftax
