// Refining framework (CPU-side) costs from real model runs.
//
// Dispatch costs come from microbenchmark chains of tiny ops, but a real model's ops cost
// more on the CPU: more arguments to parse, Hugging Face glue code around each call, hooks.
// RefineFrameworkCosts scales a framework's per-dispatch and per-module costs by one factor,
// the median over framework-bound measured rows of
//     (measured framework time - call cost) / (predicted framework time - call cost),
// where measured framework time = measured latency - CUPTI kernel time. Its standard error
// comes from the spread of those ratios. The result is honest only when checked on models
// it was not fitted on: `ftax validate --refine leave-one-model-out` does that.
//
//   RefitReport rep;
//   Expected<HostProfile> p = RefineFrameworkCosts(profile, rows_json, {}, &rep);
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "predictor/host_profile.h"

namespace ftax {

struct RefitOptions {
  std::set<std::string> exclude_models;  // rows of these models are not used
  int min_rows = 3;
};

struct RefitReport {
  struct Entry {
    std::string framework;
    int rows = 0;
    double scale = 1, scale_stderr = 0;
  };
  std::vector<Entry> frameworks;
};

Expected<HostProfile> RefineFrameworkCosts(const HostProfile& profile, const nlohmann::json& measured,
                                           const RefitOptions& options, RefitReport* report);

}  // namespace ftax
