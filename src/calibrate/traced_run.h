// A traced run: a PyTorch profiler (Kineto) chrome trace plus what the trace cannot know
// about the run it recorded (model name, arch spec, framework, precision, batch, sequence
// length), and the measured row the two make together (format of ftax validate).
//
// Metadata come from the command line (`ftax validate --trace`, `ftax calibrate
// --from-trace`) or from a manifest file listing several traces:
//
//   {"traces": [
//     {"path": "b1.trace.json", "name": "bert-base", "arch": "bert:layers=12,hidden=768",
//      "batch": 1, "seq": 128, "precision": "fp16", "framework": "pytorch-eager"}, ...]}
//
// (or the bare array). Required: path, arch, batch, precision. Optional: name (default: the
// path), seq (sequence models), framework (default: the caller's). Unknown keys are errors,
// so that a misspelt key never drops a value silently; a relative path is relative to the
// manifest's folder.
//
//   Expected<std::vector<TracedRun>> runs = LoadTraceManifest("traces.json", "pytorch-eager");
//   Expected<nlohmann::json> row = MeasuredRowFromTrace(runs.value()[0]);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ftax {

struct TracedRun {
  std::string path;
  std::string name;            // model name; empty: the path
  std::string arch;            // arch spec of the traced model
  std::string framework;       // a known framework name
  std::string precision;       // fp16, fp32 or bf16
  int64_t batch = 0;           // >= 1
  std::optional<int64_t> seq;  // >= 1, sequence models
};

// Checks one run's metadata: path and arch non-empty, the arch spec builds at this batch and
// seq, a known framework, precision fp16/fp32/bf16, batch and seq >= 1. Errors begin with
// `where` and name the field ("traces.json: traces[1]: batch: must be an integer >= 1").
Status ValidateTracedRun(const TracedRun& run, const std::string& where);

// One run from a JSON object as in a manifest; `framework` is used when the object names
// none. Errors as ValidateTracedRun.
Expected<TracedRun> TracedRunFromJson(const nlohmann::json& j, const std::string& where,
                                      const std::string& default_framework);

// Reads a manifest; every entry is validated, the first error is returned.
Expected<std::vector<TracedRun>> LoadTraceManifest(const std::string& path,
                                                   const std::string& default_framework);

// ReadKinetoTrace(run.path) with the run's metadata added: model, arch, framework, precision,
// batch, seq (null when not given). Errors of a bad trace name its file.
Expected<nlohmann::json> MeasuredRowFromTrace(const TracedRun& run);

}  // namespace ftax
