#include "cli/prediction_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "cli/gnuplot_runner.h"
#include "cli/plot_script.h"
#include "cli/profile_names.h"
#include "cli/text_table.h"

namespace ftax::cli {
namespace {

using json = nlohmann::json;

std::string Label(Framework f, DType d) { return std::string(FrameworkName(f)) + " " + DTypeName(d); }

json PointJson(const PredictionPoint& p) {
  json cls = json::object();
  for (int c = 0; c < kNumKernelClasses; ++c)
    if (p.class_ms[c] > 0) cls[KernelClassName(KernelClass(c))] = p.class_ms[c];
  json j = {{"batch", p.batch}, {"framework", FrameworkName(p.framework)},
          {"precision", DTypeName(p.precision)}, {"latency_ms", p.latency_ms},
          {"framework_ms", p.framework_ms}, {"compute_ms", p.compute_ms}, {"bound", p.bound},
          {"gpu_util", p.gpu_util}, {"interval_ms", {p.interval_lo_ms, p.interval_hi_ms}},
          {"dispatches", p.dispatches}, {"kernels", p.kernels}, {"module_calls", p.module_calls},
          {"compute_ms_by_class", cls}};
  if (p.sync_wait_ms > 0) j["sync_wait_ms"] = p.sync_wait_ms;
  if (p.graph_inputs > 0) j["graph_inputs"] = {{"tensors", p.graph_inputs}, {"ms", p.graph_input_ms}};
  if (p.framework == Framework::kTorchCompile || p.call_ms > 0) {
    j["call_ms"] = p.call_ms;
    if (p.module_ms > 0) j["modules"] = {{"modules", p.module_calls}, {"ms", p.module_ms}};
  }
  if (p.framework == Framework::kTorchCompileReduceOverhead && p.call_ms > 0) {
    j["before_replay_ms"] = p.call_ms + p.module_ms;
    j["node_gap_ms"] = p.node_gap_ms;
  }
  if (!p.op_framework_ms.empty()) {
    json ops = json::object();
    for (const auto& [op, v] : p.op_framework_ms) ops[op] = {{"ms", v.first}, {"ops", v.second}};
    j["framework_ms_by_op"] = ops;
  }
  if (!p.op_compute_ms.empty()) {
    json ops = json::object();
    for (const auto& [op, v] : p.op_compute_ms) ops[op] = {{"ms", v.first}, {"kernels", v.second}};
    j["compute_ms_by_op"] = ops;
  }
  if (!p.kernel_groups.empty()) {
    json groups = json::array();
    for (const auto& g : p.kernel_groups) {
      const KernelWork& k = g.shape;
      json one = {{"op_type", g.op_type}, {"class", KernelClassName(k.cls)},
                  {"variant", KernelVariantName(k.variant)}, {"dtype", DTypeName(k.dtype)},
                  {"flops", k.flops}, {"bytes", k.bytes}, {"count", g.count},
                  {"kernels_launched", g.launched}, {"us_each", g.us_each}, {"us_total", g.us_total}};
      if (k.m || k.n || k.k) one["mnk"] = {k.m, k.n, k.k, k.batch};
      groups.push_back(one);
    }
    j["kernel_groups"] = groups;
  }
  return j;
}

// What one kernel group is, for a table: "conv nhwc 12544x64x576, 3.40 MB" or "elementwise
// 3.20 MB" (the bytes tell apart layers of one GEMM-like shape: a strided first layer of a
// stage reads a larger input).
std::string KernelShapeText(const KernelWork& k) {
  std::string s = KernelClassName(k.cls);
  if (*KernelVariantName(k.variant)) s += std::string(" ") + KernelVariantName(k.variant);
  if (k.m || k.n || k.k) {
    s += " " + std::to_string(k.m) + "x" + std::to_string(k.n) + "x" + std::to_string(k.k);
    if (k.batch > 1) s += " x" + std::to_string(k.batch);
    s += ",";
  }
  return s + " " + Fixed(k.bytes / 1e6, 2) + " MB";
}

// --kernels: each point's most expensive kernel groups (equal kernels of one op type and
// shape together), with their share of the point's GPU time.
std::string KernelGroupsText(const PredictionPoint& p) {
  if (p.kernel_groups.empty()) return "";
  TextTable t({"op_type", "kernel (class variant m x n x k [x batch], bytes)", "count", "launched", "us_each",
               "us_total", "share"});
  double shown = 0;
  for (const auto& g : p.kernel_groups) {
    shown += g.us_total;
    t.AddRow({g.op_type, KernelShapeText(g.shape), std::to_string(g.count), std::to_string(g.launched),
              Fixed(g.us_each, 2), Fixed(g.us_total, 1),
              Fixed(p.compute_ms > 0 ? 100 * g.us_total / (1e3 * p.compute_ms) : 0, 1) + "%"});
  }
  std::ostringstream out;
  out << "\nGPU kernels by shape, " << Label(p.framework, p.precision) << " batch " << p.batch << " ("
      << p.kernel_groups.size() << " groups, " << Fixed(shown / 1e3, 3) << " of " << Fixed(p.compute_ms, 3)
      << " compute ms):\n"
      << t.Render();
  return out.str();
}

// "CPU time by op type, pytorch-eager fp16 batch 1: batch_norm 0.718 ms (20), ...": the op
// types priced by their own cost, most expensive first (at most six named).
std::string OpFrameworkLine(const PredictionPoint& p) {
  if (p.op_framework_ms.empty()) return "";
  std::vector<std::pair<double, std::string>> by_time;
  double total = 0;
  for (const auto& [op, v] : p.op_framework_ms) {
    by_time.emplace_back(-v.first, op + " " + Fixed(v.first, 3) + " ms (" + std::to_string(v.second) + ")");
    total += v.first;
  }
  std::sort(by_time.begin(), by_time.end());
  std::string line = "CPU time by op type, " + Label(p.framework, p.precision) + " batch " +
                     std::to_string(p.batch) + ": ";
  for (size_t i = 0; i < by_time.size() && i < 6; ++i) line += (i ? ", " : "") + by_time[i].second;
  if (by_time.size() > 6) line += ", ...";
  line += "; " + Fixed(total, 3) + " of " + Fixed(p.framework_ms, 3) + " ms";
  if (p.framework == Framework::kTorchCompile) {
    // The compiled call's other parts: its Triton kernels (priced by class), the call itself,
    // the graph's inputs and, outside the generated code, the modules.
    int by_op = 0;
    for (const auto& [op, v] : p.op_framework_ms) by_op += v.second;
    const double rest = p.framework_ms - total - p.call_ms - p.graph_input_ms - p.module_ms;
    line += "; the rest: other dispatches " + Fixed(std::max(0.0, rest), 3) + " ms (" +
            std::to_string(std::max(0, p.dispatches - by_op)) + "), the call " + Fixed(p.call_ms, 3) + " ms";
    if (p.graph_inputs > 0)
      line += ", " + std::to_string(p.graph_inputs) + " graph inputs " + Fixed(p.graph_input_ms, 3) + " ms";
    if (p.module_ms > 0)
      line += ", " + std::to_string(p.module_calls) + " modules outside the generated code " + Fixed(p.module_ms, 3) + " ms";
  }
  return line + "\n";
}

// "torch-compile-reduce-overhead fp16 batch 1: before the replay 0.186 ms (the call 0.052, 130
// modules' guards 0.134), then the replay 0.418 ms (kernels 0.356, gaps between its 126 nodes
// 0.062)": where a reduce-overhead call read as its wrapper's work, then the replay, spends it.
std::string ReplayLine(const PredictionPoint& p) {
  if (p.framework != Framework::kTorchCompileReduceOverhead || p.call_ms <= 0) return "";
  std::string line = Label(p.framework, p.precision) + " batch " + std::to_string(p.batch) + ": before the replay " +
                     Fixed(p.call_ms + p.module_ms, 3) + " ms (the call " + Fixed(p.call_ms, 3);
  if (p.module_ms > 0) line += ", " + std::to_string(p.module_calls) + " modules' guards " + Fixed(p.module_ms, 3);
  const double replay = p.latency_ms - p.call_ms - p.module_ms;
  return line + "), then the replay " + Fixed(replay, 3) + " ms (kernels " + Fixed(p.compute_ms, 3) +
         ", gaps between its " + std::to_string(p.kernels) + " nodes " + Fixed(p.node_gap_ms, 3) + ")\n";
}

// The point's framework, precision and batch: "pytorch-eager fp16 batch 8".
std::string Config(const PredictionPoint& p) {
  return Label(p.framework, p.precision) + " batch " + std::to_string(p.batch);
}

double DeltaPct(double base_ms, double delta_ms) { return base_ms > 0 ? 100 * delta_ms / base_ms : 0; }

// "+1.234" / "-0.500": deltas read better signed.
std::string Signed(double v, int digits) { return (v >= 0 ? "+" : "") + Fixed(v, digits); }

const std::vector<std::string> kPointCsvHeader = {
    "framework", "precision", "batch", "latency_ms", "interval_lo_ms", "interval_hi_ms",
    "framework_ms", "compute_ms", "bound", "gpu_util", "kernels", "dispatches"};

std::vector<std::string> PointCsvCells(const PredictionPoint& p) {
  return {FrameworkName(p.framework), DTypeName(p.precision), std::to_string(p.batch),
          Fixed(p.latency_ms, 6), Fixed(p.interval_lo_ms, 6), Fixed(p.interval_hi_ms, 6),
          Fixed(p.framework_ms, 6), Fixed(p.compute_ms, 6), p.bound, Fixed(p.gpu_util, 4),
          std::to_string(p.kernels), std::to_string(p.dispatches)};
}

std::string CrossoverText(const Crossover& c) {
  return "crossover " + Label(c.framework, c.precision) + ": " +
         (c.batch ? "compute-bound from batch " + std::to_string(*c.batch)
                  : "framework-bound up to batch " + std::to_string(c.searched_to));
}

json ChangedJson(const ReportSide& s) {
  json j = json::object();
  for (const auto& [key, value] : s.changed) j[key] = value;
  return j;
}

// A point of one side, labelled with that side's knobs and profile.
json SidePointJson(const ReportSide& s, const PredictionPoint& p) {
  json j = PointJson(p);
  j["label"] = RowLabel(s);
  j["profile"] = s.profile;
  j["changed"] = ChangedJson(s);
  return j;
}

// A side's report without its points (they are in the rows), with what it was made for.
json SideJson(const ReportSide& s, bool with_predictions) {
  json j = PredictionToJson(s.report, {});
  if (!with_predictions) j.erase("predictions");
  j["label"] = s.label;
  j["row_label"] = RowLabel(s);
  j["model"] = s.model;
  j["profile"] = s.profile;
  j["changed"] = ChangedJson(s);
  return j;
}

// The notes of every side, once each: "note: ..." when every side has it, else prefixed with
// the labels of the sides that do ("note (A, C): ...").
std::string SideNotes(const std::vector<const ReportSide*>& sides) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> labels;
  for (const ReportSide* s : sides)
    for (const auto& n : s->report.notes) {
      auto& l = labels[n];
      if (l.empty()) order.push_back(n);
      if (l.empty() || l.back() != s->label) l.push_back(s->label);
    }
  std::ostringstream out;
  for (const auto& n : order) {
    const auto& l = labels[n];
    if (l.size() == sides.size()) {
      out << "note: " << n << "\n";
      continue;
    }
    std::string which;
    for (const auto& label : l) which += (which.empty() ? "" : ", ") + label;
    out << "note (" << which << "): " << n << "\n";
  }
  return out.str();
}

}  // namespace

