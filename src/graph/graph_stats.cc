#include "graph/graph_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/shape_inference.h"

namespace ftax {
namespace {

bool IsWeightDType(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kFloat16: case DType::kBFloat16: case DType::kFloat64:
    case DType::kFloat8: case DType::kInt8: case DType::kUInt8: case DType::kComplex64:
      return true;
    default:
      return false;
  }
}

std::string QualifiedType(const Op& op) {
  if (op.domain.empty() || op.domain == "ai.onnx") return op.type;
  if (op.type.rfind(op.domain + "::", 0) == 0) return op.type;
  return op.domain + "::" + op.type;
}

double TensorBytes(const TensorInfo* t) {
  if (!t || !t->has_shape) return 0;
  std::optional<int64_t> n = NumElements(t->shape);
  return n ? static_cast<double>(*n) * DTypeSize(t->dtype) : 0;
}

class StatsWalker {
 public:
  StatsWalker(const StatsOptions& options, GraphStats* out)
      : options_(options),
        registry_(options.registry ? *options.registry : CostRegistry::Default()),
        out_(out) {}

  // Walks one graph; returns the depth (work ops on the longest path) of its deepest op.
  // `outer` holds the depths of enclosing tensors a body may read (nullptr at the top).
  Expected<int64_t> Walk(const Graph& g, int level,
                         const std::unordered_map<std::string, int64_t>* outer = nullptr) {
    if (level > 64) return InvalidInput("subgraphs nested too deep");
    CountWeights(g);
    std::unordered_map<std::string, int64_t> depth;
    auto lookup = [&](const std::string& name) -> int64_t {
      auto it = depth.find(name);
      if (it != depth.end()) return it->second;
      if (outer) {
        auto o = outer->find(name);
        if (o != outer->end()) return o->second;
      }
      return 0;
    };
    int64_t max_depth = 0;
    for (const Op& op : g.ops) {
      int64_t in_depth = 0;
      for (const std::string& in : op.inputs)
        if (!in.empty()) in_depth = std::max(in_depth, lookup(in));
      // Bodies see this graph's depths and the enclosing ones.
      std::unordered_map<std::string, int64_t> visible;
      bool control = !ControlBodies(op).empty();
      if (control) {
        if (outer) visible = *outer;
        for (const auto& [k, v] : depth) visible[k] = v;
      }
      Expected<int64_t> d = CountOp(g, op, level, in_depth, control ? &visible : nullptr);
      if (!d.ok()) return d.status();
      for (const std::string& o : op.outputs)
        if (!o.empty()) depth[o] = d.value();
      max_depth = std::max(max_depth, d.value());
    }
    return max_depth;
  }

  void Finish() {
    for (const auto& [type, s] : by_type_) out_->by_op_type.push_back(s);
    std::sort(out_->by_op_type.begin(), out_->by_op_type.end(),
              [](const OpTypeStats& a, const OpTypeStats& b) {
                if (a.macs != b.macs) return a.macs > b.macs;
                if (a.flops != b.flops) return a.flops > b.flops;
                if (a.count != b.count) return a.count > b.count;
                return a.op_type < b.op_type;
              });
    out_->unknown_op_types.assign(unknown_.begin(), unknown_.end());
    for (const std::string& d : symbols_)
      if (std::find(out_->unbound_dims.begin(), out_->unbound_dims.end(), d) ==
          out_->unbound_dims.end())
        out_->unbound_dims.push_back(d);
    std::sort(out_->unbound_dims.begin(), out_->unbound_dims.end());
    for (const std::string& t : unknown_)
      out_->warnings.push_back("unknown op type '" + t + "' (" +
                               std::to_string(by_type_[t].count) +
                               " nodes): counted as 0 MACs/FLOPs");
    size_t shown = 0;
    for (const std::string& w : uncounted_) {
      if (shown++ < kMaxListed) out_->warnings.push_back(w);
    }
    if (uncounted_.size() > kMaxListed)
      out_->warnings.push_back("... and " + std::to_string(uncounted_.size() - kMaxListed) +
                               " more nodes not counted");
  }

 private:
  static constexpr size_t kMaxListed = 20;

  static std::vector<const Graph*> ControlBodies(const Op& op) {
    std::vector<const Graph*> out;
    for (const auto& [k, a] : op.attrs)
      if (a.graph) out.push_back(a.graph.get());
    return out;
  }

  // Names a graph's ops (and their bodies, recursively) read.
  static void CollectUsed(const Graph& g, std::unordered_set<std::string>* used) {
    for (const Op& op : g.ops) {
      for (const std::string& in : op.inputs) used->insert(in);
      for (const Graph* b : ControlBodies(op)) CollectUsed(*b, used);
    }
    for (const std::string& o : g.outputs) used->insert(o);
  }

