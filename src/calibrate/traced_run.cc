#include "calibrate/traced_run.h"
#include "common/json_file.h"
#include "common/file_io.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "calibrate/kineto_trace.h"
#include "graph/arch_spec.h"
#include "predictor/framework.h"

namespace ftax {
namespace {

using json = nlohmann::json;

bool PositiveInteger(const json& v) {
  return (v.is_number_integer() && v.get<int64_t>() >= 1) ||
         (v.is_number_unsigned() && v.get<uint64_t>() >= 1);
}

}  // namespace

Status ValidateTracedRun(const TracedRun& run, const std::string& where) {
  if (run.path.empty()) return InvalidInput(where + ": path: missing (the trace file)");
  if (run.arch.empty())
    return InvalidInput(where +
                        ": arch: missing (the arch spec of the traced model, e.g. "
                        "bert:layers=12,hidden=768,heads=12,ffn=3072)");
  if (run.batch < 1)
    return InvalidInput(where + ": batch: missing or not an integer >= 1 (the traced batch size)");
  if (run.seq && *run.seq < 1) return InvalidInput(where + ": seq: must be an integer >= 1");
  if (run.precision.empty()) return InvalidInput(where + ": precision: missing (fp16, fp32 or bf16)");
  if (run.precision != "fp16" && run.precision != "fp32" && run.precision != "bf16")
    return InvalidInput(where + ": precision: '" + run.precision + "' is not fp16, fp32 or bf16");
  if (!ParseFramework(run.framework))
    return InvalidInput(where + ": framework: unknown framework '" + run.framework + "'");
  DimBindings dims = {{"batch", run.batch}};
  if (run.seq) dims["seq"] = *run.seq;
  Expected<Graph> g = BuildArchGraph(run.arch, dims, ArchFlavor::kTorch);
  if (!g.ok()) return InvalidInput(where + ": arch: '" + run.arch + "': " + g.status().message());
  return Status::Ok();
}

Expected<TracedRun> TracedRunFromJson(const json& j, const std::string& where,
                                      const std::string& default_framework) {
  if (!j.is_object()) return InvalidInput(where + ": expected an object {path, arch, batch, precision, ...}");
  static const std::set<std::string> kKeys = {"path",      "name",  "arch", "framework",
                                              "precision", "batch", "seq"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!kKeys.count(it.key()))
      return InvalidInput(where + ": unknown key '" + it.key() +
                          "' (known: path, name, arch, framework, precision, batch, seq)");
  TracedRun r;
  for (const char* key : {"path", "name", "arch", "framework", "precision"})
    if (j.contains(key) && !j[key].is_string())
      return InvalidInput(where + ": " + key + ": must be a string");
  r.path = j.value("path", "");
  r.name = j.value("name", "");
  r.arch = j.value("arch", "");
  r.framework = j.value("framework", default_framework);
  r.precision = j.value("precision", "");
  if (j.contains("batch")) {
    if (!PositiveInteger(j["batch"])) return InvalidInput(where + ": batch: must be an integer >= 1");
    r.batch = j["batch"].get<int64_t>();
  }
  if (j.contains("seq") && !j["seq"].is_null()) {
    if (!PositiveInteger(j["seq"])) return InvalidInput(where + ": seq: must be an integer >= 1");
    r.seq = j["seq"].get<int64_t>();
  }
  Status s = ValidateTracedRun(r, where);
  if (!s.ok()) return s;
  return r;
}

Expected<std::vector<TracedRun>> LoadTraceManifest(const std::string& path,
                                                   const std::string& default_framework) {
  Expected<json> read = ReadJsonFile(path, "trace manifest");
  if (!read.ok()) return read.status();
  const json& j = read.value();
  const json* list = nullptr;
  std::string prefix = path;
  if (j.is_array()) {
    list = &j;
  } else if (j.is_object() && j.contains("traces") && j["traces"].is_array()) {
    list = &j["traces"];
    prefix += ": traces";
  }
  if (!list) return InvalidInput(path + ": expected an array of traces or an object with an array 'traces'");
  if (list->empty()) return InvalidInput(path + ": lists no traces");
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<TracedRun> runs;
  for (size_t i = 0; i < list->size(); ++i) {
    json entry = (*list)[i];
    // Relative trace paths are relative to the manifest (so a manifest travels with its traces).
    if (entry.is_object() && entry.contains("path") && entry["path"].is_string()) {
      const std::filesystem::path p = entry["path"].get<std::string>();
      if (p.is_relative() && !dir.empty()) entry["path"] = (dir / p).string();
    }
    Expected<TracedRun> r =
        TracedRunFromJson(entry, prefix + "[" + std::to_string(i) + "]", default_framework);
    if (!r.ok()) return r.status();
    runs.push_back(r.value());
  }
  return runs;
}

Expected<json> MeasuredRowFromTrace(const TracedRun& run) {
  Expected<json> row = ReadKinetoTrace(run.path);
  if (!row.ok()) return row.status();
  json r = row.value();
  r["model"] = run.name.empty() ? run.path : run.name;
  r["arch"] = run.arch;
  r["framework"] = run.framework;
  r["precision"] = run.precision;
  r["batch"] = run.batch;
  r["seq"] = run.seq ? json(*run.seq) : json(nullptr);
  return r;
}

}  // namespace ftax
