#include "calibrate/validation_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "calibrate/kernel_classify.h"
#include "calibrate/measured_framework.h"
#include "common/percentile.h"
#include "graph/open_model.h"
#include "predictor/cpu_speed.h"

namespace ftax {
namespace {

using json = nlohmann::json;

// The Graph a measured row is predicted from, opened as every front end opens models
// (graph/open_model.h): its arch spec with the row's batch and seq, or its TorchScript file
// ("source", with "inputs" [{shape, dtype}] in forward's order, dim 0 the batch) at the row's
// batch. `files` keeps each file loaded for the rows after.
Expected<Graph> OpenRowModel(const json& row, const ValidationRow& r, bool from_file, ModelFileCache* files) {
  ModelSourceOptions mo;
  mo.batch = r.batch;
  mo.cache = files;
  if (!from_file) {
    mo.arch = r.arch;
    mo.arch_from_flag = false;  // the row's "arch"; the caller names the row
    if (r.seq > 0) mo.dims.push_back("seq=" + std::to_string(r.seq));
    return OpenModelGraph(mo);
  }
  mo.path = row.at("source").get<std::string>();
  const json& inputs = row.at("inputs");
  if (!inputs.is_array()) return InvalidInput(mo.path + ": \"inputs\": expected an array of {shape, dtype}");
  std::vector<InputShapeFlag> flags;
  for (const json& in : inputs) {
    InputShapeFlag f;
    f.dims = in.at("shape").get<std::vector<int64_t>>();
    f.dtype = ParseDType(in.value("dtype", "float32"));
    flags.push_back(f);
  }
  mo.forward_inputs = flags;
  return OpenModelGraph(mo);
}

constexpr double kMaxMs = 1e9;  // about 11 days: anything longer is not one inference

Status CheckNumber(const json& row, const char* key, bool required, bool positive, double max_value,
                   const std::string& prefix = "") {
  const std::string name = prefix + key;
  if (!row.contains(key) || row.at(key).is_null())
    return required ? InvalidInput(name + ": required") : Status::Ok();
  const json& v = row.at(key);
  if (!v.is_number()) return InvalidInput(name + ": expected a number, got " + v.dump());
  const double x = v.get<double>();
  if (!std::isfinite(x)) return InvalidInput(name + ": not finite");
  if (positive ? !(x > 0) : !(x >= 0))
    return InvalidInput(name + ": must be " + (positive ? "> 0" : ">= 0") + ", got " + v.dump());
  if (x > max_value) return InvalidInput(name + ": " + v.dump() + " is out of range");
  return Status::Ok();
}

Status CheckInteger(const json& row, const char* key, bool required, int64_t lo, int64_t hi) {
  if (!row.contains(key) || row.at(key).is_null())
    return required ? InvalidInput(std::string(key) + ": required") : Status::Ok();
  const json& v = row.at(key);
  if (!v.is_number_integer()) return InvalidInput(std::string(key) + ": expected an integer, got " + v.dump());
  if (v.is_number_unsigned() ? (v.get<uint64_t>() > uint64_t(hi) || (lo > 0 && v.get<uint64_t>() < uint64_t(lo)))
                             : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
    return InvalidInput(std::string(key) + ": must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi) + ", got " + v.dump());
  return Status::Ok();
}

}  // namespace

double MeasuredKernelMs(const json& m) {
  auto number = [&](const char* key) {
    return m.contains(key) && m.at(key).is_number() ? m.at(key).get<double>() : -1.0;
  };
  const double kernel = number("kernel_ms");
  if (kernel <= 0) return 0;
  if (number("kernel_sum_ms") >= 0) return kernel;  // already the busy time
  double cap = number("gpu_span_ms");
  if (cap <= 0 && m.contains("latency_ms") && m.at("latency_ms").is_object())
    cap = m.at("latency_ms").contains("median") && m.at("latency_ms").at("median").is_number()
              ? m.at("latency_ms").at("median").get<double>()
              : -1.0;
  return cap > 0 ? std::min(kernel, cap) : kernel;
}

Status CheckMeasuredRow(const json& m) {
  if (!m.is_object()) return InvalidInput("expected an object");
  for (const char* key : {"framework", "precision"})
    if (!m.contains(key) || !m.at(key).is_string()) return InvalidInput(std::string(key) + ": required string");
  for (const char* key : {"model", "arch", "source"})
    if (m.contains(key) && !m.at(key).is_string() && !m.at(key).is_null())
      return InvalidInput(std::string(key) + ": expected a string");
  Status s = CheckInteger(m, "batch", true, 1, int64_t(1) << 31);
  if (!s.ok()) return s;
  if (!(s = CheckInteger(m, "seq", false, 0, int64_t(1) << 31)).ok()) return s;
  if (!m.contains("latency_ms") || !m.at("latency_ms").is_object())
    return InvalidInput("latency_ms: required object {median, p10, p90}");
  const json& lat = m.at("latency_ms");
  if (!(s = CheckNumber(lat, "median", true, true, kMaxMs, "latency_ms.")).ok()) return s;
  if (!(s = CheckNumber(lat, "p10", true, false, kMaxMs, "latency_ms.")).ok()) return s;
  if (!(s = CheckNumber(lat, "p90", true, false, kMaxMs, "latency_ms.")).ok()) return s;
  const double med = lat.at("median").get<double>();
  if (lat.at("p10").get<double>() > med * (1 + 1e-9) || lat.at("p90").get<double>() < med * (1 - 1e-9))
    return InvalidInput("latency_ms: quantiles out of order (need p10 <= median <= p90)");
  for (const char* key : {"kernel_ms", "kernel_sum_ms", "gpu_span_ms"})
    if (!(s = CheckNumber(m, key, false, false, kMaxMs)).ok()) return s;
  if (!(s = CheckNumber(m, "kernels_per_iter", false, false, 1e12)).ok()) return s;
  if (!(s = CheckNumber(m, "host_probe_us", false, true, 1e6)).ok()) return s;
  if (!(s = CheckNumber(m, "cpu_gauge_us", false, true, 1e6)).ok()) return s;
  for (const char* key : {"visit_medians_ms", "pass_medians_ms"}) {
    if (!m.contains(key) || m.at(key).is_null()) continue;
    if (!m.at(key).is_array()) return InvalidInput(std::string(key) + ": expected an array");
    for (size_t i = 0; i < m.at(key).size(); ++i) {
      const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
      if (!(s = CheckNumber(json{{item, m.at(key)[i]}}, item.c_str(), false, true, kMaxMs)).ok()) return s;
    }
  }
  if (m.contains("kernels") && !m.at("kernels").is_null()) {
    if (!m.at("kernels").is_object()) return InvalidInput("kernels: expected an object");
    for (const auto& [name, v] : m.at("kernels").items()) {
      if (!v.is_array()) return InvalidInput("kernels." + name + ": expected [count, total_us, ...]");
      for (const json& x : v)
        if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 0 ||
            x.get<double>() > kMaxMs * 1e3)
          return InvalidInput("kernels." + name + ": entries must be finite numbers >= 0");
    }
  }
  return Status::Ok();
}

Expected<ValidationReport> CompareMeasurements(const json& measured, const HostProfile& profile,
                                               const CompareOptions& opt) {
  if (!measured.is_object() || !measured.contains("rows") || !measured["rows"].is_array())
    return InvalidInput("measurements: expected an object with an array 'rows'");
  ValidationReport rep;
  std::map<std::string, std::vector<std::string>> seen_notes;
  ModelFileCache files;  // each TorchScript file loaded once
  int index = 0;
  for (const json& m : measured["rows"]) {
    const std::string where = "rows[" + std::to_string(index++) + "]";
    ValidationRow r;
    if (m.is_object() && m.value("kernels_pending", false)) {  // an interrupted run's row
      rep.skipped.push_back(where + " (" + m.value("model", "") +
                            "): its kernel pass has not run (the run was interrupted before it)");
      continue;
    }
    Status valid = CheckMeasuredRow(m);
    if (!valid.ok()) return valid.WithContext("measurements " + where);
    try {
      r.model = m.value("model", "");
      r.arch = m.value("arch", "");
      m.at("framework").get<std::string>();  // a string (CheckMeasuredRow)
      r.framework = MeasuredFramework(m);
      r.precision = m.at("precision").get<std::string>();
      r.batch = m.at("batch").get<int64_t>();
      r.seq = m.contains("seq") && m["seq"].is_number_integer() ? m["seq"].get<int64_t>() : 0;
      const json& lat = m.at("latency_ms");
      r.measured_ms = lat.at("median").get<double>();
      r.measured_p10 = lat.at("p10").get<double>();
      r.measured_p90 = lat.at("p90").get<double>();
      r.measured_kernel_ms = MeasuredKernelMs(m);
      r.measured_kernels = m.value("kernels_per_iter", 0.0);
      if (m.contains("gpu_span_ms") && m["gpu_span_ms"].is_number())
        r.measured_gpu_span_ms = m["gpu_span_ms"].get<double>();
      if (m.contains("before_replay_ms") && m["before_replay_ms"].is_number())
        r.measured_before_replay_ms = m["before_replay_ms"].get<double>();
      // Medians of the same point at different times: the visits of a run in rounds, or the
      // passes that validation/scripts/merge_passes.py merged (null where a pass missed the point).
      for (const char* key : {"visit_medians_ms", "pass_medians_ms"})
        if (r.visit_medians_ms.empty() && m.contains(key) && m[key].is_array())
          for (const json& v : m[key])
            if (v.is_number()) r.visit_medians_ms.push_back(v.get<double>());
    } catch (const std::exception& e) {
      return InvalidInput("measurements " + where + ": " + e.what());
    }
    const bool from_file = r.arch.empty() || opt.predict_from_file;
    if (from_file && !(m.contains("source") && m.contains("inputs"))) {
      rep.skipped.push_back(where + " (" + r.model + "): no arch spec and no TorchScript file to predict from");
      continue;
    }
    auto fw = ParseFramework(r.framework);
    auto dt = ParseDType(r.precision);
    if (!fw || !dt) {
      rep.skipped.push_back(where + ": unknown framework or precision");
      continue;
    }
    r.measured_framework_ms = std::max(0.0, r.measured_ms - r.measured_kernel_ms);
    r.measured_bound = r.measured_kernel_ms > r.measured_framework_ms ? "compute" : "framework";
    if (m.contains("kernels") && m["kernels"].is_object()) {
      for (const auto& [name, v] : m["kernels"].items()) {
        if (!v.is_array() || v.size() < 2) continue;
        double ms = v[1].get<double>() / 1e3;
        // The profiler's "Memset (Device)" records, and a replayed graph's memset nodes, which
        // CUPTI names as kernels ("memset32").
        if ((name.rfind("Memset", 0) == 0 || name.rfind("memset", 0) == 0) && v[0].is_number())
          r.measured_memsets += v[0].get<double>();
        auto c = ClassifyKernelName(name);
        if (c) r.measured_class_ms[int(*c)] += ms;
        else r.unclassified_ms += ms;
      }
    }
    Expected<Graph> g = OpenRowModel(m, r, from_file, &files);
    if (!g.ok()) {
      rep.skipped.push_back(where + " (" + r.model + "): " + g.status().message());
      continue;
    }
    DType precision = *dt;
    std::vector<std::string> notes;
    // The row's CPU speed: the frameworks whose CPU side is Python (eager, and torch.compile's
    // wrapper, whose bench chains the gauge brought to the fast state) by the Python gauge, the
    // C++-timed ones (TorchScript, CUDA graphs) by the host probe, each over the profile's
    // reference.
    auto number = [&](const char* key) {
      return m.contains(key) && m[key].is_number() ? m[key].get<double>() : -1.0;
    };
    const bool python = ReadsCpuGauge(*fw);
    const double row_gauge = python ? number("cpu_gauge_us") : number("host_probe_us");
    const double profile_gauge = python ? profile.cpu_gauge_us : profile.host_probe_us;
    const double typical = python ? profile.cpu_gauge_typical_us : profile.host_probe_typical_us;
    const bool rescale = profile_gauge > 0 && ((opt.at_row_cpu_speed && row_gauge > 0) ||
                                               (opt.at_typical_cpu_speed && typical > 0));
    if (rescale) r.cpu_speed_factor = (opt.at_row_cpu_speed ? row_gauge : typical) / profile_gauge;
    Expected<PredictionPoint> p =
        rescale ? PredictPoint(g.value(), AtCpuSpeed(profile, *fw, r.cpu_speed_factor), *fw, precision,
                               opt.interval_samples, 1, &notes)
                : PredictPoint(g.value(), profile, *fw, precision, opt.interval_samples, 1, &notes);
    if (!p.ok()) {
      rep.skipped.push_back(where + " (" + r.model + " " + r.framework + "): " + p.status().message());
      continue;
    }
    for (const auto& n : notes)
      if (std::find(rep.notes.begin(), rep.notes.end(), n) == rep.notes.end()) rep.notes.push_back(n);
    r.predicted = p.value();
    // Kernel names do not tell masked from unmasked attention: compare them as one class.
    r.predicted.class_ms[int(KernelClass::kAttention)] +=
        r.predicted.class_ms[int(KernelClass::kAttentionMasked)];
    r.predicted.class_ms[int(KernelClass::kAttentionMasked)] = 0;
    r.predicted.batch = r.batch;
    if (*fw == Framework::kTorchCompileReduceOverhead && r.predicted.call_ms > 0)
      r.predicted_before_replay_ms = r.predicted.call_ms + r.predicted.module_ms;
    r.error_pct = 100.0 * (r.predicted.latency_ms - r.measured_ms) / r.measured_ms;
    const double tol = IsCudaGraph(*fw) ? opt.tolerance_pct : opt.tolerance_eager_pct;
    r.within_tolerance = std::fabs(r.error_pct) <= tol;
    r.inside_spread = r.predicted.latency_ms >= r.measured_p10 && r.predicted.latency_ms <= r.measured_p90;
    // Both sides by the observable rule the measurement allows: compute-bound when the GPU
    // is busy for more than half the latency. (The prediction's own bound compares GPU time
    // with CPU time, which a run does not show: in a framework-bound run the GPU works under
    // the CPU's dispatches.)
    r.predicted_observable_bound =
        r.predicted.compute_ms > r.predicted.latency_ms - r.predicted.compute_ms ? "compute" : "framework";
    r.bound_agrees = r.predicted_observable_bound == r.measured_bound;
    if (!r.within_tolerance && !r.inside_spread) {
      MissEvidence e;
      e.tolerance_pct = tol;
      e.measured_ms = r.measured_ms;
      e.measured_kernel_ms = r.measured_kernel_ms;
      e.predicted_ms = r.predicted.latency_ms;
      e.predicted_compute_ms = r.predicted.compute_ms;
      e.measured_class_ms = r.measured_class_ms;
      e.predicted_class_ms = r.predicted.class_ms;
      e.visit_medians_ms = r.visit_medians_ms;
      e.measured_kernels = r.measured_kernels;
      e.predicted_kernels = r.predicted.kernels;
      e.measured_memsets = r.measured_memsets;
      e.measured_before_replay_ms = r.measured_before_replay_ms;
      e.predicted_before_replay_ms = r.predicted_before_replay_ms;
      // Python eager's probe (validate_eager.py's) against the bench's Python chain. A C++
      // row's probe is not evidence of a slow visit: on host run as the same model measured
      // in either probe state ran at the same ratio to its prediction.
      if (IsPythonEager(*fw) && m.contains("host_probe_us") && m["host_probe_us"].is_number()) {
        e.host_probe_us = m["host_probe_us"].get<double>();
        const FrameworkParams* eager = profile.FindFramework(Framework::kPytorchEager);
        if (eager && eager->dispatch_us[int(DispatchClass::kKernel)].known())
          e.bench_probe_us = eager->dispatch_us[int(DispatchClass::kKernel)].value;
      }
      r.miss = ExplainMiss(e);
    }
    rep.rows.push_back(r);
  }
  // One note per kind of reading: Python eager's gauge, the C++ frameworks' probe.
  for (const bool python : {true, false}) {
    std::vector<double> factors;
    for (const ValidationRow& r : rep.rows) {
      const auto fw = ParseFramework(r.framework);
      if (r.cpu_speed_factor != 1 && fw && ReadsCpuGauge(*fw) == python) factors.push_back(r.cpu_speed_factor);
    }
    if (factors.empty()) continue;
    std::sort(factors.begin(), factors.end());
    const char* rows = python ? "Python eager and torch.compile" : "TorchScript and CUDA-graph";
    const char* reading = python ? "CPU gauge" : "host probe";
    const double fast = python ? profile.cpu_gauge_us : profile.host_probe_us;
    char how[200];
    if (opt.at_typical_cpu_speed && !opt.at_row_cpu_speed)
      std::snprintf(how, sizeof(how), "the profile's typical CPU speed: its bench's median %s reading over its fast "
                    "state's %.2f us, x%.2f,", reading, fast, factors.front());
    else
      std::snprintf(how, sizeof(how), "the CPU speed each was measured at: their %s over the profile's %.2f us, "
                    "x%.2f to x%.2f (median x%.2f),", reading, fast, factors.front(), factors.back(),
                    factors[factors.size() / 2]);
    rep.notes.push_back(std::to_string(factors.size()) + " " + rows + " rows predicted at " + how +
                        " scales the framework's CPU-side costs (--cpu-speed profile: not scaled)");
  }
  SummarizeReport(&rep, opt);
  return rep;
}

void SummarizeReport(ValidationReport* report, const CompareOptions& opt) {
  ValidationReport& rep = *report;
  rep.frameworks.clear();
  rep.crossovers.clear();
  // Per framework.
  std::map<std::string, FrameworkSummary> fs;
  std::map<std::string, std::vector<double>> errs;
  for (const ValidationRow& r : rep.rows) {
    FrameworkSummary& s = fs[r.framework];
    s.framework = r.framework;
    const std::optional<Framework> sfw = ParseFramework(r.framework);
    s.tolerance_pct = sfw && IsCudaGraph(*sfw) ? opt.tolerance_pct : opt.tolerance_eager_pct;
    s.rows++;
    s.within += r.within_tolerance;
    s.inside += r.inside_spread;
    s.within_or_inside += r.within_tolerance || r.inside_spread;
    s.bound_agree += r.bound_agrees;
    if (r.miss) s.miss_causes[r.miss->kind]++;
    errs[r.framework].push_back(std::fabs(r.error_pct));
    for (int c = 0; c < kNumKernelClasses; ++c) {
      s.predicted_class_ms[c] += r.predicted.class_ms[c];
      s.measured_class_ms[c] += r.measured_class_ms[c];
    }
  }
  for (auto& [name, s] : fs) {
    s.median_abs_error_pct = Median(errs[name]);
    rep.frameworks.push_back(s);
  }
  // Crossover per model/framework/precision on the measured batch grid.
  std::map<std::string, std::vector<const ValidationRow*>> groups;
  for (const ValidationRow& r : rep.rows) groups[r.model + "|" + r.framework + "|" + r.precision].push_back(&r);
  for (auto& [key, rows] : groups) {
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->batch < b->batch; });
    CrossoverCheck c;
    c.model = rows[0]->model;
    c.framework = rows[0]->framework;
    c.precision = rows[0]->precision;
    c.max_batch = rows.back()->batch;
    for (const ValidationRow* r : rows) {
      if (!c.measured && r->measured_bound == "compute") c.measured = r->batch;
      if (!c.predicted && r->predicted_observable_bound == "compute") c.predicted = r->batch;
    }
    if (!c.measured && !c.predicted) c.agrees = true;
    else if (c.measured && c.predicted)
      c.agrees = std::max(*c.measured, *c.predicted) <= 2 * std::min(*c.measured, *c.predicted);
    rep.crossovers.push_back(c);
  }
}

