// Refining framework (CPU-side) costs from real model runs.
//
// Dispatch costs come from microbenchmark chains of tiny ops, but a real model's ops cost
// more on the CPU: more arguments to parse, Hugging Face glue code around each call, hooks.
// RefineFrameworkCosts scales a framework's per-dispatch and per-module costs by one factor,
// the median over framework-bound measured rows of
//     (measured framework time - call cost - launches) / (predicted framework time - call cost - launches),
// where measured framework time = (measured latency - predicted GPU tail) /
// profiler_overhead_factor (a row field, default 1; see below), brought to the profile's CPU
// speed where the row and the profile both read it (a Python eager row's cpu_gauge_us, a
// TorchScript row's host_probe_us: divided by their ratio). A refinement then measures what
// models cost over the bench, not the CPU state the runs met: host run aw's calibration models
// ran under TorchScript at a probe 1.44x the bench's fast state and refined x1.285 without it
// (x1.061 with it). The GPU tail is the kernel
// work the prediction leaves after the last dispatch: in a framework-bound run the kernels
// run under the CPU's dispatches, so subtracting all kernel time (as before 2026-11-22)
// under-stated the CPU side by up to the kernel time and the refined costs came out low.
// Rows are framework-bound when (latency - kernel time) exceeds the kernel time. Its standard
// error comes from the spread of those ratios (1.4826 x their median absolute deviation /
// sqrt(rows); unknown, NaN, with one row). "Launches" is the prediction's CPU time for kernel
// launches beyond each dispatch's first (PredictionPoint::launch_ms): a driver call's cost,
// which the bench measures as such and the refit leaves unscaled.
// CUDA-graph rows are refined too, every row: a replay's framework time is the latency its
// kernels do not fill (latency - measured kernel time: the launch and the GPU's gaps between
// nodes), and the factor scales replay_per_node_us and node_gap_us. The chains of the bench
// over-state that per-node cost of real models' graphs by about half (validation/campaigns.md).
// The result is honest only when checked on models it was not fitted on: `ftax validate
// --refine leave-one-model-out` does that.
//
// Measured rows are the objects of `measured["rows"]` (format of ftax validate): model, arch
// (spec, predicted with the torch flavor), framework, precision, batch, seq (optional),
// latency_ms.median, kernel_ms, and optionally profiler_overhead_factor (> 0): how much slower
// the CPU side ran than without a profiler, for rows read from profiler traces
// (ReadKinetoTrace), whose step times include the profiler's own work.
//
//   RefitReport rep;
//   Expected<HostProfile> p = RefineFrameworkCosts(profile, rows_json, {}, &rep);
//   RecordRefinement(rep, {"runs.json"}, json::object(), &p.value());
#pragma once

#include <cmath>
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
  std::set<std::string> only_models;     // when not empty, only rows of these models are used
  int min_rows = 3;                      // a framework with fewer usable rows is not refined
};

// How the refit sees one measured row: its measured and predicted framework time, and
// whether it can enter the median (and if not, why).
struct FrameworkTimeRow {
  int index = 0;  // position in measured["rows"]
  std::string model, framework;
  bool usable = false;
  std::string reason;  // why the row is not usable (empty when usable)
  double kernel_ms = std::nan("");
  // CPU-side time of the run: (latency - predicted GPU tail) / profiler_overhead_factor. Rows
  // are framework-bound when (latency - kernel time) exceeds the kernel time.
  double measured_ms = std::nan("");
  double gpu_tail_ms = 0;  // predicted GPU work after the last dispatch
  double predicted_ms = std::nan("");  // predicted framework time with the profile given
  double call_ms = 0;                  // the framework's call_us, in ms
  double launch_ms = 0;                // predicted CPU time of extra kernel launches (unscaled)
  double ratio = std::nan("");  // (measured - call - launch) / (predicted - call - launch)
  // The row's CPU gauge (Python eager) or host probe (TorchScript) over the profile's, by
  // which its measured CPU time was divided (1: not read, or a graph replay).
  double cpu_speed_factor = 1;
};

