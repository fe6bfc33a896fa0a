// `ftax validate`: run a model for real and put the prediction beside the measurement.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "calibrate/isolated_sweep.h"
#include "common/json_file.h"
#include "calibrate/model_runner.h"
#include "calibrate/run_resume.h"
#include "calibrate/framework_refit.h"
#include "calibrate/op_scale_fit.h"
#include "calibrate/traced_run.h"
#include "calibrate/result_writer.h"
#include "calibrate/validation_report.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/profile_names.h"
#include "cli/gnuplot_runner.h"
#include "cli/plot_script.h"
#include "cli/sweep_args.h"
#include "cli/text_table.h"
#include "cli/worker_process.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "predictor/host_profile.h"

namespace ftax::cli {
namespace {

using json = nlohmann::json;

struct ValidateOptions {
  std::vector<std::string> models;
  std::string meta;
  std::string arch;
  std::string profile;
  std::vector<std::string> frameworks = {"torchscript", "cuda-graph"};
  std::string precision;
  std::string batch = "1:128";
  std::vector<std::string> measured;
  std::string output;
  std::string format = "table";
  double budget_s = 1.0;
  double worker_timeout_s = 600;
  int rounds = 1;
  uint64_t seed = 1;
  int device = 0;
  std::string refine = "none";
  std::vector<std::string> prior;
  std::string refined_profile;
  std::string plot;
  std::vector<std::string> traces;
  std::string model_name;
  int64_t seq = 0;
  std::string predict_from = "arch";
  std::string cpu_speed = "profile";
  bool resume = false;
  std::vector<std::string> refine_models;  // --refine-models: the calibration models
  std::vector<std::string> report_models;  // --report-models: rows compared and reported
  std::string worker;      // internal: measure the visits of this worker request file
  std::string worker_out;  // internal: where the worker writes its result lines
};

// A worker process (see calibrate/isolated_sweep.h): measures the visits of one request.
int RunValidateWorker(const ValidateOptions& o) {
  std::ifstream in(o.worker);
  json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    return ReportError("validate", InvalidInput("worker request '" + o.worker + "': " + e.what()));
  }
  Expected<WorkerRequest> req = WorkerRequestFromJson(j);
  if (!req.ok()) return ReportError("validate", req.status());
  Status s = RunWorkerVisits(req.value(), o.worker_out,
                             [](const std::string& l) { std::cerr << "[validate] " << l << "\n"; });
  return s.ok() ? kExitOk : kExitFailure;
}

// Measured latency (median with p10..p90 bars) and predicted latency (line with its interval)
// against batch, one panel per model and precision, one colour per framework, one key for all
// panels (cli/plot_script.h); gnuplot.
Status PlotValidation(const ValidationReport& r, const std::string& path) {
  Expected<GnuplotJob> job = ValidationPlotJob(r);
  if (!job.ok()) return job.status();
  return RunGnuplot(job->script, job->data, path, job->size);
}

// Leave-one-model-out: each model's rows are predicted with framework costs refined on the
// other models' rows only.
Expected<ValidationReport> CompareLeaveOneModelOut(const json& measured, const HostProfile& profile,
                                                   const CompareOptions& copt) {
  std::set<std::string> models;
  for (const auto& r : measured["rows"]) models.insert(r.value("model", ""));
  ValidationReport all;
  for (const std::string& m : models) {
    RefitOptions ro;
    ro.exclude_models = {m};
    RefitReport rep;
    Expected<HostProfile> refined = RefineFrameworkCosts(profile, measured, ro, &rep);
    if (!refined.ok()) return refined.status();
    json subset = {{"rows", json::array()}};
    for (const auto& r : measured["rows"])
      if (r.value("model", "") == m) subset["rows"].push_back(r);
    Expected<ValidationReport> part = CompareMeasurements(subset, refined.value(), copt);
    if (!part.ok()) return part.status();
    for (auto& row : part->rows) all.rows.push_back(row);
    for (auto& n : part->notes)
      if (std::find(all.notes.begin(), all.notes.end(), n) == all.notes.end()) all.notes.push_back(n);
    for (auto& s : part->skipped) all.skipped.push_back(s);
    std::string line = "refined without " + m + ":";
    for (const auto& e : rep.frameworks)
      line += " " + e.framework + " x" + Fixed(e.scale, 2) + " (±" + Fixed(e.scale_stderr, 2) + ", " +
              std::to_string(e.rows) + " rows)";
    all.notes.push_back(line);
  }
  SummarizeReport(&all, copt);
  return all;
}

void PrintReport(const ValidationReport& r, const std::string& format) {
  if (format == "json") {
    std::cout << ValidationReportToJson(r).dump(1) << "\n";
    return;
  }
  TextTable t({"model", "framework", "prec", "batch", "measured_ms", "p10", "p90", "predicted_ms",
               "error_%", "in_p10-90", "bound(m/p)", "kernels(m/p)", "miss_cause"});
  for (const ValidationRow& v : r.rows)
    t.AddRow({v.model, v.framework, v.precision, std::to_string(v.batch), Fixed(v.measured_ms, 3),
              Fixed(v.measured_p10, 3), Fixed(v.measured_p90, 3), Fixed(v.predicted.latency_ms, 3),
              Fixed(v.error_pct, 1), v.inside_spread ? "yes" : "no",
              v.measured_bound.substr(0, 4) + "/" + v.predicted.bound.substr(0, 4),
              Fixed(v.measured_kernels, 0) + "/" + std::to_string(v.predicted.kernels),
              v.miss ? v.miss->kind : ""});
  if (format == "csv") {
    std::cout << t.RenderCsv();
    return;
  }
  std::cout << t.Render() << "\n";
  TextTable s({"framework", "rows", "tolerance", "within", "inside_p10-90", "within_or_inside",
               "bound_agrees", "median_|err|_%"});
  for (const FrameworkSummary& f : r.frameworks)
    s.AddRow({f.framework, std::to_string(f.rows), "±" + Fixed(f.tolerance_pct, 0) + "%",
              std::to_string(f.within), std::to_string(f.inside), std::to_string(f.within_or_inside),
              std::to_string(f.bound_agree), Fixed(f.median_abs_error_pct, 1)});
  std::cout << s.Render() << "\n";
  TextTable c({"model", "framework", "prec", "crossover_measured", "crossover_predicted", "agrees"});
  for (const CrossoverCheck& x : r.crossovers)
    c.AddRow({x.model, x.framework, x.precision,
              x.measured ? std::to_string(*x.measured) : ">" + std::to_string(x.max_batch),
              x.predicted ? std::to_string(*x.predicted) : ">" + std::to_string(x.max_batch),
              x.agrees ? "yes" : "no"});
  std::cout << c.Render();
  TextTable m({"model", "framework", "prec", "batch", "error_%", "miss_cause", "why"});
  for (const ValidationRow& v : r.rows)
    if (v.miss)
      m.AddRow({v.model, v.framework, v.precision, std::to_string(v.batch), Fixed(v.error_pct, 1),
                v.miss->kind, v.miss->detail});
  if (!m.empty()) std::cout << "\nMisses (neither within tolerance nor inside p10..p90):\n" << m.Render();
  for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
  for (const auto& s2 : r.skipped) std::cout << "skipped: " << s2 << "\n";
}

// Each step of RunValidate returns 0 to go on, or the exit code of the error it reported.

// Outputs: never a directory, never one of the files read, never each other; a plot's
// extension and gnuplot terminal are checked before any model runs.
int CheckOutputs(const ValidateOptions& o) {
  std::vector<std::string> inputs = o.models;
  for (const auto* list : {&o.measured, &o.traces, &o.prior})
    inputs.insert(inputs.end(), list->begin(), list->end());
  inputs.push_back(o.meta);
  inputs.push_back(o.profile);
  const std::vector<std::pair<const char*, const std::string*>> outputs = {
      {"-o", &o.output}, {"--refined-profile", &o.refined_profile}, {"--plot", &o.plot}};
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path->empty()) continue;
    Status s = RefuseOutputOverInputs(flag, *path, inputs);
    if (!s.ok()) return ReportError("validate", s);
    for (size_t k = 0; k < i; ++k)
      if (!outputs[k].second->empty() && SamePath(*outputs[k].second, *path))
        return ReportError("validate", InvalidInput(std::string(flag) + " '" + *path + "' is also given to " +
                                                    outputs[k].first + "; give each output its own file"));
  }
  if (!o.plot.empty()) {  // extension and gnuplot terminal, before any model runs
    Status s = CheckPlotPath(o.plot);
    if (!s.ok()) return ReportError("validate", s);
  }
  return 0;
}

