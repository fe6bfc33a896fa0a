// The `ftax` Python module's native part (_ftax): model sources, profiles and predictions of
// the graph and predictor libraries, one call per point or per sweep, with results as plain
// Python dicts. python/ftax/__init__.py wraps it (docs/python.md).
//
// Two paths give the same numbers. The general one (predict_model_general) opens a model
// source and runs PredictSweep, as the command line does. The fast one serves every request
// without a crossover search: an arch spec string (predict_spec, predict_many) is built once
// per batch into graphs this thread keeps (BuildArchGraphInto, no allocation once warm); an
// opened Model (predict_model, predict_many) keeps the work lists it has lowered per batch,
// framework and precision. Points are computed in PredictSweep's order with the GIL
// released, and each Profile keeps a ProfileCache. Whatever the fast path cannot serve, or
// any error, goes to the general path, so errors read the same on both.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "graph/open_model.h"
#include "cli/profile_names.h"
#include "cli/sweep_args.h"
#include "graph/graph_stats.h"
#include "predictor/lowering.h"
#include "predictor/pipeline.h"
#include "predictor/predict.h"

namespace py = pybind11;
using ftax::ModelSource;
using ftax::ModelSourceOptions;

namespace {

template <class T>
T Take(ftax::Expected<T> e) {
  if (!e.ok()) {
    if (e.status().code() == ftax::ErrorCode::kInvalidInput || e.status().code() == ftax::ErrorCode::kNotFound)
      throw py::value_error(e.status().message());
    throw std::runtime_error(e.status().message());
  }
  return std::move(e.value());
}

std::vector<std::string> DimList(const std::map<std::string, int64_t>& dims) {
  std::vector<std::string> out;
  for (const auto& [k, v] : dims) out.push_back(k + "=" + std::to_string(v));
  return out;
}

// A model opened once: an arch spec or a model file with its dims bound, and the work lists
// its predictions have lowered, per (batch, framework, precision), with the kernel facts
// they were lowered with: a point asked for again (another profile with the same facts, an
// interval, the next call of a loop) is not built nor lowered again.
struct Model {
  ModelSource source;
  std::string description;
  using WorkKey = std::tuple<int64_t, int, int>;
  struct Work {
    ftax::KernelFacts facts;  // the profile's the list was lowered with
    std::shared_ptr<const ftax::WorkList> list;
  };
  static constexpr size_t kMaxWorks = 1024;  // then the kept work lists are dropped
  mutable std::mutex mu;                     // guards `works`
  mutable std::map<WorkKey, Work> works;
};

bool IsModelFile(const std::string& model) {
  return model.size() > 5 &&
         (model.rfind(".onnx") == model.size() - 5 || model.rfind(".pt") == model.size() - 3);
}

std::shared_ptr<Model> OpenModel(const std::string& model, const std::map<std::string, int64_t>& dims,
                                 const std::vector<std::string>& input_shapes) {
  ModelSourceOptions o;
  const bool is_file = IsModelFile(model);
  if (is_file) o.path = model;
  else o.arch = model;
  o.dims = DimList(dims);
  o.input_shapes = input_shapes;
  auto m = std::make_shared<Model>();
  m->source = Take(ftax::OpenModelSource(o));
  m->description = m->source.description;
  return m;
}

// A loaded profile and what predictions with it have computed from it (ProfileCache, kept for
// the profile's life; a Profile is never changed once loaded).
struct Profile {
  explicit Profile(ftax::HostProfile p) : profile(std::move(p)) {}
  ftax::HostProfile profile;
  mutable ftax::ProfileCache cache;
};

// Dict keys and the few string values of a point, made once (interned) rather than per point.
struct PointKeys {
  py::object batch, framework, precision, latency_ms, interval_ms, framework_ms, sync_wait_ms, compute_ms,
      bound, gpu_util, kernels, dispatches, unpriced_ops, compute, framework_bound;
  std::vector<py::object> framework_names, dtype_names;
};

py::object Interned(const char* s) { return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(s)); }