std::string RowLabel(const ReportSide& side) {
  std::string knobs;
  for (const auto& [key, value] : side.changed) knobs += (knobs.empty() ? "" : ",") + key + "=" + value;
  return (knobs.empty() ? side.label : knobs) + " on " + side.profile;
}

json ProfileJson(const std::string& name_or_path, const HostProfile& profile) {
  return {{"name", name_or_path}, {"path", ResolveProfilePath(name_or_path)},
          {"gpu", profile.host.value("gpu", std::string())},
          {"date", profile.provenance.value("date", std::string())}};
}

json PredictionToJson(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom) {
  json j;
  j["predictions"] = json::array();
  for (const auto& p : r.points) j["predictions"].push_back(PointJson(p));
  j["crossovers"] = json::array();
  for (const auto& c : r.crossovers)
    j["crossovers"].push_back({{"framework", FrameworkName(c.framework)},
                               {"precision", DTypeName(c.precision)},
                               {"crossover_batch", c.batch ? json(*c.batch) : json(nullptr)},
                               {"searched_to", c.searched_to}});
  j["width_headroom"] = json::array();
  for (const auto& h : headroom)
    j["width_headroom"].push_back({{"framework", FrameworkName(h.framework)},
                                   {"precision", DTypeName(h.precision)}, {"batch", h.batch},
                                   {"factor", h.factor}, {"tolerance_pct", h.tolerance_pct}});
  j["notes"] = r.notes;
  j["unpriced_ops"] = r.unpriced_ops;
  j["generic_priced_ops"] = r.generic_ops;
  return j;
}

