#include "predictor/host_profile.h"

#include "predictor/kernel_cost.h"

#include <sstream>

namespace ftax {
namespace {

using json = nlohmann::json;

// Reads {"value": v, "stderr": s, "unit": u} (or null) at j[key]. `unit` must match.
Status ReadParam(const json& j, const std::string& key, const std::string& unit,
                 const std::string& path, Param* out) {
  if (!j.contains(key) || j.at(key).is_null()) return Status::Ok();
  const json& p = j.at(key);
  const std::string where = path + "." + key;
  if (!p.is_object()) return InvalidInput(where + ": expected an object {value, stderr, unit}");
  if (!p.contains("value")) return InvalidInput(where + ": missing 'value'");
  if (!p.at("value").is_null()) {
    if (!p.at("value").is_number()) return InvalidInput(where + ".value: expected a number");
    out->value = p.at("value").get<double>();
    if (!std::isfinite(out->value)) return InvalidInput(where + ".value: not finite");
  }
  if (p.contains("stderr") && !p.at("stderr").is_null()) {
    if (!p.at("stderr").is_number()) return InvalidInput(where + ".stderr: expected a number");
    out->std_error = p.at("stderr").get<double>();
    if (!(out->std_error >= 0) || !std::isfinite(out->std_error))
      return InvalidInput(where + ".stderr: must be a finite number >= 0");
  }
  if (p.contains("unit") && p.at("unit") != unit)
    return InvalidInput(where + ".unit: expected \"" + unit + "\", got " + p.at("unit").dump());
  return Status::Ok();
}

json WriteParam(const Param& p, const std::string& unit) {
  json j;
  j["value"] = p.known() ? json(p.value) : json(nullptr);
  j["stderr"] = std::isnan(p.std_error) ? json(nullptr) : json(p.std_error);
  j["unit"] = unit;
  return j;
}

json NumOrNull(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

double ReadNum(const json& j, const char* key, double fallback) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : fallback;
}

Status RequirePositive(const Param& p, const std::string& where) {
  if (p.known() && !(p.value > 0)) return InvalidInput(where + ": must be > 0");
  return Status::Ok();
}

// The ranges every profile value must fall in (docs/profile-format.md, "Rules"): wide enough
// for any GPU and host, narrow enough that no product or sum of them overflows to inf.
constexpr double kMaxCostUs = 1e6;       // a fixed cost above one second is no GPU or framework
constexpr double kMinRate = 1e-6;        // TFLOP/s and GB/s
constexpr double kMaxRateTflops = 1e6;
constexpr double kMaxBandwidthGbps = 1e7;
constexpr double kMaxWork = 1e24;        // FLOPs or bytes of one anchor
constexpr int64_t kMaxAnchorDim = int64_t(1) << 40;
// Kernels one benchmarked call launched: cuDNN runs some grouped convolutions as one kernel per
// group and image (an fp32 NHWC layer of 256 groups over 8 images launched 1024 on an H200).
constexpr double kMaxAnchorKernels = 1e6;

Status RequireRange(const Param& p, const std::string& where, double lo, double hi, bool lo_open = false) {
  if (!p.known()) return Status::Ok();
  if (lo_open ? !(p.value > lo) : !(p.value >= lo)) {
    std::ostringstream m;
    m << where << ": must be " << (lo_open ? "> " : ">= ") << lo << ", got " << p.value;
    return InvalidInput(m.str());
  }
  if (p.value > hi) {
    std::ostringstream m;
    m << where << ": " << p.value << " is out of range (at most " << hi << ")";
    return InvalidInput(m.str());
  }
  return Status::Ok();
}

// An integer field between lo and hi, `fallback` when absent (a float such as 1e30 is refused,
// never cast).
Status ReadIntField(const json& j, const char* key, int64_t fallback, int64_t lo, int64_t hi,
                    const std::string& where, int64_t* out) {
  *out = fallback;
  if (!j.contains(key) || j.at(key).is_null()) return Status::Ok();
  const json& v = j.at(key);
  if (!v.is_number_integer()) return InvalidInput(where + "." + key + ": expected an integer, got " + v.dump());
  if (v.is_number_unsigned() ? (v.get<uint64_t>() > uint64_t(hi) || (lo > 0 && v.get<uint64_t>() < uint64_t(lo)))
                             : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
    return InvalidInput(where + "." + key + ": must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi) + ", got " + v.dump());
  *out = v.get<int64_t>();
  return Status::Ok();
}

// A number that only describes the fit (r2, errors, measured ranges): finite (or absent).
Status FiniteOrAbsent(const json& j, const char* key, const std::string& where) {
  if (j.contains(key) && j.at(key).is_number() && !std::isfinite(j.at(key).get<double>()))
    return InvalidInput(where + "." + key + ": not finite");
  return Status::Ok();
}

// The facts of KernelFacts by their names in the profile's "kernel_facts" object
// (docs/profile-format.md), with the ranges a value must fall in.
struct CountFact {
  const char* name;
  int KernelFacts::*field;
};
struct NumberFact {
  const char* name;
  double KernelFacts::*field;
  double lo, hi;
};
struct FlagFact {
  const char* name;
  bool KernelFacts::*field;
};
constexpr int64_t kMaxSideKernels = 64;     // side kernels of one op
constexpr double kMaxSideBytesPerUnit = 1024;  // bytes per row, channel or mask element
constexpr CountFact kCountFacts[] = {
    {"attention_eager_memsets", &KernelFacts::attention_eager_memsets},
    {"attention_mask_wheres", &KernelFacts::attention_mask_wheres},
    {"attention_mask_fills", &KernelFacts::attention_mask_fills},
    {"batch_norm_half_stat_kernels", &KernelFacts::batch_norm_half_stat_kernels},
};
constexpr NumberFact kNumberFacts[] = {
    {"attention_memset_bytes_per_row", &KernelFacts::attention_memset_bytes_per_row, 0, kMaxSideBytesPerUnit},
    {"attention_mask_where_extra_bytes", &KernelFacts::attention_mask_where_extra_bytes, 0, kMaxSideBytesPerUnit},
    {"attention_mask_fill_bytes_per_row", &KernelFacts::attention_mask_fill_bytes_per_row, 0, kMaxSideBytesPerUnit},
    {"batch_norm_stat_bytes_per_channel", &KernelFacts::batch_norm_stat_bytes_per_channel, 0, kMaxSideBytesPerUnit},
    {"extrapolated_beyond", &KernelFacts::extrapolated_beyond, 1, 1e6},
};
constexpr FlagFact kFlagFacts[] = {
    {"conv_bias_kernel", &KernelFacts::conv_bias_kernel},
    {"roll_kernel_per_dim", &KernelFacts::roll_kernel_per_dim},
};

// Reads the optional "kernel_facts" object: each key one fact, absent or null ones keeping
// their defaults; an unknown key is refused (a misspelt fact would silently keep its default).
Status ReadKernelFacts(const json& j, KernelFacts* out) {
  if (!j.contains("kernel_facts") || j.at("kernel_facts").is_null()) return Status::Ok();
  const json& f = j.at("kernel_facts");
  if (!f.is_object()) return InvalidInput("kernel_facts: expected an object");
  for (const auto& [key, v] : f.items()) {
    const std::string where = "kernel_facts." + key;
    bool known = false;
    for (const CountFact& c : kCountFacts) {
      if (key != c.name) continue;
      int64_t n = 0;
      Status s = ReadIntField(f, c.name, out->*c.field, 0, kMaxSideKernels, "kernel_facts", &n);
      if (!s.ok()) return s;
      out->*c.field = int(n);
      known = true;
    }
    for (const NumberFact& c : kNumberFacts) {
      if (key != c.name) continue;
      known = true;
      if (v.is_null()) continue;
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < c.lo || v.get<double>() > c.hi) {
        std::ostringstream m;
        m << where << ": expected a number from " << c.lo << " to " << c.hi << ", got " << v.dump();
        return InvalidInput(m.str());
      }
      out->*c.field = v.get<double>();
    }
    for (const FlagFact& c : kFlagFacts) {
      if (key != c.name) continue;
      known = true;
      if (v.is_null()) continue;
      if (!v.is_boolean()) return InvalidInput(where + ": expected true or false, got " + v.dump());
      out->*c.field = v.get<bool>();
    }
    if (!known) return InvalidInput(where + ": unknown kernel fact");
  }
  return Status::Ok();
}

json WriteKernelFacts(const KernelFacts& f) {
  json j = json::object();
  for (const CountFact& c : kCountFacts) j[c.name] = f.*c.field;
  for (const NumberFact& c : kNumberFacts) j[c.name] = f.*c.field;
  for (const FlagFact& c : kFlagFacts) j[c.name] = f.*c.field;
  return j;
}

}  // namespace

std::string KernelKey(KernelClass c, DType t) {
  return std::string(KernelClassName(c)) + "/" + DTypeName(t);
}

const KernelParams* GpuParams::Find(KernelClass c, DType t) const {
  auto it = kernels.find(KernelKey(c, t));
  return it == kernels.end() ? nullptr : &it->second;
}

const FrameworkParams* HostProfile::FindFramework(Framework f) const {
  auto it = frameworks.find(FrameworkName(f));
  // A graph captured from the eager module replays at the cuda-graph costs.
  if (it == frameworks.end() && f != CostFramework(f)) it = frameworks.find(FrameworkName(CostFramework(f)));
  return it == frameworks.end() ? nullptr : &it->second;
}

// The checks below name the field at fault; nlohmann's typed accessors (value(), get<>())
// throw on a field of the wrong type that no check caught, and HostProfileFromJson turns that
// into an error too (found by tests/calibrate/host_profile_mutation_test.cc).
// A map of per-op costs (op_us, op_launch_us: {op: {value, stderr, unit}}), each a cost in µs
// from 0 to kMaxCostUs; unknown values are left out.
static Status ReadOpCosts(const json& fj, const char* key, const std::string& where,
                          std::map<std::string, Param>* out) {
  if (!fj.contains(key) || fj.at(key).is_null()) return Status::Ok();
  const std::string at = where + "." + key;
  if (!fj.at(key).is_object()) return InvalidInput(at + ": expected an object");
  for (const auto& [op, oj] : fj.at(key).items()) {
    if (op.empty()) return InvalidInput(at + ": empty op name");
    json wrap = {{op, oj}};
    Param q;
    Status s = ReadParam(wrap, op, "us", at, &q);
    if (!s.ok() || !(s = RequireRange(q, at + "." + op, 0, kMaxCostUs)).ok()) return s;
    if (q.known()) (*out)[op] = q;
  }
  return Status::Ok();
}

// One framework's costs (frameworks.NAME of a profile), each checked and named by its field.
static Status ReadFramework(const std::string& name, const json& fj, FrameworkParams* f) {
  Status s;
  const std::string where = "frameworks." + name;
  if (!ParseFramework(name) || name != FrameworkName(*ParseFramework(name)))
    return InvalidInput(where + ": unknown framework '" + name + "'");
  if (!fj.is_object()) return InvalidInput(where + ": expected an object");
  if (!(s = ReadParam(fj, "call_us", "us", where, &f->call_us)).ok()) return s;
  if (!(s = ReadParam(fj, "module_us", "us", where, &f->module_us)).ok()) return s;
  if (!(s = ReadParam(fj, "node_gap_us", "us", where, &f->node_gap_us)).ok()) return s;
  if (!(s = ReadParam(fj, "replay_per_node_us", "us", where, &f->replay_per_node_us)).ok()) return s;
  if (!(s = ReadParam(fj, "input_us", "us", where, &f->input_us)).ok()) return s;
  if (fj.contains("call_before_replay") && !fj.at("call_before_replay").is_null()) {
    if (!fj.at("call_before_replay").is_boolean())
      return InvalidInput(where + ".call_before_replay: expected true or false");
    if (*ParseFramework(name) != Framework::kTorchCompileReduceOverhead)
      return InvalidInput(where + ".call_before_replay: only torch-compile-reduce-overhead has it");
    f->call_before_replay = fj.at("call_before_replay").get<bool>();
  }
  if (fj.contains("dispatch_us")) {
    if (!fj.at("dispatch_us").is_object())
      return InvalidInput(where + ".dispatch_us: expected an object");
    for (const auto& [cname, cj] : fj.at("dispatch_us").items()) {
      auto dc = ParseDispatchClass(cname);
      if (!dc) return InvalidInput(where + ".dispatch_us: unknown dispatch class '" + cname + "'");
      json wrap = {{cname, cj}};
      if (!(s = ReadParam(wrap, cname, "us", where + ".dispatch_us", &f->dispatch_us[int(*dc)])).ok())
        return s;
    }
  }
  if (fj.contains("op_us") && !fj.at("op_us").is_null() && IsCudaGraph(*ParseFramework(name)))
    return InvalidInput(where + ".op_us: a replayed graph has no per-op dispatch");
  if (!(s = ReadOpCosts(fj, "op_us", where, &f->op_us)).ok()) return s;
  if (fj.contains("op_kernels") && !fj.at("op_kernels").is_null()) {
    if (!fj.at("op_kernels").is_object()) return InvalidInput(where + ".op_kernels: expected an object");
    for (const auto& [op, kj] : fj.at("op_kernels").items()) {
      if (!kj.is_number() || !std::isfinite(kj.get<double>()) || kj.get<double>() < 0 || kj.get<double>() > 1e6)
        return InvalidInput(where + ".op_kernels." + op + ": expected a number of kernels from 0 to 1e6");
      f->op_kernels[op] = kj.get<double>();
    }
  }
  if (!(s = ReadOpCosts(fj, "op_launch_us", where, &f->op_launch_us)).ok()) return s;
  for (auto [key, q] : {std::pair{"call_us", &f->call_us}, std::pair{"module_us", &f->module_us},
                        std::pair{"node_gap_us", &f->node_gap_us},
                        std::pair{"replay_per_node_us", &f->replay_per_node_us},
                        std::pair{"input_us", &f->input_us}})
    if (!(s = RequireRange(*q, where + "." + key, 0, kMaxCostUs)).ok()) return s;
  for (int c = 0; c < kNumDispatchClasses; ++c)
    if (!(s = RequireRange(f->dispatch_us[c], where + ".dispatch_us." + DispatchClassName(DispatchClass(c)), 0,
                           kMaxCostUs)).ok())
      return s;
  if (!(s = FiniteOrAbsent(fj, "r2", where)).ok()) return s;
  if (!(s = FiniteOrAbsent(fj, "mix_scale", where)).ok()) return s;
  f->mix_scale = ReadNum(fj, "mix_scale", std::nan(""));
  if (!std::isnan(f->mix_scale) && !(f->mix_scale > 0 && f->mix_scale <= 100))
    return InvalidInput(where + ".mix_scale: expected a number above 0 and at most 100");
  if (fj.contains("op_scale") && !fj.at("op_scale").is_null()) {
    const std::string at = where + ".op_scale";
    if (!fj.at("op_scale").is_object()) return InvalidInput(at + ": expected an object");
    if (IsCudaGraph(*ParseFramework(name))) return InvalidInput(at + ": a replayed graph has no per-op dispatch");
    for (const auto& [op, v] : fj.at("op_scale").items()) {
      if (op.empty()) return InvalidInput(at + ": empty op name");
      if (!v.is_number() || !(v.get<double>() >= 0.05 && v.get<double>() <= 20))
        return InvalidInput(at + "." + op + ": expected a scale from 0.05 to 20, got " + v.dump());
      f->op_scale[op] = v.get<double>();
    }
  }
  int64_t points = 0;
  if (!(s = ReadIntField(fj, "points", 0, 0, 1 << 30, where, &points)).ok()) return s;
  f->points = int(points);
  f->r2 = ReadNum(fj, "r2", std::nan(""));
  return Status::Ok();
}

static Expected<HostProfile> HostProfileFromJsonUnchecked(const json& j) {
  HostProfile p;
  if (!j.is_object()) return InvalidInput("profile: top level must be a JSON object");
  if (!j.contains("schema_version") || !j.at("schema_version").is_number_integer())
    return InvalidInput("profile: missing integer field 'schema_version'");
  p.schema_version = j.at("schema_version").get<int>();
  if (p.schema_version != kProfileSchemaVersion)
    return InvalidInput("profile: schema_version " + std::to_string(p.schema_version) +
                        " is not supported (this ftax reads version " +
                        std::to_string(kProfileSchemaVersion) + ")");
  if (j.value("kind", "") != "ftax-host-profile")
    return InvalidInput("profile: field 'kind' must be \"ftax-host-profile\"");
  p.host = j.value("host", json::object());
  if (!p.host.is_object()) return InvalidInput("profile: host must be an object");
  // Identity fields are strings; a null one (unknown) is dropped, so readers see it absent.
  for (const char* key : {"gpu", "cpu", "driver", "cuda", "torch"}) {
    if (p.host.contains(key) && p.host.at(key).is_null()) p.host.erase(key);
    if (p.host.contains(key) && !p.host.at(key).is_string())
      return InvalidInput(std::string("profile: host.") + key + " must be a string");
  }
  p.provenance = j.value("provenance", json::object());
  p.fit = j.value("fit", json::object());
  p.synthetic = j.value("synthetic", false);
  for (auto [key, field] : {std::pair{"cpu_gauge_us", &HostProfile::cpu_gauge_us},
                             std::pair{"host_probe_us", &HostProfile::host_probe_us},
                             std::pair{"cpu_gauge_typical_us", &HostProfile::cpu_gauge_typical_us},
                             std::pair{"host_probe_typical_us", &HostProfile::host_probe_typical_us}}) {
    if (!j.contains(key) || j.at(key).is_null()) continue;
    const json& g = j.at(key);
    if (!g.is_number() || !(g.get<double>() > 0) || g.get<double>() > 1e6)
      return InvalidInput(std::string("profile: ") + key + " must be a positive number of microseconds");
    p.*field = g.get<double>();
  }

  if (!j.contains("gpu") || !j.at("gpu").is_object())
    return InvalidInput("profile: missing object 'gpu'");
  const json& g = j.at("gpu");
  if (!g.contains("num_sms") || !g.at("num_sms").is_number_integer() ||
      g.at("num_sms").get<int64_t>() <= 0 || g.at("num_sms").get<int64_t>() > 100000)
    return InvalidInput("profile: gpu.num_sms must be an integer between 1 and 100000");
  p.gpu.num_sms = g.at("num_sms").get<int>();
  Status s = ReadParam(g, "kernel_gap_us", "us", "gpu", &p.gpu.kernel_gap_us);
  if (!s.ok()) return s;
  if (!(s = RequireRange(p.gpu.kernel_gap_us, "gpu.kernel_gap_us", 0, kMaxCostUs)).ok()) return s;
  if (!(s = ReadParam(g, "launch_us", "us", "gpu", &p.gpu.launch_us)).ok()) return s;
  if (!(s = RequireRange(p.gpu.launch_us, "gpu.launch_us", 0, kMaxCostUs)).ok()) return s;
  if (g.contains("kernels")) {
    if (!g.at("kernels").is_object()) return InvalidInput("profile: gpu.kernels must be an object");
    for (const auto& [key, kj] : g.at("kernels").items()) {
      const std::string where = "gpu.kernels." + key;
      auto slash = key.find('/');
      if (slash == std::string::npos)
        return InvalidInput(where + ": key must be CLASS/DTYPE, e.g. gemm/fp16");
      auto cls = ParseKernelClass(key.substr(0, slash));
      auto dt = ParseDType(key.substr(slash + 1));
      if (!cls) return InvalidInput(where + ": unknown kernel class '" + key.substr(0, slash) + "'");
      if (!dt) return InvalidInput(where + ": unknown dtype '" + key.substr(slash + 1) + "'");
      if (!kj.is_object()) return InvalidInput(where + ": expected an object");
      KernelParams k;
      for (auto [name, unit, param] :
           {std::tuple{"floor_us", "us", &k.floor_us}, std::tuple{"rate_tflops", "TFLOP/s", &k.rate_tflops},
            std::tuple{"bandwidth_gbps", "GB/s", &k.bandwidth_gbps}}) {
        s = ReadParam(kj, name, unit, where, param);
        if (!s.ok()) return s;
      }
      if (!k.floor_us.known()) return InvalidInput(where + ".floor_us: required");
      if (!(s = RequireRange(k.floor_us, where + ".floor_us", 0, kMaxCostUs)).ok()) return s;
      if (!k.bandwidth_gbps.known()) return InvalidInput(where + ".bandwidth_gbps: required");
      if (!(s = RequirePositive(k.bandwidth_gbps, where + ".bandwidth_gbps")).ok()) return s;
      if (!(s = RequirePositive(k.rate_tflops, where + ".rate_tflops")).ok()) return s;
      if (!(s = RequireRange(k.bandwidth_gbps, where + ".bandwidth_gbps", kMinRate, kMaxBandwidthGbps)).ok()) return s;
      if (!(s = RequireRange(k.rate_tflops, where + ".rate_tflops", kMinRate, kMaxRateTflops)).ok()) return s;
      if (IsComputeClass(*cls) && !k.rate_tflops.known())
        return InvalidInput(where + ".rate_tflops: required for class " + KernelClassName(*cls));
      int64_t tile = 0;
      if (!(s = ReadIntField(kj, "tile_m", 128, 1, 65536, where, &tile)).ok()) return s;
      k.tile_m = int(tile);
      if (!(s = ReadIntField(kj, "tile_n", 128, 1, 65536, where, &tile)).ok()) return s;
      k.tile_n = int(tile);
      for (const char* key : {"r2", "median_abs_err_pct"})
        if (!(s = FiniteOrAbsent(kj, key, where)).ok()) return s;
      if (kj.contains("range")) {
        const json& r = kj.at("range");
        for (const char* key : {"min_flops", "max_flops", "min_bytes", "max_bytes"}) {
          if (!(s = FiniteOrAbsent(r, key, where + ".range")).ok()) return s;
          if (r.is_object() && r.contains(key) && r.at(key).is_number() && r.at(key).get<double>() < 0)
            return InvalidInput(where + ".range." + key + ": must be >= 0");
        }
        k.min_flops = ReadNum(r, "min_flops", 0);
        k.max_flops = ReadNum(r, "max_flops", 0);
        k.min_bytes = ReadNum(r, "min_bytes", 0);
        k.max_bytes = ReadNum(r, "max_bytes", 0);
      }
      int64_t points = 0;
      if (!(s = ReadIntField(kj, "points", 0, 0, 1 << 30, where, &points)).ok()) return s;
      k.points = int(points);
      k.r2 = ReadNum(kj, "r2", std::nan(""));
      k.median_abs_err_pct = ReadNum(kj, "median_abs_err_pct", std::nan(""));
      k.holdout_err_pct = ReadNum(kj, "holdout_median_abs_err_pct", std::nan(""));
      if (std::isfinite(k.holdout_err_pct) && k.holdout_err_pct < 0)
        return InvalidInput(where + ".holdout_median_abs_err_pct: must be >= 0");
      if (kj.contains("trusted")) {
        if (!kj["trusted"].is_boolean()) return InvalidInput(where + ".trusted: expected true or false");
        k.trusted = kj["trusted"].get<bool>();
      }
      if (kj.contains("anchors")) {
        const json& aj = kj.at("anchors");
        if (!aj.is_array()) return InvalidInput(where + ".anchors: expected an array");
        for (size_t i = 0; i < aj.size(); ++i) {
          const std::string aw = where + ".anchors[" + std::to_string(i) + "]";
          const json& a = aj[i];
          if (!a.is_object()) return InvalidInput(aw + ": expected an object");
          KernelAnchor an;
          const std::string v = a.value("variant", std::string());
          auto pv = ParseKernelVariant(v);
          if (!pv) return InvalidInput(aw + ".variant: unknown variant '" + v + "'");
          an.variant = *pv;
          for (auto [key, field, fallback] : {std::tuple{"m", &an.m, 0}, std::tuple{"n", &an.n, 0},
                                              std::tuple{"k", &an.k, 0}, std::tuple{"batch", &an.batch, 1}}) {
            if (!(s = ReadIntField(a, key, fallback, 0, kMaxAnchorDim, aw, field)).ok()) return s;
          }
          an.flops = ReadNum(a, "flops", 0);
          an.bytes = ReadNum(a, "bytes", 0);
          an.us = ReadNum(a, "us", std::nan(""));
          if (!(an.us > 0) || an.us > 1e9) return InvalidInput(aw + ".us: must be a time > 0 and at most 1e9");
          an.kernels = ReadNum(a, "kernels", 1);
          if (!(an.kernels >= 1) || an.kernels > kMaxAnchorKernels)
            return InvalidInput(aw + ".kernels: must be between 1 and 1000000");
          if (an.m < 0 || an.n < 0 || an.k < 0 || an.batch < 1 || an.bytes < 0)
            return InvalidInput(aw + ": shape and bytes must be >= 0, batch >= 1");
          if (an.m > kMaxAnchorDim || an.n > kMaxAnchorDim || an.k > kMaxAnchorDim || an.batch > kMaxAnchorDim)
            return InvalidInput(aw + ": m, n, k and batch must be at most 2^40");
          if (!std::isfinite(an.flops) || !std::isfinite(an.bytes) || an.flops < 0 || an.flops > kMaxWork ||
              an.bytes > kMaxWork)
            return InvalidInput(aw + ": flops and bytes must be finite, >= 0 and at most 1e24");
          if (an.m == 0 && !(an.bytes > 0)) return InvalidInput(aw + ": needs a shape or bytes > 0");
          k.anchors.push_back(an);
        }
      }
      p.gpu.kernels[KernelKey(*cls, *dt)] = k;
    }
  }
  if (j.contains("frameworks")) {
    if (!j.at("frameworks").is_object()) return InvalidInput("profile: frameworks must be an object");
    for (const auto& [name, fj] : j.at("frameworks").items()) {
      FrameworkParams f;
      if (!(s = ReadFramework(name, fj, &f)).ok()) return s;
      p.frameworks[name] = f;
    }
  }
  if (!(s = ReadKernelFacts(j, &p.kernel_facts)).ok()) return s;
  PrepareAnchors(&p.gpu);
  return p;
}

Expected<HostProfile> HostProfileFromJson(const json& j) {
  try {
    return HostProfileFromJsonUnchecked(j);
  } catch (const json::exception& e) {
    return InvalidInput(std::string("profile: a field has the wrong type: ") + e.what());
  }
}

json HostProfileToJson(const HostProfile& p) {
  json j;
  j["schema_version"] = p.schema_version;
  j["kind"] = "ftax-host-profile";
  if (p.synthetic) j["synthetic"] = true;
  if (p.cpu_gauge_us > 0) j["cpu_gauge_us"] = p.cpu_gauge_us;
  if (p.host_probe_us > 0) j["host_probe_us"] = p.host_probe_us;
  if (p.cpu_gauge_typical_us > 0) j["cpu_gauge_typical_us"] = p.cpu_gauge_typical_us;
  if (p.host_probe_typical_us > 0) j["host_probe_typical_us"] = p.host_probe_typical_us;
  j["host"] = p.host;
  j["provenance"] = p.provenance;
  j["fit"] = p.fit;
  json g;
  g["num_sms"] = p.gpu.num_sms;
  g["kernel_gap_us"] = WriteParam(p.gpu.kernel_gap_us, "us");
  if (p.gpu.launch_us.known()) g["launch_us"] = WriteParam(p.gpu.launch_us, "us");
  json ks = json::object();
  for (const auto& [key, k] : p.gpu.kernels) {
    json kj;
    kj["floor_us"] = WriteParam(k.floor_us, "us");
    kj["rate_tflops"] = WriteParam(k.rate_tflops, "TFLOP/s");
    kj["bandwidth_gbps"] = WriteParam(k.bandwidth_gbps, "GB/s");
    kj["tile_m"] = k.tile_m;
    kj["tile_n"] = k.tile_n;
    kj["range"] = {{"min_flops", k.min_flops}, {"max_flops", k.max_flops},
                   {"min_bytes", k.min_bytes}, {"max_bytes", k.max_bytes}};
    kj["points"] = k.points;
    kj["r2"] = NumOrNull(k.r2);
    kj["median_abs_err_pct"] = NumOrNull(k.median_abs_err_pct);
    kj["holdout_median_abs_err_pct"] = NumOrNull(k.holdout_err_pct);
    kj["trusted"] = k.trusted;
    if (!k.anchors.empty()) {
      json aj = json::array();
      for (const KernelAnchor& a : k.anchors) {
        json o = {{"m", a.m}, {"n", a.n}, {"k", a.k}, {"batch", a.batch}, {"flops", a.flops},
                  {"bytes", a.bytes}, {"us", a.us}};
        if (a.variant != KernelVariant::kPlain) o["variant"] = KernelVariantName(a.variant);
        if (a.kernels != 1) o["kernels"] = a.kernels;
        aj.push_back(o);
      }
      kj["anchors"] = aj;
    }
    ks[key] = kj;
  }
  g["kernels"] = ks;
  j["gpu"] = g;
  json fs = json::object();
  for (const auto& [name, f] : p.frameworks) {
    json fj;
    fj["call_us"] = WriteParam(f.call_us, "us");
    json d = json::object();
    for (int c = 0; c < kNumDispatchClasses; ++c)
      d[DispatchClassName(DispatchClass(c))] = WriteParam(f.dispatch_us[c], "us");
    fj["dispatch_us"] = d;
    fj["module_us"] = WriteParam(f.module_us, "us");
    fj["node_gap_us"] = WriteParam(f.node_gap_us, "us");
    fj["replay_per_node_us"] = WriteParam(f.replay_per_node_us, "us");
    if (f.input_us.known()) fj["input_us"] = WriteParam(f.input_us, "us");
    if (name == FrameworkName(Framework::kTorchCompileReduceOverhead)) fj["call_before_replay"] = f.call_before_replay;
    if (!f.op_us.empty()) {
      json ops = json::object();
      for (const auto& [op, q] : f.op_us) ops[op] = WriteParam(q, "us");
      fj["op_us"] = ops;
    }
    if (!f.op_kernels.empty()) fj["op_kernels"] = f.op_kernels;
    if (!f.op_launch_us.empty()) {
      json ops = json::object();
      for (const auto& [op, q] : f.op_launch_us) ops[op] = WriteParam(q, "us");
      fj["op_launch_us"] = ops;
    }
    if (!f.op_scale.empty()) fj["op_scale"] = f.op_scale;
    fj["points"] = f.points;
    fj["r2"] = NumOrNull(f.r2);
    if (!std::isnan(f.mix_scale)) fj["mix_scale"] = f.mix_scale;
    fs[name] = fj;
  }
  j["frameworks"] = fs;
  // Only where they differ from the defaults (so that profiles of hosts that run as the
  // defaults say stay as they were), and then every fact, so that the file names them all.
  if (p.kernel_facts != KernelFacts()) j["kernel_facts"] = WriteKernelFacts(p.kernel_facts);
  return j;
}

}  // namespace ftax
