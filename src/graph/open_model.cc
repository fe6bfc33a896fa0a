#include "graph/open_model.h"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "graph/dim_binding.h"
#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"
#include "graph/arch_spec.h"
#include "graph/torchscript_loader.h"

namespace ftax {
namespace {

bool HasSymbol(const Graph& g, const std::string& name) {
  for (const std::string& in : g.inputs) {
    const TensorInfo* t = g.Find(in);
    if (!t) continue;
    for (const Dim& d : t->shape)
      if (d.symbol == name) return true;
  }
  return false;
}

// The user's --dim and --input-shape flags, parsed; errors name the flag.
struct Bindings {
  DimBindings dims;
  std::vector<InputShapeFlag> shapes;
};

Expected<Bindings> ParseBindings(const ModelSourceOptions& o) {
  if (o.path.empty() == o.arch.empty())
    return InvalidInput("give exactly one of a MODEL file or --arch SPEC");
  std::vector<DimFlag> flags;
  for (const auto& d : o.dims) {
    Expected<DimFlag> f = ParseDimFlag(d);
    if (!f.ok()) return f.status();  // names the flag and its value
    flags.push_back(f.value());
  }
  Expected<DimBindings> dims = CollectDims(flags);
  if (!dims.ok()) return dims.status();
  Bindings b;
  b.dims = dims.value();
  for (const auto& s : o.input_shapes) {
    Expected<InputShapeFlag> f = ParseInputShapeFlag(s);
    if (!f.ok()) return f.status();
    b.shapes.push_back(f.value());
  }
  if (o.forward_inputs && !b.shapes.empty())
    return InvalidInput("give a TorchScript file's input shapes by name or in forward's order, not both");
  return b;
}

Expected<ArchFlavor> ParseFlavor(const std::string& flavor) {
  if (flavor != "torch" && flavor != "onnx") return InvalidInput("--flavor must be torch or onnx");
  return flavor == "onnx" ? ArchFlavor::kOnnx : ArchFlavor::kTorch;
}

// ---- TorchScript files ---------------------------------------------------------------------

Expected<std::shared_ptr<const TorchScriptModel>> LoadTorchScript(const std::string& path, ModelFileCache* cache) {
  if (cache) return cache->TorchScript(path);
  Expected<TorchScriptModel> m = TorchScriptModel::Load(path);
  if (!m.ok()) return m.status();
  return std::shared_ptr<const TorchScriptModel>(std::make_shared<TorchScriptModel>(std::move(m.value())));
}

// A TorchScript file and its input shapes, walked at any batch: the batch is the symbolic dim
// named batch_dim in the input shapes, or else the leading dim of every input.
struct TorchScriptAtBatch {
  std::shared_ptr<const TorchScriptModel> model;
  DimBindings user;
  std::vector<InputShapeFlag> shapes;
  bool symbolic = false;
  std::string batch_dim;