// MODEL.pt files on a CUDA host: each measured in worker processes of its own, rows written to
// -o as they come; `measured` becomes the run's file.
int MeasureModels(const ValidateOptions& o, json* measured) {
  if (o.output.empty())
    return ReportError("validate", InvalidInput("running a model needs -o FILE for its measurements"));
  if (o.models.size() > 1 && (!o.meta.empty() || !o.arch.empty() || !o.precision.empty()))
    return ReportError("validate", InvalidInput("--meta, --arch and --precision describe one model; "
                                                "with several, each is read from MODEL.json beside it"));
  if (o.rounds < 1) return ReportError("validate", InvalidInput("--rounds must be 1 or more"));
  auto fws = ParseFrameworkList(o.frameworks);
  if (!fws.ok()) return ReportError("validate", fws.status());
  auto batches = ParseBatchList(o.batch);
  if (!batches.ok()) return ReportError("validate", batches.status());
  std::vector<RunOptions> runs;
  for (const std::string& model : o.models) {
    RunOptions ro;
    ro.model_path = model;
    ro.arch = o.arch;
    ro.device = o.device;
    ro.budget_s = o.budget_s;
    std::string meta = o.meta;
    if (meta.empty() && model.size() > 3 && model.substr(model.size() - 3) == ".pt")
      meta = model.substr(0, model.size() - 3) + ".json";
    Status s = ReadModelMeta(meta, &ro);
    if (!s.ok()) return ReportError("validate", s, "give --meta FILE describing the inputs");
    if (!o.precision.empty()) ro.precision = o.precision;
    ro.frameworks = fws.value();
    ro.batches = batches.value();
    runs.push_back(std::move(ro));
  }
  json header = {{"schema_version", 1}, {"kind", "ftax-validation-measurements"},
                 {"started", UtcNow()}, {"rows", json::array()}, {"failures", json::array()},
                 {"timing", "host clock per iteration with a device synchronize, no profiler attached; "
                            "kernel records from a separate traced pass"}};
  if (o.rounds > 1) header["rounds"] = {{"rounds", o.rounds}, {"seed", o.seed}};
  SweepOptions so;
  so.rounds = RoundOptions{o.rounds, o.seed};
  if (o.resume) {
    Expected<json> old = ReadRunToResume(o.output, "ftax-validation-measurements");
    if (!old.ok()) return ReportError("validate", old.status());
    if (!old->is_null()) {
      so.kept_rows = old->value("rows", json::array());
      header["started"] = old->value("started", header["started"]);
      json resumed = old->value("resumed", json::array());
      resumed.push_back(UtcNow());
      header["resumed"] = resumed;
    }
  }
  Expected<std::string> scratch = MakePrivateTempDir("ftax-validate");
  if (!scratch.ok()) return ReportError("validate", scratch.status());
  so.scratch_dir = scratch.value();
  ResultWriter w(o.output, header);
  const std::string dir = so.scratch_dir;
  int launched = 0;
  WorkerLauncher spawn = [&](const WorkerRequest& req, const std::string& result) {
    const std::string path = dir + "/request-" + std::to_string(launched++) + ".json";
    {
      std::ofstream rq(path);
      rq << WorkerRequestToJson(req).dump() << "\n";
      if (!rq) return -1000;
    }
    const int st = RunSelf({"validate", "--worker", path, "--worker-out", result}, o.worker_timeout_s,
                           kWorkerTimedOut);
    std::remove(path.c_str());
    return st;
  };
  Status s = MeasureModelsIsolated(runs, so, spawn,
                                   [](const std::string& l) { std::cerr << "[validate] " << l << "\n"; }, &w);
  RemoveTempDir(dir);
  if (!s.ok()) return ReportError("validate", s);
  if (!w.first_error().ok()) return ReportError("validate", w.first_error());
  w.Set("finished", UtcNow());
  *measured = w.doc();
  if ((*measured)["rows"].empty()) {
    std::cerr << "ftax validate: no point was measured; the reasons are under \"failures\" in '"
              << o.output << "'\n";
    return kExitFailure;
  }
  return 0;
}