const PointKeys& Keys() {
  // Made under the GIL on first use; kept for the interpreter's life (never freed, so that no
  // Python object is released after the interpreter ends).
  static const PointKeys* keys = [] {
    auto* k = new PointKeys{Interned("batch"), Interned("framework"), Interned("precision"),
                            Interned("latency_ms"), Interned("interval_ms"), Interned("framework_ms"),
                            Interned("sync_wait_ms"), Interned("compute_ms"), Interned("bound"), Interned("gpu_util"),
                            Interned("kernels"), Interned("dispatches"), Interned("unpriced_ops"),
                            Interned("compute"), Interned("framework"), {}, {}};
    for (ftax::Framework f : ftax::AllFrameworks()) {
      if (k->framework_names.size() <= size_t(f)) k->framework_names.resize(size_t(f) + 1);
      k->framework_names[size_t(f)] = Interned(ftax::FrameworkName(f));
    }
    for (int d = 0; d <= int(ftax::DType::kComplex64); ++d)
      k->dtype_names.push_back(Interned(ftax::DTypeName(ftax::DType(d))));
    return k;
  }();
  return *keys;
}

py::dict PointDict(const ftax::PredictionPoint& p) {
  const PointKeys& k = Keys();
  py::dict d;
  d[k.batch] = py::int_(p.batch);
  d[k.framework] = k.framework_names[size_t(p.framework)];
  d[k.precision] = k.dtype_names[size_t(p.precision)];
  d[k.latency_ms] = py::float_(p.latency_ms);
  d[k.interval_ms] = py::make_tuple(p.interval_lo_ms, p.interval_hi_ms);
  d[k.framework_ms] = py::float_(p.framework_ms);
  d[k.sync_wait_ms] = py::float_(p.sync_wait_ms);
  d[k.compute_ms] = py::float_(p.compute_ms);
  d[k.bound] = p.bound == "compute" ? k.compute : p.bound == "framework" ? k.framework_bound : py::str(p.bound);
  d[k.gpu_util] = py::float_(p.gpu_util);
  d[k.kernels] = py::int_(p.kernels);
  d[k.dispatches] = py::int_(p.dispatches);
  py::dict unpriced;
  for (const auto& [type, n] : p.unpriced_ops) unpriced[py::str(type)] = py::int_(n);
  d[k.unpriced_ops] = std::move(unpriced);
  if (p.graph_inputs > 0) {  // torch.compile's default mode, as the CLI's JSON has it
    py::dict inputs;
    inputs["tensors"] = py::int_(p.graph_inputs);
    inputs["ms"] = py::float_(p.graph_input_ms);
    d["graph_inputs"] = std::move(inputs);
  }
  if (p.module_ms > 0) {  // torch.compile: the modules' guards, outside the generated code or before the replay
    py::dict modules;
    modules["modules"] = py::int_(p.module_calls);
    modules["ms"] = py::float_(p.module_ms);
    d["modules"] = std::move(modules);
  }
  if (p.framework == ftax::Framework::kTorchCompileReduceOverhead && p.call_ms > 0) {  // as the CLI's JSON
    d["before_replay_ms"] = py::float_(p.call_ms + p.module_ms);
    d["node_gap_ms"] = py::float_(p.node_gap_ms);
  }
  return d;
}

py::list PointList(const std::vector<ftax::PredictionPoint>& points) {
  py::list out(points.size());
  for (size_t i = 0; i < points.size(); ++i) out[i] = PointDict(points[i]);
  return out;
}

