// `ftax predict`: latency per framework, precision and batch, and why; for one model (a file or
// --arch), beside a what-if (--whatif), or for a list of arch specs (--specs).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "cli/commands.h"
#include "cli/gnuplot_runner.h"
#include "cli/output_format.h"
#include "cli/profile_names.h"
#include "graph/open_model.h"
#include "cli/prediction_view.h"
#include "cli/sweep_args.h"
#include "common/file_io.h"
#include "graph/dim_binding.h"
#include "predictor/cpu_speed.h"
#include "predictor/host_profile.h"

namespace ftax::cli {
namespace {

struct PredictOptions {
  ModelSourceOptions model;
  std::string specs;  // a file of arch specs, one a line; "-": standard input
  std::string profile;
  std::vector<std::string> frameworks = {"pytorch-eager", "torchscript", "cuda-graph"};
  std::vector<std::string> precisions = {"fp16"};
  std::string batch = "1:128";
  std::string format = "table";
  std::string plot;
  std::string whatif;
  int samples = 64;
  int kernels = 0;  // --kernels: kernel groups listed per point (-1 all)
  double headroom_tolerance_pct = 5;
  bool strict = false;
};

struct Sweep {
  ModelSourceOptions model_options;  // what `source` was opened from
  ModelSource source;
  std::string profile_name;  // as the user named it
  HostProfile profile;
  PredictRequest request;
};

// What a --whatif changed: its knobs in the order given, and the point settings they fix.
struct WhatIf {
  std::vector<std::pair<std::string, std::string>> changed;
  std::optional<Framework> framework;
  std::optional<DType> precision;
  std::optional<int64_t> batch;
  std::optional<double> cpu;  // every CPU-side cost times this, after the other keys
  bool cpu_typical = false;   // cpu=typical: at the bench's median CPU readings, after the other keys
};

Expected<PredictionReport> RunSweep(const Sweep& s) {
  return PredictSweep(s.source.at_batch, s.profile, s.request);
}

// Widest width multiple (arch specs only) whose latency stays within tolerance of the base.
std::vector<WidthHeadroom> Headroom(const Sweep& s, const PredictionReport& base, double tol) {
  std::vector<WidthHeadroom> out;
  if (s.source.arch.empty() || s.request.batches.empty()) return out;
  const int64_t b = s.request.batches.front();
  for (Framework f : s.request.frameworks)
    for (DType d : s.request.precisions) {
      const PredictionPoint* p0 = nullptr;
      for (const auto& p : base.points)
        if (p.framework == f && p.precision == d && p.batch == b) p0 = &p;
      if (!p0) continue;
      auto latency_at = [&](double factor) -> double {
        Expected<std::string> spec = ScaleArchSpec(s.source.arch, "width", factor);
        if (!spec.ok()) return -1;
        DimBindings dims = s.source.dims;
        dims["batch"] = b;
        Expected<Graph> g = BuildArchGraph(spec.value(), dims, s.source.flavor);
        if (!g.ok()) return -1;
        Expected<PredictionPoint> p = PredictPoint(g.value(), s.profile, f, d, 0, 1, nullptr);
        return p.ok() ? p->latency_ms : -1;
      };
      const double limit = p0->latency_ms * (1 + tol / 100);
      double lo = 1, hi = 1;
      while (hi < 64) {
        double l = latency_at(hi * 2);
        if (l < 0 || l > limit) break;
        hi *= 2;
      }
      lo = hi;
      double top = hi * 2;
      for (int i = 0; i < 6 && hi < 64; ++i) {
        double mid = 0.5 * (lo + top);
        double l = latency_at(mid);
        if (l >= 0 && l <= limit) lo = mid;
        else top = mid;
      }
      out.push_back({f, d, b, lo, tol});
    }
  return out;
}

// True when both graphs' inputs have the same shapes (a rebinding changed nothing).
bool SameInputShapes(const Graph& a, const Graph& b) {
  if (a.inputs != b.inputs) return false;
  for (const std::string& in : a.inputs) {
    const TensorInfo* x = a.Find(in);
    const TensorInfo* y = b.Find(in);
    if (!x || !y) return x == y;
    if (x->shape != y->shape) return false;
  }
  return true;
}

// The model options with the symbolic dim `name` bound to `value` (replacing any --dim for it).
ModelSourceOptions WithDim(const ModelSourceOptions& options, const std::string& name, int64_t value) {
  ModelSourceOptions out = options;
  out.dims.clear();
  for (const std::string& text : options.dims) {
    Expected<DimFlag> f = ParseDimFlag(text);
    if (f.ok() && f->name == name) continue;
    out.dims.push_back(text);
  }
  out.dims.push_back(name + "=" + std::to_string(value));
  return out;
}

// Rebinds the sequence dim: the `seq` of an arch spec, or a model file's symbolic dim `seq`.
// A model whose inputs do not change with it has no such dim, and that is an error rather than
// a what-if that silently changes nothing.
Status RebindSeq(const std::string& value, Sweep* v) {
  Expected<DimFlag> seq = ParseDimFlag("seq=" + value);
  if (!seq.ok()) return InvalidInput("--whatif seq: '" + value + "' is not a positive integer");
  ModelSourceOptions mo = WithDim(v->model_options, "seq", seq->value);
  Expected<ModelSource> src = OpenModelSource(mo);
  if (!src.ok()) return src.status().WithContext("--whatif seq");
  // Probe with another seq: if the inputs come out the same, nothing reads `seq`.
  const int64_t other_seq = seq->value > 1 ? seq->value - 1 : 2;
  Expected<ModelSource> other = OpenModelSource(WithDim(v->model_options, "seq", other_seq));
  if (!other.ok()) return other.status().WithContext("--whatif seq");
  Expected<Graph> g = src->at_batch(1);
  Expected<Graph> h = other->at_batch(1);
  if (!g.ok()) return g.status().WithContext("--whatif seq");
  if (!h.ok()) return h.status().WithContext("--whatif seq");
  if (SameInputShapes(g.value(), h.value()))
    return InvalidInput("--whatif seq: " + v->source.description +
                        " has no sequence dim to rebind (arch specs of sequence models such as "
                        "bert and gpt have one; a model file needs a symbolic input dim named 'seq')");
  v->model_options = mo;
  v->source = src.value();
  return Status::Ok();
}

// A what-if knob's value as a number: the whole of it, or an error naming the knob.
Expected<double> WhatIfNumber(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const double x = std::stod(value, &used);
    if (used == value.size()) return x;
  } catch (...) {
  }
  return InvalidInput("--whatif " + key + ": '" + value + "' is not a number");
}

Status ApplyWhatIf(const std::string& text, Sweep* v, WhatIf* w) {
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) return InvalidInput("--whatif: '" + part + "' is not KEY=VALUE");
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    for (const auto& [k, unused] : w->changed)
      if (k == key) return InvalidInput("--whatif: '" + key + "' is given twice");
    if (key == "width" || key == "depth") {
      if (v->source.arch.empty())
        return Unsupported("--whatif " + key + " needs --arch (a model file cannot be re-shaped)");
      Expected<double> parsed = WhatIfNumber(key, value);
      if (!parsed.ok()) return parsed.status();
      const double factor = parsed.value();
      if (!(factor > 0) || !std::isfinite(factor)) return InvalidInput("--whatif " + key + ": must be > 0");
      Expected<std::string> spec = ScaleArchSpec(v->source.arch, key, factor);
      if (!spec.ok()) return spec.status();
      ModelSourceOptions mo = v->model_options;
      mo.arch = spec.value();
      Expected<ModelSource> src = OpenModelSource(mo);
      if (!src.ok()) return src.status().WithContext("--whatif " + key);
      v->model_options = mo;
      v->source = src.value();
    } else if (key == "seq") {
      Status st = RebindSeq(value, v);
      if (!st.ok()) return st;
    } else if (key == "framework") {
      auto f = ParseFrameworkList({value});
      if (!f.ok()) return f.status().WithContext("--whatif");
      w->framework = f.value()[0];
      v->request.frameworks = {f.value()[0]};
    } else if (key == "precision") {
      auto d = ParsePrecisionList({value});
      if (!d.ok()) return d.status().WithContext("--whatif");
      w->precision = d.value()[0];
      v->request.precisions = {d.value()[0]};
    } else if (key == "profile") {
      Expected<HostProfile> p = LoadNamedProfile(value);
      if (!p.ok()) return p.status().WithContext("--whatif profile");
      v->profile = p.value();
      v->profile_name = value;
    } else if (key == "cpu" && value == "typical") {
      w->cpu.reset();
      w->cpu_typical = true;
    } else if (key == "cpu") {
      w->cpu_typical = false;
      Expected<double> parsed = WhatIfNumber(key, value);
      if (!parsed.ok()) return parsed.status();
      const double factor = parsed.value();
      if (!(factor > 0) || !std::isfinite(factor) || factor > 100)
        return InvalidInput("--whatif cpu: must be above 0 and at most 100, got '" + value + "'");
      w->cpu = factor;
    } else if (key == "batch") {
      auto b = ParseBatchList(value);
      if (!b.ok()) return b.status().WithContext("--whatif");
      if (b.value().size() != 1) return InvalidInput("--whatif batch takes one value");
      w->batch = b.value()[0];
      v->request.batches = {b.value()[0]};
    } else {
      return InvalidInput("--whatif: unknown key '" + key +
                          "' (width, depth, seq, framework, precision, profile, batch, cpu)");
    }
    w->changed.emplace_back(key, value);
  }
  if (w->cpu) v->profile = AtCpuSpeedForAll(v->profile, *w->cpu);  // of the what-if's profile
  if (w->cpu_typical) {
    Expected<HostProfile> typical = AtTypicalCpuSpeed(v->profile);
    if (!typical.ok()) return typical.status().WithContext(v->profile_name);
    v->profile = typical.value();
  }
  return Status::Ok();
}