Status RefuseUnpriced(const std::string& what, const PredictionReport& r) {
  if (r.unpriced_ops.empty()) return Status::Ok();
  std::string list;
  for (const auto& [type, n] : r.unpriced_ops)
    list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(n) + " nodes)";
  return InvalidInput(what + ": op types ftax cannot price: " + list);
}

const char kUnpricedHint[] = "without --strict they are priced as one elementwise kernel each";

std::string UnpricedWarning(const PredictionReport& r) {
  if (r.unpriced_ops.empty()) return "";
  std::string list;
  int n = 0;
  for (const auto& [type, count] : r.unpriced_ops) {
    list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(count) + ")";
    n += count;
  }
  return "warning: " + std::to_string(n) + " ops of types ftax does not know were priced as one "
         "elementwise kernel each (a guess): " + list + "\n";
}

std::string PredictionTable(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom) {
  TextTable t({"framework", "prec", "batch", "latency_ms", "p10..p90_ms", "framework_ms", "compute_ms",
               "bound", "gpu_util", "kernels", "dispatches"});
  for (const auto& p : r.points)
    t.AddRow({FrameworkName(p.framework), DTypeName(p.precision), std::to_string(p.batch),
              Fixed(p.latency_ms, 3), Fixed(p.interval_lo_ms, 3) + ".." + Fixed(p.interval_hi_ms, 3),
              Fixed(p.framework_ms, 3), Fixed(p.compute_ms, 3), p.bound,
              Fixed(100 * p.gpu_util, 0) + "%", std::to_string(p.kernels), std::to_string(p.dispatches)});
  std::ostringstream out;
  out << UnpricedWarning(r);
  out << t.Render();
  if (!r.crossovers.empty()) {
    out << "\n";
    for (const auto& c : r.crossovers) out << CrossoverText(c) << "\n";
  }
  for (const auto& h : headroom)
    out << "width headroom " << Label(h.framework, h.precision) << " at batch " << h.batch << ": "
        << Fixed(h.factor, 2) << "x wider within +" << Fixed(h.tolerance_pct, 0) << "% latency\n";
  for (const auto& p : r.points) out << OpFrameworkLine(p) << ReplayLine(p);
  for (const auto& p : r.points) out << KernelGroupsText(p);
  for (const auto& p : r.points)
    if (p.sync_wait_ms > 0)
      out << "CPU waiting for the GPU, " << Label(p.framework, p.precision) << " batch " << p.batch << ": "
          << Fixed(p.sync_wait_ms, 3) << " of " << Fixed(p.framework_ms, 3)
          << " framework ms, at copies of CPU tensors to the GPU\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  return out.str();
}

