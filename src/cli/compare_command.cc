// `ftax compare A B [C ...]`: two or more models (files or arch specs) predicted on one
// profile, side by side, each with its delta against the first.
#include <iostream>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/profile_names.h"
#include "graph/open_model.h"
#include "cli/prediction_view.h"
#include "cli/sweep_args.h"

namespace ftax::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> models;
  std::string profile;
  std::vector<std::string> frameworks = {"pytorch-eager"};
  std::vector<std::string> precisions = {"fp16"};
  std::string batch = "1:128";
  std::vector<std::string> dims;
  std::string flavor = "torch";
  std::string format = "table";
  int samples = 64;
  bool strict = false;
};

Expected<ModelSource> Open(const std::string& what, const CompareOptions& o) {
  ModelSourceOptions m;
  m.dims = o.dims;
  m.flavor = o.flavor;
  if (what.rfind("arch:", 0) == 0) m.arch = what.substr(5);
  else m.path = what;
  return OpenModelSource(m);
}

// Column labels A, B, ..., Z, then M27, M28, ...
std::string ModelLabel(size_t i) {
  return i < 26 ? std::string(1, char('A' + i)) : "M" + std::to_string(i + 1);
}

int RunCompare(const CompareOptions& o) {
  if (o.models.size() < 2)
    return ReportError("compare", InvalidInput("give two or more models to compare (got " +
                                               std::to_string(o.models.size()) + ")"),
                       "a model is a file path or arch:SPEC; the first is the one the others are compared with");
  if (o.profile.empty()) return ReportError("compare", InvalidInput("--profile is required"));
  if (o.samples < 0 || o.samples > 100000)
    return ReportError("compare", InvalidInput("--samples must be in 0..100000"));
  Expected<HostProfile> profile = LoadNamedProfile(o.profile);
  if (!profile.ok()) return ReportError("compare", profile.status());
  PredictRequest req;
  auto fws = ParseFrameworkList(o.frameworks);
  if (!fws.ok()) return ReportError("compare", fws.status());
  auto precs = ParsePrecisionList(o.precisions);
  if (!precs.ok()) return ReportError("compare", precs.status());
  auto batches = ParseBatchList(o.batch);
  if (!batches.ok()) return ReportError("compare", batches.status());
  req.frameworks = fws.value();
  req.precisions = precs.value();
  req.batches = batches.value();
  req.interval_samples = o.samples;
  // Every model opened before any is predicted, so that a bad one fails fast.
  std::vector<ModelSource> sources;
  for (const std::string& m : o.models) {
    Expected<ModelSource> src = Open(m, o);
    if (!src.ok()) return ReportError("compare", src.status().WithContext(m));
    sources.push_back(src.value());
  }
  std::vector<ReportSide> sides;
  for (size_t i = 0; i < o.models.size(); ++i) {
    Expected<PredictionReport> r = PredictSweep(sources[i].at_batch, profile.value(), req);
    if (!r.ok()) return ReportError("compare", r.status().WithContext(o.models[i]));
    if (o.strict) {
      Status unpriced = RefuseUnpriced(o.models[i], r.value());
      if (!unpriced.ok()) return ReportError("compare", unpriced, kUnpricedHint);
    }
    sides.push_back({ModelLabel(i), o.models[i], o.profile, {}, std::move(r.value())});
  }
  if (o.format == "json") {
    nlohmann::json j = ComparisonJson(sides);
    j["profile"] = ProfileJson(o.profile, profile.value());
    std::cout << j.dump(1) << "\n";
  } else if (o.format == "csv") {
    std::cout << ComparisonCsv(sides);
  } else {
    std::cout << ProfileHeadline(o.profile, profile.value()) << "\n" << ComparisonTable(sides);
  }
  return kExitOk;
}

}  // namespace

void SetupCompareCommand(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Predict two or more models on one profile and print them side by side, each with its\n"
      "delta against the first (the baseline). A model is a file path or arch:SPEC, e.g.\n"
      "  ftax compare arch:bert:layers=12 arch:bert:layers=24,hidden=512 --profile h100 --dim seq=128\n"
      "  ftax compare arch:bert arch:bert:layers=6 tests/data/onnx/bert_base.onnx --profile h200 --dim batch=1 \\\n"
      "      --dim seq=128 --format csv");
  cmd->add_option("models", o->models, "models, two or more (file or arch:SPEC); the first is the baseline")
      ->required();
  cmd->add_option("--profile", o->profile, "host profile: a shipped name (h200, h100) or a profile file");
  // One value per flag (lists are comma lists), so that options and models mix in any order.
  cmd->add_option("--framework", o->frameworks, "frameworks (comma list)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->capture_default_str();
  cmd->add_option("--precision", o->precisions, "precisions (comma list)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "batches: 1,2,4 or 1:128")->capture_default_str();
  cmd->add_option("--dim", o->dims, "NAME=VALUE for every model (repeatable)")->allow_extra_args(false);
  cmd->add_option("--flavor", o->flavor, "arch decomposition: torch or onnx")->capture_default_str();
  AddFormatOption(cmd, &o->format, {"table", "json", "csv"})
      ->description("table (side by side), json (rows with every model's point and delta) or csv "
                    "(one row per model and point)");
  cmd->add_option("--samples", o->samples, "Monte Carlo samples for the interval (0: none)")
      ->capture_default_str();
  cmd->add_flag("--strict", o->strict,
                "exit 2 when a model has op types ftax can neither count nor price (listed otherwise "
                "as a warning above the table and in JSON's unpriced_ops)");
  cmd->callback([o] { ExitCode() = RunCompare(*o); });
}

}  // namespace ftax::cli