// Rows made from PyTorch profiler traces (--trace), appended to `measured`.
int AddTraceRows(const ValidateOptions& o, json* measured) {
  for (const std::string& path : o.traces) {
    if (o.arch.empty())
      return ReportError("validate", InvalidInput("--trace needs --arch SPEC describing the traced model"));
    auto fws = ParseFrameworkList(o.frameworks);
    if (!fws.ok() || fws.value().size() != 1)
      return ReportError("validate", InvalidInput("--trace needs exactly one --framework (e.g. pytorch-eager)"));
    auto batches = ParseBatchList(o.batch);
    if (!batches.ok() || batches.value().size() != 1)
      return ReportError("validate", InvalidInput("--trace needs exactly one --batch (the traced batch size)"));
    if (o.precision.empty())
      return ReportError("validate", InvalidInput("--trace needs --precision (fp16, fp32, bf16)"));
    TracedRun run;
    run.path = path;
    run.name = o.model_name;
    run.arch = o.arch;
    run.framework = FrameworkName(fws.value()[0]);
    run.precision = o.precision;
    run.batch = batches.value()[0];
    if (o.seq > 0) run.seq = o.seq;
    Status valid = ValidateTracedRun(run, "--trace '" + path + "'");
    if (!valid.ok()) return ReportError("validate", valid);
    Expected<json> row = MeasuredRowFromTrace(run);
    if (!row.ok()) return ReportError("validate", row.status());
    (*measured)["rows"].push_back(row.value());
  }
  return 0;
}