// The what-if's points in the order of the base's: point i is what point i of `base` becomes
// under the what-if (its framework, precision and batch replaced where the what-if fixes them).
Expected<PredictionReport> AlignWhatIf(const PredictionReport& base, const PredictionReport& alt,
                                       const WhatIf& w) {
  PredictionReport out = alt;
  out.points.clear();
  for (const PredictionPoint& p : base.points) {
    const Framework f = w.framework.value_or(p.framework);
    const DType d = w.precision.value_or(p.precision);
    const int64_t b = w.batch.value_or(p.batch);
    const PredictionPoint* match = nullptr;
    for (const PredictionPoint& q : alt.points)
      if (q.framework == f && q.precision == d && q.batch == b) match = &q;
    if (!match)
      return Internal(std::string("--whatif: no what-if point for ") + FrameworkName(f) + " " +
                      DTypeName(d) + " batch " + std::to_string(b));
    out.points.push_back(*match);
  }
  return out;
}

// Everything but the model: profile, frameworks, precisions, batches, samples.
Status SetUpSweep(const PredictOptions& o, Sweep* s) {
  Expected<HostProfile> profile = LoadNamedProfile(o.profile);
  if (!profile.ok()) return profile.status();
  s->profile = profile.value();
  s->profile_name = o.profile;
  auto fws = ParseFrameworkList(o.frameworks);
  if (!fws.ok()) return fws.status();
  auto precs = ParsePrecisionList(o.precisions);
  if (!precs.ok()) return precs.status();
  auto batches = ParseBatchList(o.batch);
  if (!batches.ok()) return batches.status();
  if (o.samples < 0 || o.samples > 100000) return InvalidInput("--samples must be in 0..100000");
  s->request.frameworks = fws.value();
  s->request.precisions = precs.value();
  s->request.batches = batches.value();
  s->request.interval_samples = o.samples;
  if (o.kernels < -1) return InvalidInput("--kernels must be a count, or -1 for every group");
  s->request.kernel_groups = o.kernels;
  return Status::Ok();
}

