#include "cli/profile_names.h"
#include "calibrate/profile_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>


namespace ftax::cli {
namespace {

bool IsFile(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool Exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
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
  if (Exists(name_or_path) || !IsBareName(name_or_path)) return name_or_path;
  const std::string shipped = ShippedProfileDir() + "/" + name_or_path + ".json";
  return IsFile(shipped) ? shipped : name_or_path;
}

Expected<HostProfile> LoadNamedProfile(const std::string& name_or_path) {
  const std::string path = ResolveProfilePath(name_or_path);
  if (path == name_or_path && IsBareName(name_or_path) && !Exists(path)) {
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

}  // namespace ftax::cli