std::string PredictionCsv(const PredictionReport& r) {
  TextTable t(kPointCsvHeader);
  for (const auto& p : r.points) t.AddRow(PointCsvCells(p));
  return t.RenderCsv();
}

std::string PairedTable(const ReportSide& a, const ReportSide& b) {
  const std::string& la = a.label;
  const std::string& lb = b.label;
  TextTable t({la + " config", la + " ms", lb, lb + " config", lb + " ms", "delta_ms", "delta_%",
               "bound (" + la + "/" + lb + ")"});
  const std::string row_label = RowLabel(b);
  const size_t n = std::min(a.report.points.size(), b.report.points.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& p = a.report.points[i];
    const auto& q = b.report.points[i];
    const double d = q.latency_ms - p.latency_ms;
    t.AddRow({Config(p), Fixed(p.latency_ms, 3), row_label, Config(q), Fixed(q.latency_ms, 3),
              Signed(d, 3), Signed(DeltaPct(p.latency_ms, d), 1), p.bound + "/" + q.bound});
  }
  std::ostringstream out;
  const size_t w = std::max(la.size(), lb.size());
  out << la << std::string(w - la.size(), ' ') << " = " << a.model << " on " << a.profile << "\n";
  out << lb << std::string(w - lb.size(), ' ') << " = " << RowLabel(b)
      << (b.model != a.model ? " (" + b.model + ")" : "") << "\n";
  out << UnpricedWarning(a.report) << UnpricedWarning(b.report);
  out << t.Render();
  out << SideNotes({&a, &b});
  return out.str();
}

