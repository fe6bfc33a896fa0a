#include <fstream>

#include "calibrate/model_runner.h"
#include "common/json_file.h"
#include "common/file_io.h"

namespace ftax {

Status ReadModelMeta(const std::string& meta_path, RunOptions* o) {
  Expected<nlohmann::json> read = ReadJsonFile(meta_path, "model description");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = read.value();
  if (!j.contains("inputs") || !j["inputs"].is_array())
    return InvalidInput("'" + meta_path + "': missing array 'inputs'");
  o->inputs.clear();
  for (const auto& x : j["inputs"]) {
    ModelInput mi;
    if (!x.contains("shape") || !x["shape"].is_array())
      return InvalidInput("'" + meta_path + "': inputs[].shape must be an array");
    mi.shape = x["shape"].get<std::vector<int64_t>>();
    mi.dtype = x.value("dtype", "float32");
    o->inputs.push_back(mi);
  }
  if (o->model_name.empty()) o->model_name = j.value("model", "");
  if (o->arch.empty()) o->arch = j.value("arch", "");
  o->precision = j.value("precision", o->precision);
  if (j.contains("seq") && j["seq"].is_number_integer() && j.value("kind", "") == "text")
    o->seq = j["seq"].get<int64_t>();
  return Status::Ok();
}

}  // namespace ftax