  Expected<Graph> operator()(int64_t b) const {
    DimBindings d = user;
    d[batch_dim] = b;
    Expected<std::vector<InputShapeFlag>> s = ResolveInputShapes(shapes, d);
    if (!s.ok()) return s.status();
    if (!symbolic)
      for (InputShapeFlag& f : s.value())
        if (!f.dims.empty()) f.dims[0] = b;
    return model->Walk(s.value());
  }
};

// The file loaded (or found in the cache), with the input shapes it is walked with: the
// user's, or forward_inputs named after forward's arguments.
Expected<TorchScriptAtBatch> OpenTorchScript(const ModelSourceOptions& o, const Bindings& b) {
  Expected<std::shared_ptr<const TorchScriptModel>> model = LoadTorchScript(o.path, o.cache);
  if (!model.ok()) return model.status();
  TorchScriptAtBatch t;
  t.model = model.value();
  t.user = b.dims;
  t.shapes = b.shapes;
  t.batch_dim = o.batch_dim;
  if (o.forward_inputs) {
    const std::vector<std::string>& names = t.model->input_names();
    if (o.forward_inputs->size() != names.size())
      return InvalidInput(o.path + ": " + std::to_string(o.forward_inputs->size()) +
                          " input shapes given in forward's order, forward takes " + std::to_string(names.size()));
    t.shapes = o.forward_inputs.value();
    for (size_t i = 0; i < names.size(); ++i) t.shapes[i].input = names[i];
  }
  for (const InputShapeFlag& f : t.shapes)
    for (const std::string& sym : f.symbols) t.symbolic |= sym == o.batch_dim;
  return t;
}

// ---- ONNX files ----------------------------------------------------------------------------

// An ONNX graph bound at a batch: the symbolic dim batch_dim when the graph has it, else the
// leading dim of every graph input. A node no runtime accepts, or an input dim left unbound,
// is an error (nothing can be predicted from it).
Expected<Graph> OnnxAtBatch(const Graph& base, const DimBindings& user, const std::vector<InputShapeFlag>& shapes,
                            const std::string& batch_dim, int64_t b, bool strict) {
  Graph g = base;
  DimBindings d = user;
  std::vector<InputShapeFlag> s = shapes;
  int64_t fixed_batch = -1;  // the batch a file without a symbolic batch dim was exported at
  if (HasSymbol(base, batch_dim)) {
    d[batch_dim] = b;
  } else {
    // No symbolic batch: set the leading dim of every graph input.
    for (const std::string& in : g.inputs) {
      TensorInfo& t = g.Tensor(in);
      bool given = false;
      for (InputShapeFlag& f : s)
        if (f.input == in || (f.input.empty() && g.inputs.size() == 1)) {
          if (!f.dims.empty()) f.dims[0] = b;
          given = true;
        }
      if (!given && t.has_shape && !t.shape.empty()) {
        if (t.shape[0].known() && t.shape[0].value != b) fixed_batch = t.shape[0].value;
        t.shape[0] = Dim::Known(b);
      }
    }
  }
  Status st = PrepareGraph(&g, d, s, strict);
  if (!st.ok()) return st;
  // A node no runtime accepts (shape inference's "invalid:" findings) cannot be predicted.
  for (const std::string& w : g.warnings)
    if (w.find("): invalid: ") != std::string::npos) return InvalidInput(w);
  std::vector<std::string> unbound = UnboundInputDims(g);
  if (!unbound.empty()) {
    std::string names;
    for (const auto& n : unbound) names += (names.empty() ? "" : ", ") + n;
    return InvalidInput("unbound symbolic dims: " + names + " (bind them with --dim NAME=VALUE)");
  }
  // A file exported at a fixed batch whose shape arithmetic (constant Reshape targets, Pads)
  // does not follow another batch: say so rather than fail later on a tensor's name.
  if (fixed_batch > 0)
    for (const Op& op : g.ops)
      for (const std::string& o : op.outputs) {
        const TensorInfo* t = g.Find(o);
        if (!t || !t->has_shape) continue;
        for (const Dim& dim : t->shape)
          if (!dim.known())
            return InvalidInput(base.source + " was exported at batch " + std::to_string(fixed_batch) +
                                " (no symbolic batch dim on its inputs) and its shape arithmetic does not "
                                "follow batch " + std::to_string(b) + " (node '" + op.name +
                                "'): predict it at --batch " + std::to_string(fixed_batch) +
                                ", or export it with a dynamic batch axis");
      }
  return g;
}

bool IsTorchScript(const ModelSourceOptions& o) { return o.forward_inputs || LooksLikeTorchScript(o.path); }

}  // namespace

Expected<std::shared_ptr<const TorchScriptModel>> ModelFileCache::TorchScript(const std::string& path) {
  auto it = torchscript_.find(path);
  if (it != torchscript_.end()) return it->second;
  Expected<TorchScriptModel> m = TorchScriptModel::Load(path);
  if (!m.ok()) return m.status();
  std::shared_ptr<const TorchScriptModel> model = std::make_shared<TorchScriptModel>(std::move(m.value()));
  torchscript_.emplace(path, model);
  return model;
}

Expected<Graph> OpenModelGraph(const ModelSourceOptions& o) {
  Expected<Bindings> b = ParseBindings(o);
  if (!b.ok()) return b.status();
  if (!o.arch.empty()) {
    Expected<ArchFlavor> flavor = ParseFlavor(o.flavor);
    if (!flavor.ok()) return flavor.status();
    std::optional<DType> dt = ParseDType(o.dtype);
    if (!dt) return InvalidInput("--dtype '" + o.dtype + "' is not a dtype");
    if (o.batch > 0) b->dims["batch"] = o.batch;
    Expected<Graph> g = BuildArchGraph(o.arch, b->dims, flavor.value(), *dt);
    if (!g.ok() && o.arch_from_flag) return g.status().WithContext("--arch '" + o.arch + "'");
    return g;
  }
  if (IsTorchScript(o)) {
    Expected<TorchScriptAtBatch> t = OpenTorchScript(o, b.value());
    if (!t.ok()) return t.status();
    if (o.batch > 0) return t.value()(o.batch);
    Expected<std::vector<InputShapeFlag>> resolved = ResolveInputShapes(t->shapes, b->dims);
    if (!resolved.ok()) return resolved.status().WithContext(o.path);
    return t->model->Walk(resolved.value());
  }
  Expected<Graph> g = LoadOnnxFile(o.path);
  if (!g.ok()) return g.status();
  if (o.batch > 0) return OnnxAtBatch(g.value(), b->dims, b->shapes, o.batch_dim, o.batch, o.strict);
  Status prep = PrepareGraph(&g.value(), b->dims, b->shapes, o.strict);
  if (!prep.ok()) return prep.WithContext(g->source);
  return g;
}

Expected<ModelSource> OpenModelSource(const ModelSourceOptions& o) {
  Expected<Bindings> bound = ParseBindings(o);
  if (!bound.ok()) return bound.status();
  const DimBindings& dims = bound->dims;
  ModelSource src;
  if (!o.arch.empty()) {
    Expected<ArchFlavor> parsed = ParseFlavor(o.flavor);
    if (!parsed.ok()) return parsed.status();
    src.flavor = parsed.value();
    src.arch = o.arch;
    src.dims = dims;
    src.description = o.arch;
    // Build once now so that spec errors surface before any sweep.
    DimBindings probe = src.dims;
    if (!probe.count("batch")) probe["batch"] = 1;
    Expected<Graph> g = BuildArchGraph(o.arch, probe, src.flavor);
    if (!g.ok()) return o.arch_from_flag ? g.status().WithContext("--arch") : g.status();
    const std::string spec = o.arch;
    const DimBindings base = src.dims;
    const ArchFlavor flavor = src.flavor;
    src.at_batch = [spec, base, flavor](int64_t b) -> Expected<Graph> {
      DimBindings d = base;
      d["batch"] = b;
      return BuildArchGraph(spec, d, flavor);
    };
    return src;
  }
  src.description = o.path;
  if (IsTorchScript(o)) {
    Expected<TorchScriptAtBatch> t = OpenTorchScript(o, bound.value());
    if (!t.ok()) return t.status();
    src.from_torchscript = true;
    src.at_batch = t.value();
    // Walk once now so that missing shapes and unsupported nodes surface before any sweep.
    Expected<Graph> probe = src.at_batch(1);
    if (!probe.ok()) return probe.status();
    return src;
  }
  Expected<Graph> loaded = LoadOnnxFile(o.path);
  if (!loaded.ok()) return loaded.status();
  auto base = std::make_shared<const Graph>(std::move(loaded.value()));
  src.from_onnx = true;
  const DimBindings user = dims;
  const std::vector<InputShapeFlag> shapes = bound->shapes;
  const std::string batch_dim = o.batch_dim;
  src.at_batch = [base, user, shapes, batch_dim](int64_t b) -> Expected<Graph> {
    return OnnxAtBatch(*base, user, shapes, batch_dim, b, /*strict=*/false);
  };
  return src;
}

Expected<std::string> ScaleArchSpec(const std::string& spec, const std::string& what, double factor) {
  auto colon = spec.find(':');
  std::string family = spec.substr(0, colon);
  std::vector<std::pair<std::string, std::string>> kv;
  if (colon != std::string::npos) {
    std::stringstream ss(spec.substr(colon + 1));
    std::string part;
    while (std::getline(ss, part, ',')) {
      auto eq = part.find('=');
      if (eq == std::string::npos) return InvalidInput("arch spec: '" + part + "' is not KEY=VALUE");
      kv.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    }
  }
  // Default values of the keys we scale, per family, when the spec does not give them.
  static const std::map<std::string, std::map<std::string, double>> kDefaults = {
      {"bert", {{"hidden", 768}, {"ffn", 3072}, {"layers", 12}}},
      {"gpt", {{"hidden", 768}, {"ffn", 3072}, {"layers", 12}}},
      {"vit", {{"hidden", 768}, {"ffn", 3072}, {"layers", 12}}},
      {"resnet", {{"width", 64}}},
      {"mobilenet", {{"width_mult", 1.0}}},
  };
  auto fam = kDefaults.find(family);
  if (fam == kDefaults.end()) return InvalidInput("what-if: unknown arch family '" + family + "'");
  std::vector<std::string> keys;
  if (what == "width") {
    for (const auto& [k, v] : fam->second)
      if (k != "layers") keys.push_back(k);
  } else if (what == "depth") {
    if (!fam->second.count("layers"))
      return Unsupported("what-if depth: family '" + family + "' has no 'layers' key");
    keys = {"layers"};
  } else {
    return InvalidInput("what-if: cannot scale '" + what + "'");
  }
  for (const std::string& key : keys) {
    double v = fam->second.at(key);
    bool found = false;
    for (auto& [k, val] : kv)
      if (k == key) {
        v = std::stod(val);
        found = true;
      }
    double scaled = v * factor;
    std::string text;
    if (key == "width_mult") {
      std::ostringstream os;
      os << scaled;
      text = os.str();
    } else {
      // Keep hidden sizes divisible by 64 so head counts still divide them.
      long long n = key == "layers" ? std::llround(scaled) : std::llround(scaled / 64.0) * 64;
      if (n < 1) n = 1;
      text = std::to_string(n);
    }
    if (found) {
      for (auto& [k, val] : kv)
        if (k == key) val = text;
    } else {
      kv.emplace_back(key, text);
    }
  }
  std::string out = family;
  for (size_t i = 0; i < kv.size(); ++i) out += (i ? "," : ":") + kv[i].first + "=" + kv[i].second;
  return out;
}

}  // namespace ftax
