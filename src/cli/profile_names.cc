#include "cli/profile_names.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/text_table.h"

namespace ftax::cli {
namespace {

bool IsFile(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsBareName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

std::string Str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

std::string ShippedProfileDir() { return std::string(FTAX_SOURCE_DIR) + "/data/profiles"; }

std::vector<std::string> ShippedProfileNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(ShippedProfileDir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string ResolveProfilePath(const std::string& name_or_path) {
  if (IsFile(name_or_path) || !IsBareName(name_or_path)) return name_or_path;
  const std::string shipped = ShippedProfileDir() + "/" + name_or_path + ".json";
  return IsFile(shipped) ? shipped : name_or_path;
}

Expected<HostProfile> LoadNamedProfile(const std::string& name_or_path) {
  const std::string path = ResolveProfilePath(name_or_path);
  if (path == name_or_path && IsBareName(name_or_path) && !IsFile(path)) {
    std::string names;
    for (const std::string& n : ShippedProfileNames()) names += (names.empty() ? "" : ", ") + n;
    return NotFound("no profile file '" + name_or_path + "' and no shipped profile of that name (shipped: " +
                    (names.empty() ? "none found in " + ShippedProfileDir() : names) + ")");
  }
  return LoadHostProfile(path);
}

std::string ProfileHeadline(const std::string& name_or_path, const HostProfile& p) {
  std::string gpu = Str(p.host, "gpu");
  std::string date = Str(p.provenance, "date").substr(0, 10);
  return "profile " + name_or_path + ": " + (gpu.empty() ? "GPU unknown" : gpu) +
         (date.empty() ? "" : ", fitted " + date) + (p.synthetic ? " (SYNTHETIC)" : "");
}

void SetupProfilesCommand(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = app.add_subcommand(
      "profiles",
      "List the shipped host profiles (data/profiles/): give their name to --profile, e.g.\n"
      "`ftax predict --arch bert --profile h200`. Per profile: GPU, fitting date, the bench it was\n"
      "fitted from, the models its framework costs were refined on, and its measured accuracy on\n"
      "models it was not fitted on.");
  cmd->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->callback([format] {
    nlohmann::json out = nlohmann::json::array();
    TextTable t({"name", "gpu", "date", "fitted_from", "refined_on", "accuracy_on_unseen_models"});
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
      std::string acc = "not recorded";
      if (prov.contains("accuracy") && prov["accuracy"].is_object()) {
        acc.clear();
        for (const auto& [fw, a] : prov["accuracy"].items())
          if (a.is_object() && a.contains("within") && a.contains("rows"))
            acc += (acc.empty() ? "" : "; ") + fw + " " + a["within"].dump() + "/" + a["rows"].dump();
      }
      const std::string date = Str(prov, "date").substr(0, 10);
      t.AddRow({n, Str(p->host, "gpu"), date, from, refined.empty() ? "-" : refined, acc});
      out.push_back({{"name", n}, {"path", ShippedProfileDir() + "/" + n + ".json"}, {"gpu", Str(p->host, "gpu")},
                     {"date", date}, {"fitted_from", from}, {"refined_on_models", refined},
                     {"accuracy", prov.value("accuracy", nlohmann::json(nullptr))}});
    }
    if (*format == "json") std::cout << out.dump(1) << "\n";
    else std::cout << t.Render();
    ExitCode() = kExitOk;
  });
}

}  // namespace ftax::cli
