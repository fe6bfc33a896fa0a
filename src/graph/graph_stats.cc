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

// Saturating int64 arithmetic: a count that does not fit stops at the largest int64 instead
// of wrapping to a negative number.
constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMaxCount : std::numeric_limits<int64_t>::min();
  return r;
}

// A repeat count (a product of trip counts, a double) as an int64 count, saturating.
int64_t CountOf(double rep) {
  if (!(rep > 0)) return 0;
  if (rep >= 9.2e18) return kMaxCount;
  return static_cast<int64_t>(std::llround(rep));
}

// Depths of the tensors of one graph, with the enclosing graphs' behind it: a body reads
// the tensors of every graph around it. A chain of pointers, so nothing is copied per op.
struct DepthScope {
  const std::unordered_map<std::string, int64_t>* depth;
  const DepthScope* parent;
  int64_t Lookup(const std::string& name) const {
    for (const DepthScope* s = this; s; s = s->parent) {
      auto it = s->depth->find(name);
      if (it != s->depth->end()) return it->second;
    }
    return 0;
  }
};

class StatsWalker {
 public:
  StatsWalker(const StatsOptions& options, GraphStats* out)
      : options_(options),
        registry_(options.registry ? *options.registry : CostRegistry::Default()),
        out_(out) {}

  // Walks one graph; returns the depth (work ops on the longest path) of its deepest op.
  // `outer` holds the depths of enclosing tensors a body may read (nullptr at the top).
  // Every graph and body is walked exactly once, so the work is linear in the model's size.
  Expected<int64_t> Walk(const Graph& g, int level, const DepthScope* outer = nullptr) {
    if (level > 64) return InvalidInput("subgraphs nested too deep");
    CountWeights(g);
    std::unordered_map<std::string, int64_t> depth;
    const DepthScope scope{&depth, outer};
    int64_t max_depth = 0;
    for (const Op& op : g.ops) {
      int64_t in_depth = 0;
      for (const std::string& in : op.inputs)
        if (!in.empty()) in_depth = std::max(in_depth, scope.Lookup(in));
      Expected<int64_t> d = CountOp(g, op, level, in_depth, &scope);
      if (!d.ok()) return d.status();
      for (const std::string& o : op.outputs)
        if (!o.empty()) depth[o] = d.value();
      max_depth = std::max(max_depth, d.value());
    }
    return max_depth;
  }