// Rows of earlier measurement files (--measured), each checked before anything is predicted.
int AddMeasuredRows(const ValidateOptions& o, json* measured) {
  for (const std::string& path : o.measured) {
    Expected<json> read = ReadJsonFile(path, "measurements");
    if (!read.ok()) return ReportError("validate", read.status());
    json& j = read.value();
    if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array())
      return ReportError("validate", InvalidInput("'" + path + "': missing array 'rows'"));
    // Each row's values are checked before anything is predicted from it.
    for (size_t i = 0; i < j["rows"].size(); ++i) {
      Status s = CheckMeasuredRow(j["rows"][i]);
      if (!s.ok()) return ReportError("validate", s.WithContext("'" + path + "' rows[" + std::to_string(i) + "]"));
    }
    for (auto& r : j["rows"]) (*measured)["rows"].push_back(r);
  }
  return 0;
}

// --refined-profile: the framework costs scaled to the measured rows, written with where they
// came from.
int WriteRefinedProfile(const ValidateOptions& o, const HostProfile& profile, const json& measured) {
  RefitReport rr;
  RefitOptions refit;
  refit.only_models.insert(o.refine_models.begin(), o.refine_models.end());
  Expected<HostProfile> refined = RefineFrameworkCosts(profile, measured, refit, &rr);
  if (!refined.ok()) return ReportError("validate", refined.status());
  json sources = o.measured;
  for (const std::string& t : o.traces) sources.push_back(t);
  json extra = json::object();
  if (!o.refine_models.empty()) {
    // The models the refinement learned from: those asked for that have measured rows.
    std::set<std::string> measured_models;
    for (const json& r : measured["rows"])
      if (r.is_object() && r.contains("model") && r["model"].is_string())
        measured_models.insert(r["model"].get<std::string>());
    json used = json::array();
    std::string absent;
    for (const std::string& m : o.refine_models) {
      if (measured_models.count(m)) {
        used.push_back(m);
      } else {
        absent += (absent.empty() ? "" : ", ") + m;
      }
    }
    extra["refined_on_models"] = used;
    if (!absent.empty())
      std::cerr << "ftax validate: --refine-models without measured rows (not learned from): " << absent << "\n";
  }
  // Relative per-op scales (calibrate/op_scale_fit.h) from the same models' rows, each
  // predicted from its arch spec or its trace, with the profile as it came (the scales are
  // relative: the dispatch scale above sets the level).
  const OpScaleRefinement op_scales =
      RefineOpScales(measured, o.refine_models, profile, o.predict_from == "file", &refined.value());
  if (!op_scales.record.empty()) extra["refinement_op_scale"] = op_scales.record;
  RecordRefinement(rr, sources, extra, &refined.value());
  Status written = WriteFileAtomic(o.refined_profile, HostProfileToJson(refined.value()).dump(1) + "\n");
  if (!written.ok()) return ReportError("validate", written);
  for (const auto& e : rr.frameworks)
    std::cerr << "refined " << e.framework
              << (e.framework == "cuda-graph" ? ": per-node costs x" : ": dispatch costs x")
              << Fixed(e.scale, 3) << " ± " << Fixed(e.scale_stderr, 3) << " (" << e.rows
              << " rows)\n";
  for (const std::string& line : op_scales.lines) std::cerr << "refined " << line << "\n";
  std::cerr << "wrote " << o.refined_profile << "\n";
  return 0;
}