// `predict --specs FILE`: every spec of the list opened first (a bad line stops the run before
// anything is printed, naming its line), then each predicted with the same sweep.
int RunPredictSpecs(const PredictOptions& o) {
  if (!o.model.path.empty() || !o.model.arch.empty())
    return ReportError("predict", InvalidInput("give one of a MODEL file, --arch SPEC or --specs FILE"));
  if (!o.whatif.empty())
    return ReportError("predict", InvalidInput("--whatif takes one model, not --specs"),
                       "put the changed specs in the list instead, or use --arch SPEC --whatif ...");
  if (!o.plot.empty()) return ReportError("predict", InvalidInput("--plot takes one model, not --specs"));
  const std::string where = o.specs == "-" ? std::string("<stdin>") : o.specs;
  std::string text;
  if (o.specs == "-") {
    std::ostringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else {
    Expected<std::string> read = ReadRegularFile(o.specs, "spec list");
    if (!read.ok()) return ReportError("predict", read.status().WithContext("--specs"));
    text = read.value();
  }
  std::vector<SpecLine> lines = ParseSpecLines(text);
  if (lines.empty())
    return ReportError("predict", InvalidInput("--specs " + where + ": no arch specs in it"),
                       "one spec a line, e.g. bert:layers=6,hidden=512; blank lines and lines "
                       "starting with # are skipped");
  Sweep s;
  Status st = SetUpSweep(o, &s);
  if (!st.ok()) return ReportError("predict", st);

  std::vector<ModelSource> sources;
  for (const SpecLine& l : lines) {
    // Specs are printable ASCII; anything else is not echoed back to the terminal.
    for (size_t i = 0; i < l.spec.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(l.spec[i]);
      if (c < 0x20 || c > 0x7e) {
        char byte[8];
        std::snprintf(byte, sizeof(byte), "0x%02x", c);
        return ReportError("predict",
                           InvalidInput(where + ":" + std::to_string(l.line) + ": not an arch spec: byte " +
                                        byte + " (character " + std::to_string(i + 1) +
                                        " of the spec) is not printable ASCII"),
                           "--specs takes a text file of arch specs, one a line");
      }
    }
    ModelSourceOptions mo = o.model;
    mo.arch = l.spec;
    Expected<ModelSource> src = OpenModelSource(mo);
    if (!src.ok()) {
      // OpenModelSource names the flag a spec came from (--arch); here it came from a line.
      // Its other errors are about options every line shares (--dim, --flavor).
      std::string message = src.status().message();
      const std::string kArch = "--arch: ";
      if (message.rfind(kArch, 0) != 0) return ReportError("predict", src.status());
      message = message.substr(kArch.size());
      if (message.find(l.spec) == std::string::npos) message = "'" + l.spec + "': " + message;
      return ReportError("predict", InvalidInput(where + ":" + std::to_string(l.line) + ": " + message),
                         "one arch spec a line (docs/arch-specs.md); blank lines and # comments are skipped");
    }
    sources.push_back(src.value());
  }
  std::vector<SpecReport> reports;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string at = where + ":" + std::to_string(lines[i].line);
    Expected<PredictionReport> r = PredictSweep(sources[i].at_batch, s.profile, s.request);
    if (!r.ok()) return ReportError("predict", r.status().WithContext(at));
    if (o.strict) {
      Status unpriced = RefuseUnpriced(at + ": " + lines[i].spec, r.value());
      if (!unpriced.ok()) return ReportError("predict", unpriced, kUnpricedHint);
    }
    reports.push_back({lines[i].line, lines[i].spec, std::move(r.value())});
  }
  if (o.format == "json") {
    nlohmann::json j = SpecsJson(reports);
    j["profile"] = ProfileJson(o.profile, s.profile);
    std::cout << j.dump(1) << "\n";
  } else if (o.format == "csv") {
    std::cout << SpecsCsv(reports);
    for (const auto& r : reports) {
      std::string warning = UnpricedWarning(r.report);
      if (!warning.empty()) std::cerr << where << ":" << r.line << ": " << warning;
    }
  } else {
    std::cout << ProfileHeadline(o.profile, s.profile) << "\n";
    std::cout << SpecsTable(reports);
  }
  return kExitOk;
}

