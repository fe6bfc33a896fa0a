#include "common/json_file.h"

#include "common/file_io.h"

namespace ftax {

Expected<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& what) {
  Expected<std::string> text = ReadRegularFile(path, what);
  if (!text.ok()) return text.status();
  try {
    nlohmann::json j = nlohmann::json::parse(text.value());
    return j;
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput(what + " '" + path + "' is not valid JSON: " + e.what());
  }
}

}  // namespace ftax