int RunValidate(const ValidateOptions& o) {
  if (!o.worker.empty()) return RunValidateWorker(o);
  if (int rc = CheckOutputs(o)) return rc;
  json measured = {{"rows", json::array()}};
  if (!o.models.empty())
    if (int rc = MeasureModels(o, &measured)) return rc;
  if (int rc = AddTraceRows(o, &measured)) return rc;
  if (int rc = AddMeasuredRows(o, &measured)) return rc;
  if (o.profile.empty()) {
    std::cerr << "ftax validate: measured " << measured["rows"].size()
              << " rows; give --profile to compare them with predictions\n";
    return kExitOk;
  }
  Expected<HostProfile> profile = LoadNamedProfile(o.profile);
  if (!profile.ok()) return ReportError("validate", profile.status());
  // Every option is checked before anything is written.
  if ((o.refine == "prior") != !o.prior.empty())
    return ReportError("validate", InvalidInput("--refine prior and --prior FILE... go together"));
  if (!o.refined_profile.empty())
    if (int rc = WriteRefinedProfile(o, profile.value(), measured)) return rc;
  std::string prior_note;
  if (o.refine == "prior") {
    const std::string gpu = profile->host.is_object() ? profile->host.value("gpu", "") : "";
    Expected<RefitReport> prior = LoadPrior(o.prior, gpu);
    if (!prior.ok()) return ReportError("validate", prior.status());
    std::vector<std::string> skipped;
    const RefitReport applied = ApplyScales(prior.value(), &profile.value(), &skipped);
    prior_note = "prior from " + std::to_string(o.prior.size()) + " refined profiles:";
    for (const auto& e : applied.frameworks)
      prior_note += " " + e.framework + " x" + Fixed(e.scale, 2) + " (±" + Fixed(e.scale_stderr, 2) + ")";
    for (const auto& [fw, ops] : applied.op_scales)
      prior_note += " " + fw + " op scales (" + std::to_string(ops.profiles) + " profiles)";
    for (const std::string& line : prior->not_carried) prior_note += "; " + line;
    for (const std::string& line : skipped) prior_note += "; " + line;
  }
  if (!o.report_models.empty()) {  // after any refinement, which may use every row
    const std::set<std::string> keep(o.report_models.begin(), o.report_models.end());
    json kept = json::array();
    for (const json& r : measured["rows"])
      if (keep.count(r.value("model", ""))) kept.push_back(r);
    if (kept.empty())
      return ReportError("validate", InvalidInput("--report-models: no measured row is of these models"));
    measured["rows"] = kept;
  }
  CompareOptions copt;
  copt.predict_from_file = o.predict_from == "file";
  copt.at_row_cpu_speed = o.cpu_speed == "row";
  copt.at_typical_cpu_speed = o.cpu_speed == "typical";
  if (copt.at_typical_cpu_speed && !(profile->cpu_gauge_typical_us > 0) && !(profile->host_probe_typical_us > 0))
    return ReportError("validate", InvalidInput("--cpu-speed typical: profile " + o.profile +
                                                " records no typical CPU speed (cpu_gauge_typical_us, "
                                                "host_probe_typical_us: ftax calibrate writes them since 2026-11-28)"));
  Expected<ValidationReport> rep = o.refine == "leave-one-model-out"
                                       ? CompareLeaveOneModelOut(measured, profile.value(), copt)
                                       : CompareMeasurements(measured, profile.value(), copt);
  if (!rep.ok()) return ReportError("validate", rep.status());
  if (rep->rows.empty()) {
    std::string why = measured["rows"].empty() ? "there are no measured rows"
                                                : "every one of the " + std::to_string(measured["rows"].size()) +
                                                      " measured rows was skipped";
    if (!rep->skipped.empty()) why += " (first: " + rep->skipped.front() + ")";
    return ReportError("validate", InvalidInput("nothing to compare: " + why));
  }
  if (!prior_note.empty()) rep->notes.insert(rep->notes.begin(), prior_note);
  if (!o.output.empty() && o.models.empty()) {
    Status written = WriteFileAtomic(o.output, ValidationReportToJson(rep.value()).dump(1) + "\n");
    if (!written.ok()) return ReportError("validate", written);
  }
  PrintReport(rep.value(), o.format);
  if (!o.plot.empty()) {
    Status st = PlotValidation(rep.value(), o.plot);
    if (!st.ok()) return ReportError("validate", st);
    std::cerr << "plot: " << o.plot << "\n";
  }
  return kExitOk;
}

}  // namespace

