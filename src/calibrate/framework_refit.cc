#include "calibrate/framework_refit.h"

#include "calibrate/measured_framework.h"
#include "calibrate/profile_file.h"
#include "calibrate/validation_report.h"
#include "common/clock.h"
#include "common/percentile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "graph/arch_spec.h"
#include "predictor/predict.h"

namespace ftax {
namespace {

std::string Ms(double v) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(3);
  s << v;
  return s.str();
}

}  // namespace

// A row whose CPU reading is further than this from the profile's, either way, is left out:
// shared hosts slow by 1.5-1.8x; host run av's calibration runs had two rows at 3.0x and 3.3x
// that, brought to the profile's speed, made the op-scale fit's layer norms x0.23.
constexpr double kMaxRefitCpuFactor = 2.0;

Expected<std::vector<FrameworkTimeRow>> CompareFrameworkTime(const HostProfile& profile,
                                                             const nlohmann::json& measured,
                                                             const RefitOptions& opt) {
  if (!measured.is_object() || !measured.contains("rows") || !measured["rows"].is_array())
    return InvalidInput("measurements: expected an object with an array 'rows'");
  std::vector<FrameworkTimeRow> out;
  int index = -1;
  for (const auto& m : measured["rows"]) {
    ++index;
    FrameworkTimeRow row;
    row.index = index;
    if (!m.is_object()) {
      row.reason = "not an object";
      out.push_back(row);
      continue;
    }
    row.model = m.value("model", "");
    row.framework = MeasuredFramework(m);
    auto skip = [&](const std::string& why) {
      row.reason = why;
      out.push_back(row);
    };
    if (opt.exclude_models.count(row.model)) {
      skip("model excluded");
      continue;
    }
    if (!opt.only_models.empty() && !opt.only_models.count(row.model)) {
      skip("not a calibration model");
      continue;
    }
    auto fw = ParseFramework(row.framework);
    if (!fw) {
      skip("unknown framework '" + row.framework + "'");
      continue;
    }
    auto dt = ParseDType(m.value("precision", ""));
    if (!dt) {
      skip("unknown or missing precision");
      continue;
    }
    const std::string arch = m.value("arch", "");
    if (arch.empty()) {
      skip("no arch spec");
      continue;
    }
    if (!m.contains("latency_ms") || !m["latency_ms"].is_object()) {
      skip("no latency_ms");
      continue;
    }
    const double lat = m["latency_ms"].value("median", 0.0);
    const double kern = MeasuredKernelMs(m);
    double overhead = 1;
    if (m.contains("profiler_overhead_factor")) {
      const auto& f = m["profiler_overhead_factor"];
      if (!f.is_number() || !(f.get<double>() > 0)) {
        skip("profiler_overhead_factor must be a number > 0");
        continue;
      }
      overhead = f.get<double>();
    }
    row.kernel_ms = kern;
    row.measured_ms = (lat - kern) / overhead;
    const bool graph = IsCudaGraph(*fw);
    if (!graph && !(row.measured_ms > kern)) {  // framework-bound rows only
      skip("not framework-bound: measured framework time " + Ms(row.measured_ms) +
           " ms <= kernel time " + Ms(kern) + " ms");
      continue;
    }
    DimBindings dims = {{"batch", m.value("batch", int64_t(1))}};
    if (m.contains("seq") && m["seq"].is_number_integer()) dims["seq"] = m["seq"].get<int64_t>();
    Expected<Graph> g = BuildArchGraph(arch, dims, ArchFlavor::kTorch);
    if (!g.ok()) {
      skip("arch spec '" + arch + "': " + g.status().message());
      continue;
    }
    Expected<PredictionPoint> p = PredictPoint(g.value(), profile, *fw, *dt, 0, 1, nullptr);
    if (!p.ok()) {
      skip("prediction failed: " + p.status().message());
      continue;
    }
    const FrameworkParams* fp = profile.FindFramework(*fw);
    row.call_ms = fp && fp->call_us.known() ? fp->call_us.value / 1e3 : 0;
    row.predicted_ms = p->framework_ms;
    // The row's CPU speed against the profile's (Python eager: the CPU gauge; TorchScript:
    // the host probe), where both were read: a run in the host's slow state pays every CPU
    // cost in proportion, which is the host's state, not what a model costs over the bench.
    const bool python = IsPythonEager(*fw);
    const char* gauge_key = python ? "cpu_gauge_us" : "host_probe_us";
    const double row_gauge = m.contains(gauge_key) && m[gauge_key].is_number() ? m[gauge_key].get<double>() : -1.0;
    const double profile_gauge = python ? profile.cpu_gauge_us : profile.host_probe_us;
    if (!graph && row_gauge > 0 && profile_gauge > 0) row.cpu_speed_factor = row_gauge / profile_gauge;
    if (row.cpu_speed_factor > kMaxRefitCpuFactor || row.cpu_speed_factor < 1 / kMaxRefitCpuFactor) {
      skip("its CPU gauge read " + Ms(row.cpu_speed_factor) + "x the profile's: the run and the reading may "
           "not have met the same CPU state");
      continue;
    }
    // In a framework-bound run the GPU works under the CPU's dispatches, so the CPU side took
    // the latency less the GPU work left after the last dispatch, not less all kernel time.
    // That tail is the prediction's (latency - framework time, small when framework-bound).
    // A graph replay's overhead is all the latency its kernels do not fill: the launch and
    // the GPU's gaps between nodes.
    row.gpu_tail_ms = graph ? 0.0 : std::max(0.0, p->latency_ms - p->framework_ms);
    row.measured_ms = graph ? (lat - kern) / overhead : (lat - row.gpu_tail_ms) / overhead / row.cpu_speed_factor;
    row.launch_ms = p->launch_ms;
    const double pred = p->framework_ms - row.call_ms - row.launch_ms;
    if (pred <= 0) {
      skip("predicted framework time does not exceed the call cost and launches");
      continue;
    }
    row.ratio = (row.measured_ms - row.call_ms - row.launch_ms) / pred;
    row.usable = true;
    out.push_back(row);
  }
  return out;
}

