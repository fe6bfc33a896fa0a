// `ftax inspect`: what is in a model (op counts, depth, MACs/FLOPs, params, bytes).
//
// Loads an ONNX file (or builds an --arch spec), binds dims, infers shapes, computes the
// GraphStats once and renders them as a table, JSON or CSV. Exit 0 on success, 2 on bad input
// (unreadable model, bad flag, unbound dim), 3 when this build lacks the ONNX front end.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "graph/arch_spec.h"
#include "graph/dim_binding.h"
#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"
#include "graph/open_model.h"
#include "graph/torchscript_loader.h"

namespace ftax::cli {
namespace {

enum class Format { kTable, kJson, kCsv };

struct InspectOptions {
  std::string model;
  std::string arch;
  std::string flavor = "onnx";
  std::string dtype = "fp32";
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::string format_name = "table";
  Format format = Format::kTable;
  bool by_op = false;
  bool by_node = false;
  bool allow_unbound = false;
  bool strict = false;

  Status Validate() const {
    if (model.empty() && arch.empty())
      return InvalidInput("give a MODEL file or --arch SPEC");
    if (!model.empty() && !arch.empty())
      return InvalidInput("give either a MODEL file or --arch SPEC, not both");
    if (!arch.empty() && !input_shapes.empty())
      return InvalidInput("--input-shape applies to model files; for --arch use --dim");
    if (format == Format::kCsv && by_op && by_node)
      return InvalidInput("--format csv prints one table: pick --by-op or --by-node");
    return Status::Ok();
  }
};

// Integers as JSON integers (MACs are whole numbers), others as doubles.
nlohmann::json Num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e18)
    return static_cast<int64_t>(v);
  return v;
}

std::string Human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int p = 0;
  double x = v;
  while (std::fabs(x) >= 1000 && p < 6) {
    x /= 1000;
    ++p;
  }
  std::ostringstream o;
  if (p == 0 && std::isfinite(v)) o << static_cast<int64_t>(v);
  else if (p == 0) o << v;
  else o << std::fixed << std::setprecision(3) << x;
  o << " " << prefixes[p] << unit;
  return o.str();
}

std::string Int(double v) {
  std::ostringstream o;
  if (std::isfinite(v) && std::fabs(v) < 9.0e18) o << static_cast<int64_t>(std::llround(v));
  else o << v;
  return o.str();
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Nodes counted as zero (unknown op type, or shapes that could not be inferred), by op type.
std::map<std::string, int64_t> UncountedByType(const GraphStats& st) {
  std::map<std::string, int64_t> out;
  for (const auto& n : st.nodes)
    if (!n.counted) out[n.op_type] += 1;
  return out;
}

// The line at the top of the table when the totals are incomplete: ops not counted (with
// their types) and dims nobody bound, so a reader never takes a partial count for a total.
std::string IncompleteWarning(const GraphStats& st) {
  std::string w;
  if (st.uncounted_ops > 0) {
    std::string list;
    for (const auto& [type, n] : UncountedByType(st))
      list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(n) + ")";
    const double pct = st.totals.ops > 0 ? 100.0 * double(st.uncounted_ops) / double(st.totals.ops) : 0;
    std::ostringstream o;
    o << std::fixed << std::setprecision(pct < 1 ? 2 : 1) << pct;
    w += "warning: " + std::to_string(st.uncounted_ops) + " of " + std::to_string(st.totals.ops) +
         " ops (" + o.str() + "%) are not counted" +
         (pct > 1 ? ", so MACs and FLOPs are a lower bound" : "") + ": " + list + "\n";
  }
  if (!st.unbound_dims.empty()) {
    std::string d;
    for (const auto& s : st.unbound_dims) d += (d.empty() ? "" : ", ") + s;
    w += "warning: the counts leave out what depends on unbound dims: " + d + "\n";
  }
  return w;
}

nlohmann::ordered_json ToJson(const GraphStats& st, const InspectOptions& opt) {
  nlohmann::ordered_json j;
  j["source"] = st.source;
  j["opset"] = nlohmann::ordered_json::object();
  for (const auto& [d, v] : st.opset) j["opset"][d.empty() ? "ai.onnx" : d] = v;
  auto tensors = [](const std::vector<TensorSummary>& v) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& t : v) a.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
    return a;
  };
  j["inputs"] = tensors(st.inputs);
  j["outputs"] = tensors(st.outputs);
  const StatsTotals& t = st.totals;
  j["totals"] = {{"macs", Num(t.macs)},
                 {"flops", Num(t.flops)},
                 {"params", t.params},
                 {"ops", t.ops},
                 {"work_ops", t.work_ops},
                 {"depth", t.depth},
                 {"weight_bytes", Num(t.weight_bytes)},
                 {"activation_bytes", Num(t.activation_bytes)}};
  nlohmann::ordered_json by_op = nlohmann::ordered_json::array();
  for (const auto& o : st.by_op_type)
    by_op.push_back({{"op_type", o.op_type}, {"count", o.count}, {"work_ops", o.work_ops},
                     {"macs", Num(o.macs)}, {"flops", Num(o.flops)}, {"bytes", Num(o.bytes)}});
  j["by_op_type"] = by_op;
  if (opt.by_node) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const auto& n : st.nodes)
      nodes.push_back({{"name", n.name}, {"op_type", n.op_type}, {"scope", n.scope},
                       {"output_shape", n.output_shape}, {"repeat", Num(n.repeat)},
                       {"launches_work", n.launches_work}, {"counted", n.counted},
                       {"macs", Num(n.macs)}, {"flops", Num(n.flops)},
                       {"bytes_read", Num(n.bytes_read)}, {"bytes_written", Num(n.bytes_written)}});
    j["nodes"] = nodes;
  }
  j["unbound_dims"] = st.unbound_dims;
  j["unknown_op_types"] = st.unknown_op_types;
  j["uncounted_ops"] = st.uncounted_ops;
  j["uncounted_by_op_type"] = UncountedByType(st);
  j["warnings"] = st.warnings;
  return j;
}