struct RefitReport {
  struct Entry {
    std::string framework;
    int rows = 0;
    double scale = 1, scale_stderr = 0;
    // The scale was found for costs that priced ops by their type (FrameworkParams::op_us):
    // it applies only to a profile that prices this framework the same way.
    bool op_costs = false;
    // The scale was found for a profile that priced an op's further kernel launches at the
    // bench's timed launch (gpu.launch_us), not at libtorch-eager's kernel less view dispatch:
    // it applies only to a profile that prices them the same way (graph frameworks, which pay
    // no launches, are never marked).
    bool timed_launch = false;
  };
  std::vector<Entry> frameworks;    // frameworks that were refined
  // Relative per-op scales (FrameworkParams::op_scale, calibrate/op_scale_fit.h) by framework:
  // in a prior, per op type the median over the profiles whose refinement fitted them
  // (provenance.refinement_op_scale), `profiles` counting those.
  struct OpScales {
    int profiles = 0;
    std::map<std::string, double> scale;
  };
  std::map<std::string, OpScales> op_scales;
  // In a prior: the frameworks' scales left out, each with why (one profile alone recorded it).
  std::vector<std::string> not_carried;
  std::vector<FrameworkTimeRow> rows;  // every measured row, against the input profile
};

// Measured against predicted framework time, row by row; a row that cannot be compared says
// why in `reason` (not framework-bound, no arch spec, unknown precision, ...).
// Fails only when `measured` is not an object with an array "rows".
Expected<std::vector<FrameworkTimeRow>> CompareFrameworkTime(const HostProfile& profile,
                                                             const nlohmann::json& measured,
                                                             const RefitOptions& options);

Expected<HostProfile> RefineFrameworkCosts(const HostProfile& profile, const nlohmann::json& measured,
                                           const RefitOptions& options, RefitReport* report);

// Scales one framework's costs by `scale` (± `scale_stderr`, NaN: unknown): dispatch_us and
// module_us, and for cuda-graph replay_per_node_us and node_gap_us; launches stay as they are.
void ScaleFrameworkCosts(const std::string& framework, double scale, double scale_stderr,
                         HostProfile* profile);

// A prior for a host without model runs: per framework, the median of the scales that
// earlier refinements recorded (provenance "refinement" of refined profiles of other hosts),
// with the standard error from their spread, as RefitReport entries whose `rows` count the
// profiles (a framework missing from some profiles takes the median of those that have it).
// Fails with fewer than two profiles, or, naming it, when a profile holds no refinement or
// one that was itself a prior.
// With `gpu` (the target's host.gpu), the cuda-graph scale, a property of the GPU and its
// driver, is taken from the profiles of that GPU only when at least two have one; the CPU-side
// frameworks' scales come from every profile. Python eager under no_grad, where no profile
// refined it, takes the scales of Python eager under inference_mode (the same Python code).
// A profile refined more than once (e.g. on its own runs after a prior scaled it) counts with
// the product of its refinements of each framework it last refined. Scales of profiles that
// price a framework's ops by type and of profiles that price them by class are kept apart
// (two entries of one framework, Entry::op_costs). A scale that one profile alone recorded is
// not carried (RefitReport::not_carried says so): it has no spread. Relative per-op scales
// that a refinement fitted (provenance.refinement_op_scale.FRAMEWORK.op_scale) are carried per
// op type as the median over the profiles that have them (RefitReport::op_scales).
Expected<RefitReport> PriorFromRefinedProfiles(const std::vector<HostProfile>& refined,
                                               const std::vector<std::string>& names,
                                               const std::string& gpu = "");

// PriorFromRefinedProfiles of the profiles in these files (errors name the file); `loaded`,
// where given, receives the profiles as read.
Expected<RefitReport> LoadPrior(const std::vector<std::string>& refined_profile_paths,
                                const std::string& gpu = "", std::vector<HostProfile>* loaded = nullptr);

// ScaleFrameworkCosts for every framework of `report` whose scale was found for costs of
// the kind `profile` has (per-op costs or per-class ones; Entry::op_costs), and the report's
// relative per-op scales set on each framework the profile prices per op type. Returns the
// entries applied; each one left out adds a line to `skipped` saying why.
RefitReport ApplyScales(const RefitReport& report, HostProfile* profile,
                        std::vector<std::string>* skipped = nullptr);

// Writes the refinement into profile->provenance: "refined_on" (UTC now), "refined_with"
// (`sources`), "refinement" (per framework: dispatch_scale, stderr, rows),
// "refinement_method", "refinement_op_scale" where the report carries op scales (per
// framework {op_scale, profiles}), and every key of `extra` (whose names must begin with
// "refine").
// Provenance keys beginning with "refine" from an earlier refinement are first moved, as one
// object, to the end of the array "previous_refinements", so that refining a refined profile
// keeps the history of both scales.
void RecordRefinement(const RefitReport& report, const nlohmann::json& sources,
                      const nlohmann::json& extra, HostProfile* profile);

}  // namespace ftax