void ScaleFrameworkCosts(const std::string& framework, double s, double se, HostProfile* profile) {
  FrameworkParams& f = profile->frameworks[framework];
  auto scale = [&](Param& p) {
    if (!p.known()) return;
    const double v = p.value;
    const double pse = std::isnan(p.std_error) ? 0 : p.std_error;
    p.value = v * s;
    p.std_error = std::sqrt(pse * pse * s * s + v * v * se * se);
  };
  for (Param& d : f.dispatch_us) scale(d);
  for (auto& [op, q] : f.op_us) scale(q);
  scale(f.module_us);
  scale(f.input_us);
  scale(f.replay_per_node_us);
  scale(f.node_gap_us);
}

namespace {
// Suffixes of a scale's key in PriorFromRefinedProfiles: a framework priced by op type, and
// one whose further launches were priced at the bench's timed launch (in that order).
const std::string kOpSuffix = "#op";
const std::string kLaunchSuffix = "#launch";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether a framework's predictions pay launches at gpu.launch_us in this profile.
bool TimedLaunch(const HostProfile& p, const std::string& framework) {
  auto fw = ParseFramework(framework);
  return p.gpu.launch_us.known() && !(fw && IsCudaGraph(*fw));
}
}  // namespace

Expected<RefitReport> PriorFromRefinedProfiles(const std::vector<HostProfile>& refined,
                                               const std::vector<std::string>& names,
                                               const std::string& gpu) {
  if (refined.size() < 2)
    return InvalidInput("a prior needs the refinements of at least two hosts (got " +
                        std::to_string(refined.size()) + "): their spread is the prior's uncertainty");
  std::map<std::string, std::vector<double>> scales;
  std::vector<double> graph_same_gpu;  // cuda-graph scales of profiles of the target's GPU
  for (size_t i = 0; i < refined.size(); ++i) {
    const nlohmann::json& prov = refined[i].provenance;
    const std::string name = i < names.size() ? names[i] : "profile " + std::to_string(i);
    if (!prov.is_object() || !prov.contains("refinement") || !prov["refinement"].is_array() ||
        prov["refinement"].empty())
      return InvalidInput("'" + name + "' records no refinement (provenance.refinement): a prior "
                          "needs profiles refined on real runs, e.g. validation/*/*/profile-refined.json");
    if (prov.contains("refinement_method") && prov["refinement_method"].is_string() &&
        prov["refinement_method"].get<std::string>().rfind("prior:", 0) == 0)
      return InvalidInput("'" + name + "' was itself scaled by a prior, not refined on real runs: "
                          "its scales would be counted twice");
    // A profile refined after an earlier refinement or a prior holds costs scaled by each in
    // turn: its scale against its own bench is the product of all of them (the earlier ones
    // are kept in provenance.previous_refinements).
    std::map<std::string, double> total;
    auto take = [&](const nlohmann::json& refinement, bool current) -> Status {
      for (const nlohmann::json& e : refinement) {
        if (!e.is_object() || !e.contains("framework") || !e["framework"].is_string() ||
            !e.contains("dispatch_scale") || !e["dispatch_scale"].is_number())
          return InvalidInput("'" + name + "': provenance." +
                              (current ? "refinement" : "previous_refinements[].refinement") +
                              " entries need framework and dispatch_scale");
        const std::string fw = e["framework"].get<std::string>();
        if (!current && !total.count(fw)) continue;  // an earlier scale of a framework not refined now
        auto [it, inserted] = total.emplace(fw, 1.0);
        it->second *= e["dispatch_scale"].get<double>();
      }
      return Status::Ok();
    };
    if (Status s = take(prov["refinement"], true); !s.ok()) return s;
    if (prov.contains("previous_refinements") && prov["previous_refinements"].is_array())
      for (const nlohmann::json& prev : prov["previous_refinements"])
        if (prev.is_object() && prev.contains("refinement") && prev["refinement"].is_array())
          if (Status s = take(prev["refinement"], false); !s.ok()) return s;
    for (const auto& [fw_name, scale] : total) {
      auto own = refined[i].frameworks.find(fw_name);
      const bool by_op = own != refined[i].frameworks.end() && !own->second.op_us.empty();
      const std::string fw =
          fw_name + (by_op ? kOpSuffix : "") + (TimedLaunch(refined[i], fw_name) ? kLaunchSuffix : "");
      scales[fw].push_back(scale);
      if (fw == "cuda-graph" && !gpu.empty() && refined[i].host.is_object() &&
          refined[i].host.value("gpu", "") == gpu)
        graph_same_gpu.push_back(scale);
    }
  }
  if (graph_same_gpu.size() >= 2) scales["cuda-graph"] = graph_same_gpu;
  // Relative per-op scales, op type by op type, from the profiles whose refinement fitted them.
  std::map<std::string, std::map<std::string, std::vector<double>>> op_scales;
  std::map<std::string, int> op_scale_profiles;
  for (size_t i = 0; i < refined.size(); ++i) {
    const nlohmann::json& prov = refined[i].provenance;
    if (!prov.contains("refinement_op_scale") || !prov["refinement_op_scale"].is_object()) continue;
    for (const auto& [fw, entry] : prov["refinement_op_scale"].items()) {
      if (!entry.is_object() || !entry.contains("op_scale") || !entry["op_scale"].is_object()) continue;
      bool any = false;
      for (const auto& [op, v] : entry["op_scale"].items())
        if (v.is_number() && v.get<double>() > 0) {
          op_scales[fw][op].push_back(v.get<double>());
          any = true;
        }
      if (any) ++op_scale_profiles[fw];
    }
  }
  // Python eager under torch.no_grad() runs the same Python code as under inference_mode(), so
  // where no host refined it on its own runs it takes the inference-mode scale: the scale
  // corrects for Python glue the bench's chains lack, and the bench measures each mode's
  // dispatch costs itself.
  for (const std::string& suffix : {std::string(), kOpSuffix, kLaunchSuffix, kOpSuffix + kLaunchSuffix})
    if (!scales.count("pytorch-eager-no-grad" + suffix) && scales.count("pytorch-eager" + suffix))
      scales["pytorch-eager-no-grad" + suffix] = scales["pytorch-eager" + suffix];
  RefitReport rep;
  for (const auto& [key, v] : scales) {
    if (v.size() < 2) {
      // One host's scale has no spread to be the prior's uncertainty, and one host's level of
      // a framework's costs did not carry: host run av's TorchScript scale (x1.044, on its
      // calibration models) took host run aq's evaluation models from 39 to 29 of 58.
      const bool by_op = key.find(kOpSuffix) != std::string::npos;
      rep.not_carried.push_back(key.substr(0, key.find('#')) + (by_op ? " (costs by op type)" : "") + ": x" +
                                std::to_string(v[0]).substr(0, 5) + " from one profile alone, not carried");
      continue;
    }
    const double s = Median(v);
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - s));
    // The spread of the hosts' scales, not of a mean: a new host is one more draw.
    const double se = 1.4826 * Median(dev);
    std::string fw = key;
    const bool timed = EndsWith(fw, kLaunchSuffix);
    if (timed) fw.resize(fw.size() - kLaunchSuffix.size());
    const bool by_op = EndsWith(fw, kOpSuffix);
    if (by_op) fw.resize(fw.size() - kOpSuffix.size());
    RefitReport::Entry e{fw, int(v.size()), s, se};
    e.op_costs = by_op;
    e.timed_launch = timed;
    rep.frameworks.push_back(e);
  }
  for (const auto& [fw, ops] : op_scales) {
    RefitReport::OpScales& o = rep.op_scales[fw];
    o.profiles = op_scale_profiles[fw];
    for (const auto& [op, v] : ops) o.scale[op] = Median(v);
  }
  return rep;
}

