// `ftax calibrate MEASUREMENTS... -o PROFILE`: fits a host profile from measurement files.
// `ftax calibrate --from-trace ... --profile IN -o OUT` refines one from profiler traces
// instead (cli/calibrate_from_trace.h).
//
// Exit codes: 0 profile written (classes that fail a quality gate are written as not trusted,
// with a warning); 1 the profile could not be written; 2 bad measurements or options; 3 this
// build has no Ceres Solver.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "calibrate/cpu_gauge.h"
#include "calibrate/framework_refit.h"
#include "calibrate/measurements.h"
#include "calibrate/op_mix.h"
#include "calibrate/profile_fit.h"
#include "cli/calibrate_from_trace.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/source_checkout.h"
#include "common/clock.h"
#include "common/file_io.h"

namespace ftax::cli {
namespace {

using json = nlohmann::json;

struct CalibrateOptions {
  std::vector<std::string> measurement_files;
  std::string output;
  FitOptions fit;
  bool force = false;
  bool verbose = false;
  std::string format = "text";  // text, json or markdown (cli/output_format.h)
  FromTraceOptions trace;  // --from-trace / --trace-manifest: refine an existing profile
  std::vector<std::string> prior;  // refined profiles of other hosts: scale framework costs
};

std::string ParamText(const Param& p, int precision) {
  if (!p.known()) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(precision);
  s << p.value;
  if (std::isfinite(p.std_error)) s << " ± " << p.std_error;
  return s.str();
}

std::string Num(double v, int precision) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(precision);
  s << v;
  return s.str();
}

// Pads to `width` display columns (± and ² count as one).
std::string Pad(const std::string& s, size_t width) {
  size_t cols = 0;
  for (unsigned char ch : s) cols += (ch & 0xC0) != 0x80;
  return cols >= width ? s + " " : s + std::string(width - cols, ' ');
}

void PrintTable(const Calibration& c, std::ostream& out) {
  out << "GPU kernel classes (" << c.profile.gpu.num_sms << " SMs)\n";
  out << Pad("class", 17) << Pad("dtype", 6) << Pad("points", 7) << Pad("tile", 8)
      << Pad("floor_us", 16) << Pad("rate_TFLOP/s", 18) << Pad("bandwidth_GB/s", 18)
      << Pad("R²(log)", 8) << Pad("err%", 6) << Pad("holdout err% med/p90", 27)
      << "anchors: model / leave-one-out err% med\n";
  for (const KernelFit& k : c.kernels) {
    const KernelParams& p = k.params;
    const bool fitted = p.floor_us.known();
    out << Pad(KernelClassName(k.cls), 17) << Pad(DTypeName(k.dtype), 6)
        << Pad(std::to_string(p.points), 7)
        << Pad(fitted && IsComputeClass(k.cls)
                   ? std::to_string(p.tile_m) + "x" + std::to_string(p.tile_n) : "-", 8)
        << Pad(ParamText(p.floor_us, 2), 16) << Pad(ParamText(p.rate_tflops, 1), 18)
        << Pad(ParamText(p.bandwidth_gbps, 0), 18) << Pad(Num(p.r2, 3), 8)
        << Pad(Num(k.fit_error.median_abs_pct, 1), 6);
    std::string held = "-";
    if (k.holdout_error.points > 0)
      held = Num(k.holdout_error.median_abs_pct, 1) + " / " + Num(k.holdout_error.p90_abs_pct, 1) +
             " (" + std::to_string(k.holdout_error.points) + " pts)";
    out << Pad(held, 27);
    if (k.anchor_loo_error.points > 0)
      out << Num(k.anchor_model_error.median_abs_pct, 1) << " / "
          << Num(k.anchor_loo_error.median_abs_pct, 1) << " (" << k.anchor_loo_error.points << ")";
    else
      out << "-";
    out << "\n";
    for (const std::string& n : k.notes) out << "    note: " << n << "\n";
  }
  if (!c.frameworks.empty()) {
    out << "\nFrameworks (CPU side, µs)\n";
    out << Pad("framework", 16) << Pad("points", 7) << Pad("call_us", 16) << Pad("view", 14)
        << Pad("kernel", 14) << Pad("library", 14) << Pad("module", 14) << Pad("node_gap", 14)
        << Pad("R²", 7) << "err%\n";
    for (const FrameworkFit& f : c.frameworks) {
      const FrameworkParams& p = f.params;
      out << Pad(FrameworkName(f.framework), 16) << Pad(std::to_string(p.points), 7)
          << Pad(ParamText(p.call_us, 2), 16);
      for (int i = 0; i < kNumDispatchClasses; ++i) out << Pad(ParamText(p.dispatch_us[i], 2), 14);
      out << Pad(ParamText(p.module_us, 2), 14) << Pad(ParamText(p.node_gap_us, 2), 14)
          << Pad(Num(p.r2, 3), 7) << Num(f.fit_error.median_abs_pct, 1) << "\n";
      if (!p.op_us.empty()) {  // per-op costs, several to a line
        std::string line;
        for (const auto& [op, q] : p.op_us) {
          std::string item = op + " " + ParamText(q, 1);
          auto k = p.op_kernels.find(op);
          if (k != p.op_kernels.end() && k->second != 1) item += " (" + Num(k->second, 2) + " kernels)";
          if (line.size() + item.size() > 96) {
            out << "    per op:" << line << "\n";
            line.clear();
          }
          line += (line.empty() ? " " : "; ") + item;
        }
        if (!line.empty()) out << "    per op:" << line << "\n";
      }
      for (const std::string& n : f.notes) out << "    note: " << n << "\n";
    }
  }
  out << "\nGPU kernel gap: " << ParamText(c.profile.gpu.kernel_gap_us, 2) << " us\n";
  out << "Kernel launch (host): " << ParamText(c.profile.gpu.launch_us, 2) << " us\n";
  for (const std::string& n : c.notes) out << "note: " << n << "\n";
}

// The same summary as a Markdown table (docs/calibration.md is made with it); classes that
// failed a gate are in bold.
void PrintMarkdown(const Calibration& c, std::ostream& out) {
  std::set<std::string> failed;
  for (const std::string& f : c.quality_failures) failed.insert(f.substr(0, f.find(':')));
  out << "| class/dtype | pts | tile | floor µs | rate TFLOP/s | bandwidth GB/s | R² (log) | "
         "err % | holdout med / p90 % | anchors: model / leave-one-out med % |\n";
  out << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const KernelFit& k : c.kernels) {
    const KernelParams& p = k.params;
    const std::string key = KernelKey(k.cls, k.dtype);
    const bool compute = IsComputeClass(k.cls) && p.rate_tflops.known();
    std::string bandwidth = ParamText(p.bandwidth_gbps, 0);
    for (const std::string& n : k.notes)
      if (n.rfind("bandwidth_gbps not determined", 0) == 0) bandwidth = "≥ " + bandwidth;
    out << "| " << (failed.count(key) ? "**" + key + "**" : key) << " | " << p.points << " | "
        << (compute ? std::to_string(p.tile_m) + "x" + std::to_string(p.tile_n) : "") << " | "
        << ParamText(p.floor_us, 2) << " | " << (compute ? ParamText(p.rate_tflops, 1) : "")
        << " | " << bandwidth << " | " << Num(p.r2, 3) << " | "
        << Num(k.fit_error.median_abs_pct, 1) << " | ";
    if (k.holdout_error.points > 0)
      out << Num(k.holdout_error.median_abs_pct, 1) << " / " << Num(k.holdout_error.p90_abs_pct, 1);
    else
      out << "—";
    out << " | ";
    if (k.anchor_loo_error.points > 0)
      out << Num(k.anchor_model_error.median_abs_pct, 1) << " / "
          << Num(k.anchor_loo_error.median_abs_pct, 1) << " (" << k.anchor_loo_error.points << ")";
    else
      out << "—";
    out << " |\n";
  }
  if (c.frameworks.empty()) return;
  out << "\n| framework | pts | call µs | view | kernel | library | module | node gap | "
         "replay per node | R² |\n";
  out << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const FrameworkFit& f : c.frameworks) {
    const FrameworkParams& p = f.params;
    const std::string name = FrameworkName(f.framework);
    out << "| " << (failed.count(name) ? "**" + name + "**" : name) << " | " << p.points << " | "
        << ParamText(p.call_us, 2);
    for (int i = 0; i < kNumDispatchClasses; ++i) out << " | " << ParamText(p.dispatch_us[i], 2);
    out << " | " << ParamText(p.module_us, 2) << " | " << ParamText(p.node_gap_us, 2) << " | "
        << ParamText(p.replay_per_node_us, 2) << " | " << Num(p.r2, 3) << " |\n";
  }
}