void SetupValidateCommand(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check predictions against real runs. With MODEL.pt (on a CUDA host): run the TorchScript\n"
      "model through the interpreter and as a replayed CUDA graph, per batch, measuring latency\n"
      "(median, p10, p90) with no profiler attached, CUDA events, and CUPTI kernel records from\n"
      "a separate pass, written to -o as it goes. Each model runs in worker processes of its own:\n"
      "a point that fails (a CUDA graph that cannot be captured, out of memory) is recorded with\n"
      "its reason and no other point is touched.\n"
      "Several files are measured in one sweep; --rounds R visits every point R times in\n"
      "shuffled order and pools the samples, so host drift over the run reaches all alike. With\n"
      "--measured FILE (anywhere): compare earlier measurements, e.g. from\n"
      "scripts/validate_eager.py. With --profile, print prediction vs measurement per point,\n"
      "the share within tolerance, bound agreement, crossover batches, and each miss with its\n"
      "likeliest cause (host drift; unpredicted kernels, when a point measured slow launched over 15%\n"
      "more kernels than predicted, memsets aside; a slow process, when a Python eager row's\n"
      "host_probe_us, a chain of adds timed before the point, ran 1.25x the bench's; framework\n"
      "overhead; or kernel time and the class that moved).\n"
      "--refine prior --prior REFINED... predicts a host no model ran on with other hosts' scales.");
  cmd->add_option("model", o->models,
                  "TorchScript model file(s) to run (CUDA builds); several are measured in one sweep");
  cmd->add_option("--meta", o->meta, "JSON describing the model's inputs and arch spec (default: MODEL with .json)");
  cmd->add_option("--arch", o->arch, "arch spec that describes the model, for the prediction");
  cmd->add_option("--profile", o->profile, "host profile to predict with: a shipped name (h200, h100) or a file");
  cmd->add_option("--framework", o->frameworks, "torchscript, cuda-graph")->delimiter(',');
  cmd->add_option("--precision", o->precision, "precision the model file was saved in");
  cmd->add_option("--batch", o->batch, "batches: 1,2,4 or 1:128 (powers of two)")->capture_default_str();
  cmd->add_option("--measured", o->measured, "measured rows to compare (repeatable)");
  cmd->add_option("-o,--output", o->output, "where to write measurements (with MODEL) or the report");
  AddFormatOption(cmd, &o->format, {"table", "json", "csv"});
  cmd->add_option("--budget-s", o->budget_s, "timing budget per point (s)")->capture_default_str();
  cmd->add_option("--worker-timeout", o->worker_timeout_s,
                  "seconds one worker process (one model's points in one round) may run before it is "
                  "killed and its remaining points recorded as failures; 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--rounds", o->rounds,
                  "visit every point this many times, in a new shuffled order each round, timing "
                  "budget/rounds per visit, and pool the samples: host drift then reaches every "
                  "point alike")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the shuffled round orders")->capture_default_str();
  cmd->add_option("--device", o->device, "CUDA device index")->capture_default_str();
  cmd->add_option("--predict-from", o->predict_from,
                  "what the prediction is made from: arch (the row's arch spec; rows without one use "
                  "their TorchScript file) or file (always the TorchScript file the row ran)")
      ->check(CLI::IsMember({"arch", "file"}));
  cmd->add_option("--cpu-speed", o->cpu_speed,
                  "profile: predict every row at the CPU speed the profile was priced at (the host's "
                  "fast state), as ftax predict does; row: each row at the speed it was measured at "
                  "(Python eager and torch.compile: the CPU gauge it carries over the profile's; TorchScript and CUDA "
                  "graphs: the host probe; all CPU-side costs scaled by it; shared hosts' CPUs slow "
                  "by about 1.5-1.8x for seconds to minutes); typical: every row at the speed the "
                  "profile's bench read in the median, as ftax predict --whatif cpu=typical")
      ->check(CLI::IsMember({"row", "profile", "typical"}))
      ->capture_default_str();
  cmd->add_option("--refine", o->refine,
                  "none; leave-one-model-out: predict each model with Python-eager/TorchScript "
                  "dispatch costs and CUDA-graph per-node costs scaled to the other models' "
                  "measured framework time; prior: scaled by other hosts' refinements (--prior)")
      ->check(CLI::IsMember({"none", "leave-one-model-out", "prior"}))
      ->capture_default_str();
  cmd->add_option("--prior", o->prior,
                  "with --refine prior: refined profiles of other hosts (e.g. validation/*/*/profile-refined.json); "
                  "framework costs are scaled by the median of their recorded scales, a host's answer "
                  "before any model ran on it")
      ->expected(1, -1);
  cmd->add_option("--refined-profile", o->refined_profile,
                  "write the profile with Python-eager/TorchScript dispatch costs and CUDA-graph "
                  "per-node costs refined on all measured rows, and, for a framework priced per op "
                  "type, relative scales of five groups of op types fitted on its CPU-bound rows "
                  "(op_scale; provenance records the scale factors and the fit)");
  cmd->add_option("--refine-models", o->refine_models,
                  "with --refined-profile: refine on the rows of these models only (the calibration "
                  "models of a fixed split, e.g. from data/zoo/split.json), so that the other models "
                  "stay unseen and can be reported")
      ->delimiter(',');
  cmd->add_option("--report-models", o->report_models,
                  "compare and report the rows of these models only (the evaluation models of a "
                  "fixed split)")
      ->delimiter(',');
  cmd->add_option("--trace", o->traces,
                  "PyTorch profiler chrome trace of a real run (with ProfilerStep spans); needs --arch, "
                  "one --framework, --precision and one --batch");
  cmd->add_option("--name", o->model_name, "model name for --trace rows");
  cmd->add_option("--seq", o->seq, "sequence length of the traced run (text models)");
  cmd->add_flag("--resume", o->resume,
                "with MODEL: keep the points an interrupted run already wrote to -o and measure only "
                "the others");
  cmd->add_option("--worker", o->worker)->group("");      // internal: one worker process
  cmd->add_option("--worker-out", o->worker_out)->group("");
  cmd->add_option("--plot", o->plot,
                  std::string("write measured vs predicted latency plots; the extension picks the format: ") +
                      kPlotExtensionsHelp);
  cmd->callback([o] { ExitCode() = RunValidate(*o); });
}

}  // namespace ftax::cli
