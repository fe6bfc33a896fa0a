#include "graph/shape_inference.h"

#include "graph/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace ftax {
namespace {

// Scope chain for subgraphs: a body sees the tensors of every enclosing graph.
struct Scope {
  Graph* graph;
  const Scope* parent;
  const TensorInfo* Find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (const TensorInfo* t = s->graph->Find(name)) return t;
    return nullptr;
  }
};

bool Concrete(const TensorInfo& t) { return t.has_shape && NumElements(t.shape).has_value(); }

// Checked int64 arithmetic: false on overflow (the caller refuses or leaves the dim unknown).
bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool CheckedSub(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }
bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// A double as an int64 when it is finite and in range (a cast of anything else is undefined).
std::optional<int64_t> ToInt64(double v) {
  if (!std::isfinite(v) || v < -9.2e18 || v > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(v);
}

// The largest rank ftax accepts for a tensor whose rank comes from a shape input's length.
constexpr int64_t kMaxRank = 1024;

// Checked arithmetic on dims: an overflow gives an unknown dim instead of a wrong one.
Dim MulDim(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) {
    int64_t r;
    if (!CheckedMul(a.value, b.value, &r) || r < 0) return Dim{};
    return Dim::Known(r);
  }
  if (a.known() && a.value == 1) return b;
  if (b.known() && b.value == 1) return a;
  return Dim{};
}

// Whether `declared` equals the concrete `inferred` except for dims where it says 1 and the
// inference a larger value.
bool SpecializedToOne(const Shape& declared, const Shape& inferred) {
  if (declared.size() != inferred.size() || !NumElements(inferred)) return false;
  bool differs = false;
  for (size_t k = 0; k < declared.size(); ++k) {
    if (declared[k] == inferred[k]) continue;
    if (declared[k].value != 1 || inferred[k].value <= 1) return false;
    differs = true;
  }
  return differs;
}

struct InferCtx {
  Graph& g;
  Op& op;
  const Scope& scope;
  int64_t opset;
  const ShapeInferenceOptions& options;
  // Set by Bad(): the node itself is invalid (an attribute or input that no runtime accepts),
  // which is always reported, not only when an output shape stays unknown.
  bool malformed = false;

  Status Bad(const std::string& m) {
    malformed = true;
    return InvalidInput(m);
  }

  const TensorInfo* In(size_t i) const {
    if (i >= op.inputs.size() || op.inputs[i].empty()) return nullptr;
    return scope.Find(op.inputs[i]);
  }
  bool Has(size_t i) const {
    const TensorInfo* t = In(i);
    return t && t->has_shape;
  }
  size_t NumIn() const { return op.inputs.size(); }
  const Shape& S(size_t i) const { return In(i)->shape; }
  DType T(size_t i) const {
    const TensorInfo* t = In(i);
    return t ? t->dtype : DType::kUnknown;
  }
  const std::vector<int64_t>* V(size_t i) const {
    const TensorInfo* t = In(i);
    return t && t->int_values ? &*t->int_values : nullptr;
  }
  const std::vector<double>* F(size_t i) const {
    const TensorInfo* t = In(i);
    if (!t) return nullptr;
    if (t->float_values) return &*t->float_values;
    return nullptr;
  }
  TensorInfo* Out(size_t i) {
    if (i >= op.outputs.size() || op.outputs[i].empty()) return nullptr;
    return &g.Tensor(op.outputs[i]);
  }
  // Findings that are not errors, as (kind, message): the walk reports the first of each kind
  // with the count of the others.
  std::vector<std::pair<std::string, std::string>> notes = {};

  // Sets an output's dtype and shape. A declared concrete shape is kept; a declared dim is
  // kept where the inferred one is unknown. One exception: a declared concrete shape that
  // differs from a concrete inferred one only where it says 1 is a specialization to the batch
  // of 1 the exporter traced (the dynamo exporter declares ViT's first GELU output 1x197x3072
  // in a file whose batch is symbolic): bound to a larger batch, the inferred shape is used.
  void Set(size_t i, DType dtype, const Shape& shape) {
    TensorInfo* t = Out(i);
    if (!t) return;
    if (t->dtype == DType::kUnknown) t->dtype = dtype;
    if (Concrete(*t)) {
      if (SpecializedToOne(t->shape, shape)) {
        notes.emplace_back("respecialized",
                           "node '" + op.name + "' (" + op.type + "): the file declares '" + t->name + "' " +
                               ShapeToString(t->shape) + ", its inputs give " + ShapeToString(shape) +
                               " (a dim the exporter fixed to 1): the inferred shape is used");
        t->shape = shape;
      }
      return;
    }
    if (t->has_shape && t->shape.size() == shape.size()) {
      for (size_t k = 0; k < shape.size(); ++k)
        if (shape[k].known() || (!t->shape[k].known() && !shape[k].symbol.empty()))
          t->shape[k] = shape[k];
    } else {
      t->shape = shape;
    }
    t->has_shape = true;
  }
  void SetValues(size_t i, std::vector<int64_t> v) {
    TensorInfo* t = Out(i);
    if (t && static_cast<int64_t>(v.size()) <= options.max_folded_elements)
      t->int_values = std::move(v);
  }
  void SetFloats(size_t i, std::vector<double> v) {
    TensorInfo* t = Out(i);
    if (t && static_cast<int64_t>(v.size()) <= options.max_folded_elements)
      t->float_values = std::move(v);
  }
  Status Need(size_t i) const {
    if (Has(i)) return Status::Ok();
    if (i >= op.inputs.size() || op.inputs[i].empty())
      return InvalidInput("input #" + std::to_string(i) + " is missing");
    return InvalidInput("input '" + op.inputs[i] + "' has no known shape");
  }
};

using InferFn = std::function<Status(InferCtx&)>;

#define NEED(i)                      \
  do {                               \
    Status need_ = c.Need(i);        \
    if (!need_.ok()) return need_;   \
  } while (0)

int64_t NormAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

Status BadAxis(int64_t axis, size_t rank) {
  return InvalidInput("axis " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(rank));
}

// ---- shape helpers --------------------------------------------------------------------------

Expected<Shape> Broadcast(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    const Dim* da = k < r - a.size() ? nullptr : &a[k - (r - a.size())];
    const Dim* db = k < r - b.size() ? nullptr : &b[k - (r - b.size())];
    if (!da) { out[k] = *db; continue; }
    if (!db) { out[k] = *da; continue; }
    if (da->known() && db->known()) {
      if (da->value == db->value || db->value == 1) out[k] = *da;
      else if (da->value == 1) out[k] = *db;
      else
        return InvalidInput("cannot broadcast " + ShapeToString(a) + " with " +
                            ShapeToString(b));
    } else if (da->known()) {
      out[k] = da->value == 1 ? *db : *da;
    } else if (db->known()) {
      out[k] = db->value == 1 ? *da : *db;
    } else if (*da == *db) {
      out[k] = *da;
    } else {
      out[k] = Dim{};
    }
  }
  return out;
}

Shape ShapeFromValues(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t x : v) s.push_back(x >= 0 ? Dim::Known(x) : Dim{});
  return s;
}

// Ceiling of a / b for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : a / b + (a % b != 0 ? 1 : 0); }

// Output size of a sliding window (Conv, pooling) along one spatial dim; stride, dilation and
// kernel are > 0 and pads >= 0 (checked by InferWindow). Errors: a window larger than the
// padded input, and sizes that overflow int64.
Expected<Dim> WindowOut(const Dim& in, int64_t k, int64_t stride, int64_t dil, int64_t pad_total,
                        const std::string& auto_pad, bool ceil_mode) {
  int64_t eff;
  if (!CheckedMul(dil, k - 1, &eff) || !CheckedAdd(eff, 1, &eff))
    return InvalidInput("dilated kernel size overflows");
  if (!in.known()) return Dim{};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return Dim::Known(CeilDiv(in.value, stride));
  int64_t padded = in.value;
  if (auto_pad != "VALID" && !CheckedAdd(in.value, pad_total, &padded))
    return InvalidInput("padded input size overflows");
  if (padded < eff)
    return InvalidInput("kernel (" + std::to_string(eff) + " with dilation) is larger than the " +
                        (auto_pad == "VALID" ? "input (" : "padded input (") + std::to_string(padded) + ")");
  const int64_t num = padded - eff;
  if (auto_pad == "VALID") return Dim::Known(num / stride + 1);
  int64_t out = (ceil_mode ? CeilDiv(num, stride) : num / stride) + 1;
  // A window that starts in the right padding is dropped (ceil_mode, as in PyTorch/ORT):
  // (out - 1) * stride >= in + pad_total / 2, without the product.
  if (ceil_mode && (out - 1) > (in.value + pad_total / 2 - 1) / stride) --out;
  return Dim::Known(out);
}