int RunCalibrate(const CalibrateOptions& o) {
  if (!CalibrateAvailable())
    return ReportError("calibrate", Unsupported("this ftax was built without Ceres Solver, which "
                                                "the fits need"),
                       "rebuild with libceres-dev installed (cmake -DFTAX_WITH_CERES=ON)");
  Status s = o.fit.Validate();
  if (!s.ok()) return ReportError("calibrate", s);
  std::vector<std::string> inputs = o.measurement_files;
  inputs.insert(inputs.end(), o.prior.begin(), o.prior.end());
  if (!(s = RefuseOutputOverInputs("-o", o.output, inputs)).ok()) return ReportError("calibrate", s);
  std::vector<Measurements> parts;
  json files = json::array();
  for (const std::string& path : o.measurement_files) {
    Expected<Measurements> m = LoadMeasurements(path);
    if (!m.ok()) return ReportError("calibrate", m.status());
    parts.push_back(m.value());
    files.push_back(path);
  }
  Measurements all = MergeMeasurements(parts);
  if (!(s = CheckProfileInput(all)).ok()) return ReportError("calibrate", s);
  const CpuGaugeNormalization gauge = NormalizeToCpuGauge(&all);
  // The prior is read before the fit, so that a bad file fails at once; the profile's host is
  // the measurements', whose GPU picks the hosts the cuda-graph scale comes from.
  const std::string gpu = all.host.is_object() ? all.host.value("gpu", "") : "";
  std::vector<HostProfile> prior_profiles;
  Expected<RefitReport> prior =
      o.prior.empty() ? Expected<RefitReport>(RefitReport{}) : LoadPrior(o.prior, gpu, &prior_profiles);
  if (!prior.ok()) return ReportError("calibrate", prior.status());
  Expected<Calibration> c = Calibrate(all, o.fit);
  if (!c.ok()) return ReportError("calibrate", c.status());

  if (o.verbose) {
    for (const KernelFit& k : c->kernels)
      if (!k.solver_report.empty())
        std::cerr << "ceres " << KernelKey(k.cls, k.dtype) << ": " << k.solver_report << "\n";
    for (const FrameworkFit& f : c->frameworks)
      for (const std::string& r : f.solver_reports)
        std::cerr << "ceres " << FrameworkName(f.framework) << ": " << r << "\n";
    for (const std::string& r : c->gap_solver_reports) std::cerr << "ceres kernel_gap: " << r << "\n";
  }

  HostProfile profile = c->profile;
  if (gauge.rows > 0) {
    profile.cpu_gauge_us = gauge.reference_us;
    profile.cpu_gauge_typical_us = gauge.typical_us;
  }
  if (gauge.probe.rows > 0) {
    profile.host_probe_us = gauge.probe.reference_us;
    profile.host_probe_typical_us = gauge.probe.typical_us;
  }
  const std::vector<std::string> mix_lines = ApplyOpMix(all, &profile);
  profile.provenance = {{"date", UtcNow()},
                        {"tool", "ftax calibrate"},
                        {"ftax_version", "0.1.0"},
                        {"ftax_commit", FtaxCommit()},
                        {"ftax_tree_dirty", FtaxTreeDirty()},
                        {"measurements", files},
                        {"seed", o.fit.seed}};
  if (profile.synthetic)
    profile.provenance["notes"] = "fitted from SYNTHETIC measurements; not a real host";
  if (!o.prior.empty()) {
    // The prior's hosts also say whether this bench saw its host's fast state at all.
    HostProfile bench = profile;
    bench.host = all.host;
    for (const std::string& line : SlowBenchWarnings(bench, prior_profiles))
      std::cerr << "calibrate: warning: " << line << "\n";
    std::vector<std::string> skipped;
    const RefitReport applied = ApplyScales(prior.value(), &profile, &skipped);
    for (const std::string& line : prior->not_carried) std::cerr << "calibrate: prior: " << line << "\n";
    for (const std::string& line : skipped) std::cerr << "calibrate: prior: " << line << "\n";
    for (const auto& [fw, ops] : applied.op_scales) {
      // Op types of one scale together, as the fit gives one scale to each group of ops.
      std::map<std::string, std::string> by_scale;
      std::string rest;
      for (const auto& [op, x] : ops.scale) {
        char b[32];
        std::snprintf(b, sizeof(b), " x%.2f", x);
        if (op == "*") rest = b;
        else by_scale[b] += (by_scale[b].empty() ? "" : ", ") + op;
      }
      std::string line = "calibrate: prior: " + fw + ": relative op scales, the median of " +
                         std::to_string(ops.profiles) + " refined profile(s): ";
      for (const auto& [x, names] : by_scale) line += names + x + "; ";
      std::cerr << line << "the rest" << (rest.empty() ? " x1.00" : rest) << "\n";
    }
    RecordRefinement(applied, o.prior,
                     {{"refinement_method",
                       "prior: dispatch_us and module_us (cuda-graph: replay_per_node_us and node_gap_us) "
                       "scaled by the median of the scales recorded by refined profiles of other hosts "
                       "(rows: profiles; stderr: 1.4826 x the median absolute deviation of their scales); "
                       "op_scale: per op type the median of the relative op scales they fitted"}},
                     &profile);
  }
  // The quality gates say what may be trusted; they never stop a profile from being written.

  // The profile must load back exactly as the predictor will read it.
  json pj = HostProfileToJson(profile);
  Expected<HostProfile> check = HostProfileFromJson(pj);
  if (!check.ok())
    return ReportError("calibrate", Internal("fitted profile does not validate: " +
                                             check.status().message()));

  if (o.format == "json") {
    json summary = CalibrationSummaryJson(c.value(), o.fit);
    if (gauge.rows > 0)
      summary["cpu_gauge"] = {{"reference_us", gauge.reference_us}, {"rows", gauge.rows},
                              {"scale_min", gauge.min_scale}, {"scale_median", gauge.median_scale},
                              {"scale_max", gauge.max_scale}};
    if (gauge.probe.rows > 0)
      summary["host_probe"] = {{"reference_us", gauge.probe.reference_us}, {"rows", gauge.probe.rows},
                               {"scale_min", gauge.probe.min_scale}, {"scale_median", gauge.probe.median_scale},
                               {"scale_max", gauge.probe.max_scale}};
    if (!mix_lines.empty()) summary["op_mix"] = mix_lines;
    summary["profile"] = o.output;
    summary["written"] = true;
    summary["provenance"] = profile.provenance;
    std::cout << summary.dump(2) << "\n";
  } else if (o.format == "markdown") {
    PrintMarkdown(c.value(), std::cout);
  } else {
    PrintTable(c.value(), std::cout);
  }
  if (o.format != "json")
    for (const std::string& line : mix_lines) std::cout << "Op mix: " << line << "\n";
  if (o.format != "json" && gauge.rows > 0)
    std::cout << "\nCPU gauge: " << gauge.rows << " Python rows brought to " << Num(gauge.reference_us, 2)
              << " us per gauge add (the host's fast state), by x" << Num(gauge.min_scale, 2) << " to x"
              << Num(gauge.max_scale, 2) << " (median x" << Num(gauge.median_scale, 2) << "); their median reading "
              << Num(gauge.typical_us, 2) << " us, the host's typical speed (--whatif cpu=typical)\n";
  if (o.format != "json" && gauge.probe.rows > 0)
    std::cout << "Host probe: " << gauge.probe.rows << " C++ chains brought to " << Num(gauge.probe.reference_us, 2)
              << " us per probe add (the host's fast state), by x" << Num(gauge.probe.min_scale, 2) << " to x"
              << Num(gauge.probe.max_scale, 2) << " (median x" << Num(gauge.probe.median_scale, 2)
              << "); their median reading " << Num(gauge.probe.typical_us, 2) << " us\n";

  for (const std::string& f : c->quality_failures) {
    // A kernel class carries its error into the predictions that use it; a framework's costs
    // are used as fitted, their standard errors setting the interval.
    const bool framework = ParseFramework(f.substr(0, f.find(':'))).has_value();
    std::cerr << "ftax calibrate: warning: not trusted, " << f
              << (framework ? " (its costs are used as fitted, their standard errors in the predictions' interval)"
                            : " (predictions that use it carry that error in their interval and say so)")
              << "\n";
  }
  if (!(s = WriteFileAtomic(o.output, pj.dump(2) + "\n")).ok()) return ReportError("calibrate", s);
  if (o.format == "text") std::cout << "\nwrote " << o.output << "\n";
  return kExitOk;
}

}  // namespace

