#include "calibrate/profile_file.h"

#include "common/json_file.h"

namespace ftax {

Expected<HostProfile> LoadHostProfile(const std::string& path) {
  Expected<nlohmann::json> j = ReadJsonFile(path, "profile");
  if (!j.ok()) return j.status();
  Expected<HostProfile> p = HostProfileFromJson(j.value());
  if (!p.ok()) return p.status().WithContext(path);
  return p;
}

}  // namespace ftax