  void CountWeights(const Graph& g) {
    std::unordered_set<std::string> used;
    CollectUsed(g, &used);
    for (const auto& [name, t] : g.tensors) {
      if (!t.is_initializer || t.outer_scope || !used.count(name)) continue;
      std::optional<int64_t> n = t.has_shape ? NumElements(t.shape) : std::nullopt;
      if (!n) continue;
      if (IsWeightDType(t.dtype) && !t.is_buffer) out_->totals.params += *n;
      out_->totals.weight_bytes += static_cast<double>(*n) * DTypeSize(t.dtype);
    }
    // Constant nodes holding weights (some exporters write them instead of initializers).
    for (const Op& op : g.ops) {
      if (op.type != "Constant" || !(op.domain.empty() || op.domain == "ai.onnx")) continue;
      const Attribute* a = op.FindAttr("value");
      if (!a || !a->tensor || !IsWeightDType(a->tensor->dtype)) continue;
      std::optional<int64_t> n = NumElements(a->tensor->shape);
      if (!n || *n < 2) continue;  // scalars are not parameters
      out_->totals.params += *n;
      out_->totals.weight_bytes += static_cast<double>(*n) * DTypeSize(a->tensor->dtype);
    }
  }

  void NoteSymbols(const Graph& g, const Op& op) {
    auto scan = [&](const std::string& name) {
      const TensorInfo* t = name.empty() ? nullptr : g.Find(name);
      if (!t) return;
      for (const Dim& d : t->shape)
        if (!d.known() && !d.symbol.empty()) symbols_.insert(d.symbol);
    };
    for (const auto& i : op.inputs) scan(i);
    for (const auto& o : op.outputs) scan(o);
  }

  // Counts a control-flow op's body; returns its depth contribution.
  Expected<int64_t> CountControlFlow(const Graph& g, const Op& op, int level, int64_t in_depth,
                                     const std::unordered_map<std::string, int64_t>* visible) {
    auto branch = [&](const char* key) -> const Graph* {
      const Attribute* a = op.FindAttr(key);
      return a && a->graph ? a->graph.get() : nullptr;
    };
    if (op.type == "If") {
      const Graph* then_g = branch("then_branch");
      const Graph* else_g = branch("else_branch");
      const TensorInfo* cond = op.inputs.empty() ? nullptr : g.Find(op.inputs[0]);
      const Graph* chosen = nullptr;
      if (cond && cond->int_values && cond->int_values->size() == 1) {
        chosen = (*cond->int_values)[0] ? then_g : else_g;
      } else if (then_g && else_g) {
        // Count each branch separately, keep the costlier one.
        GraphStats a, b;
        StatsOptions quiet = options_;
        quiet.per_node = false;
        StatsWalker wa(quiet, &a), wb(quiet, &b);
        Expected<int64_t> da = wa.Walk(*then_g, level + 1);
        Expected<int64_t> db = wb.Walk(*else_g, level + 1);
        if (!da.ok()) return da.status();
        if (!db.ok()) return db.status();
        bool then_costlier = a.totals.flops != b.totals.flops ? a.totals.flops > b.totals.flops
                                                               : a.totals.ops >= b.totals.ops;
        chosen = then_costlier ? then_g : else_g;
        out_->warnings.push_back("If node '" + op.name + "': condition is not a constant; counted "
                                 "the costlier branch (" +
                                 (then_costlier ? "then_branch" : "else_branch") + ")");
      } else {
        chosen = then_g ? then_g : else_g;
      }
      if (!chosen) return int64_t{0};
      return Walk(*chosen, level + 1, visible);
    }
    const Graph* body = branch("body");
    if (!body) return int64_t{0};
    const Attribute* applied = op.FindAttr("ftax_repeat_applied");
    int64_t trips = applied ? applied->i : 1;
    if (!applied)
      out_->warnings.push_back(op.type + " node '" + op.name +
                               "': trip count is not a constant; its body is counted once");
    (void)trips;  // body ops already carry the trip count in their `repeat`
    // A body reads its carried state as its own inputs: its chain starts at the op's inputs.
    Expected<int64_t> d = Walk(*body, level + 1);
    if (!d.ok()) return d.status();
    return in_depth + d.value();
  }