int RunPredict(const PredictOptions& o) {
  if (o.profile.empty())
    return ReportError("predict", InvalidInput("--profile is required"),
                       "name a shipped profile (`ftax profiles` lists them, e.g. --profile h200) or make one "
                       "with `ftax bench` + `ftax calibrate`");
  if (!o.specs.empty()) return RunPredictSpecs(o);
  if (!o.plot.empty()) {
    Status out = RefuseOutputOverInputs("--plot", o.plot, {o.model.path, o.profile});
    if (out.ok()) out = CheckPlotPath(o.plot);  // extension and gnuplot terminal, before any work
    if (!out.ok()) return ReportError("predict", out);
  }
  Sweep s;
  s.model_options = o.model;
  Expected<ModelSource> src = OpenModelSource(o.model);
  if (!src.ok()) return ReportError("predict", src.status());
  s.source = src.value();
  Status set_up = SetUpSweep(o, &s);
  if (!set_up.ok()) return ReportError("predict", set_up);

  Expected<PredictionReport> base = RunSweep(s);
  if (!base.ok()) return ReportError("predict", base.status());
  if (o.strict) {
    Status unpriced = RefuseUnpriced(s.source.description, base.value());
    if (!unpriced.ok()) return ReportError("predict", unpriced, kUnpricedHint);
  }
  if (s.source.from_onnx && s.profile.synthetic)
    base->notes.push_back("the profile is synthetic (made up for tests), not a real GPU");
  if (!o.whatif.empty()) {
    Sweep v = s;
    WhatIf w;
    Status st = ApplyWhatIf(o.whatif, &v, &w);
    if (!st.ok()) return ReportError("predict", st);
    Expected<PredictionReport> alt = RunSweep(v);
    if (!alt.ok()) return ReportError("predict", alt.status().WithContext("--whatif"));
    Expected<PredictionReport> aligned = AlignWhatIf(base.value(), alt.value(), w);
    if (!aligned.ok()) return ReportError("predict", aligned.status());
    const ReportSide a{"base", s.source.description, s.profile_name, {}, base.value()};
    const ReportSide b{"whatif", v.source.description, v.profile_name, w.changed, aligned.value()};
    if (o.format == "json") {
      nlohmann::json j = PairedJson(a, b);
      j["profiles"] = {{"base", ProfileJson(s.profile_name, s.profile)},
                       {"whatif", ProfileJson(v.profile_name, v.profile)}};
      std::cout << j.dump(1) << "\n";
    } else if (o.format == "csv") {
      std::cout << PairedCsv(a, b);
    } else {
      std::cout << ProfileHeadline(s.profile_name, s.profile) << "\n";
      if (v.profile_name != s.profile_name) std::cout << ProfileHeadline(v.profile_name, v.profile) << "\n";
      std::cout << PairedTable(a, b);
    }
    return kExitOk;
  }
  std::vector<WidthHeadroom> headroom = Headroom(s, base.value(), o.headroom_tolerance_pct);
  if (o.format == "json") {
    nlohmann::json j = PredictionToJson(base.value(), headroom);
    j["profile"] = ProfileJson(o.profile, s.profile);
    std::cout << j.dump(1) << "\n";
  } else if (o.format == "csv") {
    std::cout << PredictionCsv(base.value());
    std::cerr << UnpricedWarning(base.value());
  } else {
    std::cout << ProfileHeadline(o.profile, s.profile) << "\n";
    std::cout << PredictionTable(base.value(), headroom);
  }
  if (!o.plot.empty()) {
    Status st = PlotPrediction(base.value(), s.source.description + " on " +
                                                 s.profile.host.value("gpu", std::string("?")),
                               o.plot);
    if (!st.ok()) return ReportError("predict", st);
    std::cerr << "plot: " << o.plot << "\n";
  }
  return kExitOk;
}

}  // namespace