Status InferWindow(InferCtx& c, const Shape& x, int64_t out_channels, const std::vector<int64_t>& kernel,
                   bool ceil_mode, Shape* out) {
  size_t nsp = x.size() - 2;
  if (kernel.size() != nsp)
    return c.Bad("kernel has " + std::to_string(kernel.size()) + " dims, input has " +
                 std::to_string(nsp) + " spatial dims");
  std::vector<int64_t> strides = c.op.IntsAttr("strides");
  std::vector<int64_t> dil = c.op.IntsAttr("dilations");
  std::vector<int64_t> pads = c.op.IntsAttr("pads");
  std::string auto_pad = c.op.StringAttr("auto_pad", "NOTSET");
  if (!strides.empty() && strides.size() != nsp)
    return c.Bad("strides has " + std::to_string(strides.size()) + " values for " + std::to_string(nsp) + " spatial dims");
  if (!dil.empty() && dil.size() != nsp)
    return c.Bad("dilations has " + std::to_string(dil.size()) + " values for " + std::to_string(nsp) + " spatial dims");
  if (!pads.empty() && pads.size() != 2 * nsp)
    return c.Bad("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(nsp) + " spatial dims (needs " +
                 std::to_string(2 * nsp) + ")");
  for (int64_t k : kernel)
    if (k <= 0) return c.Bad("kernel_shape " + std::to_string(k) + " must be > 0");
  for (int64_t v : strides)
    if (v <= 0) return c.Bad("stride " + std::to_string(v) + " must be > 0");
  for (int64_t v : dil)
    if (v <= 0) return c.Bad("dilation " + std::to_string(v) + " must be > 0");
  for (int64_t v : pads)
    if (v < 0) return c.Bad("pad " + std::to_string(v) + " must be >= 0");
  out->clear();
  out->push_back(x[0]);
  out->push_back(out_channels >= 0 ? Dim::Known(out_channels) : x[1]);
  for (size_t k = 0; k < nsp; ++k) {
    int64_t s = k < strides.size() ? strides[k] : 1;
    int64_t d = k < dil.size() ? dil[k] : 1;
    int64_t p = 0;
    if (k < pads.size() && !CheckedAdd(pads[k], pads[k + nsp], &p)) return c.Bad("pads overflow");
    Expected<Dim> o = WindowOut(x[k + 2], kernel[k], s, d, p, auto_pad, ceil_mode);
    if (!o.ok()) return c.Bad("spatial dim " + std::to_string(k) + ": " + o.status().message());
    out->push_back(o.value());
  }
  return Status::Ok();
}

// ---- entries ---------------------------------------------------------------------------------

DType OnnxDType(int64_t t);
DType OnnxDTypeOr(int64_t t) { return OnnxDType(t); }

Status SameAsInput(InferCtx& c) {
  NEED(0);
  c.Set(0, c.T(0), c.S(0));
  if (const std::vector<int64_t>* v = c.V(0)) {  // fold the few unary ops shapes use
    std::vector<int64_t> r = *v;
    if (c.op.type != "Neg" && c.op.type != "Abs" && c.op.type != "Identity") return Status::Ok();
    for (auto& x : r) {
      if (c.op.type == "Identity" || (c.op.type == "Abs" && x >= 0)) continue;
      if (x == std::numeric_limits<int64_t>::min()) return Status::Ok();  // -x overflows: not folded
      x = -x;
    }
    c.SetValues(0, r);
  }
  if (c.op.type == "Identity" && c.F(0)) c.SetFloats(0, *c.F(0));
  return Status::Ok();
}

// RNN, GRU, LSTM: Y [seq, dirs, batch, hidden] (layout 0) and Y_h / Y_c [dirs, batch, hidden].
Status Recurrent(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &x = c.S(0), &w = c.S(1);
  if (x.size() != 3 || w.size() != 3) return InvalidInput("X and W must be 3-D");
  bool batch_first = c.op.IntAttr("layout", 0) == 1;
  Dim seq = x[batch_first ? 1 : 0], batch = x[batch_first ? 0 : 1];
  Dim dirs = w[0];
  int64_t h = c.op.IntAttr("hidden_size", -1);
  Dim hidden = h > 0 ? Dim::Known(h) : (c.Has(2) && c.S(2).size() == 3 ? c.S(2)[2] : Dim{});
  if (batch_first) {
    c.Set(0, c.T(0), {batch, seq, dirs, hidden});
    for (size_t i = 1; i < 3; ++i) c.Set(i, c.T(0), {batch, dirs, hidden});
  } else {
    c.Set(0, c.T(0), {seq, dirs, batch, hidden});
    for (size_t i = 1; i < 3; ++i) c.Set(i, c.T(0), {dirs, batch, hidden});
  }
  return Status::Ok();
}

// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss: loss is the target's shape for
// reduction "none", else a scalar; the optional log_prob output is the input's shape.
Status Loss(InferCtx& c) {
  NEED(0); NEED(1);
  std::string red = c.op.StringAttr("reduction", "mean");
  c.Set(0, c.T(0), red == "none" ? c.S(1) : Shape{});
  if (c.op.outputs.size() > 1) c.Set(1, c.T(0), c.S(0));
  return Status::Ok();
}

Status Window(InferCtx& c) {
  // HannWindow / HammingWindow / BlackmanWindow: a 1-D tensor of `size` elements.
  DType dt = OnnxDTypeOr(c.op.IntAttr("output_datatype", 1));
  if (c.V(0) && c.V(0)->size() == 1) c.Set(0, dt, {Dim::Known((*c.V(0))[0])});
  else c.Set(0, dt, {Dim{}});
  return Status::Ok();
}

Status SameAsInputBool(InferCtx& c) {
  NEED(0);
  c.Set(0, DType::kBool, c.S(0));
  return Status::Ok();
}

int64_t FoldBinary(const std::string& type, int64_t a, int64_t b, bool* ok) {
  *ok = true;
  int64_t r = 0;
  // An overflow is not folded (the value stays unknown), never wrapped.
  if (type == "Add") { *ok = CheckedAdd(a, b, &r); return r; }
  if (type == "Sub") { *ok = CheckedSub(a, b, &r); return r; }
  if (type == "Mul") { *ok = CheckedMul(a, b, &r); return r; }
  if (type == "Div" || type == "Mod") {
    if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) { *ok = false; return 0; }
    return type == "Div" ? a / b : a % b;
  }
  if (type == "Max") return std::max(a, b);
  if (type == "Min") return std::min(a, b);
  if (type == "Equal") return a == b;
  if (type == "Less") return a < b;
  if (type == "Greater") return a > b;
  *ok = false;
  return 0;
}

Status Elementwise(InferCtx& c, bool to_bool) {
  Shape s;
  DType dt = DType::kUnknown;
  bool first = true;
  for (size_t i = 0; i < c.NumIn(); ++i) {
    if (c.op.inputs[i].empty()) continue;
    NEED(i);
    if (first) {
      s = c.S(i);
      dt = c.T(i);
      first = false;
      continue;
    }
    Expected<Shape> b = Broadcast(s, c.S(i));
    if (!b.ok()) return b.status();
    s = b.value();
    if (dt == DType::kUnknown) dt = c.T(i);
  }
  if (first) return InvalidInput("no inputs");
  c.Set(0, to_bool ? DType::kBool : dt, s);
  // Fold small int arithmetic (shape computations).
  if (c.NumIn() == 2 && c.V(0) && c.V(1)) {
    const auto& a = *c.V(0);
    const auto& b = *c.V(1);
    size_t n = std::max(a.size(), b.size());
    if ((a.size() == n || a.size() == 1) && (b.size() == n || b.size() == 1) && n > 0) {
      std::vector<int64_t> v(n);
      for (size_t k = 0; k < n; ++k) {
        bool ok;
        v[k] = FoldBinary(c.op.type, a[a.size() == 1 ? 0 : k], b[b.size() == 1 ? 0 : k], &ok);
        if (!ok) return Status::Ok();
      }
      c.SetValues(0, std::move(v));
    }
  }
  return Status::Ok();
}

Status Where(InferCtx& c) {
  NEED(0); NEED(1); NEED(2);
  Expected<Shape> s = Broadcast(c.S(0), c.S(1));
  if (!s.ok()) return s.status();
  Expected<Shape> s2 = Broadcast(s.value(), c.S(2));
  if (!s2.ok()) return s2.status();
  c.Set(0, c.T(1), s2.value());
  if (c.V(0) && c.V(1) && c.V(2)) {
    const auto &cond = *c.V(0), &x = *c.V(1), &y = *c.V(2);
    size_t n = std::max({cond.size(), x.size(), y.size()});
    auto at = [](const std::vector<int64_t>& v, size_t k) { return v[v.size() == 1 ? 0 : k]; };
    if ((cond.size() == n || cond.size() == 1) && (x.size() == n || x.size() == 1) &&
        (y.size() == n || y.size() == 1)) {
      std::vector<int64_t> v(n);
      for (size_t k = 0; k < n; ++k) v[k] = at(cond, k) ? at(x, k) : at(y, k);
      c.SetValues(0, v);
    }
  }
  return Status::Ok();
}

Status MatMul(InferCtx& c) {
  NEED(0); NEED(1);
  Shape a = c.S(0), b = c.S(1);
  if (a.empty() || b.empty()) return InvalidInput("MatMul of a scalar");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Dim::Known(1));
  if (b1) b.push_back(Dim::Known(1));
  const Dim& ka = a[a.size() - 1];
  const Dim& kb = b[b.size() - 2];
  if (ka.known() && kb.known() && ka.value != kb.value)
    return InvalidInput("inner dims differ: " + ShapeToString(c.S(0)) + " x " +
                        ShapeToString(c.S(1)));
  Shape ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Expected<Shape> batch = Broadcast(ba, bb);
  if (!batch.ok()) return batch.status();
  Shape out = batch.value();
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b[b.size() - 1]);
  DType dt = c.T(0);
  if (c.op.type == "MatMulInteger") dt = DType::kInt32;
  c.Set(0, dt, out);
  return Status::Ok();
}

Status Gemm(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &a = c.S(0), &b = c.S(1);
  if (a.size() != 2 || b.size() != 2) return InvalidInput("Gemm inputs must be 2-D");
  bool ta = c.op.IntAttr("transA", 0) != 0, tb = c.op.IntAttr("transB", 0) != 0;
  c.Set(0, c.T(0), {ta ? a[1] : a[0], tb ? b[0] : b[1]});
  return Status::Ok();
}

Status Conv(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &x = c.S(0), &w = c.S(1);
  if (x.size() < 3 || w.size() != x.size())
    return InvalidInput("input " + ShapeToString(x) + " and weight " + ShapeToString(w) +
                        " ranks do not match");
  const int64_t group = c.op.IntAttr("group", 1);
  if (group < 1) return c.Bad("group " + std::to_string(group) + " must be >= 1");
  int64_t c_in;
  if (w[1].known() && x[1].known() && (!CheckedMul(w[1].value, group, &c_in) || c_in != x[1].value))
    return c.Bad("input has " + std::to_string(x[1].value) + " channels; weight " + ShapeToString(w) +
                 " with group " + std::to_string(group) + " needs " + std::to_string(w[1].value) + " x " +
                 std::to_string(group));
  if (w[0].known() && w[0].value % group != 0)
    return c.Bad(std::to_string(w[0].value) + " output channels do not split into group " + std::to_string(group));
  std::vector<int64_t> kernel = c.op.IntsAttr("kernel_shape");
  if (kernel.empty()) {
    for (size_t k = 2; k < w.size(); ++k) {
      if (!w[k].known()) return InvalidInput("weight has unknown kernel dims");
      kernel.push_back(w[k].value);
    }
  } else if (kernel.size() == w.size() - 2) {
    for (size_t k = 2; k < w.size(); ++k)
      if (w[k].known() && w[k].value != kernel[k - 2])
        return c.Bad("kernel_shape differs from the weight " + ShapeToString(w));
  }
  Shape out;
  Status s = InferWindow(c, x, w[0].known() ? w[0].value : -1, kernel, false, &out);
  if (!s.ok()) return s;
  if (!w[0].known()) out[1] = w[0];
  DType dt = c.op.type == "ConvInteger" ? DType::kInt32 : c.T(0);
  c.Set(0, dt, out);
  return Status::Ok();
}