Expected<RefitReport> LoadPrior(const std::vector<std::string>& paths, const std::string& gpu,
                                std::vector<HostProfile>* loaded) {
  std::vector<HostProfile> refined;
  for (const std::string& path : paths) {
    Expected<HostProfile> p = LoadHostProfile(path);
    if (!p.ok()) return p.status();
    refined.push_back(std::move(p.value()));
  }
  Expected<RefitReport> report = PriorFromRefinedProfiles(refined, paths, gpu);
  if (loaded) *loaded = std::move(refined);
  return report;
}

RefitReport ApplyScales(const RefitReport& report, HostProfile* profile, std::vector<std::string>* skipped) {
  RefitReport applied;
  for (const auto& e : report.frameworks) {
    auto f = profile->frameworks.find(e.framework);
    const bool by_op = f != profile->frameworks.end() && !f->second.op_us.empty();
    // The bench's op mix already brought these costs to a model's mix of ops on this host; a
    // scale other hosts' model runs found would count that twice.
    if (f != profile->frameworks.end() && !std::isnan(f->second.mix_scale)) {
      if (skipped)
        skipped->push_back(e.framework + ": the prior's scale (x" + std::to_string(e.scale).substr(0, 5) +
                           ") not applied: the bench's op mix priced this host's (x" +
                           std::to_string(f->second.mix_scale).substr(0, 5) + ")");
      continue;
    }
    if (by_op != e.op_costs) {
      if (skipped)
        skipped->push_back(e.framework + ": the prior's scale (x" + std::to_string(e.scale).substr(0, 5) +
                           ") was found for costs priced by " + (e.op_costs ? "op type" : "dispatch class") +
                           ", this profile prices them by " + (by_op ? "op type" : "dispatch class") +
                           ": not applied");
      continue;
    }
    // A scale corrects the costs it was fitted with. With launches priced at the older, larger
    // estimate it also absorbed their excess: on host run ai (H200) the prior's TorchScript
    // scale of those hosts took its evaluation models from 45/58 to 32/58 within.
    const bool timed = TimedLaunch(*profile, e.framework);
    if (timed != e.timed_launch) {
      if (skipped)
        skipped->push_back(e.framework + ": the prior's scale (x" + std::to_string(e.scale).substr(0, 5) +
                           ") was found with an op's further kernel launches priced " +
                           (e.timed_launch ? "at the bench's timed launch" : "by libtorch-eager's kernel less view dispatch") +
                           ", this profile prices them " +
                           (timed ? "at the bench's timed launch (gpu.launch_us)" : "by libtorch-eager's kernel less view dispatch") +
                           ": not applied");
      continue;
    }
    ScaleFrameworkCosts(e.framework, e.scale, e.scale_stderr, profile);
    applied.frameworks.push_back(e);
  }
  for (const auto& [fw, o] : report.op_scales) {
    auto f = profile->frameworks.find(fw);
    if (f == profile->frameworks.end() || f->second.op_us.empty()) {
      if (skipped)
        skipped->push_back(fw + ": the prior's op scales (" + std::to_string(o.profiles) +
                           " profiles) not applied: this profile does not price its ops by type");
      continue;
    }
    // Unlike the dispatch scale, they carry over a bench's op mix: they are level-free (a fit's
    // weights over its common scale), and the profiles that fitted them had their level from an
    // op mix too (host run aw: x1.75). The mix sets this host's level, they set the proportions.
    // On six host runs' Python eager evaluation models (ay, au, av, bh, bi, bj; each its own
    // bench and the prior of p, q, s, u, av and aw), aw's scales took 136 of 358 points within
    // tolerance to 158 at the profile's CPU speed (ay +15, au +7, bi +3, bh held, av -2, bj -1)
    // and 192 to 207 at each row's.
    f->second.op_scale = o.scale;
    applied.op_scales[fw] = o;
  }
  return applied;
}