void PrintTable(const GraphStats& st, const InspectOptions& opt, std::ostream& out) {
  auto row = [&](const std::string& k, const std::string& v) {
    out << std::left << std::setw(18) << k << v << "\n";
  };
  out << IncompleteWarning(st);
  row("model", st.source);
  std::string opset;
  for (const auto& [d, v] : st.opset)
    opset += (opset.empty() ? "" : ", ") + (d.empty() ? std::string("ai.onnx") : d) + " " +
             std::to_string(v);
  if (!opset.empty()) row("opset", opset);
  for (const auto& i : st.inputs) row("input", i.name + "  " + i.dtype + "  " + i.shape);
  for (const auto& o : st.outputs) row("output", o.name + "  " + o.dtype + "  " + o.shape);
  out << "\n";
  const StatsTotals& t = st.totals;
  row("MACs", Human(t.macs, "") + "  (" + Int(t.macs) + ")");
  row("FLOPs", Human(t.flops, "") + "  (" + Int(t.flops) + ")");
  row("params", Human(static_cast<double>(t.params), "") + "  (" + std::to_string(t.params) + ")");
  row("ops", std::to_string(t.ops));
  row("work ops", std::to_string(t.work_ops));
  row("depth", std::to_string(t.depth));
  row("weight bytes", Human(t.weight_bytes, "B") + "  (" + Int(t.weight_bytes) + ")");
  row("activation bytes", Human(t.activation_bytes, "B") + "  (" + Int(t.activation_bytes) + ")");
  if (!st.unbound_dims.empty()) {
    std::string d;
    for (const auto& s : st.unbound_dims) d += (d.empty() ? "" : ", ") + s;
    row("unbound dims", d);
  }
  if (!st.unknown_op_types.empty()) {
    std::string d;
    for (const auto& s : st.unknown_op_types) d += (d.empty() ? "" : ", ") + s;
    row("unknown op types", d);
  }
  if (st.uncounted_ops) row("uncounted ops", std::to_string(st.uncounted_ops));
  if (opt.by_op) {
    out << "\n"
        << std::left << std::setw(28) << "op_type" << std::right << std::setw(8) << "count"
        << std::setw(8) << "work" << std::setw(16) << "MACs" << std::setw(16) << "FLOPs"
        << std::setw(16) << "bytes" << "\n";
    for (const auto& o : st.by_op_type)
      out << std::left << std::setw(28) << o.op_type << std::right << std::setw(8) << o.count
          << std::setw(8) << o.work_ops << std::setw(16) << Int(o.macs) << std::setw(16)
          << Int(o.flops) << std::setw(16) << Int(o.bytes) << "\n";
  }
  if (opt.by_node) {
    out << "\n"
        << std::left << std::setw(40) << "node" << std::setw(22) << "op_type" << std::setw(20)
        << "output_shape" << std::right << std::setw(16) << "MACs" << std::setw(16) << "FLOPs"
        << "\n";
    for (const auto& n : st.nodes)
      out << std::left << std::setw(40) << n.name << " " << std::setw(21) << n.op_type << " "
          << std::setw(19) << n.output_shape << std::right << std::setw(16) << Int(n.macs)
          << std::setw(16) << Int(n.flops) << (n.counted ? "" : "  (not counted)") << "\n";
  }
  if (!st.warnings.empty()) {
    out << "\n";
    for (const auto& w : st.warnings) out << "warning: " << w << "\n";
  }
}

