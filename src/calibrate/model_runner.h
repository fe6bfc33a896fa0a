// Real runs of a TorchScript model on a CUDA device, measured as `ftax validate` reports
// them: per point (framework, batch) the host latency per iteration with synchronization
// after warm-up, CUDA-event time, and CUPTI kernel records of a few iterations of their own
// (kernels per iteration, kernel time, time per kernel name). Latencies are timed with no
// profiler attached: CUPTI records only in the separate kernel pass, and is detached again
// before the next timing. Frameworks: the TorchScript interpreter ("torchscript") and the
// same module captured once and replayed as a CUDA graph ("cuda-graph").
//
// A worker process measures the visits of one model that a WorkerRequest lists, in order,
// and appends one JSON line per visit to a result file as it goes; it stops at the first
// failure (a failed CUDA-graph capture can leave the process's CUDA state unusable), so the
// process that launched it (calibrate/isolated_sweep.h) can start a fresh one for the rest.
//
//   WorkerRequest w; w.model.model_path = "bert-base.fp16.pt"; w.visits = {{0, kCudaGraph, 8, true, 5}};
//   Status s = RunWorkerVisits(w, "/tmp/visits.jsonl", progress);   // CUDA builds only
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

// One visit of one point: which framework and batch, whether this visit also records the
// point's CUPTI kernels (its first), and its warm-up iterations.
struct VisitRequest {
  size_t point = 0;  // the caller's index of the point, echoed in the result line
  Framework framework = Framework::kTorchscript;
  int64_t batch = 1;
  bool record_kernels = false;
  int warmup = 5;
};

// What one worker process measures: visits of one model, in order.
struct WorkerRequest {
  RunOptions model;
  int rounds = 1;      // the run's rounds: each visit times model.budget_s / rounds
  bool probe = false;  // time the host probe before each visit
  std::vector<VisitRequest> visits;
};

nlohmann::json WorkerRequestToJson(const WorkerRequest& request);
Expected<WorkerRequest> WorkerRequestFromJson(const nlohmann::json& j);

// Measures the request's visits in this process and appends one line per visit to
// `result_path` (JSON Lines, flushed per line): {"visit": k, "point", "host_ms", "event_ms",
// "probe_us", and with record_kernels "kernels", "kernels_per_iter", "kernel_ms",
// "gpu_span_ms"}, or {"visit": k, "point", "error", "error_detail"} after which it stops. A
// model that cannot be loaded writes {"load_error": ...}. Needs LibTorch with CUDA.
Status RunWorkerVisits(const WorkerRequest& request, const std::string& result_path,
                       const ProgressFn& progress);

}  // namespace ftax
