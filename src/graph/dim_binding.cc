#include "graph/dim_binding.h"

#include <cctype>
#include <charconv>
#include <set>

namespace ftax {
namespace {

// Parses a positive integer; `what` names the flag in messages.
Expected<int64_t> ParsePositive(const std::string& s, const std::string& what) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec == std::errc::invalid_argument || r.ptr != end)
    return InvalidInput(what + ": '" + s + "' is not an integer");
  if (r.ec == std::errc::result_out_of_range) return InvalidInput(what + ": '" + s + "' is too large");
  if (v <= 0) return InvalidInput(what + ": dim must be positive, got " + s);
  return v;
}

void ReplaceSymbols(Graph* g, const DimBindings& dims, std::set<std::string>* used) {
  auto fix = [&](Shape& shape) {
    for (Dim& d : shape) {
      if (d.known() || d.symbol.empty()) continue;
      auto it = dims.find(d.symbol);
      if (it == dims.end()) continue;
      used->insert(d.symbol);
      d = Dim::Known(it->second);
    }
  };
  for (auto& [name, t] : g->tensors) fix(t.shape);
  for (Op& op : g->ops)
    for (auto& [k, a] : op.attrs)
      if (a.graph) ReplaceSymbols(a.graph.get(), dims, used);
}

}  // namespace

Expected<DimFlag> ParseDimFlag(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidInput("--dim '" + text + "': expected NAME=VALUE, e.g. batch=8");
  Expected<int64_t> v = ParsePositive(text.substr(eq + 1), "--dim '" + text + "'");
  if (!v.ok()) return v.status();
  return DimFlag{text.substr(0, eq), v.value()};
}

Expected<InputShapeFlag> ParseInputShapeFlag(const std::string& text) {
  InputShapeFlag f;
  std::string dims = text;
  size_t eq = text.rfind('=');
  if (eq != std::string::npos) {
    f.input = text.substr(0, eq);
    dims = text.substr(eq + 1);
    if (f.input.empty())
      return InvalidInput("--input-shape '" + text + "': empty input name before '='");
  }
  size_t colon = dims.rfind(':');
  if (colon != std::string::npos) {
    std::string dt = dims.substr(colon + 1);
    std::optional<DType> t = ParseDType(dt);
    if (!t) return InvalidInput("--input-shape '" + text + "': unknown dtype '" + dt + "'");
    f.dtype = t;
    dims = dims.substr(0, colon);
  }
  if (dims.empty())
    return InvalidInput("--input-shape '" + text + "': expected [NAME=]D1xD2x..., e.g. 1x3x224x224");
  const char* seps = dims.find(',') != std::string::npos ? "," : "x,";
  bool any_symbol = false;
  std::vector<std::string> symbols;
  size_t start = 0;
  while (true) {
    size_t sep = dims.find_first_of(seps, start);
    std::string part = dims.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
    const bool symbol = !part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_');
    if (symbol) {
      f.dims.push_back(-1);
      symbols.push_back(part);
      any_symbol = true;
    } else {
      Expected<int64_t> v = ParsePositive(part, "--input-shape '" + text + "'");
      if (!v.ok()) return v.status();
      f.dims.push_back(v.value());
      symbols.emplace_back();
    }
    if (sep == std::string::npos) break;
    start = sep + 1;
  }
  if (any_symbol) f.symbols = std::move(symbols);
  return f;
}

Expected<std::vector<InputShapeFlag>> ResolveInputShapes(const std::vector<InputShapeFlag>& flags,
                                                         const DimBindings& dims) {
  std::vector<InputShapeFlag> out = flags;
  for (InputShapeFlag& f : out) {
    for (size_t k = 0; k < f.symbols.size() && k < f.dims.size(); ++k) {
      if (f.symbols[k].empty()) continue;
      auto it = dims.find(f.symbols[k]);
      if (it == dims.end())
        return InvalidInput("--input-shape " + (f.input.empty() ? std::string("(input)") : f.input) +
                            ": symbolic dim '" + f.symbols[k] + "' has no value (give --dim " +
                            f.symbols[k] + "=N)");
      f.dims[k] = it->second;
    }
    f.symbols.clear();
  }
  return out;
}