void SetupCalibrateCommand(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit a host profile from measurement files (Ceres). A kernel class that fails a quality "
      "gate (R², held-out error) is written as not trusted: predictions that use it widen their "
      "interval by its held-out error and name it. Exit 3 when built without Ceres.\n"
      "With --from-trace or --trace-manifest instead: refine the Python-eager (or TorchScript) "
      "dispatch costs of --profile from PyTorch profiler traces of real runs (no Ceres needed); "
      "exit 1 when fewer than --min-rows traces are framework-bound.");
  cmd->add_option("measurements", o->measurement_files, "measurement files of one host (merged)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "host profile to write")->required();
  std::vector<CLI::Option*> fit_only;
  fit_only.push_back(
      cmd->add_option("--seed", o->fit.seed, "seed of the random holdout split")->capture_default_str());
  fit_only.push_back(cmd->add_option("--prior", o->prior,
                                     "refined profiles of other hosts (validation/*/*/profile-refined.json): scale "
                                     "the fitted framework costs by the median of their recorded scales, for "
                                     "a host no model has run on yet (docs/calibration.md, \"Prior\")")
                         ->expected(1, -1));
  fit_only.push_back(cmd->add_option("--holdout", o->fit.holdout_fraction,
                                     "share of kernel rows per class held out to measure prediction error")
                         ->capture_default_str());
  fit_only.push_back(cmd->add_option("--holdout-repeats", o->fit.holdout_repeats,
                                     "independent random holdout splits whose held-out errors are pooled")
                         ->capture_default_str());
  fit_only.push_back(
      cmd->add_option("--min-r2", o->fit.min_r2, "mark a kernel class not trusted when its R² of log(time) is lower")
          ->capture_default_str());
  fit_only.push_back(cmd->add_option("--max-holdout-err", o->fit.max_holdout_median_err_pct,
                                     "mark a kernel class not trusted when its held-out median |error| (%) is higher")
                         ->capture_default_str());
  fit_only.push_back(cmd->add_option("--min-framework-r2", o->fit.min_framework_r2,
                                     "warn about a framework whose R² of call time is lower")
                         ->capture_default_str());
  std::map<std::string, FitLoss> losses = {
      {"huber", FitLoss::kHuber}, {"cauchy", FitLoss::kCauchy}, {"none", FitLoss::kNone}};
  fit_only.push_back(cmd->add_option("--loss", o->fit.loss, "robust loss on log residuals")
                         ->transform(CLI::CheckedTransformer(losses, CLI::ignore_case))
                         ->default_str("huber"));
  fit_only.push_back(
      cmd->add_option("--loss-scale", o->fit.loss_scale, "robust loss scale in log units (0.1 ~ 10%)")
          ->capture_default_str());
  fit_only.push_back(
      cmd->add_option("--sms", o->fit.num_sms, "SM count (default: host.sm_count of the measurements)"));
  fit_only.push_back(
      cmd->add_flag("--force", o->force, "accepted for old scripts; no longer needed (a profile is always written)"));
  fit_only.push_back(cmd->add_flag(
      "!--no-anchors", o->fit.anchors,
      "leave the measured rows out of the profile: kernels are priced by the fitted model "
      "alone, not corrected near the benchmarked shapes (see docs/how-it-works.md)"));
  fit_only.push_back(
      cmd->add_flag("-v,--verbose", o->verbose, "log Ceres' BriefReport of every fit to stderr"));
  AddFormatOption(cmd, &o->format, {"text", "json", "markdown"});

  std::vector<CLI::Option*> trace_only;
  cmd->add_option("--from-trace", o->trace.traces, kFromTraceHelp);
  cmd->add_option("--trace-manifest", o->trace.manifests,
                  "JSON file listing traces: [{\"path\", \"arch\", \"batch\", \"precision\", \"seq\"?, "
                  "\"name\"?, \"framework\"?}, ...] (or {\"traces\": [...]}); paths relative to the "
                  "file. Repeatable; combines with --from-trace.");
  trace_only.push_back(
      cmd->add_option("--profile", o->trace.profile, "with --from-trace: the host profile to refine"));
  trace_only.push_back(cmd->add_option("--framework", o->trace.framework,
                                       "with --from-trace: framework of traces that name none")
                           ->capture_default_str());
  trace_only.push_back(
      cmd->add_option("--profiler-overhead-factor", o->trace.profiler_overhead_factor,
                      "with --from-trace: traced / unprofiled framework time of your runs; measured "
                      "framework time is divided by it. Default 1: no correction, so the refined costs "
                      "describe profiled runs (docs/calibration.md: why there is no default factor)")
          ->capture_default_str());
  trace_only.push_back(
      cmd->add_option("--min-rows", o->trace.min_rows,
                      "with --from-trace: usable (framework-bound) traces needed per framework")
          ->capture_default_str());
  cmd->footer(
      "Examples:\n"
      "  ftax calibrate validation/h100/2026-11-25r/bench.measurements.json -o h100.json\n"
      "  ftax calibrate --profile h200 -o mine.json --min-rows 2 \\\n"
      "      --from-trace 'tests/data/traces/h200-bert-base-fp16-b1.trimmed.trace.json;arch=bert:layers=12;batch=1;seq=128;precision=fp16' \\\n"
      "      --from-trace 'tests/data/traces/h200-bert-base-fp16-b32.trimmed.trace.json;arch=bert:layers=12;batch=32;seq=128;precision=fp16'\n"
      "  ftax calibrate --profile h200 -o mine.json --min-rows 2 --trace-manifest tests/data/traces/manifest.json");
  cmd->callback([o, fit_only, trace_only] {
    const bool from_trace = !o->trace.traces.empty() || !o->trace.manifests.empty();
    if (from_trace) {
      if (!o->measurement_files.empty()) {
        ExitCode() = ReportError("calibrate",
                                 InvalidInput("give measurement files (to fit a profile) or "
                                              "--from-trace (to refine one), not both"),
                                 "fit first, then refine the written profile with --from-trace");
        return;
      }
      for (CLI::Option* opt : fit_only)
        if (opt->count() > 0) {
          ExitCode() = ReportError("calibrate",
                                   InvalidInput(opt->get_name() + " applies to fits from "
                                                                  "measurement files, not to --from-trace"));
          return;
        }
      o->trace.output = o->output;
      o->trace.format = o->format;
      ExitCode() = RunCalibrateFromTrace(o->trace);
      return;
    }
    for (CLI::Option* opt : trace_only)
      if (opt->count() > 0) {
        ExitCode() = ReportError("calibrate", InvalidInput(opt->get_name() + " needs --from-trace or "
                                                                             "--trace-manifest"));
        return;
      }
    if (o->measurement_files.empty()) {
      ExitCode() = ReportError("calibrate", InvalidInput("give measurement files to fit a profile, or "
                                                         "--from-trace/--trace-manifest with --profile to "
                                                         "refine one"));
      return;
    }
    ExitCode() = RunCalibrate(*o);
  });
}

}  // namespace ftax::cli