Expected<HostProfile> RefineFrameworkCosts(const HostProfile& profile, const nlohmann::json& measured,
                                           const RefitOptions& opt, RefitReport* report) {
  Expected<std::vector<FrameworkTimeRow>> rows = CompareFrameworkTime(profile, measured, opt);
  if (!rows.ok()) return rows.status();
  std::map<std::string, std::vector<double>> ratios;
  for (const FrameworkTimeRow& r : rows.value())
    if (r.usable) {
      // Graphs captured from either source replay at the same costs: one scale for both.
      auto fw = ParseFramework(r.framework);
      ratios[fw ? FrameworkName(CostFramework(*fw)) : r.framework].push_back(r.ratio);
    }
  HostProfile out = profile;
  for (const auto& [name, r] : ratios) {
    if (int(r.size()) < opt.min_rows) continue;
    const double s = Median(r);
    std::vector<double> dev;
    for (double x : r) dev.push_back(std::fabs(x - s));
    // One ratio says nothing about its own spread.
    const double se = r.size() < 2 ? std::nan("") : 1.4826 * Median(dev) / std::sqrt(double(r.size()));
    ScaleFrameworkCosts(name, s, se, &out);
    if (report) {
      RefitReport::Entry e{name, int(r.size()), s, se};
      auto f = profile.frameworks.find(name);
      e.op_costs = f != profile.frameworks.end() && !f->second.op_us.empty();
      e.timed_launch = TimedLaunch(profile, name);
      report->frameworks.push_back(e);
    }
  }
  if (report) report->rows = std::move(rows.value());
  return out;
}