// The general path: the model source's graphs through PredictSweep, as the command line runs it.
py::dict Predict(const Model& m, const Profile& profile, const std::vector<std::string>& frameworks,
                 const std::vector<std::string>& precisions, const std::vector<int64_t>& batches,
                 int interval_samples, bool crossover) {
  ftax::PredictRequest req;
  req.frameworks = Take(ftax::cli::ParseFrameworkList(frameworks));
  req.precisions = Take(ftax::cli::ParsePrecisionList(precisions));
  req.batches = batches;
  req.interval_samples = interval_samples;
  req.find_crossover = crossover;
  ftax::PredictionReport r = Take(ftax::PredictSweep(m.source.at_batch, profile.profile, req));
  py::list points = PointList(r.points);
  py::list crossovers;
  for (const auto& c : r.crossovers) {
    py::dict d;
    d["framework"] = ftax::FrameworkName(c.framework);
    d["precision"] = ftax::DTypeName(c.precision);
    d["batch"] = c.batch ? py::object(py::int_(*c.batch)) : py::object(py::none());
    d["searched_to"] = c.searched_to;
    crossovers.append(d);
  }
  py::dict out;
  out["model"] = m.description;
  out["points"] = points;
  out["crossovers"] = crossovers;
  out["notes"] = r.notes;
  return out;
}

// ---- the fast path for arch specs ----

// A sweep without a crossover search, parsed once.
struct Sweep {
  std::vector<ftax::Framework> frameworks;
  std::vector<ftax::DType> precisions;
  std::vector<int64_t> batches;  // sorted, each once (PredictSweep's order)
  int samples = 0;
};

std::optional<Sweep> ParseSweep(const std::vector<std::string>& frameworks, const std::vector<std::string>& precisions,
                                const std::vector<int64_t>& batches, int samples) {
  Sweep s;
  auto f = ftax::cli::ParseFrameworkList(frameworks);
  auto p = ftax::cli::ParsePrecisionList(precisions);
  if (!f.ok() || !p.ok()) return std::nullopt;
  s.frameworks = std::move(f.value());
  s.precisions = std::move(p.value());
  s.batches = batches;
  std::sort(s.batches.begin(), s.batches.end());
  s.batches.erase(std::unique(s.batches.begin(), s.batches.end()), s.batches.end());
  s.samples = samples;
  return s;
}

// An arch spec with its dims, as OpenModelSource would bind them for --arch.
struct ArchModel {
  std::string spec;
  ftax::DimBindings dims;
  ftax::ArchFlavor flavor = ftax::ArchFlavor::kTorch;
};

std::optional<ArchModel> ArchOf(const Model& m) {
  if (m.source.arch.empty()) return std::nullopt;
  return ArchModel{m.source.arch, m.source.dims, m.source.flavor};
}

// A spec string the fast path binds exactly as OpenModelSource would: no model file, and dims
// that its --dim parsing would take as they are. A "batch" dim is left to the general path,
// which builds a probe graph at that batch before the sweep (and fails on it when it is bad).
std::optional<ArchModel> ArchOf(const std::string& spec, const std::map<std::string, int64_t>& dims) {
  if (IsModelFile(spec)) return std::nullopt;
  for (const auto& [k, v] : dims)
    if (k.empty() || k.find('=') != std::string::npos || v <= 0 || k == "batch") return std::nullopt;
  return ArchModel{spec, dims, ftax::ArchFlavor::kTorch};
}

// The graphs this thread builds arch specs into (BuildArchGraphInto), one per batch of a
// sweep: every build overwrites the last one in place, so a search loop allocates almost
// nothing. One set for all specs: keeping a graph per structure (so that a spec of the same
// depth overwrites ops and tensors of the same names) was measured slower, its memory no
// longer fitting the core's cache.
std::vector<ftax::Graph>& ThreadGraphs(size_t n) {
  thread_local std::vector<ftax::Graph> graphs;
  if (graphs.size() < n) graphs.resize(n);
  return graphs;
}