Status ConvTranspose(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &x = c.S(0), &w = c.S(1);
  if (x.size() < 3 || w.size() != x.size()) return c.Bad("input/weight ranks differ");
  size_t nsp = x.size() - 2;
  int64_t group = c.op.IntAttr("group", 1);
  if (group < 1) return c.Bad("group " + std::to_string(group) + " must be >= 1");
  Shape out = {x[0], MulDim(w[1], Dim::Known(group))};
  std::vector<int64_t> out_shape = c.op.IntsAttr("output_shape");
  std::vector<int64_t> kernel = c.op.IntsAttr("kernel_shape");
  std::vector<int64_t> strides = c.op.IntsAttr("strides");
  std::vector<int64_t> dil = c.op.IntsAttr("dilations");
  std::vector<int64_t> pads = c.op.IntsAttr("pads");
  std::vector<int64_t> opad = c.op.IntsAttr("output_padding");
  std::string auto_pad = c.op.StringAttr("auto_pad", "NOTSET");
  for (const auto* v : {&strides, &dil, &kernel})
    for (int64_t e : *v)
      if (e <= 0) return c.Bad("strides, dilations and kernel_shape must be > 0, got " + std::to_string(e));
  for (const auto* v : {&pads, &opad, &out_shape})
    for (int64_t e : *v)
      if (e < 0) return c.Bad("pads, output_padding and output_shape must be >= 0, got " + std::to_string(e));
  for (size_t k = 0; k < nsp; ++k) {
    if (out_shape.size() == nsp) {
      out.push_back(Dim::Known(out_shape[k]));
      continue;
    }
    const Dim& in = x[k + 2];
    int64_t kk = k < kernel.size() ? kernel[k] : (w[k + 2].known() ? w[k + 2].value : -1);
    if (!in.known() || kk < 0) {
      out.push_back(Dim{});
      continue;
    }
    int64_t s = k < strides.size() ? strides[k] : 1;
    int64_t d = k < dil.size() ? dil[k] : 1;
    int64_t op_ = k < opad.size() ? opad[k] : 0;
    int64_t v;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      if (!CheckedMul(in.value, s, &v)) return c.Bad("output size overflows");
      out.push_back(Dim::Known(v));
      continue;
    }
    int64_t p = (k < pads.size() ? pads[k] : 0), p2 = (k + nsp < pads.size() ? pads[k + nsp] : 0), eff;
    // s * (in - 1) + output_padding + ((kernel - 1) * dilation + 1) - pads
    if (!CheckedMul(s, std::max<int64_t>(in.value - 1, 0), &v) || !CheckedAdd(v, op_, &v) ||
        !CheckedMul(kk - 1, d, &eff) || !CheckedAdd(v, eff + 1, &v) || !CheckedSub(v, p, &v) ||
        !CheckedSub(v, p2, &v))
      return c.Bad("output size overflows");
    if (v < 0) return c.Bad("pads are larger than the output (" + std::to_string(v) + ")");
    out.push_back(Dim::Known(v));
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status Pool(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  if (x.size() < 3) return InvalidInput("pooling needs N x C x spatial input");
  std::vector<int64_t> kernel = c.op.IntsAttr("kernel_shape");
  if (kernel.empty()) return InvalidInput("attribute 'kernel_shape' is missing");
  Shape out;
  Status s = InferWindow(c, x, -1, kernel, c.op.IntAttr("ceil_mode", 0) != 0, &out);
  if (!s.ok()) return s;
  c.Set(0, c.T(0), out);
  if (c.op.outputs.size() > 1) c.Set(1, DType::kInt64, out);
  return Status::Ok();
}

Status GlobalPool(InferCtx& c) {
  NEED(0);
  Shape out = c.S(0);
  for (size_t k = 2; k < out.size(); ++k) out[k] = Dim::Known(1);
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status Flatten(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  int64_t axis = NormAxis(c.op.IntAttr("axis", 1), x.size());
  if (axis < 0 || axis > static_cast<int64_t>(x.size())) return BadAxis(axis, x.size());
  Dim a = Dim::Known(1), b = Dim::Known(1);
  for (int64_t k = 0; k < static_cast<int64_t>(x.size()); ++k)
    (k < axis ? a : b) = MulDim(k < axis ? a : b, x[k]);
  c.Set(0, c.T(0), {a, b});
  return Status::Ok();
}

Status Reshape(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  std::vector<int64_t> target;
  if (c.opset < 5 && c.op.FindAttr("shape")) {
    target = c.op.IntsAttr("shape");
  } else if (c.V(1)) {
    target = *c.V(1);
  } else {
    const TensorInfo* t = c.In(1);
    if (t && t->has_shape && t->shape.size() == 1 && t->shape[0].known()) {
      if (t->shape[0].value > kMaxRank)
        return c.Bad("target shape has " + std::to_string(t->shape[0].value) + " dims (at most " +
                     std::to_string(kMaxRank) + ")");
      c.Set(0, c.T(0), Shape(t->shape[0].value, Dim{}));  // rank known, dims computed at run time
      return Status::Ok();
    }
    return InvalidInput("target shape is not a constant");
  }
  bool allowzero = c.op.IntAttr("allowzero", 0) != 0;
  Shape out;
  int minus_one = -1;
  for (size_t k = 0; k < target.size(); ++k) {
    if (target[k] == 0 && !allowzero) {
      if (k >= x.size()) return InvalidInput("0 in target shape beyond input rank");
      out.push_back(x[k]);
    } else if (target[k] == -1) {
      if (minus_one >= 0) return InvalidInput("more than one -1 in target shape");
      minus_one = static_cast<int>(k);
      out.push_back(Dim{});
    } else if (target[k] < 0) {
      return InvalidInput("negative dim " + std::to_string(target[k]) + " in target shape");
    } else {
      out.push_back(Dim::Known(target[k]));
    }
  }
  if (minus_one >= 0) {
    std::optional<int64_t> total = NumElements(x);
    int64_t rest = 1;
    bool known = total.has_value();
    for (size_t k = 0; k < out.size() && known; ++k) {
      if (static_cast<int>(k) == minus_one) continue;
      if (!out[k].known()) known = false;
      else if (!CheckedMul(rest, out[k].value, &rest)) return c.Bad("target shape overflows int64");
    }
    if (known && rest > 0) {
      if (*total % rest != 0)
        return InvalidInput("cannot reshape " + ShapeToString(x) + " with -1");
      out[minus_one] = Dim::Known(*total / rest);
    } else if (!known) {
      // Symbolic: if exactly one symbolic dim in the input is unmatched, carry it.
      Shape rem;
      std::multiset<int64_t> outk;
      for (size_t k = 0; k < out.size(); ++k)
        if (static_cast<int>(k) != minus_one && out[k].known()) outk.insert(out[k].value);
      int64_t known_in = 1, known_out = 1;
      std::vector<Dim> syms_in;
      bool fits = true;
      for (const Dim& d : x) {
        if (d.known()) fits = fits && CheckedMul(known_in, d.value, &known_in);
        else syms_in.push_back(d);
      }
      bool out_sym = false;
      for (size_t k = 0; k < out.size(); ++k) {
        if (static_cast<int>(k) == minus_one) continue;
        if (out[k].known()) fits = fits && CheckedMul(known_out, out[k].value, &known_out);
        else out_sym = true;
      }
      if (!fits) return c.Bad("shape size overflows int64");
      if (!out_sym && syms_in.size() == 1 && !syms_in[0].symbol.empty() && known_out > 0 &&
          known_in == known_out)
        out[minus_one] = syms_in[0];
    }
  }
  // A constant target whose element count differs from the input's: no runtime runs this node
  // at these bindings. Exporters write such targets when they traced the model for one batch
  // (the dynamo exporter's ViT files past the first encoder layer: a symbolic batch on the
  // input, reshapes to 50x1x3x768 inside). The target is kept, so what follows is counted at
  // the traced batch, and the warning says that the file is fixed to it.
  const std::optional<int64_t> in_n = NumElements(x), out_n = NumElements(out);
  if (in_n && out_n && *in_n != *out_n)
    c.notes.emplace_back("fixed-reshape",
                         "node '" + c.op.name + "' (Reshape): a constant target " + ShapeToString(out) +
                             " (" + std::to_string(*out_n) + " elements) for an input of " + ShapeToString(x) +
                             " (" + std::to_string(*in_n) +
                             "): the file fixes a shape these dims change (exported for one batch?); what "
                             "follows is counted at the shapes it fixes");
  c.Set(0, c.T(0), out);
  if (c.V(0)) c.SetValues(0, *c.V(0));
  return Status::Ok();
}

Status Transpose(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  std::vector<int64_t> perm = c.op.IntsAttr("perm");
  if (perm.empty())
    for (int64_t k = static_cast<int64_t>(x.size()) - 1; k >= 0; --k) perm.push_back(k);
  if (perm.size() != x.size()) return InvalidInput("perm length differs from rank");
  Shape out;
  std::vector<bool> used(x.size(), false);
  for (int64_t p : perm) {
    p = NormAxis(p, x.size());
    if (p < 0 || p >= static_cast<int64_t>(x.size())) return c.Bad(BadAxis(p, x.size()).message());
    if (used[p]) return c.Bad("perm names axis " + std::to_string(p) + " twice");
    used[p] = true;
    out.push_back(x[p]);
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

std::optional<std::vector<int64_t>> AxesFrom(InferCtx& c, size_t input, const char* attr) {
  if (c.op.FindAttr(attr)) return c.op.IntsAttr(attr);
  if (input < c.NumIn() && !c.op.inputs[input].empty()) {
    if (c.V(input)) return *c.V(input);
    return std::nullopt;  // given but not constant
  }
  return std::vector<int64_t>{};
}

Status Unsqueeze(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  auto axes = AxesFrom(c, 1, "axes");
  if (!axes) return InvalidInput("axes are not constant");
  int64_t r = x.size() + axes->size();
  std::vector<bool> ins(r, false);
  for (int64_t a : *axes) {
    a = NormAxis(a, r);
    if (a < 0 || a >= r) return BadAxis(a, r);
    ins[a] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t k = 0; k < r; ++k) {
    if (ins[k]) out.push_back(Dim::Known(1));
    else if (j < x.size()) out.push_back(x[j++]);
  }
  c.Set(0, c.T(0), out);
  if (c.V(0)) c.SetValues(0, *c.V(0));
  return Status::Ok();
}

Status Squeeze(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  auto axes = AxesFrom(c, 1, "axes");
  if (!axes) return InvalidInput("axes are not constant");
  std::vector<bool> drop(x.size(), false);
  if (axes->empty()) {
    for (size_t k = 0; k < x.size(); ++k) {
      if (!x[k].known()) return InvalidInput("squeeze without axes of a non-concrete dim");
      drop[k] = x[k].value == 1;
    }
  }
  for (int64_t a : *axes) {
    a = NormAxis(a, x.size());
    if (a < 0 || a >= static_cast<int64_t>(x.size())) return c.Bad(BadAxis(a, x.size()).message());
    if (x[a].known() && x[a].value != 1)
      return c.Bad("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x[a].value) +
                   " (only size 1)");
    drop[a] = true;
  }
  Shape out;
  for (size_t k = 0; k < x.size(); ++k)
    if (!drop[k]) out.push_back(x[k]);
  c.Set(0, c.T(0), out);
  if (c.V(0)) c.SetValues(0, *c.V(0));
  return Status::Ok();
}

Status Concat(InferCtx& c) {
  Shape out;
  bool first = true;
  int64_t axis = c.op.IntAttr("axis", 0);
  std::vector<int64_t> values;
  bool all_values = true;
  DType dt = DType::kUnknown;
  for (size_t i = 0; i < c.NumIn(); ++i) {
    if (c.op.inputs[i].empty()) continue;
    NEED(i);
    const Shape& s = c.S(i);
    if (first) {
      axis = NormAxis(axis, s.size());
      if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return BadAxis(axis, s.size());
      out = s;
      dt = c.T(i);
      first = false;
    } else {
      if (s.size() != out.size()) return InvalidInput("inputs differ in rank");
      const Dim &a = out[axis], &b = s[axis];
      int64_t sum;
      if (a.known() && b.known() && !CheckedAdd(a.value, b.value, &sum))
        return c.Bad("concatenated size overflows int64");
      out[axis] = a.known() && b.known() ? Dim::Known(sum) : Dim{};
      for (size_t k = 0; k < s.size(); ++k)
        if (static_cast<int64_t>(k) != axis && !out[k].known() && s[k].known()) out[k] = s[k];
    }
    if (c.V(i)) values.insert(values.end(), c.V(i)->begin(), c.V(i)->end());
    else all_values = false;
  }
  if (first) return InvalidInput("no inputs");
  c.Set(0, dt, out);
  if (all_values && out.size() == 1) c.SetValues(0, values);
  return Status::Ok();
}

Status Split(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  int64_t axis = NormAxis(c.op.IntAttr("axis", 0), x.size());
  if (axis < 0 || axis >= static_cast<int64_t>(x.size())) return BadAxis(axis, x.size());
  std::vector<int64_t> split = c.op.IntsAttr("split");
  if (split.empty() && c.V(1)) split = *c.V(1);
  size_t n = c.op.outputs.size();
  if (split.empty()) {
    if (!x[axis].known()) {
      for (size_t i = 0; i < n; ++i) {
        Shape s = x;
        s[axis] = Dim{};
        c.Set(i, c.T(0), s);
      }
      return Status::Ok();
    }
    if (n == 0) return InvalidInput("Split without outputs");
    int64_t total = x[axis].value;
    int64_t chunk = CeilDiv(total, static_cast<int64_t>(n));
    int64_t left = total;
    for (size_t i = 0; i < n; ++i) {
      split.push_back(std::max<int64_t>(0, std::min(chunk, left)));
      left -= split.back();
    }
  }
  if (split.size() != n) return InvalidInput("split has " + std::to_string(split.size()) +
                                             " parts for " + std::to_string(n) + " outputs");
  for (int64_t v : split)
    if (v < 0) return c.Bad("split size " + std::to_string(v) + " is negative");
  for (size_t i = 0; i < n; ++i) {
    Shape s = x;
    s[axis] = Dim::Known(split[i]);
    c.Set(i, c.T(0), s);
  }
  return Status::Ok();
}

Status Slice(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.op.IntsAttr("starts");
    ends = c.op.IntsAttr("ends");
    axes = c.op.IntsAttr("axes");
  } else {
    if (!c.V(1) || !c.V(2)) {
      Shape out = x;
      auto ax = c.NumIn() > 3 && !c.op.inputs[3].empty() ? c.V(3) : nullptr;
      if (ax) {
        for (int64_t a : *ax) {
          a = NormAxis(a, x.size());
          if (a >= 0 && a < static_cast<int64_t>(x.size())) out[a] = Dim{};
        }
      } else {
        for (auto& d : out) d = Dim{};
      }
      c.Set(0, c.T(0), out);
      return InvalidInput("starts/ends are not constant");
    }
    starts = *c.V(1);
    ends = *c.V(2);
    if (c.NumIn() > 3 && !c.op.inputs[3].empty()) {
      if (!c.V(3)) return InvalidInput("axes are not constant");
      axes = *c.V(3);
    }
    if (c.NumIn() > 4 && !c.op.inputs[4].empty()) {
      if (!c.V(4)) return InvalidInput("steps are not constant");
      steps = *c.V(4);
    }
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(k);
  if (starts.size() != ends.size() || axes.size() != starts.size())
    return InvalidInput("starts/ends/axes lengths differ");
  Shape out = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = NormAxis(axes[k], x.size());
    if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(axes[k], x.size());
    int64_t step = k < steps.size() ? steps[k] : 1;
    if (step == 0) return c.Bad("slice step 0");
    if (step == std::numeric_limits<int64_t>::min()) return c.Bad("slice step out of range");
    if (!x[a].known()) {
      out[a] = Dim{};
      continue;
    }
    int64_t dim = x[a].value;
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;  // s < 0 <= dim: no overflow
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out[a] = Dim::Known(e > s ? CeilDiv(e - s, step) : 0);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out[a] = Dim::Known(s > e ? CeilDiv(s - e, -step) : 0);
    }
  }
  c.Set(0, c.T(0), out);
  if (c.V(0) && x.size() == 1 && axes.size() == 1 && out[0].known()) {
    const auto& v = *c.V(0);
    int64_t dim = static_cast<int64_t>(v.size());
    int64_t step = steps.empty() ? 1 : steps[0];
    int64_t s = starts[0] < 0 ? starts[0] + dim : starts[0];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      std::vector<int64_t> r;
      for (int64_t k = 0; k < out[0].value; ++k) r.push_back(v[s + k * step]);
      c.SetValues(0, r);
    }
  }
  return Status::Ok();
}

Status Gather(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &x = c.S(0), &idx = c.S(1);
  if (x.empty()) return InvalidInput("Gather from a scalar");
  int64_t axis = NormAxis(c.op.IntAttr("axis", 0), x.size());
  if (axis < 0 || axis >= static_cast<int64_t>(x.size())) return BadAxis(axis, x.size());
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  c.Set(0, c.T(0), out);
  if (c.V(0) && c.V(1) && x.size() == 1) {
    std::vector<int64_t> r;
    int64_t n = static_cast<int64_t>(c.V(0)->size());
    for (int64_t i : *c.V(1)) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return InvalidInput("index out of range");
      r.push_back((*c.V(0))[i]);
    }
    c.SetValues(0, r);
  }
  return Status::Ok();
}

