#include "calibrate/measurements.h"
#include "common/json_file.h"
#include "common/file_io.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace ftax {
namespace {

using json = nlohmann::json;

// Each reader below checks one field of one row and names it in the error, e.g.
// `kernels[3] ("gemm 128x768x768").kernel_us.median: must be > 0`.

// Upper bounds: a time above kMaxUs (about 2.8 hours) is no microbenchmark, and work above
// kMaxWork FLOPs or bytes no kernel; both keep every product and log the fit takes finite.
constexpr double kMaxUs = 1e10;
constexpr double kMaxWork = 1e24;

Status ReadNumber(const json& row, const std::string& key, const std::string& where,
                  bool required, double min_value, bool strictly_greater, double* out,
                  double max_value = kMaxWork) {
  if (!row.contains(key) || row.at(key).is_null()) {
    if (required) return InvalidInput(where + "." + key + ": required");
    return Status::Ok();
  }
  const json& v = row.at(key);
  if (!v.is_number()) return InvalidInput(where + "." + key + ": expected a number, got " + v.dump());
  const double x = v.get<double>();
  if (!std::isfinite(x)) return InvalidInput(where + "." + key + ": not finite");
  if (strictly_greater ? !(x > min_value) : !(x >= min_value)) {
    std::ostringstream msg;
    msg << where << "." << key << ": must be " << (strictly_greater ? "> " : ">= ") << min_value
        << ", got " << x;
    return InvalidInput(msg.str());
  }
  if (x > max_value) {
    std::ostringstream msg;
    msg << where << "." << key << ": " << x << " is out of range (at most " << max_value << ")";
    return InvalidInput(msg.str());
  }
  *out = x;
  return Status::Ok();
}

Status ReadInteger(const json& row, const std::string& key, const std::string& where,
                   bool required, int64_t min_value, int64_t* out) {
  if (!row.contains(key) || row.at(key).is_null()) {
    if (required) return InvalidInput(where + "." + key + ": required");
    return Status::Ok();
  }
  const json& v = row.at(key);
  if (!v.is_number_integer())
    return InvalidInput(where + "." + key + ": expected an integer, got " + v.dump());
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    return InvalidInput(where + "." + key + ": too large");
  const int64_t x = v.get<int64_t>();
  if (x < min_value)
    return InvalidInput(where + "." + key + ": must be >= " + std::to_string(min_value) +
                        ", got " + std::to_string(x));
  *out = x;
  return Status::Ok();
}

Status ReadInt(const json& row, const std::string& key, const std::string& where, bool required,
               int min_value, int* out) {
  int64_t x = *out;
  Status s = ReadInteger(row, key, where, required, min_value, &x);
  if (!s.ok()) return s;
  if (x > std::numeric_limits<int>::max()) return InvalidInput(where + "." + key + ": too large");
  *out = int(x);
  return Status::Ok();
}

Status ReadString(const json& row, const std::string& key, const std::string& where,
                  std::string* out) {
  if (!row.contains(key)) return InvalidInput(where + "." + key + ": required");
  if (!row.at(key).is_string())
    return InvalidInput(where + "." + key + ": expected a string, got " + row.at(key).dump());
  *out = row.at(key).get<std::string>();
  return Status::Ok();
}

// A time spread {median, p10, p90} in µs: median > 0 required, quantiles optional but >= 0
// and ordered when present.
Status ReadSpread(const json& row, const std::string& key, const std::string& where,
                  Spread* out) {
  const std::string w = where + "." + key;
  if (!row.contains(key) || row.at(key).is_null()) return InvalidInput(w + ": required");
  const json& s = row.at(key);
  if (!s.is_object()) return InvalidInput(w + ": expected an object {median, p10, p90}");
  Status st = ReadNumber(s, "median", w, true, 0, true, &out->median, kMaxUs);
  if (!st.ok()) return st;
  out->p10 = out->median;
  out->p90 = out->median;
  if (!(st = ReadNumber(s, "p10", w, false, 0, false, &out->p10, kMaxUs)).ok()) return st;
  if (!(st = ReadNumber(s, "p90", w, false, 0, false, &out->p90, kMaxUs)).ok()) return st;
  if (out->p10 > out->median * (1 + 1e-9) || out->p90 < out->median * (1 - 1e-9))
    return InvalidInput(w + ": quantiles out of order (need p10 <= median <= p90)");
  return Status::Ok();
}

std::string RowName(const char* list, size_t i, const json& row) {
  std::string name = std::string(list) + "[" + std::to_string(i) + "]";
  if (row.is_object() && row.contains("label") && row.at("label").is_string())
    name += " (\"" + row.at("label").get<std::string>() + "\")";
  return name;
}

// Images of a convolution row, from its label ("conv n8 ..." or "layer conv n8 ..."); 0 when
// the label names none.
int64_t LabelImages(const KernelMeasurement& k) {
  const size_t at = k.label.find("conv n");
  if (at == std::string::npos) return 0;
  int64_t images = 0;
  for (size_t i = at + 6; i < k.label.size() && k.label[i] >= '0' && k.label[i] <= '9'; ++i)
    images = images * 10 + (k.label[i] - '0');
  return images;
}

// Whether a 1x1 convolution row shaped as one GEMM over all images (m = images x positions,
// batch 1) has an odd number (> 1) of positions per image: its m over the images its label
// names. False when the label names no image count.
bool OddPositions(const KernelMeasurement& k) {
  const int64_t images = LabelImages(k);
  if (images <= 0 || k.work.m <= 0 || k.work.batch != 1 || images > k.work.m || k.work.m % images != 0)
    return false;
  const int64_t positions = k.work.m / images;
  return positions > 1 && positions % 2 == 1;
}

Status ReadKernelRow(const json& row, const std::string& where, KernelMeasurement* k) {
  if (!row.is_object()) return InvalidInput(where + ": expected an object");
  std::string cls, dtype;
  Status s = ReadString(row, "class", where, &cls);
  if (!s.ok()) return s;
  auto c = ParseKernelClass(cls);
  if (!c) return InvalidInput(where + ".class: unknown kernel class '" + cls + "'");
  k->work.cls = *c;
  if (!(s = ReadString(row, "dtype", where, &dtype)).ok()) return s;
  auto t = ParseDType(dtype);
  if (!t) return InvalidInput(where + ".dtype: unknown dtype '" + dtype + "'");
  k->work.dtype = *t;
  if (row.contains("label")) {
    if (!row.at("label").is_string()) return InvalidInput(where + ".label: expected a string");
    k->label = row.at("label").get<std::string>();
  }
  if (!(s = ReadNumber(row, "flops", where, true, 0, false, &k->work.flops)).ok()) return s;
  if (!(s = ReadNumber(row, "bytes", where, true, 0, false, &k->work.bytes)).ok()) return s;
  for (auto [key, field] : {std::pair{"m", &k->work.m}, std::pair{"n", &k->work.n},
                            std::pair{"k", &k->work.k}}) {
    if (!(s = ReadInteger(row, key, where, false, 0, field)).ok()) return s;
  }
  if (!(s = ReadInteger(row, "batch", where, false, 1, &k->work.batch)).ok()) return s;
  for (auto [key, v] : {std::pair{"m", k->work.m}, std::pair{"n", k->work.n}, std::pair{"k", k->work.k},
                        std::pair{"batch", k->work.batch}})
    if (v > (int64_t(1) << 40))
      return InvalidInput(where + "." + key + ": " + std::to_string(v) + " is out of range (at most 2^40)");
  if (row.contains("variant")) {
    if (!row.at("variant").is_string()) return InvalidInput(where + ".variant: expected a string");
    std::string v = row.at("variant").get<std::string>();
    // Batch-norm rows of benches before 2026-11-23 timed every kernel of the call on one
    // 64-channel image; they stay plain norm rows. Rows that time the transform kernel alone
    // ("main_kernel_only", at ResNet-50's shapes) are the batch_norm variant.
    if (v == "batch_norm" && k->work.cls == KernelClass::kNorm &&
        !(row.contains("main_kernel_only") && row.at("main_kernel_only") == json(true)))
      v.clear();
    auto pv = ParseKernelVariant(v);
    if (!pv) return InvalidInput(where + ".variant: unknown variant '" + v + "'");
    if (!VariantBelongsTo(*pv, k->work.cls))
      return InvalidInput(where + ".variant: '" + v + "' is no variant of class " +
                          KernelClassName(k->work.cls));
    k->work.variant = *pv;
  } else if (k->work.cls == KernelClass::kConv && k->label.find(" k1 ") != std::string::npos) {
    // Files of `ftax bench` from before variants were written name 1x1 convolutions in
    // their label only ("conv n8 64->256 56px k1 s1 g1").
    k->work.variant = KernelVariant::kPointwise;
  }
  // Benches made before the pointwise_odd variant (host run bm's and earlier) wrote 1x1
  // convolutions over odd positions per image (ResNet's 7x7 stage) as pointwise; the
  // lowering prices them as their own variant.
  if (k->work.variant == KernelVariant::kPointwise && OddPositions(*k))
    k->work.variant = KernelVariant::kPointwiseOdd;
  // The lowering shapes a pointwise_odd kernel as one GEMM per image (m = positions, batch =
  // images); benches of host run bp and earlier wrote it as one GEMM over all images (m =
  // images x positions, batch 1).
  if (k->work.variant == KernelVariant::kPointwiseOdd && OddPositions(*k)) {
    const int64_t images = LabelImages(*k);
    k->work.m /= images;
    k->work.batch = images;
  }
  // Grouped convolutions whose output channels per group are not a power of two are their own
  // variant; benches write them as grouped.
  if (k->work.variant == KernelVariant::kGrouped && k->work.n > 0) k->work.variant = GroupedVariant(k->work.n);
  // So are channels-last ones (shaped with batch = groups); benches of host run ce and earlier
  // write them as nhwc.
  if (k->work.variant == KernelVariant::kNhwc && k->work.cls == KernelClass::kConv && k->work.n > 0)
    k->work.variant = ChannelsLastVariant(k->work.batch, k->work.n);
  // The lowering shapes a batch norm by its positions per channel (m = images x spatial size)
  // and its channels (n); the bench's rows name them in their label ("batch_norm n8
  // 64x56x56"), and benches before the shape was written carry it there only.
  if (k->work.variant == KernelVariant::kBatchNorm && k->work.m == 0) {
    long long images = 0, c = 0, h = 0, w = 0;
    if (std::sscanf(k->label.c_str(), "batch_norm n%lld %lldx%lldx%lld", &images, &c, &h, &w) == 4 &&
        images > 0 && c > 0 && h > 0 && w > 0) {
      k->work.m = images * h * w;
      k->work.n = c;
      k->work.k = 1;
      k->work.batch = 1;
    }
  }
  if (!(s = ReadInt(row, "kernels_per_call", where, false, 1, &k->kernels_per_call)).ok())
    return s;
  return ReadSpread(row, "kernel_us", where, &k->kernel_us);
}

Status ReadDispatchRow(const json& row, const std::string& where, DispatchMeasurement* d) {
  if (!row.is_object()) return InvalidInput(where + ": expected an object");
  std::string fw, cls;
  Status s = ReadString(row, "framework", where, &fw);
  if (!s.ok()) return s;
  auto f = ParseFramework(fw);
  if (!f) return InvalidInput(where + ".framework: unknown framework '" + fw + "'");
  d->framework = *f;
  if (!(s = ReadString(row, "class", where, &cls)).ok()) return s;
  auto c = ParseDispatchClass(cls);
  if (!c) return InvalidInput(where + ".class: unknown dispatch class '" + cls + "'");
  d->cls = *c;
  if (!(s = ReadInt(row, "n_ops", where, true, 1, &d->n_ops)).ok()) return s;
  if (!(s = ReadInt(row, "modules", where, false, 0, &d->modules)).ok()) return s;
  if (!(s = ReadInt(row, "graph_inputs", where, false, 0, &d->graph_inputs)).ok()) return s;
  if (d->graph_inputs > 0 && !IsTorchCompile(d->framework))
    return InvalidInput(where + ".graph_inputs: only a torch.compile chain takes parameters as graph inputs");
  if (!(s = ReadSpread(row, "call_us", where, &d->call_us)).ok()) return s;
  if (!(s = ReadNumber(row, "gpu_kernel_us", where, false, 0, false, &d->gpu_kernel_us, kMaxUs)).ok())
    return s;
  if (!(s = ReadNumber(row, "gpu_span_us", where, false, 0, false, &d->gpu_span_us, kMaxUs)).ok())
    return s;
  if (d->gpu_kernel_us >= 0 && d->gpu_span_us >= 0 &&
      d->gpu_span_us < d->gpu_kernel_us * (1 - 1e-6))
    return InvalidInput(where + ".gpu_span_us: smaller than gpu_kernel_us (kernels overlap?)");
  if (row.contains("op")) {
    if (!(s = ReadString(row, "op", where, &d->op)).ok()) return s;
    if (d->op.empty()) return InvalidInput(where + ".op: empty");
    if (IsCudaGraph(d->framework))
      return InvalidInput(where + ".op: a replayed graph has no per-op dispatch");
    if (row.contains("chain")) return InvalidInput(where + ": a row has either \"op\" or \"chain\", not both");
    if (row.contains("geometry") && !row.at("geometry").is_null() &&
        !(s = ReadString(row, "geometry", where, &d->geometry)).ok())
      return s;
  }
  if (!(s = ReadNumber(row, "kernels_per_call", where, false, 0, false, &d->kernels_per_call, 1e9)).ok())
    return s;
  if (row.contains("elements") && !row.at("elements").is_null()) {
    double e = 0;
    if (!(s = ReadNumber(row, "elements", where, true, 1, false, &e, 1e12)).ok()) return s;
    if (d->framework != Framework::kLibtorchEager || d->cls != DispatchClass::kKernel || !d->op.empty() ||
        row.contains("chain"))
      return InvalidInput(where + ".elements: only a libtorch-eager chain of kernel-class ops has it");
    d->elements = int64_t(e);
  }
  if (!(s = ReadNumber(row, "cpu_gauge_us", where, false, 0, true, &d->cpu_gauge_us, kMaxUs)).ok())
    return s;
  if (!(s = ReadNumber(row, "host_probe_us", where, false, 0, true, &d->host_probe_us, kMaxUs)).ok())
    return s;
  if (row.contains("fuser") && !row.at("fuser").is_null()) {
    if (!row.at("fuser").is_boolean()) return InvalidInput(where + ".fuser: expected true, false or null");
    d->fuser = row.at("fuser").get<bool>();
  }
  if (row.contains("issue_us") && !row.at("issue_us").is_null()) {
    Spread issue;
    if (!(s = ReadSpread(row, "issue_us", where, &issue)).ok()) return s;
    if (issue.median > d->call_us.median * (1 + 1e-6))
      return InvalidInput(where + ".issue_us: longer than call_us (the chain returns before it is synchronized)");
    d->issue_us = issue;
  }
  if (row.contains("outside_us") && !row.at("outside_us").is_null()) {
    if (d->framework != Framework::kTorchCompile)
      return InvalidInput(where + ".outside_us: only a torch.compile (default mode) chain has it");
    const json& o = row.at("outside_us");
    const std::string w = where + ".outside_us";
    if (!o.is_object()) return InvalidInput(w + ": expected an object {median, p10, p90}");
    Spread out;
    if (!(s = ReadNumber(o, "median", w, true, -kMaxUs, false, &out.median, kMaxUs)).ok()) return s;
    out.p10 = out.p90 = out.median;
    if (!(s = ReadNumber(o, "p10", w, false, -kMaxUs, false, &out.p10, kMaxUs)).ok()) return s;
    if (!(s = ReadNumber(o, "p90", w, false, -kMaxUs, false, &out.p90, kMaxUs)).ok()) return s;
    if (out.p10 > out.median || out.p90 < out.median)
      return InvalidInput(w + ": quantiles out of order (need p10 <= median <= p90)");
    d->outside_us = out;
  }
  for (const char* key : {"before_replay_us", "replay_gpu_us"}) {
    if (!row.contains(key) || row.at(key).is_null()) continue;
    if (d->framework != Framework::kTorchCompileReduceOverhead)
      return InvalidInput(where + "." + key + ": only a torch.compile reduce-overhead chain has it");
    Spread sp;
    if (!(s = ReadSpread(row, key, where, &sp)).ok()) return s;  // calls of their own: not bounded by call_us
    (std::string(key) == "before_replay_us" ? d->before_replay_us : d->replay_gpu_us) = sp;
  }
  if (row.contains("layers") && !row.at("layers").is_null()) {
    if (!(s = ReadString(row, "layers", where, &d->layers)).ok()) return s;
    if (d->layers.empty()) return InvalidInput(where + ".layers: empty");
    if ((!d->outside_us && !d->before_replay_us) || d->modules < 1)
      return InvalidInput(where + ".layers: a chain of layers needs its modules and outside_us (default mode) "
                          "or before_replay_us (reduce-overhead)");
  }
  if (row.contains("chain")) {
    if (!(s = ReadString(row, "chain", where, &d->chain)).ok()) return s;
    if (d->chain.empty()) return InvalidInput(where + ".chain: empty");
    if (d->framework != Framework::kCudaGraph)
      return InvalidInput(where + ".chain: only cuda-graph rows replay chains of model-sized blocks");
    if (!(s = ReadNumber(row, "nodes", where, true, 1, false, &d->nodes, 1e9)).ok()) return s;
    if (d->gpu_kernel_us < 0)
      return InvalidInput(where + ".gpu_kernel_us: required in a row of a model-sized chain");
    if (row.contains("dtype")) {
      if (!(s = ReadString(row, "dtype", where, &d->dtype)).ok()) return s;
      if (!ParseDType(d->dtype)) return InvalidInput(where + ".dtype: unknown dtype '" + d->dtype + "'");
    }
  }
  return Status::Ok();
}

}  // namespace

