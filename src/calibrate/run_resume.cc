#include "calibrate/run_resume.h"

#include <sys/stat.h>

#include <fstream>

namespace ftax {
namespace {

using json = nlohmann::json;

std::string Field(const json& row, const char* name) {
  auto it = row.find(name);
  if (it == row.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

std::string RowKey(const std::string& list, const json& row) {
  static const char* kKernel[] = {"class", "dtype", "variant", "label"};
  static const char* kDispatch[] = {"framework", "class", "chain", "dtype", "n_ops", "modules", "mode", "elements",
                                    "graph_inputs"};
  static const char* kRow[] = {"model", "source", "framework", "precision", "batch", "seq", "mode"};
  std::string key = list;
  auto add = [&](const auto& fields) {
    for (const char* f : fields) key += "|" + Field(row, f);
  };
  static const char* kLaunch[] = {"n"};
  if (list == "kernels") add(kKernel);
  else if (list == "dispatch") add(kDispatch);
  else if (list == "launches") add(kLaunch);
  else add(kRow);
  return key;
}

std::set<std::string> RowKeys(const json& doc, const std::string& list) {
  std::set<std::string> keys;
  if (!doc.is_object() || !doc.contains(list) || !doc[list].is_array()) return keys;
  for (const json& row : doc[list])
    if (row.is_object()) keys.insert(RowKey(list, row));
  return keys;
}

Expected<json> ReadRunToResume(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return json(nullptr);
  if (!S_ISREG(st.st_mode)) return InvalidInput("--resume: '" + path + "' is not a regular file");
  std::ifstream in(path);
  if (!in) return NotFound("--resume: cannot read '" + path + "'");
  json doc;
  try {
    in >> doc;
  } catch (const std::exception& e) {
    return InvalidInput("--resume: '" + path + "' is not valid JSON (" + std::string(e.what()).substr(0, 120) +
                        "); move it away to start afresh");
  }
  if (!doc.is_object() || doc.value("kind", "") != kind)
    return InvalidInput("--resume: '" + path + "' is not a file of kind '" + kind + "'");
  return doc;
}

}  // namespace ftax