  // Adds everything `other` counted (a branch walked on its own) to this walker.
  void Merge(StatsWalker& other) {
    const StatsTotals& t = other.out_->totals;
    StatsTotals& m = out_->totals;
    m.macs += t.macs;
    m.flops += t.flops;
    m.params = SatAdd(m.params, t.params);
    m.ops = SatAdd(m.ops, t.ops);
    m.work_ops = SatAdd(m.work_ops, t.work_ops);
    m.weight_bytes += t.weight_bytes;
    m.activation_bytes += t.activation_bytes;
    out_->uncounted_ops = SatAdd(out_->uncounted_ops, other.out_->uncounted_ops);
    for (NodeStats& n : other.out_->nodes) out_->nodes.push_back(std::move(n));
    for (std::string& w : other.out_->warnings) out_->warnings.push_back(std::move(w));
    for (auto& [type, s] : other.by_type_) {
      OpTypeStats& ts = by_type_[type];
      ts.op_type = type;
      ts.count = SatAdd(ts.count, s.count);
      ts.work_ops = SatAdd(ts.work_ops, s.work_ops);
      ts.macs += s.macs;
      ts.flops += s.flops;
      ts.bytes += s.bytes;
    }
    unknown_.insert(other.unknown_.begin(), other.unknown_.end());
    symbols_.insert(other.symbols_.begin(), other.symbols_.end());
    uncounted_.insert(uncounted_.end(), other.uncounted_.begin(), other.uncounted_.end());
    saturated_ = saturated_ || other.saturated_;
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
    const StatsTotals& t = out_->totals;
    saturated_ = saturated_ || t.ops == kMaxCount || t.work_ops == kMaxCount || t.params == kMaxCount;
    if (saturated_)
      out_->warnings.push_back("counts exceed the int64 range (Loop trip counts multiply); "
                               "they stop at " + std::to_string(kMaxCount));
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
      if (IsWeightDType(t.dtype) && !t.is_buffer) out_->totals.params = SatAdd(out_->totals.params, *n);
      out_->totals.weight_bytes += static_cast<double>(*n) * DTypeSize(t.dtype);
    }
    // Constant nodes holding weights (some exporters write them instead of initializers).
    for (const Op& op : g.ops) {
      if (op.type != "Constant" || !(op.domain.empty() || op.domain == "ai.onnx")) continue;
      const Attribute* a = op.FindAttr("value");
      if (!a || !a->tensor || !IsWeightDType(a->tensor->dtype)) continue;
      std::optional<int64_t> n = NumElements(a->tensor->shape);
      if (!n || *n < 2) continue;  // scalars are not parameters
      out_->totals.params = SatAdd(out_->totals.params, *n);
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
                                     const DepthScope* visible) {
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
        // Each branch is walked once, on its own; the costlier one is merged in.
        GraphStats a, b;
        StatsWalker wa(options_, &a), wb(options_, &b);
        Expected<int64_t> da = wa.Walk(*then_g, level + 1, visible);
        if (!da.ok()) return da.status();
        Expected<int64_t> db = wb.Walk(*else_g, level + 1, visible);
        if (!db.ok()) return db.status();
        const bool then_costlier = a.totals.flops != b.totals.flops ? a.totals.flops > b.totals.flops
                                                                     : a.totals.ops >= b.totals.ops;
        out_->warnings.push_back("If node '" + op.name + "': condition is not a constant; counted "
                                 "the costlier branch (" +
                                 (then_costlier ? "then_branch" : "else_branch") + ")");
        Merge(then_costlier ? wa : wb);
        return then_costlier ? da.value() : db.value();
      } else {
        chosen = then_g ? then_g : else_g;
      }
      if (!chosen) return int64_t{0};
      return Walk(*chosen, level + 1, visible);
    }
    const Graph* body = branch("body");
    if (!body) return int64_t{0};
    const Attribute* applied = op.FindAttr("ftax_repeat_applied");
    if (!applied)
      out_->warnings.push_back(op.type + " node '" + op.name +
                               "': trip count is not a constant; its body is counted once");
    // Body ops already carry the trip count in their `repeat` (0 trips: counted as 0).
    // A body reads its carried state as its own inputs: its chain starts at the op's inputs.
    Expected<int64_t> d = Walk(*body, level + 1);
    if (!d.ok()) return d.status();
    return SatAdd(in_depth, d.value());
  }

  // Counts one op; returns the depth of its outputs.
  Expected<int64_t> CountOp(const Graph& g, const Op& op, int level, int64_t in_depth,
                            const DepthScope* visible) {
    const std::string type = QualifiedType(op);
    OpTypeStats& ts = by_type_[type];
    ts.op_type = type;
    // repeat: 1, a product of trip counts, or 0 inside a Loop that runs no trip.
    const double rep = op.repeat >= 0 && std::isfinite(op.repeat) ? op.repeat : 1;
    const int64_t rep_i = CountOf(rep);
    if (rep >= 9.2e18) saturated_ = true;
    ts.count = SatAdd(ts.count, rep_i);
    out_->totals.ops = SatAdd(out_->totals.ops, rep_i);

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
      out_->uncounted_ops = SatAdd(out_->uncounted_ops, rep_i);
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
      ts.work_ops = SatAdd(ts.work_ops, rep_i);
      out_->totals.work_ops = SatAdd(out_->totals.work_ops, rep_i);
      depth_add = rep_i;
    }
    ts.macs += ns.macs;
    ts.flops += ns.flops;
    ts.bytes += ns.bytes_read + ns.bytes_written;
    out_->totals.macs += ns.macs;
    out_->totals.flops += ns.flops;
    if (options_.per_node) out_->nodes.push_back(ns);
    int64_t depth_out = SatAdd(in_depth, depth_add);
    if (control) {
      const bool has_body = !ControlBodies(op).empty();
      Expected<int64_t> d = CountControlFlow(g, op, level, in_depth, has_body ? visible : nullptr);
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
  bool saturated_ = false;
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