json PairedJson(const ReportSide& a, const ReportSide& b) {
  json j;
  j["labels"] = {a.label, b.label};
  j["pairs"] = json::array();
  const size_t n = std::min(a.report.points.size(), b.report.points.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& p = a.report.points[i];
    const auto& q = b.report.points[i];
    const double d = q.latency_ms - p.latency_ms;
    j["pairs"].push_back({{a.label, SidePointJson(a, p)}, {b.label, SidePointJson(b, q)},
                          {"delta_ms", d}, {"delta_pct", DeltaPct(p.latency_ms, d)}});
  }
  j[a.label] = SideJson(a, true);
  j[b.label] = SideJson(b, true);
  return j;
}

std::string PairedCsv(const ReportSide& a, const ReportSide& b) {
  std::vector<std::string> header;
  for (const ReportSide* s : {&a, &b})
    for (const char* col : {"label", "framework", "precision", "batch", "latency_ms", "bound"})
      header.push_back(s->label + "_" + col);
  header.push_back("delta_ms");
  header.push_back("delta_pct");
  TextTable t(header);
  const size_t n = std::min(a.report.points.size(), b.report.points.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> row;
    for (const ReportSide* s : {&a, &b}) {
      const auto& p = s->report.points[i];
      for (std::string cell : {RowLabel(*s), std::string(FrameworkName(p.framework)),
                               std::string(DTypeName(p.precision)), std::to_string(p.batch),
                               Fixed(p.latency_ms, 6), p.bound})
        row.push_back(cell);
    }
    const double base = a.report.points[i].latency_ms;
    const double d = b.report.points[i].latency_ms - base;
    row.push_back(Fixed(d, 6));
    row.push_back(Fixed(DeltaPct(base, d), 3));
    t.AddRow(row);
  }
  return t.RenderCsv();
}