Expected<DimBindings> CollectDims(const std::vector<DimFlag>& flags) {
  DimBindings out;
  for (const DimFlag& f : flags) {
    auto [it, inserted] = out.emplace(f.name, f.value);
    if (!inserted && it->second != f.value)
      return InvalidInput("--dim " + f.name + " given twice with different values (" +
                          std::to_string(it->second) + " and " + std::to_string(f.value) + ")");
  }
  return out;
}

Status BindDims(Graph* graph, const DimBindings& dims_in, const std::vector<InputShapeFlag>& inputs) {
  DimBindings dims = dims_in;
  std::set<std::string> seen_inputs;
  for (InputShapeFlag f : inputs) {
    std::string name = f.input;
    if (name.empty()) {
      if (graph->inputs.size() != 1) {
        std::string list;
        for (const auto& i : graph->inputs) list += (list.empty() ? "" : ", ") + i;
        return InvalidInput("--input-shape without a NAME=, but the model has " +
                            std::to_string(graph->inputs.size()) + " inputs (" + list +
                            "); write --input-shape NAME=D1xD2...");
      }
      name = graph->inputs[0];
    }
    bool is_input = false;
    for (const auto& i : graph->inputs) is_input |= i == name;
    if (!is_input) {
      std::string list;
      for (const auto& i : graph->inputs) list += (list.empty() ? "" : ", ") + i;
      return InvalidInput("--input-shape: the model has no input named '" + name +
                          "' (inputs: " + list + ")");
    }
    if (!seen_inputs.insert(name).second)
      return InvalidInput("--input-shape: input '" + name + "' given twice");
    TensorInfo& t = graph->Tensor(name);
    if (t.has_shape && t.shape.size() != f.dims.size())
      return InvalidInput("--input-shape " + name + ": rank " + std::to_string(f.dims.size()) +
                          " given, but the model declares rank " +
                          std::to_string(t.shape.size()) + " (" + ShapeToString(t.shape) + ")");
    Shape shape;
    for (size_t k = 0; k < f.dims.size(); ++k) {
      if (k < f.symbols.size() && !f.symbols[k].empty()) {  // a symbol of the user's
        auto it = dims.find(f.symbols[k]);
        if (it == dims.end()) {
          shape.push_back(Dim::Symbol(f.symbols[k]));
          continue;
        }
        f.dims[k] = it->second;
      }
      if (t.has_shape && !t.shape[k].known() && !t.shape[k].symbol.empty()) {
        const std::string& sym = t.shape[k].symbol;
        auto [it, inserted] = dims.emplace(sym, f.dims[k]);
        if (!inserted && it->second != f.dims[k])
          return InvalidInput("--input-shape " + name + ": dim " + std::to_string(k) + " ('" +
                              sym + "') is " + std::to_string(f.dims[k]) +
                              ", but '" + sym + "' is bound to " + std::to_string(it->second));
      } else if (t.has_shape && t.shape[k].known() && t.shape[k].value != f.dims[k]) {
        graph->warnings.push_back("--input-shape " + name + ": dim " + std::to_string(k) +
                                  " changed from " + std::to_string(t.shape[k].value) + " to " +
                                  std::to_string(f.dims[k]));
      }
      shape.push_back(Dim::Known(f.dims[k]));
    }
    t.shape = shape;
    t.has_shape = true;
  }
  std::set<std::string> used;
  ReplaceSymbols(graph, dims, &used);
  for (const auto& [name, v] : dims_in)
    if (!used.count(name))
      graph->warnings.push_back("--dim " + name + ": the model has no dim named '" + name + "'");
  return Status::Ok();
}

std::vector<std::string> UnboundInputDims(const Graph& graph) {
  std::set<std::string> out;
  for (const std::string& in : graph.inputs) {
    const TensorInfo* t = graph.Find(in);
    if (!t) continue;
    for (const Dim& d : t->shape)
      if (!d.known() && !d.symbol.empty()) out.insert(d.symbol);
  }
  return {out.begin(), out.end()};
}

}  // namespace ftax