Status GatherElements(InferCtx& c) {
  NEED(1);
  c.Set(0, c.T(0), c.S(1));
  return Status::Ok();
}

Status GatherND(InferCtx& c) {
  NEED(0); NEED(1);
  const Shape &x = c.S(0), &idx = c.S(1);
  int64_t b = c.op.IntAttr("batch_dims", 0);
  if (idx.empty() || !idx.back().known()) return InvalidInput("last index dim not concrete");
  if (b < 0 || b > static_cast<int64_t>(idx.size()) - 1 || b > static_cast<int64_t>(x.size()))
    return c.Bad("batch_dims " + std::to_string(b) + " is out of range");
  int64_t last = idx.back().value;
  if (last > static_cast<int64_t>(x.size()) - b) return c.Bad("index depth exceeds rank");
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + last, x.end());
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status ShapeOp(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  int64_t r = x.size();
  int64_t start = c.op.IntAttr("start", 0), end = c.op.IntAttr("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  int64_t n = std::max<int64_t>(0, end - start);
  c.Set(0, DType::kInt64, {Dim::Known(n)});
  std::vector<int64_t> v;
  for (int64_t k = start; k < end; ++k) {
    if (!x[k].known()) return Status::Ok();
    v.push_back(x[k].value);
  }
  c.SetValues(0, v);
  return Status::Ok();
}

Status SizeOp(InferCtx& c) {
  NEED(0);
  c.Set(0, DType::kInt64, {});
  if (auto n = NumElements(c.S(0))) c.SetValues(0, {*n});
  return Status::Ok();
}

DType OnnxDType(int64_t t) {
  switch (t) {
    case 1: return DType::kFloat32;
    case 2: return DType::kUInt8;
    case 3: return DType::kInt8;
    case 4: case 5: return DType::kInt16;
    case 6: case 12: return DType::kInt32;
    case 7: case 13: return DType::kInt64;
    case 8: return DType::kString;
    case 9: return DType::kBool;
    case 10: return DType::kFloat16;
    case 11: return DType::kFloat64;
    case 14: return DType::kComplex64;
    case 16: return DType::kBFloat16;
    case 17: case 18: case 19: case 20: return DType::kFloat8;
    default: return DType::kUnknown;
  }
}

bool IsIntDType(DType t) {
  return t == DType::kInt64 || t == DType::kInt32 || t == DType::kInt16 || t == DType::kInt8 ||
         t == DType::kUInt8 || t == DType::kBool;
}

Status Cast(InferCtx& c) {
  NEED(0);
  DType to = c.op.type == "CastLike" ? c.T(1) : OnnxDType(c.op.IntAttr("to", 0));
  c.Set(0, to, c.S(0));
  if (IsIntDType(to) && c.V(0)) c.SetValues(0, *c.V(0));
  if (IsIntDType(to) && c.F(0)) {
    std::vector<int64_t> v;
    for (double f : *c.F(0)) {
      std::optional<int64_t> i = ToInt64(f);
      if (!i) return Status::Ok();  // NaN, inf or out of range: not folded
      v.push_back(*i);
    }
    c.SetValues(0, v);
  }
  if (!IsIntDType(to) && c.V(0)) {
    std::vector<double> v(c.V(0)->begin(), c.V(0)->end());
    c.SetFloats(0, v);
  }
  if (!IsIntDType(to) && c.F(0)) c.SetFloats(0, *c.F(0));
  return Status::Ok();
}

Status Constant(InferCtx& c) {
  const Op& op = c.op;
  if (const Attribute* a = op.FindAttr("value"); a && a->tensor) {
    c.Set(0, a->tensor->dtype, a->tensor->shape);
    if (a->tensor->int_values) c.SetValues(0, *a->tensor->int_values);
    if (a->tensor->float_values) c.SetFloats(0, *a->tensor->float_values);
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("sparse_value"); a && a->tensor) {
    c.Set(0, a->tensor->dtype, a->tensor->shape);
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("value_int")) {
    c.Set(0, DType::kInt64, {});
    c.SetValues(0, {a->i});
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("value_ints")) {
    c.Set(0, DType::kInt64, {Dim::Known(static_cast<int64_t>(a->ints.size()))});
    c.SetValues(0, a->ints);
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("value_float")) {
    c.Set(0, DType::kFloat32, {});
    c.SetFloats(0, {a->f});
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("value_floats")) {
    c.Set(0, DType::kFloat32, {Dim::Known(static_cast<int64_t>(a->floats.size()))});
    c.SetFloats(0, a->floats);
    return Status::Ok();
  }
  if (op.FindAttr("value_string")) {
    c.Set(0, DType::kString, {});
    return Status::Ok();
  }
  if (const Attribute* a = op.FindAttr("value_strings")) {
    c.Set(0, DType::kString, {Dim::Known(static_cast<int64_t>(a->strings.size()))});
    return Status::Ok();
  }
  return InvalidInput("Constant without a value attribute");
}

Status ConstantOfShape(InferCtx& c) {
  if (!c.V(0)) {
    const TensorInfo* t = c.In(0);
    if (t && t->has_shape && t->shape.size() == 1 && t->shape[0].known()) {
      if (t->shape[0].value > kMaxRank) return c.Bad("shape input has too many dims");
      const Attribute* a = c.op.FindAttr("value");
      c.Set(0, a && a->tensor ? a->tensor->dtype : DType::kFloat32,
            Shape(t->shape[0].value, Dim{}));
    }
    return InvalidInput("shape input is not a constant");
  }
  const Attribute* a = c.op.FindAttr("value");
  DType dt = a && a->tensor ? a->tensor->dtype : DType::kFloat32;
  Shape s = ShapeFromValues(*c.V(0));
  c.Set(0, dt, s);
  if (IsIntDType(dt) && a && a->tensor && a->tensor->int_values &&
      a->tensor->int_values->size() == 1) {
    if (auto n = NumElements(s); n && *n <= c.options.max_folded_elements)
      c.SetValues(0, std::vector<int64_t>(*n, (*a->tensor->int_values)[0]));
  }
  return Status::Ok();
}

Status Range(InferCtx& c) {
  double start, limit, delta;
  auto scalar = [&](size_t i, double* out) {
    if (c.V(i) && c.V(i)->size() == 1) { *out = static_cast<double>((*c.V(i))[0]); return true; }
    if (c.F(i) && c.F(i)->size() == 1) { *out = (*c.F(i))[0]; return true; }
    return false;
  };
  DType dt = c.T(0);
  if (!scalar(0, &start) || !scalar(1, &limit) || !scalar(2, &delta)) {
    c.Set(0, dt, {Dim{}});
    return InvalidInput("start/limit/delta are not constant");
  }
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return c.Bad("delta must be non-zero and start/limit/delta finite");
  const double count = std::ceil((limit - start) / delta);
  if (!std::isfinite(count) || count > 9.2e18)
    return c.Bad("start/limit/delta give " + std::to_string(count) + " elements, out of range");
  // A limit on the wrong side of start gives an empty range (ONNX: max(ceil(...), 0)); clamp
  // before converting, since a count below -2^63 does not fit an int64 (found by inspect_fuzz).
  const int64_t n = count <= 0 ? 0 : static_cast<int64_t>(count);
  c.Set(0, dt, {Dim::Known(n)});
  if (c.V(0) && n <= c.options.max_folded_elements) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < n; ++k) {
      std::optional<int64_t> e = ToInt64(start + k * delta);
      if (!e) return Status::Ok();
      v.push_back(*e);
    }
    c.SetValues(0, v);
  }
  return Status::Ok();
}

