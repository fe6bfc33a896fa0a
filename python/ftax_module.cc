// The `ftax` Python module's native part (_ftax): model sources, profiles and predictions of
// the graph and predictor libraries, one call per point or per sweep, with results as plain
// Python dicts. python/ftax/__init__.py wraps it (docs/python.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/open_model.h"
#include "cli/profile_names.h"
#include "cli/sweep_args.h"
#include "graph/graph_stats.h"
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

// A model opened once: an arch spec or a model file with its dims bound.
struct Model {
  ModelSource source;
  std::string description;
};

std::shared_ptr<Model> OpenModel(const std::string& model, const std::map<std::string, int64_t>& dims,
                                 const std::vector<std::string>& input_shapes) {
  ModelSourceOptions o;
  const bool is_file = model.size() > 5 &&
                       (model.rfind(".onnx") == model.size() - 5 || model.rfind(".pt") == model.size() - 3);
  if (is_file) o.path = model;
  else o.arch = model;
  o.dims = DimList(dims);
  o.input_shapes = input_shapes;
  auto m = std::make_shared<Model>();
  m->source = Take(ftax::OpenModelSource(o));
  m->description = m->source.description;
  return m;
}

py::dict PointDict(const ftax::PredictionPoint& p) {
  py::dict d;
  d["batch"] = p.batch;
  d["framework"] = ftax::FrameworkName(p.framework);
  d["precision"] = ftax::DTypeName(p.precision);
  d["latency_ms"] = p.latency_ms;
  d["interval_ms"] = py::make_tuple(p.interval_lo_ms, p.interval_hi_ms);
  d["framework_ms"] = p.framework_ms;
  d["compute_ms"] = p.compute_ms;
  d["bound"] = p.bound;
  d["gpu_util"] = p.gpu_util;
  d["kernels"] = p.kernels;
  d["dispatches"] = p.dispatches;
  d["unpriced_ops"] = p.unpriced_ops;
  return d;
}

py::dict Predict(const Model& m, const ftax::HostProfile& profile, const std::vector<std::string>& frameworks,
                 const std::vector<std::string>& precisions, const std::vector<int64_t>& batches,
                 int interval_samples, bool crossover) {
  ftax::PredictRequest req;
  req.frameworks = Take(ftax::cli::ParseFrameworkList(frameworks));
  req.precisions = Take(ftax::cli::ParsePrecisionList(precisions));
  req.batches = batches;
  req.interval_samples = interval_samples;
  req.find_crossover = crossover;
  ftax::PredictionReport r = Take(ftax::PredictSweep(m.source.at_batch, profile, req));
  py::list points;
  for (const auto& p : r.points) points.append(PointDict(p));
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
  py::class_<ftax::HostProfile, std::shared_ptr<ftax::HostProfile>>(m, "Profile")
      .def_static(
          "load",
          [](const std::string& name_or_path) {
            return std::make_shared<ftax::HostProfile>(Take(ftax::cli::LoadNamedProfile(name_or_path)));
          },
          py::arg("name_or_path"), "A shipped profile by name (h200, h100) or a profile file.")
      .def_property_readonly("gpu", [](const ftax::HostProfile& p) { return p.host.value("gpu", std::string()); })
      .def_property_readonly("date",
                             [](const ftax::HostProfile& p) { return p.provenance.value("date", std::string()); })
      .def_property_readonly("provenance", [](const ftax::HostProfile& p) { return p.provenance.dump(); })
      .def("__repr__", [](const ftax::HostProfile& p) {
        return "<ftax.Profile " + p.host.value("gpu", std::string("?")) + " " +
               p.provenance.value("date", std::string()).substr(0, 10) + ">";
      });
  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_readonly("description", &Model::description)
      .def("__repr__", [](const Model& x) { return "<ftax.Model " + x.description + ">"; });
  m.def("open_model", &OpenModel, py::arg("model"), py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("input_shapes") = std::vector<std::string>{});
  m.def("predict_model", &Predict, py::arg("model"), py::arg("profile"), py::arg("frameworks"),
        py::arg("precisions"), py::arg("batches"), py::arg("interval_samples"), py::arg("crossover"));
  m.def("inspect_model", &Inspect, py::arg("model"), py::arg("batch") = 1);
  m.def("shipped_profiles", &ftax::cli::ShippedProfileNames);
}