// The points PredictSweep would give for `a` (same order, same numbers), or false on any error
// (the caller then takes the general path, which raises it). Touches no Python object: runs
// with the GIL released.
bool PredictArch(const ArchModel& a, const Profile& profile, const Sweep& s,
                 std::vector<ftax::PredictionPoint>* out) {
  std::vector<ftax::Graph>& graphs = ThreadGraphs(s.batches.size());
  ftax::DimBindings d = a.dims;
  for (size_t i = 0; i < s.batches.size(); ++i) {
    d["batch"] = s.batches[i];
    if (!ftax::BuildArchGraphInto(a.spec, d, a.flavor, ftax::DType::kFloat32, &graphs[i]).ok()) return false;
  }
  out->clear();
  out->reserve(s.frameworks.size() * s.precisions.size() * s.batches.size());
  for (ftax::Framework f : s.frameworks)
    for (ftax::DType dt : s.precisions)
      for (size_t i = 0; i < s.batches.size(); ++i) {
        ftax::Expected<ftax::PredictionPoint> p =
            ftax::PredictPoint(graphs[i], profile.profile, f, dt, s.samples, /*seed=*/1, nullptr, &profile.cache);
        if (!p.ok()) return false;
        p->batch = s.batches[i];
        out->push_back(std::move(p.value()));
      }
  return true;
}

// The points PredictSweep would give for an opened model (same order, same numbers), from
// the work lists it keeps, lowering those it lacks; false on any error. Touches no Python
// object: runs with the GIL released.
bool PredictModel(const Model& m, const Profile& profile, const Sweep& s, std::vector<ftax::PredictionPoint>* out) {
  const std::optional<ArchModel> arch = ArchOf(m);
  // A file's graphs come from its model source (ONNX shape inference, a TorchScript walk), one
  // caller at a time across all models, as when every call held the GIL.
  static std::mutex file_sources;
  std::unique_lock<std::mutex> file_lock(file_sources, std::defer_lock);
  if (!arch) file_lock.lock();
  std::vector<ftax::Graph>* arch_graphs = nullptr;
  std::map<size_t, ftax::Graph> file_graphs;
  std::vector<char> built(s.batches.size(), 0);
  // The graph of batch i, built at most once per call.
  auto graph = [&](size_t i) -> const ftax::Graph* {
    if (arch) {
      if (!arch_graphs) arch_graphs = &ThreadGraphs(s.batches.size());
      if (!built[i]) {
        ftax::DimBindings d = arch->dims;
        d["batch"] = s.batches[i];
        if (!ftax::BuildArchGraphInto(arch->spec, d, arch->flavor, ftax::DType::kFloat32, &(*arch_graphs)[i]).ok())
          return nullptr;
        built[i] = 1;
      }
      return &(*arch_graphs)[i];
    }
    auto it = file_graphs.find(i);
    if (it == file_graphs.end()) {
      ftax::Expected<ftax::Graph> g = m.source.at_batch(s.batches[i]);
      if (!g.ok()) return nullptr;
      it = file_graphs.emplace(i, std::move(g.value())).first;
    }
    return &it->second;
  };
  out->clear();
  out->reserve(s.frameworks.size() * s.precisions.size() * s.batches.size());
  for (ftax::Framework f : s.frameworks)
    for (ftax::DType dt : s.precisions)
      for (size_t i = 0; i < s.batches.size(); ++i) {
        const Model::WorkKey key{s.batches[i], int(f), int(dt)};
        std::shared_ptr<const ftax::WorkList> work;
        {
          std::lock_guard<std::mutex> lock(m.mu);
          auto it = m.works.find(key);
          if (it != m.works.end() && it->second.facts == profile.profile.kernel_facts) work = it->second.list;
        }
        if (!work) {
          const ftax::Graph* g = graph(i);
          if (!g) return false;
          ftax::LoweringOptions lo;
          lo.framework = f;
          lo.precision = dt;
          lo.facts = profile.profile.kernel_facts;
          ftax::Expected<ftax::WorkList> w = ftax::Lower(*g, lo);
          if (!w.ok()) return false;
          work = std::make_shared<const ftax::WorkList>(std::move(w.value()));
          std::lock_guard<std::mutex> lock(m.mu);
          if (m.works.size() >= Model::kMaxWorks) m.works.clear();
          m.works[key] = Model::Work{lo.facts, work};
        }
        ftax::Expected<ftax::PredictionPoint> p =
            ftax::PredictWork(*work, profile.profile, f, dt, s.samples, /*seed=*/1, nullptr, &profile.cache);
        if (!p.ok()) return false;
        p->batch = s.batches[i];
        out->push_back(std::move(p.value()));
      }
  return true;
}