Status Expand(InferCtx& c) {
  NEED(0);
  if (!c.V(1)) {
    const TensorInfo* t = c.In(1);
    if (t && t->has_shape && t->shape.size() == 1 && t->shape[0].known()) {
      if (t->shape[0].value > kMaxRank) return c.Bad("shape input has too many dims");
      size_t r = std::max<size_t>(t->shape[0].value, c.S(0).size());
      c.Set(0, c.T(0), Shape(r, Dim{}));
    }
    return InvalidInput("shape input is not a constant");
  }
  Expected<Shape> s = Broadcast(c.S(0), ShapeFromValues(*c.V(1)));
  if (!s.ok()) return s.status();
  c.Set(0, c.T(0), s.value());
  return Status::Ok();
}

Status Tile(InferCtx& c) {
  NEED(0);
  if (!c.V(1)) return InvalidInput("repeats are not constant");
  const Shape& x = c.S(0);
  if (c.V(1)->size() != x.size()) return InvalidInput("repeats length differs from rank");
  Shape out;
  for (size_t k = 0; k < x.size(); ++k) out.push_back(MulDim(x[k], Dim::Known((*c.V(1))[k])));
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status Pad(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  std::vector<int64_t> pads = c.op.IntsAttr("pads");
  if (c.opset >= 11) {
    if (!c.V(1)) return InvalidInput("pads are not constant");
    pads = *c.V(1);
  }
  std::vector<int64_t> axes;
  if (c.NumIn() > 3 && !c.op.inputs[3].empty()) {
    if (!c.V(3)) return InvalidInput("axes are not constant");
    axes = *c.V(3);
  } else {
    for (size_t k = 0; k < x.size(); ++k) axes.push_back(k);
  }
  if (pads.size() != 2 * axes.size()) return InvalidInput("pads length mismatch");
  Shape out = x;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = NormAxis(axes[k], x.size());
    if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(axes[k], x.size());
    if (x[a].known()) {
      int64_t v;
      if (!CheckedAdd(x[a].value, pads[k], &v) || !CheckedAdd(v, pads[k + axes.size()], &v))
        return c.Bad("padded size overflows int64");
      if (v < 0) return c.Bad("pads remove more than axis " + std::to_string(a) + " holds");
      out[a] = Dim::Known(v);
    } else {
      out[a] = Dim{};
    }
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status Resize(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  // Upsample-7: scales attr; Upsample-9 / Resize-10: scales input 1; Resize-11+: roi, scales, sizes.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (const Attribute* a = c.op.FindAttr("scales"); a && a->kind == Attribute::Kind::kFloats) {
    scales = a->floats;
  } else if (c.op.type == "Upsample" || c.opset < 11) {
    if (c.F(1)) scales = *c.F(1);
  } else {
    if (c.NumIn() > 3 && !c.op.inputs[3].empty() && c.V(3)) sizes = *c.V(3);
    if (c.NumIn() > 2 && !c.op.inputs[2].empty() && c.F(2)) scales = *c.F(2);
  }
  std::vector<int64_t> axes = c.op.IntsAttr("axes");
  if (axes.empty())
    for (size_t k = 0; k < x.size(); ++k) axes.push_back(k);
  Shape out = x;
  if (!sizes.empty()) {
    if (sizes.size() != axes.size()) return InvalidInput("sizes length mismatch");
    std::string policy = c.op.StringAttr("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
      double scale = policy == "not_larger" ? 1e300 : 0;
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = NormAxis(axes[k], x.size());
        if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(axes[k], x.size());
        if (!x[a].known() || x[a].value == 0) return InvalidInput("input dims not concrete");
        if (sizes[k] < 0) return c.Bad("sizes must be >= 0");
        double s = static_cast<double>(sizes[k]) / x[a].value;
        scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = NormAxis(axes[k], x.size());
        std::optional<int64_t> v = ToInt64(std::round(x[a].value * scale));
        if (!v) return c.Bad("resized size is out of range");
        out[a] = Dim::Known(*v);
      }
    } else {
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = NormAxis(axes[k], x.size());
        if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(axes[k], x.size());
        if (sizes[k] < 0) return c.Bad("sizes must be >= 0");
        out[a] = Dim::Known(sizes[k]);
      }
    }
  } else if (!scales.empty()) {
    if (scales.size() != axes.size()) return InvalidInput("scales length mismatch");
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = NormAxis(axes[k], x.size());
      if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(axes[k], x.size());
      if (!std::isfinite(scales[k]) || scales[k] < 0) return c.Bad("scales must be finite and >= 0");
      if (!x[a].known()) {
        out[a] = Dim{};
        continue;
      }
      std::optional<int64_t> v = ToInt64(std::floor(x[a].value * scales[k] + 1e-9));
      if (!v) return c.Bad("resized size is out of range");
      out[a] = Dim::Known(*v);
    }
  } else {
    for (auto& d : out) d = Dim{};
    c.Set(0, c.T(0), out);
    return InvalidInput("scales/sizes are not constant");
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status Reduce(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  bool keep = c.op.IntAttr("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (c.op.FindAttr("axes")) axes = c.op.IntsAttr("axes");
  else if (c.NumIn() > 1 && !c.op.inputs[1].empty()) {
    if (c.V(1)) axes = *c.V(1);
    else {
      c.Set(0, c.T(0), keep ? Shape(x.size(), Dim{}) : Shape{});
      if (!keep) c.Out(0)->has_shape = false;
      return InvalidInput("axes are not constant");
    }
  } else axes = std::vector<int64_t>{};
  std::vector<bool> red(x.size(), false);
  if (axes->empty()) {
    if (c.op.IntAttr("noop_with_empty_axes", 0) != 0) {
      c.Set(0, c.T(0), x);
      return Status::Ok();
    }
    std::fill(red.begin(), red.end(), true);
  }
  for (int64_t a : *axes) {
    a = NormAxis(a, x.size());
    if (a < 0 || a >= static_cast<int64_t>(x.size())) return BadAxis(a, x.size());
    red[a] = true;
  }
  Shape out;
  for (size_t k = 0; k < x.size(); ++k) {
    if (!red[k]) out.push_back(x[k]);
    else if (keep) out.push_back(Dim::Known(1));
  }
  c.Set(0, c.T(0), out);
  if (c.op.type == "ReduceProd" && c.V(0) && out.size() <= 1) {
    int64_t p = 1;
    for (int64_t v : *c.V(0))
      if (!CheckedMul(p, v, &p)) return Status::Ok();  // overflows: not folded
    c.SetValues(0, {p});
  }
  return Status::Ok();
}

Status ArgReduce(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  int64_t axis = NormAxis(c.op.IntAttr("axis", 0), x.size());
  if (axis < 0 || axis >= static_cast<int64_t>(x.size())) return BadAxis(axis, x.size());
  bool keep = c.op.IntAttr("keepdims", 1) != 0;
  Shape out;
  for (size_t k = 0; k < x.size(); ++k) {
    if (static_cast<int64_t>(k) != axis) out.push_back(x[k]);
    else if (keep) out.push_back(Dim::Known(1));
  }
  c.Set(0, DType::kInt64, out);
  return Status::Ok();
}

Status TopK(InferCtx& c) {
  NEED(0);
  Shape x = c.S(0);
  int64_t axis = NormAxis(c.op.IntAttr("axis", -1), x.size());
  if (axis < 0 || axis >= static_cast<int64_t>(x.size())) return BadAxis(axis, x.size());
  if (c.op.FindAttr("k")) x[axis] = Dim::Known(c.op.IntAttr("k", 0));
  else if (c.V(1) && c.V(1)->size() == 1) x[axis] = Dim::Known((*c.V(1))[0]);
  else x[axis] = Dim{};
  c.Set(0, c.T(0), x);
  c.Set(1, DType::kInt64, x);
  return Status::Ok();
}

Status LayerNorm(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  c.Set(0, c.T(0), x);
  int64_t axis = NormAxis(c.op.IntAttr("axis", -1), x.size());
  Shape stat = x;
  for (int64_t k = std::max<int64_t>(axis, 0); k < static_cast<int64_t>(x.size()); ++k)
    stat[k] = Dim::Known(1);
  for (size_t i = 1; i < c.op.outputs.size(); ++i) c.Set(i, DType::kFloat32, stat);
  return Status::Ok();
}

Status BatchNorm(InferCtx& c) {
  NEED(0);
  c.Set(0, c.T(0), c.S(0));
  for (size_t i = 1; i < c.op.outputs.size() && i < 5; ++i)
    if (c.Has(i)) c.Set(i, c.T(i), c.S(i));
  return Status::Ok();
}

Status Dropout(InferCtx& c) {
  NEED(0);
  c.Set(0, c.T(0), c.S(0));
  c.Set(1, DType::kBool, c.S(0));
  return Status::Ok();
}

Status DataDependent(InferCtx& c) {
  // NonZero, Unique, Compress, NonMaxSuppression: sizes known only at run time.
  NEED(0);
  const Shape& x = c.S(0);
  if (c.op.type == "NonZero") c.Set(0, DType::kInt64, {Dim::Known(static_cast<int64_t>(x.size())), Dim{}});
  else if (c.op.type == "NonMaxSuppression") c.Set(0, DType::kInt64, {Dim{}, Dim::Known(3)});
  else if (c.op.type == "Compress") {
    if (c.op.FindAttr("axis")) {
      Shape s = x;
      int64_t a = NormAxis(c.op.IntAttr("axis", 0), x.size());
      if (a >= 0 && a < static_cast<int64_t>(s.size())) s[a] = Dim{};
      c.Set(0, c.T(0), s);
    } else {
      c.Set(0, c.T(0), {Dim{}});
    }
  } else {
    c.Set(0, c.T(0), {Dim{}});
  }
  return Status::Ok();
}

Status OneHot(InferCtx& c) {
  NEED(0);
  Shape x = c.S(0);
  int64_t r = x.size() + 1;
  int64_t axis = NormAxis(c.op.IntAttr("axis", -1), r);
  if (axis < 0 || axis >= r) return BadAxis(axis, r);
  Dim depth = Dim{};
  if (c.V(1) && c.V(1)->size() == 1) depth = Dim::Known((*c.V(1))[0]);
  else if (c.F(1) && c.F(1)->size() == 1) {
    std::optional<int64_t> d = ToInt64((*c.F(1))[0]);
    if (!d) return c.Bad("depth is out of range");
    depth = Dim::Known(*d);
  }
  x.insert(x.begin() + axis, depth);
  c.Set(0, c.T(2), x);
  return Status::Ok();
}

Status DepthSpace(InferCtx& c) {
  NEED(0);
  const Shape& x = c.S(0);
  if (x.size() != 4) return InvalidInput("needs a 4-D input");
  int64_t b = c.op.IntAttr("blocksize", 1), bb;
  if (b < 1 || !CheckedMul(b, b, &bb)) return c.Bad("blocksize " + std::to_string(b) + " is out of range");
  Shape out = x;
  bool to_space = c.op.type == "DepthToSpace";
  // The block must divide what it splits: the channels (DepthToSpace), the height and width
  // (SpaceToDepth); ONNX Runtime refuses such a model, and a truncated shape would be wrong.
  if (to_space && x[1].known() && x[1].value % bb)
    return c.Bad("blocksize " + std::to_string(b) + ": its square " + std::to_string(bb) +
                 " does not divide the " + std::to_string(x[1].value) + " input channels");
  for (int k = 2; k < 4 && !to_space; ++k)
    if (x[k].known() && x[k].value % b)
      return c.Bad("blocksize " + std::to_string(b) + " does not divide input dim " + std::to_string(k) +
                   " (" + std::to_string(x[k].value) + ")");
  auto div = [&](const Dim& d) { return d.known() ? Dim::Known(d.value / bb) : Dim{}; };
  out[1] = to_space ? div(x[1]) : MulDim(x[1], Dim::Known(bb));
  for (int k = 2; k < 4; ++k)
    out[k] = to_space ? MulDim(x[k], Dim::Known(b))
                      : (x[k].known() ? Dim::Known(x[k].value / b) : Dim{});
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

// Einsum: "bhqd,bhkd->bhqk"; an ellipsis stands for broadcast leading dims.
Status Einsum(InferCtx& c) {
  std::string eq = c.op.StringAttr("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.NumIn()) return InvalidInput("equation has " + std::to_string(terms.size()) +
                                                     " operands for " + std::to_string(c.NumIn()) + " inputs");
  std::map<char, Dim> dims;
  std::map<char, int> count;
  Shape ellipsis;
  for (size_t i = 0; i < terms.size(); ++i) {
    NEED(i);
    const Shape& s = c.S(i);
    std::string t = terms[i];
    size_t ell = t.find("...");
    size_t named = t.size() - (ell == std::string::npos ? 0 : 3);
    if (named > s.size()) return InvalidInput("operand " + std::to_string(i) + " rank too small for '" + t + "'");
    size_t ell_rank = s.size() - named;
    if (ell == std::string::npos && ell_rank != 0)
      return InvalidInput("operand " + std::to_string(i) + " rank differs from '" + t + "'");
    size_t k = 0;
    for (size_t p = 0; p < t.size(); ++p) {
      if (t.compare(p, 3, "...") == 0) {
        Shape e(s.begin() + k, s.begin() + k + ell_rank);
        Expected<Shape> b = Broadcast(ellipsis, e);
        if (!b.ok()) return b.status();
        ellipsis = b.value();
        k += ell_rank;
        p += 2;
        continue;
      }
      char ch = t[p];
      count[ch]++;
      auto it = dims.find(ch);
      if (it == dims.end() || (!it->second.known() && s[k].known()) ||
          (it->second.known() && it->second.value == 1))
        dims[ch] = s[k];
      ++k;
    }
  }
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else {  // implicit output: ellipsis then letters used once, sorted
    if (lhs.find("...") != std::string::npos) rhs = "...";
    for (auto& [ch, n] : count)
      if (n == 1) rhs += ch;
  }
  Shape out;
  for (size_t p = 0; p < rhs.size(); ++p) {
    if (rhs.compare(p, 3, "...") == 0) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      p += 2;
      continue;
    }
    auto it = dims.find(rhs[p]);
    if (it == dims.end()) return InvalidInput(std::string("output letter '") + rhs[p] + "' not in inputs");
    out.push_back(it->second);
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status MsAttention(InferCtx& c) {
  // com.microsoft Attention: input [B, S, hidden_in], weights [hidden_in, 3*hidden].
  NEED(0);
  const Shape& x = c.S(0);
  Shape out = x;
  if (c.Has(1) && c.S(1).size() == 2 && c.S(1)[1].known()) {
    std::vector<int64_t> qkv = c.op.IntsAttr("qkv_hidden_sizes");
    int64_t v = qkv.size() == 3 ? qkv[2] : c.S(1)[1].value / 3;
    out.back() = Dim::Known(v);
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status OnnxAttention(InferCtx& c) {
  // ONNX Attention (opset 23): Q [B, H, L, E] or [B, L, H*E]; V gives the value head dim.
  NEED(0);
  NEED(2);
  Shape out = c.S(0);
  const Shape& v = c.S(2);
  if (out.size() == 4 && v.size() == 4) out[3] = v[3];
  else if (out.size() == 3 && v.size() == 3) {
    int64_t qh = c.op.IntAttr("q_num_heads", 0), kvh = c.op.IntAttr("kv_num_heads", 0);
    if (qh > 0 && kvh > 0 && v[2].known()) out[2] = Dim::Known(v[2].value / kvh * qh);
  }
  c.Set(0, c.T(0), out);
  return Status::Ok();
}

Status QLinear(InferCtx& c) {
  // QLinearMatMul/QLinearConv: (a, a_scale, a_zp, b, b_scale, b_zp, ...) -> like MatMul/Conv.
  Op shadow = c.op;
  shadow.inputs = {c.op.inputs.size() > 0 ? c.op.inputs[0] : "", c.op.inputs.size() > 3 ? c.op.inputs[3] : ""};
  InferCtx sc{c.g, shadow, c.scope, c.opset, c.options};
  Status s = c.op.type == "QLinearConv" ? Conv(sc) : MatMul(sc);
  c.malformed = sc.malformed;
  return s;
}

const std::unordered_map<std::string, InferFn>& Registry() {
  static const auto* reg = [] {
    auto* r = new std::unordered_map<std::string, InferFn>();
    auto add = [&](std::initializer_list<const char*> names, InferFn fn) {
      for (const char* n : names) (*r)[n] = fn;
    };
    add({"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu",
         "Erf", "Exp", "Floor", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Log",
         "Neg", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh",
         "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Celu", "Gelu",
         "Mish", "Shrink", "Clip", "Softmax", "LogSoftmax", "Hardmax", "LpNormalization",
         "InstanceNormalization", "LRN", "MeanVarianceNormalization", "CumSum", "Trilu",
         "BitwiseNot", "ScatterND", "ScatterElements", "Scatter", "ReverseSequence",
         "EyeLike", "Bernoulli", "RandomNormalLike", "RandomUniformLike", "Swish",
         "FastGelu", "BiasGelu", "QuickGelu", "GroupNormalization", "SkipLayerNormalization",
         "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "BiasAdd",
         "RotaryEmbedding", "DequantizeLinear", "QuantizeLinear",
         "Optional", "OptionalGetElement", "Det"},
        SameAsInput);
    (*r)["DequantizeLinear"] = [](InferCtx& c) {
      NEED(0);
      c.Set(0, c.Has(1) ? c.T(1) : DType::kFloat32, c.S(0));
      return Status::Ok();
    };
    (*r)["QuantizeLinear"] = [](InferCtx& c) {
      NEED(0);
      c.Set(0, c.In(2) ? c.T(2) : DType::kUInt8, c.S(0));
      return Status::Ok();
    };
    (*r)["Det"] = [](InferCtx& c) {
      NEED(0);
      Shape s = c.S(0);
      if (s.size() < 2) return InvalidInput("Det needs rank >= 2");
      s.resize(s.size() - 2);
      c.Set(0, c.T(0), s);
      return Status::Ok();
    };
    add({"IsNaN", "IsInf", "Not"}, SameAsInputBool);
    add({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "PRelu", "Max", "Min", "Sum",
         "Mean", "BitwiseAnd", "BitwiseOr", "BitwiseXor"},
        [](InferCtx& c) { return Elementwise(c, false); });
    add({"And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"},
        [](InferCtx& c) { return Elementwise(c, true); });
    (*r)["Where"] = Where;
    add({"MatMul", "MatMulInteger"}, MatMul);
    (*r)["Gemm"] = Gemm;
    add({"Conv", "ConvInteger"}, Conv);
    (*r)["ConvTranspose"] = ConvTranspose;
    add({"QLinearConv", "QLinearMatMul"}, QLinear);
    add({"MaxPool", "AveragePool", "LpPool"}, Pool);
    add({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}, GlobalPool);
    (*r)["Flatten"] = Flatten;
    (*r)["Reshape"] = Reshape;
    (*r)["Transpose"] = Transpose;
    (*r)["Unsqueeze"] = Unsqueeze;
    (*r)["Squeeze"] = Squeeze;
    (*r)["Concat"] = Concat;
    (*r)["Split"] = Split;
    (*r)["Slice"] = Slice;
    (*r)["Gather"] = Gather;
    (*r)["GatherElements"] = GatherElements;
    (*r)["GatherND"] = GatherND;
    (*r)["Shape"] = ShapeOp;
    (*r)["Size"] = SizeOp;
    add({"Cast", "CastLike"}, Cast);
    (*r)["Constant"] = Constant;
    (*r)["ConstantOfShape"] = ConstantOfShape;
    (*r)["Range"] = Range;
    (*r)["Expand"] = Expand;
    (*r)["Tile"] = Tile;
    (*r)["Pad"] = Pad;
    add({"Resize", "Upsample"}, Resize);
    add({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
        Reduce);
    add({"ArgMax", "ArgMin"}, ArgReduce);
    (*r)["TopK"] = TopK;
    add({"LayerNormalization"}, LayerNorm);
    (*r)["BatchNormalization"] = BatchNorm;
    (*r)["Dropout"] = Dropout;
    add({"NonZero", "Unique", "Compress", "NonMaxSuppression"}, DataDependent);
    (*r)["OneHot"] = OneHot;
    add({"DepthToSpace", "SpaceToDepth"}, DepthSpace);
    (*r)["Einsum"] = Einsum;
    add({"RNN", "GRU", "LSTM"}, Recurrent);
    add({"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}, Loss);
    add({"HannWindow", "HammingWindow", "BlackmanWindow"}, Window);
    (*r)["DynamicQuantizeLinear"] = [](InferCtx& c) {
      NEED(0);
      c.Set(0, DType::kUInt8, c.S(0));
      c.Set(1, DType::kFloat32, {});
      c.Set(2, DType::kUInt8, {});
      return Status::Ok();
    };
    (*r)["Attention"] = [](InferCtx& c) {
      return c.op.domain == "com.microsoft" ? MsAttention(c) : OnnxAttention(c);
    };
    (*r)["MultiHeadAttention"] = [](InferCtx& c) {
      NEED(0);
      c.Set(0, c.T(0), c.S(0));
      return Status::Ok();
    };
    (*r)["EmbedLayerNormalization"] = [](InferCtx& c) {
      NEED(0);
      Shape s = c.S(0);
      if (c.Has(2) && c.S(2).size() == 2) s.push_back(c.S(2)[1]);
      c.Set(0, DType::kFloat32, s);
      return Status::Ok();
    };
    return r;
  }();
  return *reg;
}

bool IsOnnxDomain(const std::string& d) {
  return d.empty() || d == "ai.onnx" || d == "com.microsoft" || d == "ai.onnx.ml";
}

// Copies into `sub` the enclosing tensors its ops (and nested bodies) refer to.
void ImportOuter(Graph* sub, const Scope& outer) {
  auto visit = [&](const std::string& name) {
    if (name.empty() || sub->Find(name)) return;
    if (const TensorInfo* t = outer.Find(name)) {
      TensorInfo copy = *t;
      copy.outer_scope = true;
      copy.is_graph_input = false;
      sub->tensors[name] = std::move(copy);
    }
  };
  for (const Op& op : sub->ops) {
    for (const std::string& in : op.inputs) visit(in);
  }
  for (const std::string& o : sub->outputs) visit(o);
}

// Multiplies the repeat of every op in `g` and its bodies by a trip count; a product beyond
// 2^63 stays there (counting saturates its int64 totals, graph_stats.cc).
void MultiplyRepeat(Graph* g, double factor) {
  constexpr double kMaxRepeat = 9.3e18;
  for (Op& op : g->ops) {
    op.repeat = std::min(op.repeat * std::max(factor, 0.0), kMaxRepeat);
    for (auto& [k, a] : op.attrs)
      if (a.graph) MultiplyRepeat(a.graph.get(), factor);
  }
}

class Walker {
 public:
  Walker(const ShapeInferenceOptions& options, const std::map<std::string, int64_t>& opset,
         std::vector<std::string>* warnings)
      : options_(options), opset_(opset), warnings_(warnings) {}

  Status Walk(Graph* g, const Scope* parent, int depth) {
    if (depth > 64) return InvalidInput("subgraphs nested too deep");
    Scope scope{g, parent};
    for (Op& op : g->ops) {
      bool malformed = false;
      Status s = InferOp(g, op, scope, depth, &malformed);
      if (!s.ok()) {
        // An error from a body already names its node.
        if (s.message().rfind("node '", 0) == 0) {
          if (options_.strict) return s;
          continue;
        }
        std::string msg = "node '" + op.name + "' (" + op.type + "): " +
                          (malformed ? "invalid: " : "cannot infer output shape: ") + s.message();
        if (options_.strict) return InvalidInput(msg);
        bool all_known = true;
        for (const std::string& o : op.outputs) {
          const TensorInfo* t = o.empty() ? nullptr : g->Find(o);
          if (t && !t->has_shape) all_known = false;
        }
        // An invalid node is always reported; one whose shapes the file declares only when
        // ftax cannot check it is not.
        if (malformed || !all_known) Note(op.type + (malformed ? "/invalid" : ""), msg);
      }
    }
    return Status::Ok();
  }

  void Flush() {
    for (const auto& [type, entry] : notes_) {
      std::string w = entry.first;
      if (entry.second > 1 && type == "respecialized")
        w += " (and " + std::to_string(entry.second - 1) + " more nodes whose declared shapes follow from it)";
      else if (entry.second > 1 && type == "fixed-reshape")
        w += " (and " + std::to_string(entry.second - 1) + " more Reshape nodes)";
      else if (entry.second > 1)
        w += " (and " + std::to_string(entry.second - 1) + " more " + type.substr(0, type.find('/')) +
             " nodes)";
      warnings_->push_back(w);
    }
  }

 private:
  void Note(const std::string& type, const std::string& msg) {
    auto& e = notes_[type];
    if (e.second++ == 0) e.first = msg;
  }

  int64_t Opset(const std::string& domain) const {
    auto it = opset_.find(domain);
    if (it != opset_.end()) return it->second;
    it = opset_.find("");
    return it != opset_.end() ? it->second : 21;
  }

  Status InferSubgraphs(Graph* g, Op& op, const Scope& scope, int depth) {
    for (auto& [key, attr] : op.attrs) {
      if (!attr.graph) continue;
      Graph* body = attr.graph.get();
      // Loop/Scan body inputs take their shapes from the op's inputs where undeclared.
      if (op.type == "Loop" && op.domain.empty()) {
        for (size_t i = 0; i < body->inputs.size(); ++i) {
          TensorInfo& t = body->Tensor(body->inputs[i]);
          if (t.has_shape) continue;
          if (i == 0) { t.dtype = DType::kInt64; t.has_shape = true; t.shape = {}; }
          else if (i == 1) { t.dtype = DType::kBool; t.has_shape = true; t.shape = {}; }
          else if (i < op.inputs.size() && !op.inputs[i].empty()) {
            if (const TensorInfo* src = scope.Find(op.inputs[i])) {
              t.dtype = src->dtype; t.has_shape = src->has_shape; t.shape = src->shape;
            }
          }
        }
      } else if (op.type == "Scan" && op.domain.empty()) {
        int64_t k = op.IntAttr("num_scan_inputs", 0);
        size_t n_state = body->inputs.size() >= static_cast<size_t>(k) ? body->inputs.size() - k : 0;
        size_t offset = op.inputs.size() > body->inputs.size() ? op.inputs.size() - body->inputs.size() : 0;
        std::vector<int64_t> in_axes = op.IntsAttr("scan_input_axes");
        for (size_t i = 0; i < body->inputs.size(); ++i) {
          TensorInfo& t = body->Tensor(body->inputs[i]);
          if (t.has_shape) continue;
          size_t oi = i + offset;
          if (oi >= op.inputs.size()) continue;
          const TensorInfo* src = scope.Find(op.inputs[oi]);
          if (!src || !src->has_shape) continue;
          t.dtype = src->dtype;
          t.has_shape = true;
          t.shape = src->shape;
          if (i >= n_state && !t.shape.empty()) {
            size_t j = i - n_state;
            int64_t ax = j < in_axes.size() ? NormAxis(in_axes[j], t.shape.size()) : 0;
            if (ax >= 0 && ax < static_cast<int64_t>(t.shape.size())) t.shape.erase(t.shape.begin() + ax);
          }
        }
      }
      ImportOuter(body, scope);
      Status s = Walk(body, &scope, depth + 1);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status InferOp(Graph* g, Op& op, const Scope& scope, int depth, bool* malformed) {
    Status sub = InferSubgraphs(g, op, scope, depth);
    if (!sub.ok()) return sub;
    InferCtx c{*g, op, scope, Opset(op.domain), options_};
    Status s = InferOpEntry(c);
    *malformed = c.malformed;
    for (const auto& [kind, m] : c.notes) Note(kind, m);
    return s;
  }

  Status InferOpEntry(InferCtx& c) {
    Op& op = c.op;
    if (op.type == "If" && op.domain.empty()) return InferIf(c);
    if (op.type == "Loop" && op.domain.empty()) return InferLoop(c);
    if (op.type == "Scan" && op.domain.empty()) return InferScan(c);
    if (!IsOnnxDomain(op.domain)) {
      // Other domains (aten from arch specs, custom ops): shapes come from the front end.
      return Status::Ok();
    }
    const auto& reg = Registry();
    auto it = reg.find(op.type);
    if (it == reg.end()) return Unsupported("no shape inference for op type '" + op.type + "'");
    Status s = it->second(c);
    if (s.ok()) FoldOutputs(c);
    return s;
  }

  // Computes the contents of small constant outputs the op's entry did not fold itself
  // (constant_folding.h), so shape chains of any length resolve.
  void FoldOutputs(InferCtx& c) {
    bool missing = false;
    std::vector<const TensorInfo*> outs;
    for (size_t i = 0; i < c.op.outputs.size(); ++i) {
      const TensorInfo* t = c.Out(i);
      if (!t) return;
      missing |= !t->int_values && !t->float_values;
      outs.push_back(t);
    }
    if (!missing) return;
    std::vector<const TensorInfo*> ins;
    for (size_t i = 0; i < c.NumIn(); ++i) ins.push_back(c.In(i));
    std::optional<std::vector<FoldedValue>> v =
        FoldConstant(c.op, ins, outs, c.opset, c.options.max_folded_elements);
    if (!v) return;
    for (size_t i = 0; i < v->size(); ++i) {
      TensorInfo* t = c.Out(i);
      if (t->int_values || t->float_values) continue;
      if ((*v)[i].is_int) t->int_values = std::move((*v)[i].ints);
      else t->float_values = std::move((*v)[i].floats);
    }
  }

  static const Graph* Branch(const Op& op, const char* key) {
    const Attribute* a = op.FindAttr(key);
    return a && a->graph ? a->graph.get() : nullptr;
  }

  Status InferIf(InferCtx& c) {
    const Graph* then_g = Branch(c.op, "then_branch");
    const Graph* else_g = Branch(c.op, "else_branch");
    if (!then_g || !else_g) return InvalidInput("If without both branches");
    std::optional<bool> cond;
    if (c.V(0) && c.V(0)->size() == 1) cond = (*c.V(0))[0] != 0;
    for (size_t i = 0; i < c.op.outputs.size(); ++i) {
      const TensorInfo* a = i < then_g->outputs.size() ? then_g->Find(then_g->outputs[i]) : nullptr;
      const TensorInfo* b = i < else_g->outputs.size() ? else_g->Find(else_g->outputs[i]) : nullptr;
      if (cond) {
        const TensorInfo* t = *cond ? a : b;
        if (t && t->has_shape) c.Set(i, t->dtype, t->shape);
        continue;
      }
      if (a && b && a->has_shape && b->has_shape && a->shape.size() == b->shape.size()) {
        Shape s = a->shape;
        for (size_t k = 0; k < s.size(); ++k)
          if (!(s[k] == b->shape[k])) s[k] = Dim{};
        c.Set(i, a->dtype, s);
      }
    }
    return Status::Ok();
  }

  Status InferLoop(InferCtx& c) {
    const Attribute* a = c.op.FindAttr("body");
    if (!a || !a->graph) return InvalidInput("Loop without a body");
    Graph* body = a->graph.get();
    Dim trips = Dim{};
    // With a condition input too the trip count is an upper bound; a negative one runs no trip.
    if (c.V(0) && c.V(0)->size() == 1) trips = Dim::Known(std::max<int64_t>((*c.V(0))[0], 0));
    if (trips.known() && c.op.FindAttr("ftax_repeat_applied") == nullptr) {
      MultiplyRepeat(body, static_cast<double>(trips.value));
      c.op.attrs["ftax_repeat_applied"].kind = Attribute::Kind::kInt;
      c.op.attrs["ftax_repeat_applied"].i = trips.value;
    }
    size_t n_carried = c.NumIn() >= 2 ? c.NumIn() - 2 : 0;
    for (size_t i = 0; i < c.op.outputs.size(); ++i) {
      size_t bo = i + 1;
      if (bo >= body->outputs.size()) break;
      const TensorInfo* t = body->Find(body->outputs[bo]);
      if (!t || !t->has_shape) continue;
      if (i < n_carried) {
        c.Set(i, t->dtype, t->shape);
      } else {
        Shape s = t->shape;
        s.insert(s.begin(), trips);
        c.Set(i, t->dtype, s);
      }
    }
    return Status::Ok();
  }

  Status InferScan(InferCtx& c) {
    const Attribute* a = c.op.FindAttr("body");
    if (!a || !a->graph) return InvalidInput("Scan without a body");
    Graph* body = a->graph.get();
    int64_t k = c.op.IntAttr("num_scan_inputs", 0);
    size_t n_state = body->inputs.size() >= static_cast<size_t>(k) ? body->inputs.size() - k : 0;
    size_t offset = c.NumIn() > body->inputs.size() ? c.NumIn() - body->inputs.size() : 0;
    Dim len = Dim{};
    std::vector<int64_t> in_axes = c.op.IntsAttr("scan_input_axes");
    size_t first_scan = offset + n_state;
    if (first_scan < c.NumIn() && c.Has(first_scan)) {
      const Shape& s = c.S(first_scan);
      int64_t ax = in_axes.empty() ? 0 : NormAxis(in_axes[0], s.size());
      if (offset == 1) ax = 1;  // Scan-8: batch first, sequence second
      if (ax >= 0 && ax < static_cast<int64_t>(s.size())) len = s[ax];
    }
    if (len.known() && c.op.FindAttr("ftax_repeat_applied") == nullptr) {
      MultiplyRepeat(body, static_cast<double>(len.value));
      c.op.attrs["ftax_repeat_applied"].kind = Attribute::Kind::kInt;
      c.op.attrs["ftax_repeat_applied"].i = len.value;
    }
    std::vector<int64_t> out_axes = c.op.IntsAttr("scan_output_axes");
    for (size_t i = 0; i < c.op.outputs.size() && i < body->outputs.size(); ++i) {
      const TensorInfo* t = body->Find(body->outputs[i]);
      if (!t || !t->has_shape) continue;
      if (i < n_state) {
        c.Set(i, t->dtype, t->shape);
      } else {
        Shape s = t->shape;
        size_t j = i - n_state;
        int64_t ax = j < out_axes.size() ? NormAxis(out_axes[j], s.size() + 1) : 0;
        if (offset == 1) ax = 1;
        ax = std::clamp<int64_t>(ax, 0, s.size());
        s.insert(s.begin() + ax, len);
        c.Set(i, t->dtype, s);
      }
    }
    return Status::Ok();
  }

  const ShapeInferenceOptions& options_;
  const std::map<std::string, int64_t>& opset_;
  std::vector<std::string>* warnings_;
  std::map<std::string, std::pair<std::string, int>> notes_;
};

}  // namespace

Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b) { return Broadcast(a, b); }

bool HasShapeInference(const std::string& domain, const std::string& op_type) {
  if (!IsOnnxDomain(domain)) return false;
  if (op_type == "If" || op_type == "Loop" || op_type == "Scan") return true;
  return Registry().count(op_type) > 0;
}

Status InferShapes(Graph* graph, const ShapeInferenceOptions& options) {
  std::vector<std::string> warnings;
  Walker w(options, graph->opset, &warnings);
  Status s = w.Walk(graph, nullptr, 0);
  if (!s.ok()) return s;
  w.Flush();
  graph->warnings.insert(graph->warnings.end(), warnings.begin(), warnings.end());
  return Status::Ok();
}

}  // namespace ftax
