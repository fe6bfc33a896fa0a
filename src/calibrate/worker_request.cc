// WorkerRequest to and from JSON: the file a `ftax validate` worker process reads.
#include "calibrate/model_runner.h"

namespace ftax {

using json = nlohmann::json;

json WorkerRequestToJson(const WorkerRequest& r) {
  const RunOptions& m = r.model;
  json inputs = json::array();
  for (const ModelInput& in : m.inputs) inputs.push_back({{"shape", in.shape}, {"dtype", in.dtype}});
  json visits = json::array();
  for (const VisitRequest& v : r.visits)
    visits.push_back({{"point", v.point}, {"framework", FrameworkName(v.framework)}, {"batch", v.batch},
                      {"record_kernels", v.record_kernels}, {"warmup", v.warmup}});
  return {{"kind", "ftax-worker-request"},
          {"model", {{"path", m.model_path}, {"name", m.model_name}, {"arch", m.arch},
                     {"precision", m.precision}, {"seq", m.seq}, {"inputs", inputs},
                     {"budget_s", m.budget_s}, {"device", m.device}}},
          {"rounds", r.rounds}, {"probe", r.probe}, {"visits", visits}};
}

Expected<WorkerRequest> WorkerRequestFromJson(const json& j) {
  try {
    if (j.value("kind", "") != "ftax-worker-request") return InvalidInput("not a worker request");
    WorkerRequest r;
    const json& m = j.at("model");
    r.model.model_path = m.at("path").get<std::string>();
    r.model.model_name = m.value("name", "");
    r.model.arch = m.value("arch", "");
    r.model.precision = m.value("precision", "fp32");
    r.model.seq = m.value("seq", int64_t(0));
    r.model.budget_s = m.value("budget_s", 1.0);
    r.model.device = m.value("device", 0);
    for (const json& in : m.at("inputs"))
      r.model.inputs.push_back({in.at("shape").get<std::vector<int64_t>>(), in.value("dtype", "float32")});
    r.rounds = j.value("rounds", 1);
    r.probe = j.value("probe", false);
    for (const json& v : j.at("visits")) {
      VisitRequest q;
      q.point = v.at("point").get<size_t>();
      std::optional<Framework> f = ParseFramework(v.at("framework").get<std::string>());
      if (!f) return InvalidInput("worker request: unknown framework " + v.at("framework").dump());
      q.framework = *f;
      q.batch = v.at("batch").get<int64_t>();
      q.record_kernels = v.value("record_kernels", false);
      q.warmup = v.value("warmup", 5);
      r.visits.push_back(q);
    }
    if (r.rounds < 1 || r.model.budget_s <= 0) return InvalidInput("worker request: rounds and budget_s must be positive");
    return r;
  } catch (const std::exception& e) {
    return InvalidInput(std::string("worker request: ") + e.what());
  }
}

}  // namespace ftax
