#include "calibrate/kineto_trace.h"
#include "common/json_file.h"
#include "common/file_io.h"

#include "common/percentile.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

namespace ftax {
namespace {

using json = nlohmann::json;

}  // namespace

Expected<json> ReadKinetoTrace(const std::string& path) {
  Expected<json> read = ReadJsonFile(path, "trace");
  if (!read.ok()) return read.status();
  const json& t = read.value();
  const json* events = nullptr;
  if (t.is_object() && t.contains("traceEvents") && t["traceEvents"].is_array()) events = &t["traceEvents"];
  else if (t.is_array()) events = &t;
  if (!events) return InvalidInput("trace '" + path + "': no 'traceEvents' array (not a chrome trace)");
  std::vector<double> steps_us;
  double step_lo = 1e300, step_hi = -1e300;
  struct K {
    std::string name;
    double ts, dur;
  };
  std::vector<K> kernels;
  for (const json& e : *events) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    if (!e.contains("ts") || !e.contains("dur") || !e["ts"].is_number() || !e["dur"].is_number()) continue;
    const std::string name = e.value("name", "");
    const std::string cat = e.value("cat", "");
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    // Kineto writes each step twice: the CPU span (the iteration as the caller saw it) and a
    // "gpu_user_annotation" span of the GPU work; only the CPU span is an iteration.
    if (name.rfind("ProfilerStep#", 0) == 0 && cat != "gpu_user_annotation") {
      steps_us.push_back(dur);
      step_lo = std::min(step_lo, ts);
      step_hi = std::max(step_hi, ts + dur);
    } else if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memset") {
      kernels.push_back({name, ts, dur});
    }
  }
  if (steps_us.empty())
    return InvalidInput("trace '" + path + "': no 'ProfilerStep#N' spans; record it with a "
                        "profiler schedule and call prof.step() after every iteration");
  const double iters = double(steps_us.size());
  // Kernels of the profiled steps: those starting inside the steps' span (GPU work may end
  // after the CPU step that launched it, so only the start is checked).
  double kernel_us = 0;
  int count = 0;
  std::map<std::string, std::pair<double, double>> by_name;
  for (const K& k : kernels) {
    if (k.ts < step_lo || k.ts > step_hi) continue;
    kernel_us += k.dur;
    ++count;
    auto& e = by_name[k.name.substr(0, 160)];
    e.first += 1.0 / iters;
    e.second += k.dur / iters;
  }
  json row;
  std::vector<double> ms;
  for (double s : steps_us) ms.push_back(s / 1e3);
  row["latency_ms"] = {{"median", Percentile(ms, 0.5)}, {"p10", Percentile(ms, 0.1)}, {"p90", Percentile(ms, 0.9)},
                       {"n", ms.size()}};
  row["kernels_per_iter"] = count / iters;
  row["kernel_ms"] = kernel_us / iters / 1e3;
  json k = json::object();
  for (const auto& [n, v] : by_name) k[n] = {v.first, v.second};
  row["kernels"] = k;
  row["source"] = path;
  // The GPU the trace was recorded on, when Kineto wrote its device properties.
  if (t.is_object() && t.contains("deviceProperties") && t["deviceProperties"].is_array() &&
      !t["deviceProperties"].empty() && t["deviceProperties"][0].is_object() &&
      t["deviceProperties"][0].contains("name") && t["deviceProperties"][0]["name"].is_string())
    row["device"] = t["deviceProperties"][0]["name"];
  return row;
}

}  // namespace ftax