Expected<Measurements> MeasurementsFromJson(const json& j) {
  Measurements m;
  if (!j.is_object()) return InvalidInput("measurements: top level must be a JSON object");
  if (!j.contains("schema_version") || !j.at("schema_version").is_number_integer())
    return InvalidInput("schema_version: required integer field missing");
  const int64_t version = j.at("schema_version").get<int64_t>();
  if (version != kMeasurementsSchemaVersion)
    return InvalidInput("schema_version: " + std::to_string(version) +
                        " is not supported (this ftax reads version " +
                        std::to_string(kMeasurementsSchemaVersion) + ")");
  if (!j.contains("kind") || !j.at("kind").is_string() ||
      j.at("kind").get<std::string>() != "ftax-measurements")
    return InvalidInput("kind: must be \"ftax-measurements\"");
  if (j.contains("host") && !j.at("host").is_null()) {
    if (!j.at("host").is_object()) return InvalidInput("host: expected an object");
    m.host = j.at("host");
    if (m.host.contains("gpu") && m.host.at("gpu").is_null()) m.host.erase("gpu");
    if (m.host.contains("gpu") && !m.host.at("gpu").is_string()) return InvalidInput("host.gpu: expected a string");
  } else {
    m.host = json::object();
  }
  // Lists may be missing or short: the bench writes the file as it goes.
  if (j.contains("kernels") && !j.at("kernels").is_null()) {
    const json& ks = j.at("kernels");
    if (!ks.is_array()) return InvalidInput("kernels: expected an array");
    for (size_t i = 0; i < ks.size(); ++i) {
      KernelMeasurement k;
      Status s = ReadKernelRow(ks[i], RowName("kernels", i, ks[i]), &k);
      if (!s.ok()) return s;
      m.kernels.push_back(std::move(k));
    }
  }
  if (j.contains("dispatch") && !j.at("dispatch").is_null()) {
    const json& ds = j.at("dispatch");
    if (!ds.is_array()) return InvalidInput("dispatch: expected an array");
    for (size_t i = 0; i < ds.size(); ++i) {
      DispatchMeasurement d;
      const std::string where = RowName("dispatch", i, ds[i]);
      Status s = ReadDispatchRow(ds[i], where, &d);
      if (!s.ok()) return s;
      if (ds[i].contains("mix_of")) {  // an op mix: a ratio, never a chain to fit
        if (!ds[i].at("mix_of").is_object()) return InvalidInput(where + ".mix_of: expected an object");
        MixMeasurement x;
        x.framework = d.framework;
        x.n_ops = d.n_ops;
        if (!(s = ReadNumber(ds[i], "mix_ratio", where, false, 0, true, &x.ratio, 100)).ok()) return s;
        if (d.issue_us) x.issue_us = d.issue_us->median;
        x.cpu_gauge_us = d.cpu_gauge_us;
        if (!(s = ReadNumber(ds[i], "mix_kernels", where, false, 0, false, &x.kernels)).ok()) return s;
        if (!(s = ReadNumber(ds[i], "add_us", where, false, 0, true, &x.add_us, kMaxUs)).ok()) return s;
        if (ds[i].contains("mix_class_of") && !ds[i].at("mix_class_of").is_null()) {
          const json& mc = ds[i].at("mix_class_of");
          if (!mc.is_object()) return InvalidInput(where + ".mix_class_of: expected an object");
          const json& counts = ds[i].at("mix_of");
          for (auto it = mc.begin(); it != mc.end(); ++it) {
            auto c = it->is_string() ? ParseDispatchClass(it->get<std::string>()) : std::nullopt;
            if (!c)
              return InvalidInput(where + ".mix_class_of." + it.key() + ": expected a dispatch class (kernel, view, library)");
            double n = 0;
            if (!(s = ReadNumber(counts, it.key(), where + ".mix_of", true, 0, true, &n, 1e6)).ok()) return s;
            x.calls.push_back({it.key(), *c, int(n)});
          }
        }
        m.mixes.push_back(x);
        continue;
      }
      m.dispatch.push_back(d);
    }
  }
  if (j.contains("launches") && !j.at("launches").is_null()) {
    const json& ls = j.at("launches");
    if (!ls.is_array()) return InvalidInput("launches: expected an array");
    for (size_t i = 0; i < ls.size(); ++i) {
      const std::string where = RowName("launches", i, ls[i]);
      if (!ls[i].is_object()) return InvalidInput(where + ": expected an object");
      LaunchMeasurement l;
      Status s = ReadInt(ls[i], "n", where, true, 1, &l.n);
      if (!s.ok() || !(s = ReadSpread(ls[i], "issue_us", where, &l.issue_us)).ok()) return s;
      m.launches.push_back(l);
    }
  }
  if (j.contains("failures") && !j.at("failures").is_null()) {
    if (!j.at("failures").is_array()) return InvalidInput("failures: expected an array");
    m.failures = j.at("failures");
  }
  return m;
}

