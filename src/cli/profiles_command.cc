// `ftax profiles`: the shipped host profiles, with where each came from and how accurate it is.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "calibrate/profile_file.h"
#include "cli/profile_names.h"
#include "cli/text_table.h"

namespace ftax::cli {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

void SetupProfilesCommand(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = app.add_subcommand(
      "profiles",
      "List the shipped host profiles (data/profiles/): give their name to --profile, e.g.\n"
      "`ftax predict --arch bert --profile h200`. Per profile: GPU, fitting date, the bench it was\n"
      "fitted from, where its framework costs were learned (the models they were refined on, or the\n"
      "host runs of the prior it was fitted with), and its measured accuracy on models it was not\n"
      "fitted on.");
  AddFormatOption(cmd, format.get(), {"table", "json"});
  cmd->callback([format] {
    nlohmann::json out = nlohmann::json::array();
    TextTable t({"name", "gpu", "date", "fitted_from", "framework_costs_from", "accuracy_on_unseen_models"});
    for (const std::string& n : ShippedProfileNames()) {
      Expected<HostProfile> p = LoadHostProfile(ShippedProfileDir() + "/" + n + ".json");
      if (!p.ok()) {
        std::cerr << "ftax profiles: warning: " << p.status().message() << "\n";
        continue;
      }
      const nlohmann::json& prov = p->provenance;
      std::string from;
      if (prov.contains("measurements") && prov["measurements"].is_array())
        for (const auto& m : prov["measurements"])
          if (m.is_string()) from += (from.empty() ? "" : ", ") + m.get<std::string>();
      std::string refined;
      if (prov.contains("refinement") && prov["refinement"].is_object() &&
          prov["refinement"].contains("refined_on_models"))
        refined = prov["refinement"]["refined_on_models"].dump();
      else if (prov.contains("refined_on_models"))
        refined = prov["refined_on_models"].dump();
      // A profile fitted with a prior: the host runs whose refined profiles it came from.
      std::string prior;
      if (prov.contains("refined_with") && prov["refined_with"].is_array())
        for (const auto& f : prov["refined_with"])
          if (f.is_string()) {
            const std::string path = f.get<std::string>();
            const size_t slash = path.rfind('/');
            const std::string dir = slash == std::string::npos ? path : path.substr(0, slash);
            prior += (prior.empty() ? "" : ", ") + dir.substr(dir.rfind('/') + 1);
          }
      std::string acc = "not recorded";
      if (prov.contains("accuracy") && prov["accuracy"].is_object()) {
        acc.clear();
        for (const auto& [fw, a] : prov["accuracy"].items())
          if (a.is_object() && a.contains("within") && a.contains("rows"))
            acc += (acc.empty() ? "" : "; ") + fw + " " + a["within"].dump() + "/" + a["rows"].dump();
      }
      const std::string date = Str(prov, "date").substr(0, 10);
      const std::string learned = !refined.empty() ? refined : !prior.empty() ? "prior of " + prior : "-";
      t.AddRow({n, Str(p->host, "gpu"), date, from, learned, acc});
      out.push_back({{"name", n}, {"path", ShippedProfileDir() + "/" + n + ".json"}, {"gpu", Str(p->host, "gpu")},
                     {"date", date}, {"fitted_from", from}, {"refined_on_models", refined}, {"prior_of", prior},
                     {"accuracy", prov.value("accuracy", nlohmann::json(nullptr))}});
    }
    if (*format == "json") std::cout << out.dump(1) << "\n";
    else std::cout << t.Render();
    ExitCode() = kExitOk;
  });
}

}  // namespace ftax::cli
