// `ftax calibrate --from-trace`: refines the CPU-side (framework) costs of an existing host
// profile from PyTorch profiler traces of real runs. Needs no Ceres: the refinement is one
// median scale per framework (src/calibrate/framework_refit.h), not a fit.
//
// Exit codes: 0 profile written; 1 too few usable (framework-bound) traces for a framework
// named by the traces, nothing written; 2 bad trace file, metadata, manifest, profile or option.
#pragma once

#include <string>
#include <vector>

namespace ftax::cli {

struct FromTraceOptions {
  std::vector<std::string> traces;          // --from-trace 'FILE;arch=...;batch=N;precision=P[;...]'
  std::vector<std::string> manifests;       // --trace-manifest FILE.json
  std::string profile;                      // --profile: the profile to refine
  std::string output;                       // -o: the refined profile
  std::string framework = "pytorch-eager";  // for traces that name none
  double profiler_overhead_factor = 1;      // traced / unprofiled framework time
  int min_rows = 3;                         // usable traces needed per framework
  std::string format = "text";              // text, json or markdown
};

// The help text of the trace options (also in docs/calibration.md).
extern const char* const kFromTraceHelp;

int RunCalibrateFromTrace(const FromTraceOptions& options);

}  // namespace ftax::cli