// predict() of one model without a crossover search: the fast path where it applies.
py::list PredictSpec(const std::string& model, const std::map<std::string, int64_t>& dims, const Profile& profile,
                     const std::vector<std::string>& frameworks, const std::vector<std::string>& precisions,
                     const std::vector<int64_t>& batches, int interval_samples) {
  std::optional<ArchModel> arch = ArchOf(model, dims);
  std::optional<Sweep> sweep = arch ? ParseSweep(frameworks, precisions, batches, interval_samples) : std::nullopt;
  if (sweep) {
    std::vector<ftax::PredictionPoint> points;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = PredictArch(*arch, profile, *sweep, &points);
    }
    if (ok) return PointList(points);
  }
  std::shared_ptr<Model> m = OpenModel(model, dims, {});
  return Predict(*m, profile, frameworks, precisions, batches, interval_samples, false)["points"];
}

// predict() of an opened model.
py::object PredictOpened(const Model& m, const Profile& profile, const std::vector<std::string>& frameworks,
                         const std::vector<std::string>& precisions, const std::vector<int64_t>& batches,
                         int interval_samples, bool crossover) {
  std::optional<Sweep> sweep =
      crossover ? std::nullopt : ParseSweep(frameworks, precisions, batches, interval_samples);
  if (sweep) {
    std::vector<ftax::PredictionPoint> points;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = PredictModel(m, profile, *sweep, &points);
    }
    if (ok) {
      py::dict out;
      out["model"] = m.description;
      out["points"] = PointList(points);
      return std::move(out);
    }
  }
  return Predict(m, profile, frameworks, precisions, batches, interval_samples, crossover);
}

// predict() of many models (spec strings, paths or opened models), one list of points each.
// The arch specs and opened models are predicted first, all at once with the GIL released
// (on `threads` threads); then, in order, each model's points are taken from there or from the
// general path (which raises the first error, as a loop over predict() would).
py::list PredictMany(const py::list& models, const std::map<std::string, int64_t>& dims, const Profile& profile,
                     const std::vector<std::string>& frameworks, const std::vector<std::string>& precisions,
                     const std::vector<int64_t>& batches, int interval_samples, int threads) {
  const size_t n = models.size();
  std::vector<std::optional<ArchModel>> arch(n);
  std::vector<std::shared_ptr<Model>> opened(n);
  for (size_t i = 0; i < n; ++i) {
    py::handle h = models[i];
    if (py::isinstance<Model>(h)) opened[i] = h.cast<std::shared_ptr<Model>>();
    else if (py::isinstance<py::str>(h)) arch[i] = ArchOf(h.cast<std::string>(), dims);
  }
  std::optional<Sweep> sweep = ParseSweep(frameworks, precisions, batches, interval_samples);
  std::vector<std::vector<ftax::PredictionPoint>> points(n);
  std::vector<char> ok(n, 0);
  if (sweep) {
    py::gil_scoped_release release;
    auto run = [&](size_t i) {
      if (opened[i]) ok[i] = PredictModel(*opened[i], profile, *sweep, &points[i]);
      else if (arch[i]) ok[i] = PredictArch(*arch[i], profile, *sweep, &points[i]);
    };
    const size_t workers = std::min<size_t>(std::max(threads, 1), std::max<size_t>(n, 1));
    if (workers <= 1) {
      for (size_t i = 0; i < n; ++i) run(i);
    } else {
      // Each worker takes the next model; a thread builds into its own graphs (ThreadGraphs),
      // and the profile's cache is shared (it locks).
      std::atomic<size_t> next{0};
      auto worker = [&] {
        for (size_t i = next++; i < n; i = next++) run(i);
      };
      std::vector<std::thread> pool;
      for (size_t t = 1; t < workers; ++t) pool.emplace_back(worker);
      worker();
      for (std::thread& t : pool) t.join();
    }
  }
  py::list out(n);
  for (size_t i = 0; i < n; ++i) {
    if (ok[i]) {
      out[i] = PointList(points[i]);
      continue;
    }
    py::handle h = models[i];
    std::shared_ptr<Model> m = opened[i] ? opened[i] : OpenModel(h.cast<std::string>(), dims, {});
    out[i] = Predict(*m, profile, frameworks, precisions, batches, interval_samples, false)["points"];
  }
  return out;
}