void PrintCsv(const GraphStats& st, const InspectOptions& opt, std::ostream& out) {
  if (opt.by_node) {
    out << "name,op_type,scope,output_shape,repeat,launches_work,counted,macs,flops,bytes_read,"
           "bytes_written\n";
    for (const auto& n : st.nodes)
      out << CsvField(n.name) << "," << CsvField(n.op_type) << "," << CsvField(n.scope) << ","
          << n.output_shape << "," << Int(n.repeat) << "," << (n.launches_work ? 1 : 0) << ","
          << (n.counted ? 1 : 0) << "," << Int(n.macs) << "," << Int(n.flops) << ","
          << Int(n.bytes_read) << "," << Int(n.bytes_written) << "\n";
  } else if (opt.by_op) {
    out << "op_type,count,work_ops,macs,flops,bytes\n";
    for (const auto& o : st.by_op_type)
      out << CsvField(o.op_type) << "," << o.count << "," << o.work_ops << "," << Int(o.macs)
          << "," << Int(o.flops) << "," << Int(o.bytes) << "\n";
  } else {
    const StatsTotals& t = st.totals;
    out << "metric,value\n"
        << "macs," << Int(t.macs) << "\nflops," << Int(t.flops) << "\nparams," << t.params
        << "\nops," << t.ops << "\nwork_ops," << t.work_ops << "\ndepth," << t.depth
        << "\nweight_bytes," << Int(t.weight_bytes) << "\nactivation_bytes,"
        << Int(t.activation_bytes) << "\n";
  }
  for (const auto& w : st.warnings) std::cerr << "ftax inspect: warning: " << w << "\n";
  std::cerr << IncompleteWarning(st);
}

int RunInspect(const InspectOptions& opt) {
  Status v = opt.Validate();
  if (!v.ok()) return ReportError("inspect", v, "see ftax inspect --help");
  ModelSourceOptions mo;
  mo.path = opt.model;
  mo.arch = opt.arch;
  mo.flavor = opt.flavor;
  mo.dtype = opt.dtype;
  mo.dims = opt.dims;
  mo.input_shapes = opt.input_shapes;
  mo.strict = opt.strict;
  Expected<Graph> graph = OpenModelGraph(mo);
  if (!graph.ok())
    return ReportError("inspect", graph.status(), opt.arch.empty() ? "" : ArchSpecHelp());
  Graph& g = graph.value();

  StatsOptions so;
  so.per_node = true;  // uncounted nodes are listed by type; rows print only with --by-node
  Expected<GraphStats> st = ComputeStats(g, so);
  if (!st.ok()) return ReportError("inspect", st.status().WithContext(g.source));
  if (opt.strict && st->uncounted_ops > 0) {
    std::string list;
    for (const auto& [type, n] : UncountedByType(st.value()))
      list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(n) + ")";
    return ReportError("inspect",
                       InvalidInput(g.source + ": " + std::to_string(st->uncounted_ops) +
                                    " ops cannot be counted: " + list),
                       "without --strict they count as 0 and are listed as a warning");
  }
  if (!st->unbound_dims.empty() && !opt.allow_unbound) {
    // Dims of the graph inputs are the user's to bind; others are internal dims an exporter
    // named where its own shape inference gave up, which ftax could not resolve either.
    std::vector<std::string> input_dims = UnboundInputDims(g), internal;
    for (const auto& d : st->unbound_dims)
      if (std::find(input_dims.begin(), input_dims.end(), d) == input_dims.end()) internal.push_back(d);
    if (input_dims.empty() && !internal.empty()) {
      std::string list;
      for (const auto& d : internal) list += (list.empty() ? "" : ", ") + d;
      std::string where;
      for (const auto& i : st->inputs) where += (where.empty() ? "" : ", ") + i.name + " " + i.shape;
      return ReportError(
          "inspect",
          InvalidInput(g.source + ": every input shape is bound (" + where + "), but the shapes " +
                       "of some ops could not be inferred; the exporter named their unknown dims " +
                       list + ", which no input carries"),
          "the warnings below (--allow-unbound) name the first node that could not be inferred");
    }
  }
  if (!st->unbound_dims.empty() && !opt.allow_unbound) {
    std::string list, flags;
    for (const auto& d : st->unbound_dims) {
      list += (list.empty() ? "" : ", ") + d;
      flags += " --dim " + d + "=N";
    }
    std::string where;
    for (const auto& i : st->inputs) where += (where.empty() ? "" : ", ") + i.name + " " + i.shape;
    return ReportError("inspect",
                       InvalidInput(g.source + ": unbound symbolic dims: " + list +
                                    " (inputs: " + where + ")"),
                       "bind them with" + flags +
                           ", or pass --allow-unbound to count what does not depend on them");
  }
  switch (opt.format) {
    case Format::kJson: std::cout << ToJson(st.value(), opt).dump(2) << "\n"; break;
    case Format::kCsv: PrintCsv(st.value(), opt, std::cout); break;
    case Format::kTable: PrintTable(st.value(), opt, std::cout); break;
  }
  return kExitOk;
}

}  // namespace

