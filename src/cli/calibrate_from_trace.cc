#include "cli/calibrate_from_trace.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "calibrate/framework_refit.h"
#include "calibrate/traced_run.h"
#include "cli/commands.h"
#include "cli/profile_names.h"
#include "cli/source_checkout.h"
#include "cli/text_table.h"
#include "common/file_io.h"
#include "predictor/framework.h"
#include "predictor/host_profile.h"

namespace ftax::cli {

const char* const kFromTraceHelp =
    "PyTorch profiler (Kineto) chrome trace of a real run, with ProfilerStep spans, and its\n"
    "metadata after ';' (quote it): 'FILE;arch=SPEC;batch=N;precision=fp16|fp32|bf16[;seq=N]\n"
    "[;name=MODEL][;framework=pytorch-eager|torchscript]'. Repeatable. Refines the --profile's\n"
    "dispatch costs of that framework into -o; needs no Ceres.";

namespace {

using json = nlohmann::json;

// 'FILE;key=value;...' as a manifest entry would give it, then checked the same way.
Expected<TracedRun> ParseTraceSpec(const std::string& spec, const std::string& default_framework) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = spec.find(';', start);
    parts.push_back(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const std::string where = "--from-trace '" + parts[0] + "'";
  json j = {{"path", parts[0]}};
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidInput(where + ": '" + parts[i] +
                          "' is not KEY=VALUE (keys: name, arch, framework, "
                          "precision, batch, seq)");
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    if (key == "path") return InvalidInput(where + ": the path is the part before the first ';'");
    if (j.contains(key)) return InvalidInput(where + ": " + key + ": given twice");
    if (key == "batch" || key == "seq") {
      // An integer when the whole value is one; otherwise left as text for the check to name.
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == value.size() && !value.empty()) {
        j[key] = v;
        continue;
      }
    }
    j[key] = value;
  }
  return TracedRunFromJson(j, where, default_framework);
}

std::string FileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string Ms(double v) { return std::isfinite(v) ? Fixed(v, 3) : "-"; }
std::string ErrPct(double predicted, double measured) {
  if (!std::isfinite(predicted) || !std::isfinite(measured) || measured <= 0) return "-";
  const double e = 100.0 * (predicted / measured - 1.0);
  return (e >= 0 ? "+" : "") + Fixed(e, 1);
}
json Num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string ScaleText(const RefitReport::Entry& e) {
  return e.framework + ": dispatch_us and module_us x" + Fixed(e.scale, 3) + " ± " +
         (std::isfinite(e.scale_stderr) ? Fixed(e.scale_stderr, 3) : "unknown (one trace)") + " (" +
         std::to_string(e.rows) + (e.rows == 1 ? " trace)" : " traces)");
}

struct TraceLine {
  TracedRun run;
  json row;  // measured row
  FrameworkTimeRow before;
  double after_ms = std::nan("");
};

json TraceLinesJson(const std::vector<TraceLine>& lines, double factor) {
  json a = json::array();
  for (const TraceLine& l : lines) {
    a.push_back({{"path", l.run.path},
                 {"model", l.row.value("model", "")},
                 {"arch", l.run.arch},
                 {"framework", l.run.framework},
                 {"precision", l.run.precision},
                 {"batch", l.run.batch},
                 {"seq", l.run.seq ? json(*l.run.seq) : json(nullptr)},
                 {"device", l.row.contains("device") ? l.row["device"] : json(nullptr)},
                 {"steps", l.row["latency_ms"].value("n", 0)},
                 {"traced_step_ms", l.row["latency_ms"].value("median", 0.0)},
                 {"kernel_ms", Num(l.before.kernel_ms)},
                 {"predicted_gpu_tail_ms", Num(l.before.gpu_tail_ms)},
                 {"predicted_launch_ms", Num(l.before.launch_ms)},
                 {"profiler_overhead_factor", factor},
                 {"measured_framework_ms", Num(l.before.measured_ms)},
                 {"predicted_framework_ms_before", Num(l.before.predicted_ms)},
                 {"predicted_framework_ms_after", Num(l.after_ms)},
                 {"used", l.before.usable},
                 {"reason", l.before.usable ? json(nullptr) : json(l.before.reason)}});
  }
  return a;
}

