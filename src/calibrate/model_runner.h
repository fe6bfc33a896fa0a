// Real runs of a TorchScript model on a CUDA device, measured as `ftax validate` reports
// them: per point (framework, batch) the host latency per iteration with synchronization
// (median, p10, p90) after warm-up, CUDA-event time, and CUPTI kernel records of a few
// iterations (kernels per iteration, kernel time, time per kernel name). Frameworks: the
// TorchScript interpreter ("torchscript") and the same module captured once and replayed
// as a CUDA graph ("cuda-graph"). Rows are appended to a ResultWriter as they are measured,
// in the format of docs/validation.md ("File formats"). Several models are measured in one
// sweep over all their points; with rounds > 1 the points are visited in shuffled rounds and
// their samples pooled (calibrate/measurement_rounds.h), so host drift over the run reaches
// every point alike.
//
//   RunOptions o; o.model_path = "bert-base.fp16.pt"; o.batches = {1, 8, 64};
//   Status s = MeasureModels({o}, RoundOptions{}, progress, &writer);   // CUDA builds only
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/bench.h"
#include "calibrate/result_writer.h"
#include "common/status.h"
#include "predictor/framework.h"

namespace ftax {

struct ModelInput {
  std::vector<int64_t> shape;  // dim 0 is the batch dim, replaced per point
  std::string dtype;           // "int64", "float16", "float32", ...
};

struct RunOptions {
  std::string model_path;
  std::string model_name;  // reported in rows
  std::string arch;        // arch spec reported in rows (used by the comparison)
  std::string precision = "fp32";
  int64_t seq = 0;         // reported in rows
  std::vector<ModelInput> inputs;
  std::vector<Framework> frameworks = {Framework::kTorchscript, Framework::kCudaGraph};
  std::vector<int64_t> batches = {1};
  double budget_s = 1.0;  // timing budget per point
  int device = 0;
};

// Reads NAME.PRECISION.json written by scripts/export_torchscript.py beside a model file.
Status ReadModelMeta(const std::string& meta_path, RunOptions* options);

struct RoundOptions {
  int rounds = 1;      // visits per point; each times budget_s / rounds
  uint64_t seed = 1;   // of the shuffled visit orders
};

// Loads every model first (an unloadable file is an error naming it, before anything is
// timed), then measures every (model, framework, batch) point; "rows" in `out` is rewritten
// after every point (one round) or every round (several).
Status MeasureModels(const std::vector<RunOptions>& models, const RoundOptions& rounds,
                     const ProgressFn& progress, ResultWriter* out);

}  // namespace ftax
