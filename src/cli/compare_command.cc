// `ftax compare A B`: two models (files or arch specs) predicted on one profile, side by side.
#include <iostream>

#include "cli/commands.h"
#include "cli/profile_names.h"
#include "cli/model_source.h"
#include "cli/prediction_view.h"
#include "cli/sweep_args.h"

namespace ftax::cli {
namespace {

struct CompareOptions {
  std::string a, b;
  std::string profile;
  std::vector<std::string> frameworks = {"pytorch-eager"};
  std::vector<std::string> precisions = {"fp16"};
  std::string batch = "1:128";
  std::vector<std::string> dims;
  std::string flavor = "torch";
  std::string format = "table";
};

Expected<ModelSource> Open(const std::string& what, const CompareOptions& o) {
  ModelSourceOptions m;
  m.dims = o.dims;
  m.flavor = o.flavor;
  if (what.rfind("arch:", 0) == 0) m.arch = what.substr(5);
  else m.path = what;
  return OpenModelSource(m);
}

int RunCompare(const CompareOptions& o) {
  if (o.profile.empty()) return ReportError("compare", InvalidInput("--profile is required"));
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
  PredictionReport reports[2];
  const std::string* names[2] = {&o.a, &o.b};
  for (int i = 0; i < 2; ++i) {
    Expected<ModelSource> src = Open(*names[i], o);
    if (!src.ok()) return ReportError("compare", src.status().WithContext(*names[i]));
    Expected<PredictionReport> r = PredictSweep(src->at_batch, profile.value(), req);
    if (!r.ok()) return ReportError("compare", r.status().WithContext(*names[i]));
    reports[i] = r.value();
  }
  if (o.format == "json") std::cout << PairedJson(reports[0], reports[1], "A", "B").dump(1) << "\n";
  else std::cout << "A = " << o.a << "\nB = " << o.b << "\n" << PairedTable(reports[0], reports[1], "A", "B");
  return kExitOk;
}

}  // namespace

void SetupCompareCommand(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Predict two models on one profile and print them side by side with deltas. A model is a\n"
      "file path or arch:SPEC, e.g.\n"
      "  ftax compare arch:bert:layers=12 arch:bert:layers=24,hidden=512 --profile P --dim seq=128");
  cmd->add_option("a", o->a, "first model (file or arch:SPEC)")->required();
  cmd->add_option("b", o->b, "second model (file or arch:SPEC)")->required();
  cmd->add_option("--profile", o->profile, "host profile: a shipped name (h200, h100) or a profile file");
  cmd->add_option("--framework", o->frameworks, "frameworks (comma list)")->delimiter(',')->capture_default_str();
  cmd->add_option("--precision", o->precisions, "precisions (comma list)")->delimiter(',')->capture_default_str();
  cmd->add_option("--batch", o->batch, "batches: 1,2,4 or 1:128")->capture_default_str();
  cmd->add_option("--dim", o->dims, "NAME=VALUE for both models (repeatable)");
  cmd->add_option("--flavor", o->flavor, "arch decomposition: torch or onnx")->capture_default_str();
  cmd->add_option("--format", o->format, "table or json")->capture_default_str();
  cmd->callback([o] { ExitCode() = RunCompare(*o); });
}

}  // namespace ftax::cli