void RecordRefinement(const RefitReport& report, const nlohmann::json& sources,
                      const nlohmann::json& extra, HostProfile* profile) {
  nlohmann::json& prov = profile->provenance;
  if (!prov.is_object()) prov = nlohmann::json::object();
  nlohmann::json previous = nlohmann::json::object();
  for (auto it = prov.begin(); it != prov.end(); ++it)
    if (it.key().rfind("refine", 0) == 0) previous[it.key()] = it.value();
  if (!previous.empty()) {
    for (auto it = previous.begin(); it != previous.end(); ++it) prov.erase(it.key());
    if (!prov.contains("previous_refinements") || !prov["previous_refinements"].is_array())
      prov["previous_refinements"] = nlohmann::json::array();
    prov["previous_refinements"].push_back(previous);
  }
  prov["refined_on"] = UtcNow();
  prov["refined_with"] = sources;
  nlohmann::json scales = nlohmann::json::array();
  for (const auto& e : report.frameworks)
    scales.push_back({{"framework", e.framework},
                      {"dispatch_scale", e.scale},
                      {"stderr", std::isfinite(e.scale_stderr) ? nlohmann::json(e.scale_stderr) : nlohmann::json()},
                      {"rows", e.rows},
                      {"op_costs", e.op_costs}});
  prov["refinement"] = scales;
  if (!report.op_scales.empty()) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [fw, o] : report.op_scales) ops[fw] = {{"op_scale", o.scale}, {"profiles", o.profiles}};
    prov["refinement_op_scale"] = ops;
  }
  prov["refinement_method"] =
      "dispatch_us and module_us (cuda-graph: replay_per_node_us and node_gap_us) scaled by the "
      "median of (measured - call) / (predicted - call) framework time over framework-bound "
      "rows of real model runs (cuda-graph: all rows, framework time = latency - kernel time)";
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) prov[it.key()] = it.value();
}

}  // namespace ftax