py::dict Inspect(const Model& m, int64_t batch) {
  ftax::Graph g = Take(m.source.at_batch(batch));
  ftax::GraphStats st = Take(ftax::ComputeStats(g));
  py::dict d;
  d["model"] = m.description;
  d["macs"] = st.totals.macs;
  d["flops"] = st.totals.flops;
  d["params"] = st.totals.params;
  d["ops"] = st.totals.ops;
  d["work_ops"] = st.totals.work_ops;
  d["depth"] = st.totals.depth;
  d["weight_bytes"] = st.totals.weight_bytes;
  d["activation_bytes"] = st.totals.activation_bytes;
  d["uncounted_ops"] = st.uncounted_ops;
  d["unknown_op_types"] = st.unknown_op_types;
  py::dict by;
  for (const auto& o : st.by_op_type) by[py::str(o.op_type)] = o.count;
  d["ops_by_type"] = by;
  return d;
}

}  // namespace

PYBIND11_MODULE(_ftax, m) {
  m.doc() = "ftax: predict the inference latency of a neural network on a GPU host and framework";
  py::class_<Profile, std::shared_ptr<Profile>>(m, "Profile")
      .def_static(
          "load",
          [](const std::string& name_or_path) {
            return std::make_shared<Profile>(Take(ftax::cli::LoadNamedProfile(name_or_path)));
          },
          py::arg("name_or_path"), "A shipped profile by name (h200, h100) or a profile file.")
      .def_property_readonly("gpu", [](const Profile& p) { return p.profile.host.value("gpu", std::string()); })
      .def_property_readonly("date",
                             [](const Profile& p) { return p.profile.provenance.value("date", std::string()); })
      .def_property_readonly("provenance", [](const Profile& p) { return p.profile.provenance.dump(); })
      .def("__repr__", [](const Profile& p) {
        return "<ftax.Profile " + p.profile.host.value("gpu", std::string("?")) + " " +
               p.profile.provenance.value("date", std::string()).substr(0, 10) + ">";
      });
  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_readonly("description", &Model::description)
      .def("__repr__", [](const Model& x) { return "<ftax.Model " + x.description + ">"; });
  m.def("open_model", &OpenModel, py::arg("model"), py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("input_shapes") = std::vector<std::string>{});
  m.def("predict_model", &PredictOpened, py::arg("model"), py::arg("profile"), py::arg("frameworks"),
        py::arg("precisions"), py::arg("batches"), py::arg("interval_samples"), py::arg("crossover"));
  m.def("predict_spec", &PredictSpec, py::arg("model"), py::arg("dims"), py::arg("profile"), py::arg("frameworks"),
        py::arg("precisions"), py::arg("batches"), py::arg("interval_samples"));
  m.def("predict_many", &PredictMany, py::arg("models"), py::arg("dims"), py::arg("profile"), py::arg("frameworks"),
        py::arg("precisions"), py::arg("batches"), py::arg("interval_samples"), py::arg("threads") = 1);
  // The general path alone (tests compare the fast path with it).
  m.def("predict_model_general", &Predict, py::arg("model"), py::arg("profile"), py::arg("frameworks"),
        py::arg("precisions"), py::arg("batches"), py::arg("interval_samples"), py::arg("crossover"));
  m.def("inspect_model", &Inspect, py::arg("model"), py::arg("batch") = 1);
  m.def("shipped_profiles", &ftax::cli::ShippedProfileNames);
}