json ValidationReportToJson(const ValidationReport& r) {
  json j;
  j["rows"] = json::array();
  for (const ValidationRow& v : r.rows) {
    json pc = json::object(), mc = json::object();
    for (int c = 0; c < kNumKernelClasses; ++c) {
      pc[KernelClassName(KernelClass(c))] = v.predicted.class_ms[c];
      mc[KernelClassName(KernelClass(c))] = v.measured_class_ms[c];
    }
    j["rows"].push_back({{"model", v.model}, {"arch", v.arch}, {"framework", v.framework},
                         {"precision", v.precision}, {"batch", v.batch},
                         {"measured_ms", v.measured_ms}, {"measured_p10_ms", v.measured_p10},
                         {"measured_p90_ms", v.measured_p90}, {"measured_kernel_ms", v.measured_kernel_ms},
                         {"measured_kernels", v.measured_kernels},
                         {"measured_memsets", v.measured_memsets},
                         {"measured_gpu_span_ms", v.measured_gpu_span_ms >= 0 ? json(v.measured_gpu_span_ms) : json()},
                         {"measured_framework_ms", v.measured_framework_ms},
                         {"measured_before_replay_ms", v.measured_before_replay_ms >= 0 ? json(v.measured_before_replay_ms) : json()},
                         {"predicted_before_replay_ms", v.predicted_before_replay_ms >= 0 ? json(v.predicted_before_replay_ms) : json()},
                         {"measured_bound", v.measured_bound},
                         {"predicted_ms", v.predicted.latency_ms},
                         {"predicted_interval_ms", {v.predicted.interval_lo_ms, v.predicted.interval_hi_ms}},
                         {"predicted_framework_ms", v.predicted.framework_ms},
                         {"predicted_compute_ms", v.predicted.compute_ms},
                         {"predicted_kernels", v.predicted.kernels},
                         {"predicted_dispatches", v.predicted.dispatches},
                         {"predicted_bound", v.predicted.bound},
                         {"predicted_observable_bound", v.predicted_observable_bound}, {"error_pct", v.error_pct},
                         {"within_tolerance", v.within_tolerance}, {"inside_spread", v.inside_spread},
                         {"bound_agrees", v.bound_agrees}, {"cpu_speed_factor", v.cpu_speed_factor},
                         {"predicted_class_ms", pc},
                         {"measured_class_ms", mc}, {"unclassified_kernel_ms", v.unclassified_ms},
                         {"miss_cause", v.miss ? json{{"kind", v.miss->kind}, {"detail", v.miss->detail},
                                                      {"kernel_delta_ms", v.miss->kernel_delta_ms},
                                                      {"overhead_delta_ms", v.miss->overhead_delta_ms}}
                                               : json()}});
  }
  j["frameworks"] = json::array();
  for (const FrameworkSummary& s : r.frameworks) {
    json cls = json::object();
    for (int c = 0; c < kNumKernelClasses; ++c)
      if (s.measured_class_ms[c] > 0 || s.predicted_class_ms[c] > 0)
        cls[KernelClassName(KernelClass(c))] = {{"predicted_ms", s.predicted_class_ms[c]},
                                                {"measured_ms", s.measured_class_ms[c]}};
    j["frameworks"].push_back({{"framework", s.framework}, {"rows", s.rows},
                               {"tolerance_pct", s.tolerance_pct}, {"within_tolerance", s.within},
                               {"inside_spread", s.inside}, {"within_or_inside", s.within_or_inside},
                               {"bound_agrees", s.bound_agree},
                               {"median_abs_error_pct", s.median_abs_error_pct}, {"class_ms", cls},
                               {"miss_causes", s.miss_causes}});
  }
  j["crossovers"] = json::array();
  for (const CrossoverCheck& c : r.crossovers)
    j["crossovers"].push_back({{"model", c.model}, {"framework", c.framework}, {"precision", c.precision},
                               {"measured", c.measured ? json(*c.measured) : json(nullptr)},
                               {"predicted", c.predicted ? json(*c.predicted) : json(nullptr)},
                               {"max_batch", c.max_batch}, {"agrees", c.agrees}});
  j["notes"] = r.notes;
  j["skipped"] = r.skipped;
  return j;
}

}  // namespace ftax