std::string ComparisonTable(const std::vector<ReportSide>& sides) {
  if (sides.empty()) return "";
  const std::string& first = sides[0].label;
  std::vector<std::string> header = {"framework", "prec", "batch"};
  std::string bounds;
  for (size_t k = 0; k < sides.size(); ++k) {
    const std::string& l = sides[k].label;
    header.push_back(l + " ms");
    if (k) {
      header.push_back(l + "-" + first + " ms");
      header.push_back(l + "-" + first + " %");
    }
    bounds += (k ? "/" : "") + l;
  }
  header.push_back("bound (" + bounds + ")");
  TextTable t(header);
  size_t n = sides[0].report.points.size();
  for (const auto& s : sides) n = std::min(n, s.report.points.size());
  for (size_t i = 0; i < n; ++i) {
    const PredictionPoint& p0 = sides[0].report.points[i];
    std::vector<std::string> row = {FrameworkName(p0.framework), DTypeName(p0.precision),
                                    std::to_string(p0.batch)};
    std::string bound;
    for (size_t k = 0; k < sides.size(); ++k) {
      const PredictionPoint& p = sides[k].report.points[i];
      row.push_back(Fixed(p.latency_ms, 3));
      if (k) {
        const double d = p.latency_ms - p0.latency_ms;
        row.push_back(Signed(d, 3));
        row.push_back(Signed(DeltaPct(p0.latency_ms, d), 1));
      }
      bound += (k ? "/" : "") + p.bound;
    }
    row.push_back(bound);
    t.AddRow(row);
  }
  std::ostringstream out;
  size_t w = 0;
  for (const auto& s : sides) w = std::max(w, s.label.size());
  for (const auto& s : sides) out << s.label << std::string(w - s.label.size(), ' ') << " = " << s.model << "\n";
  for (const auto& s : sides) {
    std::string warning = UnpricedWarning(s.report);
    if (!warning.empty()) out << s.label << ": " << warning;
  }
  out << t.Render();
  for (const auto& s : sides)
    for (const auto& c : s.report.crossovers) out << s.label << ": " << CrossoverText(c) << "\n";
  std::vector<const ReportSide*> all;
  for (const auto& s : sides) all.push_back(&s);
  out << SideNotes(all);
  return out.str();
}

json ComparisonJson(const std::vector<ReportSide>& sides) {
  json j;
  j["labels"] = json::array();
  j["models"] = json::array();
  for (const auto& s : sides) {
    j["labels"].push_back(s.label);
    j["models"].push_back(SideJson(s, false));
  }
  j["rows"] = json::array();
  if (sides.empty()) return j;
  size_t n = sides[0].report.points.size();
  for (const auto& s : sides) n = std::min(n, s.report.points.size());
  for (size_t i = 0; i < n; ++i) {
    const PredictionPoint& p0 = sides[0].report.points[i];
    json row = {{"framework", FrameworkName(p0.framework)}, {"precision", DTypeName(p0.precision)},
                {"batch", p0.batch}, {"models", json::array()}};
    for (const auto& s : sides) {
      const PredictionPoint& p = s.report.points[i];
      json m = PointJson(p);
      m["label"] = s.label;
      m["delta_ms"] = p.latency_ms - p0.latency_ms;
      m["delta_pct"] = DeltaPct(p0.latency_ms, p.latency_ms - p0.latency_ms);
      row["models"].push_back(m);
    }
    j["rows"].push_back(row);
  }
  return j;
}