static void AddModelSourceOptions(CLI::App* cmd, ModelSourceOptions* m, bool positional) {
  if (positional) cmd->add_option("model", m->path,
                                  "model file: ONNX (.onnx) or TorchScript (.pt; give --input-shape "
                                  "for every input of forward; the batch is the dim named "
                                  "--batch-dim in them, else every input's leading dim)");
  cmd->add_option("--arch", m->arch, "architecture spec instead of a file, e.g. bert:layers=6,hidden=512");
  cmd->add_option("--flavor", m->flavor, "arch decomposition: torch (what PyTorch dispatches) or onnx")
      ->capture_default_str();
  // One value per flag, so that `--dim seq=128 model.onnx` leaves the model positional.
  cmd->add_option("--dim", m->dims, "bind a symbolic dim: NAME=VALUE (repeatable), e.g. seq=128")
      ->allow_extra_args(false);
  cmd->add_option("--input-shape", m->input_shapes, "set an input shape: [NAME=]1x3x224x224[:DTYPE] (repeatable); dims may be names "
                  "bound by --dim or the batch sweep (input_ids=batchx128)")
      ->allow_extra_args(false);
  cmd->add_option("--batch-dim", m->batch_dim, "name of the symbolic batch dim")->capture_default_str();
}

void SetupPredictCommand(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict inference latency on a host profile per framework, precision and batch, split into\n"
      "framework overhead (CPU-side dispatch) and GPU compute, with the bound, a p10..p90 interval\n"
      "from the profile's parameter uncertainty, the crossover batch (where compute starts to\n"
      "exceed overhead) and, for --arch, the width headroom at the first batch.\n"
      "--specs FILE predicts many arch specs in one run: one row per spec, framework, precision\n"
      "and batch (no width headroom, --whatif or --plot); a bad line stops it with exit code 2.\n"
      "--whatif predicts a changed setup beside the base; each what-if row is labelled with every\n"
      "knob it changed and its profile (\"seq=256 on h200\").\n"
      "Examples:\n"
      "  ftax predict --arch bert:layers=12 --dim seq=128 --profile data/profiles/h100.json\n"
      "  ftax predict tests/data/onnx/resnet50.onnx --profile h200 --framework cuda-graph --batch 1:256\n"
      "  ftax predict --arch bert --dim seq=128 --profile h100 --whatif width=2,framework=cuda-graph\n"
      "  ftax predict --arch bert --dim seq=128 --profile h100 --whatif seq=512\n"
      "  ftax predict --arch bert --dim seq=128 --profile h100 --whatif cpu=1.5   # the host's CPU slowed\n"
      "  ftax predict --specs data/examples/bert-specs.txt --dim seq=128 --profile h100 --format csv\n"
      "  generate_specs | ftax predict --specs - --dim seq=128 --profile h100 --batch 1 --format json");
  AddModelSourceOptions(cmd, &o->model, true);
  cmd->add_option("--specs", o->specs,
                  "a file of arch specs to predict instead of one model, one a line (blank lines and "
                  "lines starting with # skipped); - reads them from standard input");
  cmd->add_option("--profile", o->profile, "host profile: a shipped name (h200, h100; `ftax profiles` lists them) or a profile file");
  cmd->add_option("--framework", o->frameworks, FrameworkListHelp())
      ->delimiter(',')
      ->allow_extra_args(false)
      ->capture_default_str();
  cmd->add_option("--precision", o->precisions, "fp32, fp16, bf16 (comma list)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "batches: 1,2,4 or 1:128 (powers of two)")->capture_default_str();
  AddFormatOption(cmd, &o->format, {"table", "json", "csv"});
  cmd->add_option("--plot", o->plot,
                  std::string("write a latency-vs-batch plot; the extension picks the format: ") +
                      kPlotExtensionsHelp);
  cmd->add_option("--whatif", o->whatif,
                  "compare with a changed setup, KEY=VALUE comma list: width=F, depth=F (arch specs), "
                  "seq=N (the sequence dim of an arch spec or a model's symbolic dim 'seq'), "
                  "framework=F, precision=P, profile=NAME|FILE, batch=N, cpu=F (every CPU-side cost "
                  "F times: 1.5 is a shared host's CPU in its slow state, 0.8 a faster CPU), cpu=typical "
                  "(at the CPU speed the profile's bench read in the median, where a predicted point is "
                  "priced at the host's fast state; unseen models' runs ran near it on the stored hosts)");
  cmd->add_option("--kernels", o->kernels,
                  "list each point's N most expensive GPU kernels, equal ones (op type, class, shape) "
                  "grouped, with their predicted time and share: which layers the compute goes to, to "
                  "compare with a profiler's kernel records (-1: every group; JSON: kernel_groups)")
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "Monte Carlo samples for the interval (0: none)")
      ->capture_default_str();
  cmd->add_flag("--strict", o->strict,
                "exit 2 when the model has op types ftax can neither count nor price (listed "
                "otherwise as a warning and in JSON's unpriced_ops)");
  cmd->callback([o] { ExitCode() = RunPredict(*o); });
}

}  // namespace ftax::cli