void PrintLines(const std::vector<TraceLine>& lines, const std::string& format, std::ostream& out) {
  const std::vector<std::string> header = {
      "trace",          "model",          "framework",    "prec",          "batch",       "seq", "kernel_ms",
      "measured_fw_ms", "pred_before_ms", "err_before_%", "pred_after_ms", "err_after_%", "used"};
  std::vector<std::vector<std::string>> rows;
  for (const TraceLine& l : lines)
    rows.push_back({FileName(l.run.path), l.row.value("model", ""), l.run.framework, l.run.precision,
                    std::to_string(l.run.batch), l.run.seq ? std::to_string(*l.run.seq) : "-",
                    Ms(l.before.kernel_ms), Ms(l.before.measured_ms), Ms(l.before.predicted_ms),
                    ErrPct(l.before.predicted_ms, l.before.measured_ms), Ms(l.after_ms),
                    ErrPct(l.after_ms, l.before.measured_ms), l.before.usable ? "yes" : "no"});
  if (format == "markdown") {
    out << "|";
    for (const auto& h : header) out << " " << h << " |";
    out << "\n|";
    for (size_t i = 0; i < header.size(); ++i) out << " --- |";
    out << "\n";
    for (const auto& r : rows) {
      out << "|";
      for (const auto& c : r) out << " " << c << " |";
      out << "\n";
    }
    return;
  }
  TextTable t(header);
  for (auto& r : rows) t.AddRow(r);
  out << t.Render();
}

std::string OverheadNote(double factor) {
  std::string n =
      "profiler overhead: a traced step includes the profiler's own CPU work, so framework time "
      "from a trace overstates that of an unprofiled run. ";
  if (factor == 1.0)
    return n +
           "Not corrected (--profiler-overhead-factor 1, the default): the refined costs describe "
           "profiled runs. The one paired measurement in this repository (BERT-base fp16 on the "
           "H200, validation/campaigns.md) gives traced / unprofiled framework time of 3.7x at batch 1 "
           "(traced step 13.47 ms, unprofiled 4.09 ms) but 0.8x at batch 32, where the unprofiled "
           "run was noisy (p10-p90 5.3-11.8 ms): too little to fix a default. Measure the factor "
           "for your runs (traced / unprofiled framework time of the same run) and pass it.";
  return n + "Measured framework time = (traced step - kernel time) / " + Fixed(factor, 3) +
         " (--profiler-overhead-factor, as given).";
}

// Each step returns 0 to go on, or the exit code of the error it reported.

// The options, then the traces they name (manifests first), each checked before any is read.
int LoadRuns(const FromTraceOptions& o, std::vector<TracedRun>* runs) {
  const char* cmd = "calibrate";
  if (o.profile.empty())
    return ReportError(cmd, InvalidInput("--from-trace needs --profile IN.json (the profile to refine)"));
  if (o.output.empty()) return ReportError(cmd, InvalidInput("--from-trace needs -o OUT.json"));
  if (!(o.profiler_overhead_factor > 0) || !std::isfinite(o.profiler_overhead_factor))
    return ReportError(cmd, InvalidInput("--profiler-overhead-factor must be a number > 0"));
  if (o.min_rows < 1) return ReportError(cmd, InvalidInput("--min-rows must be >= 1"));
  if (o.format != "text" && o.format != "json" && o.format != "markdown")
    return ReportError(cmd, InvalidInput("--format must be text, json or markdown"));
  auto default_fw = ParseFramework(o.framework);
  if (!default_fw)
    return ReportError(cmd, InvalidInput("--framework: unknown framework '" + o.framework + "'"));

  std::vector<std::string> inputs = o.manifests;
  inputs.push_back(o.profile);
  for (const std::string& spec : o.traces) inputs.push_back(spec.substr(0, spec.find(';')));
  Status out_ok = RefuseOutputOverInputs("-o", o.output, inputs);
  if (!out_ok.ok()) return ReportError(cmd, out_ok);
  for (const std::string& m : o.manifests) {
    Expected<std::vector<TracedRun>> r = LoadTraceManifest(m, o.framework);
    if (!r.ok()) return ReportError(cmd, r.status());
    runs->insert(runs->end(), r->begin(), r->end());
  }
  for (const std::string& spec : o.traces) {
    Expected<TracedRun> r = ParseTraceSpec(spec, o.framework);
    if (!r.ok())
      return ReportError(cmd, r.status(),
                         "give each trace's metadata after ';', e.g. --from-trace "
                         "'b8.json;arch=bert:layers=12;batch=8;seq=128;precision=fp16'");
    runs->push_back(r.value());
  }
  if (runs->empty())
    return ReportError(cmd, InvalidInput("no traces given (--from-trace or --trace-manifest)"));
  for (const TracedRun& r : *runs) {
    if (SameFile(r.path, o.output))
      return ReportError(cmd, InvalidInput("-o '" + o.output + "' is also the trace '" + r.path + "'"));
    auto fw = ParseFramework(r.framework);
    if (!IsPythonEager(*fw) && *fw != Framework::kTorchscript)
      return ReportError(cmd, InvalidInput("trace '" + r.path + "': framework " + r.framework +
                                           ": only pytorch-eager and torchscript dispatch costs are "
                                           "refined from traces"));
  }
  return 0;
}

