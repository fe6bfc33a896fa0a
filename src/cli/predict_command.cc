// `ftax predict`: latency per framework, precision and batch, and why.
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/profile_names.h"
#include "cli/model_source.h"
#include "cli/prediction_view.h"
#include "cli/sweep_args.h"
#include "common/file_io.h"
#include "predictor/host_profile.h"

namespace ftax::cli {
namespace {

struct PredictOptions {
  ModelSourceOptions model;
  std::string profile;
  std::vector<std::string> frameworks = {"pytorch-eager", "torchscript", "cuda-graph"};
  std::vector<std::string> precisions = {"fp16"};
  std::string batch = "1:128";
  std::string format = "table";
  std::string plot;
  std::string whatif;
  int samples = 64;
  double headroom_tolerance_pct = 5;
  bool strict = false;
};

struct Sweep {
  ModelSource source;
  HostProfile profile;
  PredictRequest request;
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

Status ApplyWhatIf(const std::string& text, const PredictOptions& o, Sweep* v) {
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) return InvalidInput("--whatif: '" + part + "' is not KEY=VALUE");
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "width" || key == "depth") {
      if (v->source.arch.empty())
        return Unsupported("--whatif " + key + " needs --arch (a model file cannot be re-shaped)");
      double factor = 0;
      try {
        factor = std::stod(value);
      } catch (...) {
        return InvalidInput("--whatif " + key + ": '" + value + "' is not a number");
      }
      if (!(factor > 0)) return InvalidInput("--whatif " + key + ": must be > 0");
      Expected<std::string> spec = ScaleArchSpec(v->source.arch, key, factor);
      if (!spec.ok()) return spec.status();
      ModelSourceOptions mo = o.model;
      mo.arch = spec.value();
      Expected<ModelSource> src = OpenModelSource(mo);
      if (!src.ok()) return src.status().WithContext("--whatif " + key);
      v->source = src.value();
    } else if (key == "framework") {
      auto f = ParseFrameworkList({value});
      if (!f.ok()) return f.status().WithContext("--whatif");
      v->request.frameworks.assign(v->request.frameworks.size(), f.value()[0]);
    } else if (key == "precision") {
      auto d = ParsePrecisionList({value});
      if (!d.ok()) return d.status().WithContext("--whatif");
      v->request.precisions.assign(v->request.precisions.size(), d.value()[0]);
    } else if (key == "profile") {
      Expected<HostProfile> p = LoadNamedProfile(value);
      if (!p.ok()) return p.status().WithContext("--whatif profile");
      v->profile = p.value();
    } else if (key == "batch") {
      auto b = ParseBatchList(value);
      if (!b.ok()) return b.status().WithContext("--whatif");
      if (b.value().size() != 1) return InvalidInput("--whatif batch takes one value");
      v->request.batches.assign(v->request.batches.size(), b.value()[0]);
    } else {
      return InvalidInput("--whatif: unknown key '" + key +
                          "' (width, depth, framework, precision, profile, batch)");
    }
  }
  return Status::Ok();
}