void SetupInspectCommand(CLI::App& app) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "What is in a model: op counts, depth, MACs/FLOPs, params, weight and activation bytes");
  cmd->add_option("model", opt->model,
                  "model file: ONNX (.onnx; weights are never read) or TorchScript (.pt from "
                  "torch.jit.trace/script; needs --input-shape for every input of forward)");
  cmd->add_option("--arch", opt->arch,
                  "architecture spec instead of a file, e.g. bert:layers=12,hidden=768");
  cmd->add_option("--flavor", opt->flavor, "op flavor of --arch graphs: onnx or torch (aten ops)")
      ->check(CLI::IsMember({"onnx", "torch"}));
  cmd->add_option("--dtype", opt->dtype, "dtype of --arch weights and activations (fp32, fp16, bf16)");
  cmd->add_option("--dim", opt->dims, "bind a symbolic dim: NAME=VALUE (repeatable)");
  cmd->add_option("--input-shape", opt->input_shapes,
                  "set an input's shape: [NAME=]1x3x224x224[:DTYPE] (repeatable); dims may be "
                  "names bound by --dim (input_ids=batchx128 --dim batch=8)");
  AddFormatOption(cmd, &opt->format_name, {"table", "json", "csv"});
  cmd->add_flag("--by-op", opt->by_op, "add a breakdown by op type");
  cmd->add_flag("--by-node", opt->by_node, "add one row per node");
  cmd->add_flag("--allow-unbound", opt->allow_unbound,
                "report unbound dims instead of failing; ops that need them count as 0");
  cmd->add_flag("--strict", opt->strict,
                "exit 2 on unknown op types and ops whose shapes cannot be inferred (without it "
                "they count as 0 and are listed at the top and in JSON's uncounted_by_op_type)");
  cmd->footer(
      "Exit codes: 0 ok; 2 bad input (unreadable model, bad flag, unbound dim);\n"
      "3 this build has no ONNX front end (or no LibTorch, for TorchScript files).\n\n"
      "TorchScript files: the file stores no input shapes, so give one --input-shape per input\n"
      "of forward, named as forward's arguments (a single input needs no name). Inputs named\n"
      "like ids, mask, position or index are int64 unless a dtype is given (input_ids=1x128:int32).\n"
      "Ops are aten ops as eager PyTorch dispatches them; the module path is each op's scope.\n\n" +
      ArchSpecHelp());
  cmd->callback([opt] {
    std::string f = opt->format_name;
    for (char& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    opt->format = f == "json" ? Format::kJson : f == "csv" ? Format::kCsv : Format::kTable;
    ExitCode() = RunInspect(*opt);
  });
}

}  // namespace ftax::cli