// One line per framework named by the traces with fewer usable (framework-bound) traces than
// --min-rows; empty when every framework has enough.
std::vector<std::string> TooFewRows(const std::vector<TraceLine>& lines, int min_rows) {
  std::map<std::string, int> usable, named;
  for (const TraceLine& l : lines) {
    ++named[l.run.framework];
    usable[l.run.framework] += l.before.usable;
  }
  std::vector<std::string> failures;
  for (const auto& [fw, n] : named)
    if (usable[fw] < min_rows)
      failures.push_back(fw + ": " + std::to_string(usable[fw]) + " usable (framework-bound) trace" +
                         (usable[fw] == 1 ? "" : "s") + " of " + std::to_string(n) + ", --min-rows is " +
                         std::to_string(min_rows));
  return failures;
}

void PrintFromTraceReport(const FromTraceOptions& o, const std::vector<TraceLine>& lines, const RefitReport& rep,
                          const std::vector<std::string>& failures, const std::vector<std::string>& notes) {
  if (o.format == "json") {
    json j = {{"profile", o.profile},
              {"output", o.output},
              {"written", failures.empty()},
              {"profiler_overhead_factor", o.profiler_overhead_factor},
              {"traces", TraceLinesJson(lines, o.profiler_overhead_factor)},
              {"refinement", json::array()},
              {"failures", failures},
              {"notes", notes}};
    for (const auto& e : rep.frameworks)
      j["refinement"].push_back({{"framework", e.framework},
                                 {"dispatch_scale", e.scale},
                                 {"stderr", Num(e.scale_stderr)},
                                 {"rows", e.rows}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "Framework time per trace, predicted with " << o.profile
            << " (before) and the refined profile (after); measured = (traced step - kernel time)"
            << (o.profiler_overhead_factor != 1.0 ? " / " + Fixed(o.profiler_overhead_factor, 3) : "")
            << "\n";
  PrintLines(lines, o.format, std::cout);
  if (failures.empty())
    for (const auto& e : rep.frameworks) std::cout << "\nrefined " << ScaleText(e) << "\n";
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
}

// The refined profile, with what it was refined from, written where -o says.
int WriteRefinedProfile(const FromTraceOptions& o, const std::vector<TracedRun>& runs,
                        const std::vector<TraceLine>& lines, const RefitReport& rep,
                        const std::vector<std::string>& notes, HostProfile* refined) {
  const char* cmd = "calibrate";
  json extra = {{"refinement_inputs", TraceLinesJson(lines, o.profiler_overhead_factor)},
                {"refinement_options",
                 {{"profiler_overhead_factor", o.profiler_overhead_factor}, {"min_rows", o.min_rows}}},
                {"refinement_notes", notes},
                {"refined_by",
                 {{"tool", "ftax calibrate --from-trace"},
                  {"ftax_version", "0.1.0"},
                  {"ftax_commit", FtaxCommit()},
                  {"ftax_tree_dirty", FtaxTreeDirty()}}}};
  json sources = json::array();
  for (const TracedRun& r : runs) sources.push_back(r.path);
  RecordRefinement(rep, sources, extra, refined);
  json pj = HostProfileToJson(*refined);
  Expected<HostProfile> check = HostProfileFromJson(pj);
  if (!check.ok())
    return ReportError(cmd, Internal("refined profile does not validate: " + check.status().message()));
  Status written = WriteFileAtomic(o.output, pj.dump(2) + "\n");
  if (!written.ok()) return ReportError(cmd, written);
  if (o.format != "json") std::cout << "\nwrote " << o.output << "\n";
  return kExitOk;
}

}  // namespace

int RunCalibrateFromTrace(const FromTraceOptions& o) {
  const char* cmd = "calibrate";
  std::vector<TracedRun> runs;
  if (int rc = LoadRuns(o, &runs)) return rc;
  Expected<HostProfile> profile = LoadNamedProfile(o.profile);
  if (!profile.ok()) return ReportError(cmd, profile.status());

  std::vector<TraceLine> lines;
  json measured = {{"rows", json::array()}};
  std::vector<std::string> notes;
  const std::string host_gpu = profile->host.is_object() ? profile->host.value("gpu", "") : "";
  for (const TracedRun& r : runs) {
    Expected<json> row = MeasuredRowFromTrace(r);
    if (!row.ok()) return ReportError(cmd, row.status(), "record traces with scripts/record_trace.py");
    json m = row.value();
    m["profiler_overhead_factor"] = o.profiler_overhead_factor;
    if (m.contains("device") && !host_gpu.empty() && m["device"] != host_gpu)
      notes.push_back("trace '" + r.path + "' was recorded on " + m["device"].get<std::string>() +
                      ", the profile describes " + host_gpu);
    measured["rows"].push_back(m);
    lines.push_back({r, m, {}, std::nan("")});
  }

  RefitOptions ro;
  ro.min_rows = o.min_rows;
  RefitReport rep;
  Expected<HostProfile> refined = RefineFrameworkCosts(profile.value(), measured, ro, &rep);
  if (!refined.ok()) return ReportError(cmd, refined.status());
  for (size_t i = 0; i < lines.size(); ++i) {
    lines[i].before = rep.rows[i];
    if (!rep.rows[i].usable) notes.push_back("not used: " + lines[i].run.path + ": " + rep.rows[i].reason);
  }
  const std::vector<std::string> failures = TooFewRows(lines, o.min_rows);
  if (failures.empty()) {
    Expected<std::vector<FrameworkTimeRow>> after = CompareFrameworkTime(refined.value(), measured, ro);
    if (!after.ok()) return ReportError(cmd, after.status());
    for (size_t i = 0; i < lines.size(); ++i)
      if (after.value()[i].usable) lines[i].after_ms = after.value()[i].predicted_ms;
  }
  const bool previously_refined =
      profile->provenance.is_object() && profile->provenance.contains("refinement");
  if (previously_refined && failures.empty())
    notes.push_back(
        "the input profile was already refined (provenance.refinement): the new scale multiplies "
        "the earlier one, whose record moves to provenance.previous_refinements");
  notes.push_back(OverheadNote(o.profiler_overhead_factor));

  PrintFromTraceReport(o, lines, rep, failures, notes);
  if (!failures.empty()) {
    std::string msg = "refusing to write '" + o.output + "': ";
    for (size_t i = 0; i < failures.size(); ++i) msg += (i ? "; " : "") + failures[i];
    ReportError(cmd, InvalidInput(msg),
                "add traces of framework-bound runs (small batch), or lower --min-rows (the scale's "
                "standard error needs at least 2)");
    return kExitFailure;
  }
  return WriteRefinedProfile(o, runs, lines, rep, notes, &refined.value());
}

}  // namespace ftax::cli