  // Counts one op; returns the depth of its outputs.
  Expected<int64_t> CountOp(const Graph& g, const Op& op, int level, int64_t in_depth,
                            const std::unordered_map<std::string, int64_t>* visible) {
    const std::string type = QualifiedType(op);
    OpTypeStats& ts = by_type_[type];
    ts.op_type = type;
    double rep = op.repeat > 0 ? op.repeat : 1;
    int64_t rep_i = static_cast<int64_t>(std::llround(rep));
    ts.count += rep_i;
    out_->totals.ops += rep_i;

    bool control = (op.domain.empty() || op.domain == "ai.onnx") &&
                   (op.type == "If" || op.type == "Loop" || op.type == "Scan");
    NodeStats ns;
    ns.name = op.name;
    ns.op_type = type;
    ns.scope = op.scope;
    ns.repeat = rep;
    if (!op.outputs.empty()) {
      const TensorInfo* t = g.Find(op.outputs[0]);
      ns.output_shape = t && t->has_shape ? ShapeToString(t->shape) : "?";
    }
    int64_t depth_add = 0;
    Expected<OpCost> cost = registry_.Count(g, op);
    if (cost.ok()) {
      const OpCost& c = cost.value();
      ns.launches_work = c.launches_work && !control;
      ns.macs = c.macs * rep;
      ns.flops = c.flops * rep;
      ns.bytes_read = c.bytes_read * rep;
      ns.bytes_written = c.bytes_written * rep;
      if (ns.launches_work) {
        double act = 0;
        for (const std::string& in : op.inputs) {
          if (in.empty()) continue;
          const TensorInfo* t = g.Find(in);
          if (t && !t->is_initializer) act += TensorBytes(t);
        }
        act += c.bytes_written;
        out_->totals.activation_bytes += act * rep;
      }
    } else {
      const Status& s = cost.status();
      ns.counted = false;
      out_->uncounted_ops += rep_i;
      if (s.code() == ErrorCode::kUnsupported) {
        unknown_.insert(type);
        ns.launches_work = true;  // assume an unknown op does some work
        if (options_.strict) return s;
      } else {
        NoteSymbols(g, op);
        uncounted_.push_back(s.message() + "; counted as 0");
        ns.launches_work = !control;
        if (options_.strict) return s;
      }
    }
    if (ns.launches_work) {
      ts.work_ops += rep_i;
      out_->totals.work_ops += rep_i;
      depth_add = std::max<int64_t>(rep_i, 1);
    }
    ts.macs += ns.macs;
    ts.flops += ns.flops;
    ts.bytes += ns.bytes_read + ns.bytes_written;
    out_->totals.macs += ns.macs;
    out_->totals.flops += ns.flops;
    if (options_.per_node) out_->nodes.push_back(ns);
    int64_t depth_out = in_depth + depth_add;
    if (control) {
      Expected<int64_t> d = CountControlFlow(g, op, level, in_depth, visible);
      if (!d.ok()) return d.status();
      depth_out = std::max(depth_out, d.value());
    }
    return depth_out;
  }

  const StatsOptions& options_;
  const CostRegistry& registry_;
  GraphStats* out_;
  std::map<std::string, OpTypeStats> by_type_;
  std::set<std::string> unknown_;
  std::set<std::string> symbols_;
  std::vector<std::string> uncounted_;
};

TensorSummary Summarize(const Graph& g, const std::string& name) {
  TensorSummary s;
  s.name = name;
  const TensorInfo* t = g.Find(name);
  s.dtype = t ? DTypeName(t->dtype) : "unknown";
  s.shape = t && t->has_shape ? ShapeToString(t->shape) : "?";
  return s;
}

}  // namespace

Status PrepareGraph(Graph* graph, const DimBindings& dims,
                    const std::vector<InputShapeFlag>& input_shapes, bool strict) {
  Status s = BindDims(graph, dims, input_shapes);
  if (!s.ok()) return s;
  ShapeInferenceOptions opt;
  opt.strict = strict;
  return InferShapes(graph, opt);
}

Expected<GraphStats> ComputeStats(const Graph& graph, const StatsOptions& options) {
  GraphStats out;
  out.source = graph.source;
  out.opset = graph.opset;
  for (const auto& i : graph.inputs) out.inputs.push_back(Summarize(graph, i));
  for (const auto& o : graph.outputs) out.outputs.push_back(Summarize(graph, o));
  out.unbound_dims = UnboundInputDims(graph);
  StatsWalker w(options, &out);
  Expected<int64_t> depth = w.Walk(graph, 0);
  if (!depth.ok()) return depth.status();
  out.totals.depth = depth.value();
  // The front end's and shape inference's findings come first.
  std::vector<std::string> warnings = graph.warnings;
  w.Finish();
  warnings.insert(warnings.end(), out.warnings.begin(), out.warnings.end());
  out.warnings = std::move(warnings);
  if (options.strict && !out.unbound_dims.empty()) {
    std::string list;
    for (const auto& d : out.unbound_dims) list += (list.empty() ? "" : ", ") + d;
    return InvalidInput("unbound symbolic dims: " + list);
  }
  return out;
}

}  // namespace ftax