std::string ComparisonCsv(const std::vector<ReportSide>& sides) {
  std::vector<std::string> header = {"label", "model"};
  header.insert(header.end(), kPointCsvHeader.begin(), kPointCsvHeader.end());
  header.push_back("delta_ms");
  header.push_back("delta_pct");
  TextTable t(header);
  size_t n = sides.empty() ? 0 : sides[0].report.points.size();
  for (const auto& s : sides) n = std::min(n, s.report.points.size());
  for (const auto& s : sides)
    for (size_t i = 0; i < n; ++i) {
      const PredictionPoint& p = s.report.points[i];
      const double base = sides[0].report.points[i].latency_ms;
      std::vector<std::string> row = {s.label, s.model};
      for (std::string& cell : PointCsvCells(p)) row.push_back(std::move(cell));
      row.push_back(Fixed(p.latency_ms - base, 6));
      row.push_back(Fixed(DeltaPct(base, p.latency_ms - base), 3));
      t.AddRow(row);
    }
  return t.RenderCsv();
}

std::string SpecsTable(const std::vector<SpecReport>& specs) {
  TextTable t({"spec", "framework", "prec", "batch", "latency_ms", "p10..p90_ms", "framework_ms",
               "compute_ms", "bound", "gpu_util", "kernels", "dispatches"});
  std::ostringstream warnings, crossovers;
  std::set<std::string> notes;
  std::vector<std::string> note_order;
  for (const auto& s : specs) {
    for (const auto& p : s.report.points)
      t.AddRow({s.spec, FrameworkName(p.framework), DTypeName(p.precision), std::to_string(p.batch),
                Fixed(p.latency_ms, 3), Fixed(p.interval_lo_ms, 3) + ".." + Fixed(p.interval_hi_ms, 3),
                Fixed(p.framework_ms, 3), Fixed(p.compute_ms, 3), p.bound,
                Fixed(100 * p.gpu_util, 0) + "%", std::to_string(p.kernels), std::to_string(p.dispatches)});
    std::string warning = UnpricedWarning(s.report);
    if (!warning.empty()) warnings << "line " << s.line << " (" << s.spec << "): " << warning;
    for (const auto& c : s.report.crossovers) crossovers << s.spec << ": " << CrossoverText(c) << "\n";
    for (const auto& n : s.report.notes)
      if (notes.insert(n).second) note_order.push_back(n);
  }
  std::ostringstream out;
  out << warnings.str() << t.Render();
  if (!crossovers.str().empty()) out << "\n" << crossovers.str();
  for (const auto& n : note_order) out << "note: " << n << "\n";
  return out.str();
}

json SpecsJson(const std::vector<SpecReport>& specs) {
  json j;
  j["specs"] = json::array();
  j["predictions"] = json::array();
  j["crossovers"] = json::array();
  for (const auto& s : specs) {
    json r = PredictionToJson(s.report, {});
    for (json& p : r["predictions"]) {
      p["line"] = s.line;
      p["spec"] = s.spec;
      j["predictions"].push_back(std::move(p));
    }
    for (json& c : r["crossovers"]) {
      c["line"] = s.line;
      c["spec"] = s.spec;
      j["crossovers"].push_back(std::move(c));
    }
    j["specs"].push_back({{"line", s.line}, {"spec", s.spec}, {"notes", r["notes"]},
                          {"unpriced_ops", r["unpriced_ops"]},
                          {"generic_priced_ops", r["generic_priced_ops"]}});
  }
  return j;
}

std::string SpecsCsv(const std::vector<SpecReport>& specs) {
  std::vector<std::string> header = {"line", "spec"};
  header.insert(header.end(), kPointCsvHeader.begin(), kPointCsvHeader.end());
  TextTable t(header);
  for (const auto& s : specs)
    for (const auto& p : s.report.points) {
      std::vector<std::string> row = {std::to_string(s.line), s.spec};
      for (std::string& cell : PointCsvCells(p)) row.push_back(std::move(cell));
      t.AddRow(row);
    }
  return t.RenderCsv();
}

Status PlotPrediction(const PredictionReport& r, const std::string& title, const std::string& path) {
  const GnuplotJob job = PredictionPlotJob(r, title);
  return RunGnuplot(job.script, job.data, path, job.size);
}

}  // namespace ftax::cli