Expected<Measurements> LoadMeasurements(const std::string& path) {
  Expected<json> j = ReadJsonFile(path, "measurements");
  if (!j.ok()) return j.status();
  Expected<Measurements> m = MeasurementsFromJson(j.value());
  if (!m.ok()) return m.status().WithContext(path);
  m->source = path;
  return m;
}

Status CheckProfileInput(const Measurements& m) {
  const std::string from = m.source.empty() ? "the measurements" : "'" + m.source + "'";
  if (m.kernels.empty())
    return InvalidInput(from + " hold no kernel rows: a profile needs GPU kernel measurements "
                        "(run `ftax bench` without --no-kernels, and pass its file too)");
  return Status::Ok();
}

Measurements MergeMeasurements(const std::vector<Measurements>& parts) {
  Measurements out;
  out.host = json::object();
  std::string sources;
  for (const Measurements& p : parts) {
    // Host fields: the first file that names a field wins; later files only add fields.
    if (p.host.is_object())
      for (const auto& [key, value] : p.host.items())
        if (!out.host.contains(key)) out.host[key] = value;
    out.kernels.insert(out.kernels.end(), p.kernels.begin(), p.kernels.end());
    out.dispatch.insert(out.dispatch.end(), p.dispatch.begin(), p.dispatch.end());
    out.launches.insert(out.launches.end(), p.launches.begin(), p.launches.end());
    out.mixes.insert(out.mixes.end(), p.mixes.begin(), p.mixes.end());
    if (p.failures.is_array())
      for (const json& f : p.failures) out.failures.push_back(f);
    if (!p.source.empty()) sources += (sources.empty() ? "" : " + ") + p.source;
  }
  out.source = sources;
  return out;
}

}  // namespace ftax
