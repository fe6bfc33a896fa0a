// Measuring many models so that one model's failure never touches another's measurements.
//
// A failed CUDA-graph capture can leave a process's CUDA state unusable: after one, every
// later capture and even plain TorchScript runs in that process may fail ("operation not
// permitted when stream is capturing"). So `ftax validate` never measures in its own
// process: it plans the visits (rounds, shuffled orders) and hands each model's visits of a
// round to a fresh worker process (model_runner.h, RunWorkerVisits), which stops at its first
// failure. The failed point is recorded with its reason and not visited again; a fresh worker
// takes the visits that remain. A worker that dies (a signal, out of memory) costs only the
// visit it was on. Rows are rewritten after every worker, so an interruption loses nothing,
// and a run resumed from its file (`--resume`) measures only the points it lacks.
//
// With R rounds every round visits the models in a new shuffled order, and each model's
// points in a new shuffled order, each visit timing budget/R; samples are pooled
// (measurement_rounds.h), so host drift over the run reaches every point alike.
//
//   WorkerLauncher spawn = [&](const WorkerRequest& w, const std::string& result) {
//     return RunChildProcess(...);      // 0, an exit code, or -signal
//   };
//   Status s = MeasureModelsIsolated(models, {4, 1}, spawn, progress, &writer);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/model_runner.h"
#include "calibrate/result_writer.h"
#include "common/status.h"

namespace ftax {

// Runs one worker on `request`; the worker appends its result lines to `result_path`.
// Returns the worker's exit status: 0, its exit code, minus the signal that ended it, or
// kWorkerTimedOut when the launcher killed it for running past its time limit.
inline constexpr int kWorkerTimedOut = -2000;
using WorkerLauncher = std::function<int(const WorkerRequest& request, const std::string& result_path)>;

struct SweepOptions {
  RoundOptions rounds;
  std::string scratch_dir;        // where result files of workers go (required)
  nlohmann::json kept_rows;       // rows of a resumed run: their points are not measured again
  nlohmann::json kept_failures;   // failures of a resumed run, kept as they were
};

// Measures every (model, framework, batch) point of `models` through workers started by
// `launch`, writing "rows" and "failures" to `out` as they come. Returns an error only when
// nothing can be planned (no models); failures of points are data, recorded in the file.
Status MeasureModelsIsolated(const std::vector<RunOptions>& models, const SweepOptions& options,
                             const WorkerLauncher& launch, const ProgressFn& progress, ResultWriter* out);

}  // namespace ftax