int RunPredict(const PredictOptions& o) {
  if (o.format != "table" && o.format != "json" && o.format != "csv")
    return ReportError("predict", InvalidInput("--format must be table, json or csv"));
  if (o.profile.empty())
    return ReportError("predict", InvalidInput("--profile is required"),
                       "name a shipped profile (`ftax profiles` lists them, e.g. --profile h200) or make one "
                       "with `ftax bench` + `ftax calibrate`");
  if (!o.plot.empty()) {
    Status out = RefuseOutputOverInputs("--plot", o.plot, {o.model.path, o.profile});
    if (!out.ok()) return ReportError("predict", out);
  }
  Sweep s;
  Expected<ModelSource> src = OpenModelSource(o.model);
  if (!src.ok()) return ReportError("predict", src.status());
  s.source = src.value();
  Expected<HostProfile> profile = LoadNamedProfile(o.profile);
  if (!profile.ok()) return ReportError("predict", profile.status());
  s.profile = profile.value();
  auto fws = ParseFrameworkList(o.frameworks);
  if (!fws.ok()) return ReportError("predict", fws.status());
  auto precs = ParsePrecisionList(o.precisions);
  if (!precs.ok()) return ReportError("predict", precs.status());
  auto batches = ParseBatchList(o.batch);
  if (!batches.ok()) return ReportError("predict", batches.status());
  if (o.samples < 0 || o.samples > 100000)
    return ReportError("predict", InvalidInput("--samples must be in 0..100000"));
  s.request.frameworks = fws.value();
  s.request.precisions = precs.value();
  s.request.batches = batches.value();
  s.request.interval_samples = o.samples;

  Expected<PredictionReport> base = RunSweep(s);
  if (!base.ok()) return ReportError("predict", base.status());
  if (o.strict && !base->unpriced_ops.empty()) {
    std::string list;
    for (const auto& [type, n] : base->unpriced_ops)
      list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(n) + " nodes)";
    return ReportError("predict",
                       InvalidInput(s.source.description + ": op types ftax cannot price: " + list),
                       "without --strict they are priced as one elementwise kernel each");
  }
  if (s.source.from_onnx && s.profile.synthetic)
    base->notes.push_back("the profile is synthetic (made up for tests), not a real GPU");
  if (!o.whatif.empty()) {
    Sweep v = s;
    Status st = ApplyWhatIf(o.whatif, o, &v);
    if (!st.ok()) return ReportError("predict", st);
    Expected<PredictionReport> alt = RunSweep(v);
    if (!alt.ok()) return ReportError("predict", alt.status().WithContext("--whatif"));
    if (o.format == "json") std::cout << PairedJson(base.value(), alt.value(), "base", "whatif").dump(1) << "\n";
    else std::cout << PairedTable(base.value(), alt.value(), "base", "whatif");
    return kExitOk;
  }
  std::vector<WidthHeadroom> headroom = Headroom(s, base.value(), o.headroom_tolerance_pct);
  if (o.format == "json") {
    nlohmann::json j = PredictionToJson(base.value(), headroom);
    j["profile"] = {{"name", o.profile}, {"path", ResolveProfilePath(o.profile)},
                    {"gpu", s.profile.host.value("gpu", std::string())},
                    {"date", s.profile.provenance.value("date", std::string())}};
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
  cmd->add_option("--dim", m->dims, "bind a symbolic dim: NAME=VALUE (repeatable), e.g. seq=128");
  cmd->add_option("--input-shape", m->input_shapes, "set an input shape: [NAME=]1x3x224x224[:DTYPE] (repeatable); dims may be names "
                  "bound by --dim or the batch sweep (input_ids=batchx128)");
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
      "Examples:\n"
      "  ftax predict --arch bert:layers=12 --dim seq=128 --profile data/profiles/h100.json\n"
      "  ftax predict model.onnx --dim seq=128 --profile P --framework cuda-graph --batch 1:256\n"
      "  ftax predict --arch bert --profile P --whatif width=2,framework=cuda-graph");
  AddModelSourceOptions(cmd, &o->model, true);
  cmd->add_option("--profile", o->profile, "host profile: a shipped name (h200, h100; `ftax profiles` lists them) or a profile file");
  cmd->add_option("--framework", o->frameworks, FrameworkListHelp())
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--precision", o->precisions, "fp32, fp16, bf16 (comma list)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "batches: 1,2,4 or 1:128 (powers of two)")->capture_default_str();
  cmd->add_option("--format", o->format, "table, json or csv")->capture_default_str();
  cmd->add_option("--plot", o->plot, "write a latency-vs-batch plot (.svg or .png, needs gnuplot)");
  cmd->add_option("--whatif", o->whatif,
                  "compare with a changed setup: width=F,depth=F,framework=F,precision=P,profile=FILE,batch=N");
  cmd->add_option("--samples", o->samples, "Monte Carlo samples for the interval (0: none)")
      ->capture_default_str();
  cmd->add_flag("--strict", o->strict,
                "exit 2 when the model has op types ftax can neither count nor price (listed "
                "otherwise as a warning and in JSON's unpriced_ops)");
  cmd->callback([o] { ExitCode() = RunPredict(*o); });
}

}  // namespace ftax::cli
