// ftax's shape rules for aten ops (see torchscript_shapes.h).
#include "graph/torchscript_shapes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace ftax::ts {
namespace {

using Dims = std::vector<int64_t>;

int Rank(DType t) {  // promotion order within a category
  switch (t) {
    case DType::kBool: return 0;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 2;
    case DType::kInt16: return 3;
    case DType::kInt32: return 4;
    case DType::kInt64: return 5;
    case DType::kFloat8: return 10;
    case DType::kFloat16: return 11;
    case DType::kBFloat16: return 11;
    case DType::kFloat32: return 12;
    case DType::kFloat64: return 13;
    default: return -1;
  }
}
bool IsFloat(DType t) { return Rank(t) >= 10; }

c10::ScalarType ToScalarType(DType t) {
  switch (t) {
    case DType::kFloat32: return c10::kFloat;
    case DType::kFloat16: return c10::kHalf;
    case DType::kBFloat16: return c10::kBFloat16;
    case DType::kFloat64: return c10::kDouble;
    case DType::kInt64: return c10::kLong;
    case DType::kInt32: return c10::kInt;
    case DType::kInt16: return c10::kShort;
    case DType::kInt8: return c10::kChar;
    case DType::kUInt8: return c10::kByte;
    case DType::kBool: return c10::kBool;
    default: return c10::kFloat;
  }
}

std::string DimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

Status Bad(const std::string& op, const std::string& why) { return InvalidInput("aten::" + op + ": " + why); }

int64_t Wrap(int64_t dim, size_t rank) { return dim < 0 ? dim + static_cast<int64_t>(rank) : dim; }

Expected<Dims> Broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return InvalidInput("shapes " + DimsText(a) + " and " + DimsText(b) + " do not broadcast");
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace

DType FromScalarType(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat: return DType::kFloat32;
    case c10::kHalf: return DType::kFloat16;
    case c10::kBFloat16: return DType::kBFloat16;
    case c10::kDouble: return DType::kFloat64;
    case c10::kLong: return DType::kInt64;
    case c10::kInt: return DType::kInt32;
    case c10::kShort: return DType::kInt16;
    case c10::kChar: return DType::kInt8;
    case c10::kByte: return DType::kUInt8;
    case c10::kBool: return DType::kBool;
    default: return DType::kUnknown;
  }
}

std::string FirstLine(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return text;
}

Val PrimScalar(const std::string& kind, const std::vector<Val>& in, const Graph& g) {
  if (kind == "prim::dtype" && !in.empty() && in[0].kind == Val::kTensor) {
    const TensorInfo* t = g.Find(in[0].tensor);
    if (t) return Val::Int(static_cast<int64_t>(ToScalarType(t->dtype)));
  }
  // A model tensor's device is the GPU the model runs on (the loader walks the graph on the
  // CPU): `device=x.device` in scripted code makes a GPU tensor (predictor: HostPlacement),
  // and `x.is_cuda` is true, so scripted code that branches on it takes its GPU branch.
  if (kind == "prim::device") return Val::Str("cuda:0");
  if (kind == "prim::is_cuda") return Val::Bool(true);
  if (kind == "prim::requires_grad") return Val::Bool(false);  // inference
  return Val();
}

void SetAttr(Op* op, const std::string& name, const Val& v) {
  Attribute a;
  switch (v.kind) {
    case Val::kInt: a.kind = Attribute::Kind::kInt; a.i = v.i; break;
    case Val::kBool: a.kind = Attribute::Kind::kInt; a.i = v.b ? 1 : 0; break;
    case Val::kDouble: a.kind = Attribute::Kind::kFloat; a.f = v.d; break;
    case Val::kStr: a.kind = Attribute::Kind::kString; a.s = v.s; break;
    case Val::kList: {
      bool ints = true, dbls = true;
      for (const Val& e : v.items) {
        ints &= e.kind == Val::kInt || e.kind == Val::kBool;
        dbls &= e.kind == Val::kDouble || e.kind == Val::kInt;
      }
      if (v.items.empty() || ints) {
        a.kind = Attribute::Kind::kInts;
        for (const Val& e : v.items) a.ints.push_back(e.kind == Val::kBool ? e.b : e.i);
      } else if (dbls) {
        a.kind = Attribute::Kind::kFloats;
        for (const Val& e : v.items) a.floats.push_back(e.kind == Val::kInt ? static_cast<double>(e.i) : e.d);
      } else {
        return;
      }
      break;
    }
    default: return;
  }
  op->attrs[name] = std::move(a);
}

const TensorInfo* ShapeRules::T(const Val& v) const {
  return v.kind == Val::kTensor ? g_->Find(v.tensor) : nullptr;
}

Val ShapeRules::NewTensor(const Dims& dims, DType dt, std::optional<std::vector<int64_t>> values) {
  std::string name = "%" + std::to_string(next_++);
  TensorInfo& t = g_->Tensor(name);
  t.dtype = dt;
  t.has_shape = true;
  t.shape.clear();
  for (int64_t d : dims) t.shape.push_back(Dim::Known(d));
  t.int_values = std::move(values);
  return Val::Tensor(name);
}

Val ShapeRules::ConstantTensor(const at::Tensor& t, const std::string& name_in, bool is_parameter) {
  std::string name = name_in == "constant" ? "const." + std::to_string(next_const_++) : name_in;
  TensorInfo& info = g_->Tensor(name);
  info.dtype = FromScalarType(t.scalar_type());
  info.has_shape = true;
  info.shape.clear();
  for (int64_t d : t.sizes()) info.shape.push_back(Dim::Known(d));
  info.is_initializer = true;
  info.is_buffer = !is_parameter;
  if (!t.is_floating_point() && t.numel() <= 64 && t.device().is_cpu()) {
    at::Tensor l = t.to(c10::kLong).contiguous();
    info.int_values = std::vector<int64_t>(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
  } else if (name_in == "constant" && t.is_floating_point() && t.numel() <= 64 && t.device().is_cpu()) {
    // A small float constant of the code (not a weight): positions and offsets in shape math.
    at::Tensor l = t.to(c10::kDouble).contiguous();
    info.float_values = std::vector<double>(l.data_ptr<double>(), l.data_ptr<double>() + l.numel());
  }
  return Val::Tensor(name);
}

Val ShapeRules::NumToTensor(const Val& s) {
  if (s.kind == Val::kInt) return NewTensor({}, DType::kInt64, std::vector<int64_t>{s.i});
  if (s.kind == Val::kBool) return NewTensor({}, DType::kBool, std::vector<int64_t>{s.b});
  if (s.kind == Val::kDouble) {
    Val v = NewTensor({}, DType::kFloat64);
    g_->Tensor(v.tensor).float_values = std::vector<double>{s.d};
    return v;
  }
  return NewTensor({}, DType::kInt64);
}

namespace {

// Scalar shape arithmetic (TorchScript's int and float ops on sizes): a table from op name to
// a small function of the first two operands.
struct Numbers {
  double a = 0, b = 0;      // the first two operands (b is 0 for a unary op)
  int64_t ia = 0, ib = 0;   // the same as integers
  bool any_double = false;  // a float operand makes arithmetic results float
  Val Out(double x) const { return any_double ? Val::Double(x) : Val::Int(static_cast<int64_t>(x)); }
};
using Scalar = std::optional<Val>;
using ScalarFn = Expected<Scalar> (*)(const std::string& op, const Numbers& n);

Expected<Scalar> TrueDiv(const std::string& op, const Numbers& n) {
  if (n.b == 0) return Bad(op, "division by zero in shape arithmetic");
  return Scalar(Val::Double(n.a / n.b));
}

// Python's //: rounds towards negative infinity.
Expected<Scalar> FloorDiv(const std::string& op, const Numbers& n) {
  if (n.b == 0) return Bad(op, "division by zero in shape arithmetic");
  if (n.any_double) return Scalar(Val::Double(std::floor(n.a / n.b)));
  int64_t q = n.ia / n.ib;
  if ((n.ia % n.ib != 0) && ((n.ia < 0) != (n.ib < 0))) --q;
  return Scalar(Val::Int(q));
}

// Python's %: the sign of the divisor.
Expected<Scalar> Remainder(const std::string& op, const Numbers& n) {
  if (n.b == 0) return Bad(op, "division by zero in shape arithmetic");
  return Scalar(n.Out(n.a - n.b * std::floor(n.a / n.b)));
}

const std::unordered_map<std::string, ScalarFn>& ScalarRules() {
  using N = const Numbers&;
  using S = const std::string&;
  static const std::unordered_map<std::string, ScalarFn> table = {
      {"add", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(n.a + n.b)); }},
      {"sub", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(n.a - n.b)); }},
      {"mul", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(n.a * n.b)); }},
      {"div", TrueDiv},
      {"truediv", TrueDiv},
      {"floordiv", FloorDiv},
      {"floor_divide", FloorDiv},
      {"remainder", Remainder},
      {"fmod", Remainder},
      {"neg", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(-n.a)); }},
      {"pow", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(std::pow(n.a, n.b))); }},
      {"sqrt", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Double(std::sqrt(n.a))); }},
      {"ceil", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Int(static_cast<int64_t>(std::ceil(n.a)))); }},
      {"floor", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Int(static_cast<int64_t>(std::floor(n.a)))); }},
      {"max", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(std::max(n.a, n.b))); }},
      {"min", [](S, N n) -> Expected<Scalar> { return Scalar(n.Out(std::min(n.a, n.b))); }},
      {"eq", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a == n.b)); }},
      {"ne", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a != n.b)); }},
      {"lt", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a < n.b)); }},
      {"gt", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a > n.b)); }},
      {"le", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a <= n.b)); }},
      {"ge", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a >= n.b)); }},
      {"__and__", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a != 0 && n.b != 0)); }},
      {"__or__", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a != 0 || n.b != 0)); }},
      {"__not__", [](S, N n) -> Expected<Scalar> { return Scalar(Val::Bool(n.a == 0)); }},
  };
  return table;
}

bool IsNumber(const Val& v) { return v.kind == Val::kInt || v.kind == Val::kDouble || v.kind == Val::kBool; }

}  // namespace

Expected<std::optional<Val>> ShapeRules::ScalarOp(const std::string& kind, const std::vector<Val>& in) {
  const std::string op = kind.substr(6);
  using R = std::optional<Val>;
  // Tensor to scalar.
  if (op == "size" || op == "dim" || op == "numel" || op == "Int" || op == "Float" ||
      op == "ScalarImplicit" || op == "item" || op == "Bool") {
    const TensorInfo* t = in.empty() ? nullptr : T(in[0]);
    if (!t) {
      if (!in.empty() && IsNumber(in[0])) return R(in[0]);  // aten::Int(int) and friends
      return R(Val());
    }
    if (op == "size") {
      if (in.size() >= 2 && in[1].kind == Val::kInt) {
        int64_t d = Wrap(in[1].i, t->shape.size());
        if (d < 0 || d >= static_cast<int64_t>(t->shape.size()))
          return Bad("size", "dim " + std::to_string(in[1].i) + " out of range for rank " + std::to_string(t->shape.size()));
        return R(Val::Int(t->shape[static_cast<size_t>(d)].value));
      }
      std::vector<Val> dims;
      for (const Dim& d : t->shape) dims.push_back(Val::Int(d.value));
      return R(Val::List(dims));
    }
    if (op == "dim") return R(Val::Int(static_cast<int64_t>(t->shape.size())));
    if (op == "numel") return R(Val::Int(NumElements(t->shape).value_or(0)));
    if (t->int_values && t->int_values->size() == 1) {
      int64_t v = (*t->int_values)[0];
      if (op == "Float") return R(Val::Double(static_cast<double>(v)));
      if (op == "Bool") return R(Val::Bool(v != 0));
      return R(Val::Int(v));
    }
    if (t->float_values && t->float_values->size() == 1) {
      double v = (*t->float_values)[0];
      if (op == "Int") return R(Val::Int(static_cast<int64_t>(v)));
      if (op == "Bool") return R(Val::Bool(v != 0));
      return R(Val::Double(v));
    }
    return Bad(op, "the value of a computed tensor is needed for shapes, and ftax does not know it");
  }
  // Pure scalar arithmetic: every input a number.
  if (in.empty()) return R();
  if (!std::all_of(in.begin(), in.end(), IsNumber)) {
    if (op == "list" && in[0].kind == Val::kList) return R(in[0]);
    return R();
  }
  auto it = ScalarRules().find(op);
  if (it == ScalarRules().end()) return R();
  auto num = [](const Val& v) { return v.kind == Val::kDouble ? v.d : static_cast<double>(v.kind == Val::kBool ? v.b : v.i); };
  auto ival = [](const Val& v) { return v.kind == Val::kBool ? static_cast<int64_t>(v.b) : v.i; };
  Numbers n;
  n.any_double = std::any_of(in.begin(), in.end(), [](const Val& v) { return v.kind == Val::kDouble; });
  n.a = num(in[0]);
  n.ia = ival(in[0]);
  if (in.size() > 1) {
    n.b = num(in[1]);
    n.ib = ival(in[1]);
  }
  return it->second(op, n);
}


// ---------------------------------------------------------------------------------------------
// The rules. Each is a function from a RuleCall to the op's outputs; the table at the end maps
// op names to them. A rule that takes `const TensorInfo& self` runs only when the call's first
// argument is a tensor of known shape (Infer checks it); the others look at their arguments
// themselves.

using Outputs = Expected<std::vector<Val>>;

class ShapeRules::RuleCall {
 public:
  RuleCall(ShapeRules* rules, const Call& call)
      : op(call.op), call(call), self(call.args.empty() ? nullptr : rules->T(call.args[0].second)), rules_(rules) {}

  const std::string& op;
  const Call& call;
  const TensorInfo* self;  // the first argument, when it is a tensor of known shape

  const Val* Arg(const char* name) const { return call.Arg(name); }
  const TensorInfo* T(const Val& v) const { return rules_->T(v); }
  // The argument `name` when it is a tensor of known shape.
  const TensorInfo* Tensor(const char* name) const {
    const Val* v = Arg(name);
    return v ? T(*v) : nullptr;
  }
  // An int (or bool) argument; `fallback` when absent or of another kind.
  int64_t Int(const char* name, int64_t fallback) const {
    const Val* v = Arg(name);
    if (!v) return fallback;
    if (v->kind == Val::kInt) return v->i;
    if (v->kind == Val::kBool) return v->b;
    return fallback;
  }
  // The argument is given and its value known (not None).
  bool Has(const char* name) const {
    const Val* v = Arg(name);
    return v && v->kind != Val::kNone && v->kind != Val::kUnknown;
  }
  // An int list argument; a single int stands for itself (and is repeated to `n` if n > 0).
  bool Ints(const char* name, Dims* out, size_t n = 0) const {
    const Val* v = Arg(name);
    out->clear();
    if (!v) return false;
    if (v->kind == Val::kInt) {
      out->assign(n ? n : 1, v->i);
      return true;
    }
    if (v->kind != Val::kList) return false;
    for (const Val& e : v->items) {
      if (e.kind != Val::kInt) return false;
      out->push_back(e.i);
    }
    if (n && out->size() == 1) out->assign(n, (*out)[0]);
    return true;
  }
  // The `dtype=` argument, or `fallback` when it is absent or not a type ftax knows.
  DType DtypeArg(DType fallback) const {
    const Val* v = Arg("dtype");
    if (v && v->kind == Val::kInt) {
      DType d = FromScalarType(static_cast<c10::ScalarType>(v->i));
      if (d != DType::kUnknown) return d;
    }
    return fallback;
  }
  // The int argument `name` (default `fallback`) as a dim of a rank-`rank` tensor.
  Expected<size_t> DimArg(const char* name, int64_t fallback, size_t rank) const {
    int64_t d = Wrap(Int(name, fallback), rank);
    if (d < 0 || d >= static_cast<int64_t>(rank)) return Bad("dim out of range");
    return static_cast<size_t>(d);
  }

  // A new tensor of the graph.
  Val New(const Dims& dims, DType dt, std::optional<std::vector<int64_t>> values = std::nullopt) {
    return rules_->NewTensor(dims, dt, std::move(values));
  }
  // A new tensor whose values are known (as doubles; kept as int_values for an integer dtype,
  // float_values for a floating one).
  Val NewKnown(const Dims& dims, DType dt, std::optional<std::vector<double>> values) {
    Val v = New(dims, dt);
    if (values) {
      TensorInfo* t = &rules_->g_->Tensor(v.tensor);
      if (IsFloat(dt)) {
        t->float_values = std::move(values);
      } else {
        t->int_values.emplace();
        for (double x : *values) t->int_values->push_back(static_cast<int64_t>(x));
      }
    }
    return v;
  }
  // One output tensor.
  Outputs One(const Dims& dims, DType dt) { return std::vector<Val>{New(dims, dt)}; }
  // Two output tensors: values and their int64 indices (max along a dim, topk, sort, ...).
  Outputs WithIndices(const Dims& dims, DType dt) {
    return std::vector<Val>{New(dims, dt), New(dims, DType::kInt64)};
  }
  // "aten::OP: why".
  Status Bad(const std::string& why) const { return ftax::ts::Bad(op, why); }
  Status NoSelf() const { return Bad("first argument is not a tensor of known shape"); }

 private:
  ShapeRules* rules_;
};

namespace {

// The most elements of an integer tensor whose values the rules keep (arange, cat, slice):
// enough for positions along a sequence, small beside a graph.
constexpr size_t kMaxKnownValues = 4096;

using RuleCall = ShapeRules::RuleCall;

// A tensor's known values as doubles (integer constants and shape arithmetic, positions from
// arange, small float constants), or nullopt.
std::optional<std::vector<double>> Values(const TensorInfo& t) {
  if (t.int_values) return std::vector<double>(t.int_values->begin(), t.int_values->end());
  if (t.float_values) return t.float_values;
  return std::nullopt;
}

Dims DimsOf(const TensorInfo& t) {
  Dims d;
  for (const Dim& x : t.shape) d.push_back(x.value);
  return d;
}

Status NoRule(const std::string& op) { return Unsupported("aten::" + op + ": no shape rule"); }

// ---- Element-wise --------------------------------------------------------------------------

// Same shape and dtype as self: activations, unary math, norms, dropout, in-place updates.
Outputs SameShape(RuleCall& c, const TensorInfo& self) { return c.One(DimsOf(self), self.dtype); }

// neg, abs: same shape; the known values of a tensor (traced size() math, Funnel's
// arange bounds computed as -seq_len * 2) are carried through.
Outputs SignOp(RuleCall& c, const TensorInfo& self) {
  std::optional<std::vector<double>> vals = Values(self);
  if (vals)
    for (double& v : *vals) v = c.op == "abs" ? std::fabs(v) : -v;
  return std::vector<Val>{c.NewKnown(DimsOf(self), self.dtype, vals)};
}

// detach, clone, contiguous, alias: the same tensor, values and all.
Outputs Passthrough(RuleCall& c, const TensorInfo& self) {
  return std::vector<Val>{c.NewKnown(DimsOf(self), self.dtype, Values(self))};
}

// Same shape; `dtype=` may change the element type (softmax family).
Outputs SameShapeDtypeArg(RuleCall& c, const TensorInfo& self) {
  return c.One(DimsOf(self), c.DtypeArg(self.dtype));
}

// cumsum, cumprod: integral sums widen to int64.
Outputs Cumulative(RuleCall& c, const TensorInfo& self) {
  return c.One(DimsOf(self), c.DtypeArg(IsFloat(self.dtype) ? self.dtype : DType::kInt64));
}

// Arithmetic on 0-d tensors whose values are known (traced size() math, positions) keeps its
// value.
std::optional<std::vector<double>> Fold(const std::string& op, double a, double b, bool floating) {
  using V = std::vector<double>;
  std::optional<V> vals;
  if (op == "add") vals = V{a + b};
  if (op == "sub") vals = V{a - b};
  if (op == "rsub") vals = V{b - a};
  if (op == "mul") vals = V{a * b};
  if (op == "div" && b != 0) vals = V{floating ? a / b : std::trunc(a / b)};
  if (op == "floor_divide" && b != 0) vals = V{std::floor(a / b)};
  if (op == "remainder" && b != 0) vals = V{a - b * std::floor(a / b)};
  return vals;
}

// Over broadcast operands, with PyTorch's type promotion; `to_bool` for comparisons.
Outputs Broadcasting(RuleCall& c, bool to_bool) {
  Dims shape;
  DType dt = DType::kUnknown;
  bool have_tensor = false, any_float_tensor = false, double_scalar = false;
  std::vector<double> a_vals, b_vals;
  int k = 0;
  for (const auto& [name, v] : c.call.args) {
    if (name == "alpha" || name == "rounding_mode" || name == "out") continue;
    if (const TensorInfo* t = c.T(v)) {
      Dims d = DimsOf(*t);
      if (!have_tensor) {
        shape = d;
        dt = t->dtype;
      } else {
        Expected<Dims> b = Broadcast(shape, d);
        if (!b.ok()) return c.Bad(b.status().message());
        // Promotion: floating beats integral; a 0-dim tensor does not widen a tensor.
        if (IsFloat(t->dtype) != IsFloat(dt)) {
          if (IsFloat(t->dtype)) dt = t->dtype;
        } else if (!t->shape.empty() && Rank(t->dtype) > Rank(dt)) {
          dt = t->dtype;
        }
        shape = b.value();
      }
      any_float_tensor |= IsFloat(t->dtype);
      have_tensor = true;
      if (k < 2)
        if (std::optional<std::vector<double>> known = Values(*t)) (k == 0 ? a_vals : b_vals) = *known;
    } else if (v.kind == Val::kDouble) {
      double_scalar = true;
      if (k < 2) (k == 0 ? a_vals : b_vals) = {v.d};
    } else if (v.kind == Val::kInt && k < 2) {
      (k == 0 ? a_vals : b_vals) = {double(v.i)};
    }
    ++k;
  }
  if (!have_tensor) return c.Bad("no tensor operand");
  if (double_scalar && !any_float_tensor) dt = DType::kFloat32;
  if (c.op == "div" && !IsFloat(dt) && !c.Has("rounding_mode")) dt = DType::kFloat32;
  if (to_bool) dt = DType::kBool;
  std::optional<std::vector<double>> vals;
  if (a_vals.size() == 1 && b_vals.size() == 1 && shape.empty() && !to_bool)
    vals = Fold(c.op, a_vals[0], b_vals[0], IsFloat(dt));
  return std::vector<Val>{c.NewKnown(shape, dt, vals)};
}

// add, mul, pow, ...: broadcast, promoted.
Outputs Arithmetic(RuleCall& c) { return Broadcasting(c, false); }

// eq, lt, logical_and, isnan, ...: broadcast, bool.
Outputs Comparison(RuleCall& c) { return Broadcasting(c, true); }

// max/min: along `dim` values and indices; of self alone one value; else element-wise.
Outputs MaxMin(RuleCall& c) {
  if (c.Arg("dim")) {
    if (!c.self) return c.NoSelf();
    Dims d = DimsOf(*c.self);
    Expected<size_t> dim = c.DimArg("dim", 0, d.size());
    if (!dim.ok()) return dim.status();
    if (c.Int("keepdim", 0)) d[dim.value()] = 1;
    else d.erase(d.begin() + static_cast<long>(dim.value()));
    return c.WithIndices(d, c.self->dtype);
  }
  if (c.call.args.size() == 1) {
    if (!c.self) return c.NoSelf();
    return c.One({}, c.self->dtype);
  }
  return Arithmetic(c);
}

// where(condition, self, other): broadcast over all three, the values' promoted type.
Outputs Where(RuleCall& c) {
  if (c.call.args.size() < 3) return NoRule(c.op);
  Dims shape;
  DType dt = DType::kUnknown;
  for (size_t i = 0; i < 3; ++i) {
    const TensorInfo* t = c.T(c.call.args[i].second);
    if (!t) continue;
    Expected<Dims> b = Broadcast(shape, DimsOf(*t));
    if (!b.ok()) return c.Bad(b.status().message());
    shape = b.value();
    if (i > 0 && (dt == DType::kUnknown || Rank(t->dtype) > Rank(dt))) dt = t->dtype;
  }
  if (dt == DType::kUnknown) dt = DType::kFloat32;
  return c.One(shape, dt);
}

// to, type_as, _to_copy: self's shape in `other`'s or `dtype=`'s type.
Outputs To(RuleCall& c, const TensorInfo& self) {
  DType dt = self.dtype;
  if (const TensorInfo* other = c.Tensor("other")) dt = other->dtype;
  dt = c.DtypeArg(dt);
  std::optional<std::vector<double>> vals = Values(self);
  if (vals && !IsFloat(dt))
    for (double& v : *vals) v = std::trunc(v);
  return std::vector<Val>{c.NewKnown(DimsOf(self), dt, vals)};
}

// ---- Matmul and linear ---------------------------------------------------------------------

Outputs Linear(RuleCall& c, const TensorInfo& self) {
  const TensorInfo* w = c.Tensor("weight");
  if (!w || w->shape.empty()) return c.Bad("weight is not a tensor of known shape");
  Dims d = DimsOf(self);
  if (d.empty()) return c.Bad("input is a scalar");
  if (w->shape.size() == 2 && d.back() != w->shape[1].value)
    return c.Bad("input " + DimsText(d) + " does not match weight " + DimsText(DimsOf(*w)));
  d.back() = w->shape.size() == 2 ? w->shape[0].value : 1;
  if (w->shape.size() == 1) d.pop_back();
  return c.One(d, self.dtype);
}

// matmul, mm, bmm: vectors promoted and dropped again, batch dims broadcast.
Outputs Matmul(RuleCall& c) {
  const TensorInfo* a = c.self;
  const TensorInfo* b = c.call.args.size() > 1 ? c.T(c.call.args[1].second) : nullptr;
  if (!a || !b) return c.Bad("operands are not tensors of known shape");
  Dims x = DimsOf(*a), y = DimsOf(*b);
  if (x.empty() || y.empty()) return c.Bad("matmul of a scalar");
  bool vx = x.size() == 1, vy = y.size() == 1;
  if (vx) x.insert(x.begin(), 1);
  if (vy) y.push_back(1);
  if (x.back() != y[y.size() - 2])
    return c.Bad("inner dims differ: " + DimsText(DimsOf(*a)) + " @ " + DimsText(DimsOf(*b)));
  Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  Expected<Dims> batch = Broadcast(bx, by);
  if (!batch.ok()) return c.Bad(batch.status().message());
  Dims out = batch.value();
  if (!vx) out.push_back(x[x.size() - 2]);
  if (!vy) out.push_back(y.back());
  return c.One(out, a->dtype);
}

// The two matrix operands of addmm (mat1, mat2) or baddbmm/addbmm (batch1, batch2).
struct Factors {
  const TensorInfo* a;
  Dims x, y;
};
Expected<Factors> FactorsOf(RuleCall& c, const char* a_name, const char* b_name, size_t rank) {
  const TensorInfo* a = c.Tensor(a_name);
  const TensorInfo* b = c.Tensor(b_name);
  if (!a || !b) return c.Bad("operands are not tensors of known shape");
  Factors f{a, DimsOf(*a), DimsOf(*b)};
  if (f.x.size() != rank || f.y.size() != rank) return c.Bad("unexpected operand ranks");
  return f;
}

Outputs Addmm(RuleCall& c) {
  Expected<Factors> f = FactorsOf(c, "mat1", "mat2", 2);
  if (!f.ok()) return f.status();
  return c.One({f->x[0], f->y[1]}, f->a->dtype);
}

Outputs Baddbmm(RuleCall& c) {
  Expected<Factors> f = FactorsOf(c, "batch1", "batch2", 3);
  if (!f.ok()) return f.status();
  return c.One({f->x[0], f->x[1], f->y[2]}, f->a->dtype);
}

// addbmm sums the batch of products.
Outputs Addbmm(RuleCall& c) {
  Expected<Factors> f = FactorsOf(c, "batch1", "batch2", 3);
  if (!f.ok()) return f.status();
  return c.One({f->x[1], f->y[2]}, f->a->dtype);
}

// ---- Attention -----------------------------------------------------------------------------

Outputs ScaledDotProductAttention(RuleCall& c) {
  const TensorInfo* q = c.Tensor("query");
  const TensorInfo* v = c.Tensor("value");
  if (!q || !v || q->shape.size() < 2 || v->shape.empty())
    return c.Bad("query/value are not tensors of known shape");
  Dims out = DimsOf(*q);
  out.back() = v->shape.back().value;
  return c.One(out, q->dtype);
}

// nn.MultiheadAttention's inference fast path: the output and (not needed) weights.
Outputs NativeMultiHeadAttention(RuleCall& c) {
  const TensorInfo* q = c.Tensor("query");
  if (!q) return c.Bad("query is not a tensor of known shape");
  return std::vector<Val>{c.New(DimsOf(*q), q->dtype), c.New({0}, q->dtype)};
}

// ---- Convolution, pooling, resampling, padding ---------------------------------------------

// conv1d..3d, conv_transpose1d..3d, convolution, _convolution (transposed=).
Outputs Convolution(RuleCall& c, const TensorInfo& self) {
  const TensorInfo* w = c.Tensor("weight");
  if (!w || w->shape.size() < 3) return c.Bad("weight is not a tensor of known shape");
  Dims x = DimsOf(self), k = DimsOf(*w);
  const size_t n = k.size() - 2;
  const bool batched = x.size() == n + 2;
  if (!batched && x.size() != n + 1)
    return c.Bad("input rank " + std::to_string(x.size()) + " for a " + std::to_string(n) + "-D convolution");
  if (!batched) x.insert(x.begin(), 1);
  const bool transposed = c.op.rfind("conv_transpose", 0) == 0 || c.Int("transposed", 0) != 0;
  const int64_t groups = c.Int("groups", 1);
  Dims stride, pad, dil, opad;
  if (!c.Ints("stride", &stride, n)) stride.assign(n, 1);
  if (!c.Ints("dilation", &dil, n)) dil.assign(n, 1);
  if (!c.Ints("output_padding", &opad, n)) opad.assign(n, 0);
  const Val* pv = c.Arg("padding");
  bool same = pv && pv->kind == Val::kStr && pv->s == "same";
  if (pv && pv->kind == Val::kStr) pad.assign(n, 0);
  else if (!c.Ints("padding", &pad, n)) pad.assign(n, 0);
  if (stride.size() != n || pad.size() != n || dil.size() != n)
    return c.Bad("stride/padding/dilation of the wrong length");
  Dims out = {x[0], transposed ? k[1] * groups : k[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x[i + 2], kk = k[i + 2];
    int64_t o = same ? in
              : transposed ? (in - 1) * stride[i] - 2 * pad[i] + dil[i] * (kk - 1) + opad[i] + 1
                           : (in + 2 * pad[i] - dil[i] * (kk - 1) - 1) / stride[i] + 1;
    if (o <= 0) return c.Bad("output size " + std::to_string(o) + " along spatial dim " + std::to_string(i));
    out.push_back(o);
  }
  if (!batched) out.erase(out.begin());
  return c.One(out, self.dtype);
}

// max_poolND / avg_poolND (N from the op's name): the pooled shape.
Expected<Dims> PooledDims(RuleCall& c, const TensorInfo& self) {
  const size_t n = static_cast<size_t>(c.op[c.op.find("pool") + 4] - '0');
  Dims x = DimsOf(self), kernel, stride, pad, dil;
  if (x.size() < n + 1) return c.Bad("input rank too small");
  if (!c.Ints("kernel_size", &kernel, n)) return c.Bad("kernel_size not known");
  if (!c.Ints("stride", &stride, n) || stride.empty()) stride = kernel;
  if (!c.Ints("padding", &pad, n)) pad.assign(n, 0);
  if (!c.Ints("dilation", &dil, n)) dil.assign(n, 1);
  const bool ceil_mode = c.Int("ceil_mode", 0) != 0;
  Dims out(x.begin(), x.end() - static_cast<long>(n));
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x[x.size() - n + i];
    int64_t span = in + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1;
    int64_t o = (ceil_mode ? (span + stride[i] - 1) / stride[i] : span / stride[i]) + 1;
    if (ceil_mode && (o - 1) * stride[i] >= in + pad[i]) --o;
    out.push_back(o);
  }
  return out;
}

Outputs Pool(RuleCall& c, const TensorInfo& self) {
  Expected<Dims> out = PooledDims(c, self);
  if (!out.ok()) return out.status();
  return c.One(out.value(), self.dtype);
}

Outputs PoolWithIndices(RuleCall& c, const TensorInfo& self) {
  Expected<Dims> out = PooledDims(c, self);
  if (!out.ok()) return out.status();
  return c.WithIndices(out.value(), self.dtype);
}

// adaptive_*_pool: the trailing dims become output_size.
Expected<Dims> AdaptivePooledDims(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), size;
  if (!c.Ints("output_size", &size)) return c.Bad("output_size not known");
  if (x.size() < size.size()) return c.Bad("input rank too small");
  Dims out(x.begin(), x.end() - static_cast<long>(size.size()));
  out.insert(out.end(), size.begin(), size.end());
  return out;
}

Outputs AdaptiveAvgPool(RuleCall& c, const TensorInfo& self) {
  Expected<Dims> out = AdaptivePooledDims(c, self);
  if (!out.ok()) return out.status();
  return c.One(out.value(), self.dtype);
}

Outputs AdaptiveMaxPool(RuleCall& c, const TensorInfo& self) {
  Expected<Dims> out = AdaptivePooledDims(c, self);
  if (!out.ok()) return out.status();
  return c.WithIndices(out.value(), self.dtype);
}

// upsample_nearest2d, upsample_bilinear2d: output_size, or the input scaled by scale_factors.
Outputs Upsample2d(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), size;
  if (x.size() != 4) return c.Bad("expects a 4-D input");
  if (c.Ints("output_size", &size) && size.size() == 2) {
    x[2] = size[0];
    x[3] = size[1];
    return c.One(x, self.dtype);
  }
  const Val* sf = c.Arg("scale_factors");
  if (sf && sf->kind == Val::kList && sf->items.size() == 2) {
    for (size_t i = 0; i < 2; ++i) {
      double s = sf->items[i].kind == Val::kDouble ? sf->items[i].d : static_cast<double>(sf->items[i].i);
      x[2 + i] = static_cast<int64_t>(std::floor(static_cast<double>(x[2 + i]) * s));
    }
    return c.One(x, self.dtype);
  }
  return c.Bad("output size not known");
}

// constant_pad_nd, pad: (before, after) pairs from the last dim backwards.
Outputs Pad(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), pad;
  if (!c.Ints("pad", &pad) || pad.size() % 2 || pad.size() / 2 > x.size()) return c.Bad("pad not known");
  for (size_t i = 0; i < pad.size() / 2; ++i) x[x.size() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  return c.One(x, self.dtype);
}

// ---- Reductions ----------------------------------------------------------------------------

// The shape left after reducing `dim` (all dims when absent or []), kept as 1s with keepdim.
Expected<Dims> ReducedDims(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), dims;
  bool reduce_all = !c.Ints("dim", &dims);
  const bool keep = c.Int("keepdim", 0) != 0;
  std::vector<bool> red(x.size(), reduce_all);
  for (int64_t d : dims) {
    int64_t w = Wrap(d, x.size());
    if (w < 0 || w >= static_cast<int64_t>(x.size())) return c.Bad("dim " + std::to_string(d) + " out of range");
    red[static_cast<size_t>(w)] = true;
  }
  if (dims.empty() && !reduce_all) std::fill(red.begin(), red.end(), true);  // dim=[]
  Dims out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!red[i]) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Outputs Reduced(RuleCall& c, const TensorInfo& self, DType dt) {
  Expected<Dims> out = ReducedDims(c, self);
  if (!out.ok()) return out.status();
  return c.One(out.value(), dt);
}

// amax, amin, std, var, norm, logsumexp: self's type.
Outputs Reduce(RuleCall& c, const TensorInfo& self) { return Reduced(c, self, self.dtype); }

Outputs Mean(RuleCall& c, const TensorInfo& self) { return Reduced(c, self, c.DtypeArg(self.dtype)); }

// Integral sums and products widen to int64.
Outputs Sum(RuleCall& c, const TensorInfo& self) {
  return Reduced(c, self, c.DtypeArg(IsFloat(self.dtype) ? self.dtype : DType::kInt64));
}

Outputs Prod(RuleCall& c, const TensorInfo& self) {
  return Reduced(c, self, IsFloat(self.dtype) ? self.dtype : DType::kInt64);
}

// argmax, argmin, count_nonzero.
Outputs ReduceToIndex(RuleCall& c, const TensorInfo& self) { return Reduced(c, self, DType::kInt64); }

// all, any.
Outputs ReduceToBool(RuleCall& c, const TensorInfo& self) { return Reduced(c, self, DType::kBool); }

// topk: k along `dim`, values and indices.
Outputs TopK(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", -1, x.size());
  if (!d.ok()) return d.status();
  x[d.value()] = c.Int("k", 1);
  return c.WithIndices(x, self.dtype);
}

Outputs Sort(RuleCall& c, const TensorInfo& self) { return c.WithIndices(DimsOf(self), self.dtype); }

// ---- Views and reshapes --------------------------------------------------------------------

// view, reshape, _reshape_alias, _unsafe_view: the target shape, one -1 inferred.
Outputs View(RuleCall& c, const TensorInfo& self) {
  Dims size;
  if (!c.Ints(c.Arg("size") ? "size" : "shape", &size)) return c.Bad("target shape not known from shapes");
  int64_t total = NumElements(self.shape).value_or(-1), known = 1;
  int infer = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      if (infer >= 0) return c.Bad("more than one -1 in " + DimsText(size));
      infer = static_cast<int>(i);
    } else {
      known *= size[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return c.Bad("cannot view " + DimsText(DimsOf(self)) + " as " + DimsText(size));
    size[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return c.Bad("cannot view " + DimsText(DimsOf(self)) + " (" + std::to_string(total) + " elements) as " +
                 DimsText(size));
  }
  return c.One(size, self.dtype);
}

// view_as, reshape_as, expand_as: `other`'s shape.
Outputs ViewAs(RuleCall& c, const TensorInfo& self) {
  const TensorInfo* other = c.Tensor("other");
  if (!other) return c.Bad("other is not a tensor of known shape");
  return c.One(DimsOf(*other), self.dtype);
}

Outputs Flatten(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  if (x.empty()) return c.One({1}, self.dtype);
  int64_t s = Wrap(c.Int("start_dim", 0), x.size()), e = Wrap(c.Int("end_dim", -1), x.size());
  if (s < 0 || e >= static_cast<int64_t>(x.size()) || s > e) return c.Bad("start_dim/end_dim out of range");
  Dims out(x.begin(), x.begin() + s);
  int64_t p = 1;
  for (int64_t i = s; i <= e; ++i) p *= x[static_cast<size_t>(i)];
  out.push_back(p);
  out.insert(out.end(), x.begin() + e + 1, x.end());
  return c.One(out, self.dtype);
}

Outputs Unflatten(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), sizes;
  if (!c.Ints("sizes", &sizes)) return c.Bad("sizes not known");
  Expected<size_t> dim = c.DimArg("dim", 0, x.size());
  if (!dim.ok()) return dim.status();
  const auto d = static_cast<long>(dim.value());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) infer = static_cast<int64_t>(i);
    else known *= sizes[i];
  }
  if (infer >= 0 && known) sizes[static_cast<size_t>(infer)] = x[dim.value()] / known;
  Dims out(x.begin(), x.begin() + d);
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), x.begin() + d + 1, x.end());
  return c.One(out, self.dtype);
}

Outputs Permute(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), perm;
  if (!c.Ints("dims", &perm) || perm.size() != x.size())
    return c.Bad("dims do not match rank " + std::to_string(x.size()));
  Dims out;
  for (int64_t p : perm) {
    int64_t w = Wrap(p, x.size());
    if (w < 0 || w >= static_cast<int64_t>(x.size())) return c.Bad("dim out of range");
    out.push_back(x[static_cast<size_t>(w)]);
  }
  return c.One(out, self.dtype);
}

// transpose(dim0, dim1), swapaxes(axis0, axis1).
Outputs Transpose(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  int64_t a = Wrap(c.Int("dim0", c.Int("axis0", 0)), x.size()), b = Wrap(c.Int("dim1", c.Int("axis1", 1)), x.size());
  if (a < 0 || b < 0 || a >= static_cast<int64_t>(x.size()) || b >= static_cast<int64_t>(x.size()))
    return c.Bad("dims out of range for rank " + std::to_string(x.size()));
  std::swap(x[static_cast<size_t>(a)], x[static_cast<size_t>(b)]);
  return c.One(x, self.dtype);
}

// t: a matrix transposed; vectors and scalars as they are.
Outputs T2d(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  if (x.size() == 2) std::swap(x[0], x[1]);
  return c.One(x, self.dtype);
}

Outputs Unsqueeze(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size() + 1);
  if (!d.ok()) return d.status();
  x.insert(x.begin() + static_cast<long>(d.value()), 1);
  return c.One(x, self.dtype);
}

// squeeze: the size-1 dims among `dim` (all when absent) removed.
Outputs Squeeze(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), dims, out;
  const bool all = !c.Ints("dim", &dims);
  std::vector<bool> sq(x.size(), all);
  for (int64_t d : dims) {
    int64_t w = Wrap(d, x.size());
    if (w >= 0 && w < static_cast<int64_t>(x.size())) sq[static_cast<size_t>(w)] = true;
  }
  for (size_t i = 0; i < x.size(); ++i)
    if (!(sq[i] && x[i] == 1)) out.push_back(x[i]);
  return c.One(out, self.dtype);
}

Outputs Expand(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), size;
  if (!c.Ints("size", &size)) return c.Bad("size not known from shapes");
  if (size.size() < x.size()) return c.Bad("expanding to fewer dims");
  Dims out = size;
  const size_t lead = size.size() - x.size();
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      if (i < lead) return c.Bad("-1 in a new leading dim");
      out[i] = x[i - lead];
    } else if (i >= lead && x[i - lead] != 1 && x[i - lead] != size[i]) {
      return c.Bad("cannot expand " + DimsText(x) + " to " + DimsText(size));
    }
  }
  return c.One(out, self.dtype);
}

Outputs Repeat(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self), rep;
  if (!c.Ints("repeats", &rep) || rep.size() < x.size()) return c.Bad("repeats not known");
  Dims out = rep;
  for (size_t i = 0; i < x.size(); ++i) out[rep.size() - x.size() + i] *= x[i];
  return c.One(out, self.dtype);
}

// ---- Indexing, slicing, splitting, joining -------------------------------------------------

// The dim slice and narrow cut.
Expected<size_t> CutDim(RuleCall& c, const Dims& x) {
  if (x.empty()) return c.Bad("slice of a scalar");
  return c.DimArg("dim", 0, x.size());
}

// slice(dim, start, end, step), negative and out-of-range bounds clamped as Python does.
Outputs Slice(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = CutDim(c, x);
  if (!d.ok()) return d.status();
  const int64_t len = x[d.value()];
  const Val* sv = c.Arg("start");
  const Val* ev = c.Arg("end");
  int64_t start = sv && sv->kind == Val::kInt ? sv->i : 0;
  int64_t end = ev && ev->kind == Val::kInt ? ev->i : std::numeric_limits<int64_t>::max();
  int64_t step = c.Int("step", 1);
  if (step <= 0) return c.Bad("step must be positive");
  if (start < 0) start += len;
  if (end < 0) end += len;
  start = std::clamp<int64_t>(start, 0, len);
  end = std::clamp<int64_t>(end, start, len);
  x[d.value()] = (end - start + step - 1) / step;
  std::optional<std::vector<double>> vals, in = Values(self);
  if (in && x.size() == 1 && static_cast<int64_t>(in->size()) == len) {
    vals.emplace();
    for (int64_t i = start; i < end; i += step) vals->push_back((*in)[static_cast<size_t>(i)]);
  }
  return std::vector<Val>{c.NewKnown(x, self.dtype, vals)};
}

Outputs Narrow(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = CutDim(c, x);
  if (!d.ok()) return d.status();
  x[d.value()] = c.Int("length", 0);
  return c.One(x, self.dtype);
}

Outputs Select(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size());
  if (!d.ok()) return d.status();
  // Of a 1-D tensor whose values are known (positions from arange, traced size math),
  // the element's value is known too.
  std::optional<std::vector<double>> vals, in = Values(self);
  if (in && x.size() == 1 && static_cast<int64_t>(in->size()) == x[0]) {
    int64_t i = c.Int("index", 0);
    if (i < 0) i += x[0];
    if (i < 0 || i >= x[0]) return c.Bad("index " + std::to_string(c.Int("index", 0)) + " out of range");
    vals = std::vector<double>{(*in)[static_cast<size_t>(i)]};
  }
  x.erase(x.begin() + static_cast<long>(d.value()));
  return std::vector<Val>{c.NewKnown(x, self.dtype, vals)};
}

// index(self, indices): advanced indexing with integer tensors (None keeps a dim). Adjacent
// indexed dims are replaced in place by the indices' broadcast shape, others move to the front.
Outputs Index(RuleCall& c, const TensorInfo& self) {
  const Val* idx = c.Arg("indices");
  if (!idx || idx->kind != Val::kList) return c.Bad("indices not known");
  Dims x = DimsOf(self), bshape;
  std::vector<int> indexed;
  for (size_t i = 0; i < idx->items.size(); ++i) {
    const TensorInfo* t = c.T(idx->items[i]);
    if (!t) continue;
    Dims d = DimsOf(*t);
    if (t->dtype == DType::kBool) return c.Bad("boolean-mask indexing has a data-dependent shape");
    Expected<Dims> b = Broadcast(bshape, d);
    if (!b.ok()) return c.Bad(b.status().message());
    bshape = b.value();
    indexed.push_back(static_cast<int>(i));
  }
  if (indexed.empty()) return c.One(x, self.dtype);
  bool adjacent = true;
  for (size_t i = 1; i < indexed.size(); ++i) adjacent &= indexed[i] == indexed[i - 1] + 1;
  Dims out;
  if (adjacent) {
    out.assign(x.begin(), x.begin() + indexed.front());
    out.insert(out.end(), bshape.begin(), bshape.end());
    out.insert(out.end(), x.begin() + indexed.back() + 1, x.end());
  } else {
    out = bshape;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::find(indexed.begin(), indexed.end(), static_cast<int>(i)) == indexed.end()) out.push_back(x[i]);
  }
  return c.One(out, self.dtype);
}

// gather: the index's shape.
Outputs Gather(RuleCall& c, const TensorInfo& self) {
  const TensorInfo* idx = c.Tensor("index");
  if (!idx) return c.Bad("index is not a tensor of known shape");
  return c.One(DimsOf(*idx), self.dtype);
}

Outputs IndexSelect(RuleCall& c, const TensorInfo& self) {
  const TensorInfo* idx = c.Tensor("index");
  if (!idx) return c.Bad("index is not a tensor of known shape");
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size());
  if (!d.ok()) return d.status();
  x[d.value()] = NumElements(idx->shape).value_or(0);
  return c.One(x, self.dtype);
}

// embedding(weight, indices): one weight row per index.
Outputs Embedding(RuleCall& c) {
  const TensorInfo* w = c.Tensor("weight");
  const TensorInfo* idx = c.Tensor("indices");
  if (!w || !idx || w->shape.size() != 2) return c.Bad("weight/indices are not tensors of known shape");
  Dims out = DimsOf(*idx);
  out.push_back(w->shape[1].value);
  return c.One(out, w->dtype);
}

// A list output: self cut along dim `d` into pieces of the given lengths.
Outputs Pieces(RuleCall& c, const TensorInfo& self, Dims x, size_t d, const Dims& lengths) {
  std::vector<Val> parts;
  for (int64_t s : lengths) {
    x[d] = s;
    parts.push_back(c.New(x, self.dtype));
  }
  return std::vector<Val>{Val::List(parts)};
}

// split, split_with_sizes, tensor_split: pieces of split_size (the last shorter), or of the
// listed sizes.
Outputs Split(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size());
  if (!d.ok()) return d.status();
  const int64_t len = x[d.value()];
  const char* sizes_arg = c.op == "split_with_sizes" ? "split_sizes" : "split_size";
  Dims sizes;
  const Val* sv = c.Arg(sizes_arg);
  if (!sv) sv = c.Arg("split_size_or_sections");
  if (sv && sv->kind == Val::kInt) {
    if (sv->i <= 0) return c.Bad("split size must be positive");
    for (int64_t done = 0; done < len; done += sv->i) sizes.push_back(std::min(sv->i, len - done));
  } else if (!c.Ints(sizes_arg, &sizes)) {
    return c.Bad("split sizes not known");
  }
  return Pieces(c, self, x, d.value(), sizes);
}

// chunk: `chunks` pieces of ceil(len / chunks), fewer when they run out.
Outputs Chunk(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size());
  if (!d.ok()) return d.status();
  const int64_t len = x[d.value()];
  int64_t chunks = c.Int("chunks", 1);
  if (chunks <= 0) return c.Bad("chunks must be positive");
  int64_t each = (len + chunks - 1) / chunks;
  Dims sizes;
  for (int64_t done = 0; done < len; done += each) sizes.push_back(std::min(each, len - done));
  return Pieces(c, self, x, d.value(), sizes);
}

// unbind: one piece per index along dim, without that dim.
Outputs Unbind(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", 0, x.size());
  if (!d.ok()) return d.status();
  const int64_t len = x[d.value()];
  Dims y = x;
  y.erase(y.begin() + static_cast<long>(d.value()));
  std::vector<Val> parts;
  for (int64_t i = 0; i < len; ++i) parts.push_back(c.New(y, self.dtype));
  return std::vector<Val>{Val::List(parts)};
}

// cat/concat (legacy empty [0] operands skipped) and stack (a new dim): the widest dtype.
Outputs Join(RuleCall& c, bool stack) {
  const Val* tv = c.Arg("tensors");
  if (!tv || tv->kind != Val::kList || tv->items.empty()) return c.Bad("tensors not known");
  Dims out;
  DType dt = DType::kUnknown;
  bool first = true;
  int64_t dim = c.Int("dim", 0);
  for (const Val& v : tv->items) {
    const TensorInfo* t = c.T(v);
    if (!t) return c.Bad("an operand is not a tensor of known shape");
    Dims d = DimsOf(*t);
    if (!stack && d.size() == 1 && d[0] == 0) continue;  // legacy empty tensors
    if (dt == DType::kUnknown || Rank(t->dtype) > Rank(dt)) dt = t->dtype;
    if (first) {
      first = false;
      out = d;
      const size_t rank = stack ? d.size() + 1 : d.size();
      dim = Wrap(dim, rank);
      if (dim < 0 || dim >= static_cast<int64_t>(rank)) return c.Bad("dim out of range");
      if (stack) out.insert(out.begin() + dim, 1);
      continue;
    }
    if (stack) {
      out[static_cast<size_t>(dim)] += 1;
    } else {
      if (d.size() != out.size()) return c.Bad("operands of different rank");
      out[static_cast<size_t>(dim)] += d[static_cast<size_t>(dim)];
    }
  }
  if (first) return c.Bad("no non-empty operand");
  // Joining 1-D (cat) or 0-d (stack) tensors whose values are all known.
  std::optional<std::vector<double>> vals;
  if (out.size() == 1) {
    vals.emplace();
    for (const Val& v : tv->items) {
      std::optional<std::vector<double>> part = Values(*c.T(v));
      if (!part || vals->size() + part->size() > kMaxKnownValues) {
        vals.reset();
        break;
      }
      vals->insert(vals->end(), part->begin(), part->end());
    }
    if (vals && static_cast<int64_t>(vals->size()) != out[0]) vals.reset();
  }
  return std::vector<Val>{c.NewKnown(out, dt, vals)};
}

Outputs Cat(RuleCall& c) { return Join(c, false); }
Outputs Stack(RuleCall& c) { return Join(c, true); }

// diff: n fewer along dim, after prepend/append.
Outputs Diff(RuleCall& c, const TensorInfo& self) {
  Dims x = DimsOf(self);
  Expected<size_t> d = c.DimArg("dim", -1, x.size());
  if (!d.ok()) return d.status();
  int64_t len = x[d.value()];
  for (const char* extra : {"prepend", "append"})
    if (const TensorInfo* t = c.Tensor(extra)) len += t->shape.size() == x.size() ? t->shape[d.value()].value : 1;
  x[d.value()] = std::max<int64_t>(0, len - c.Int("n", 1));
  return c.One(x, self.dtype);
}

// ---- Creation ------------------------------------------------------------------------------

// arange(start, end, step): ceil((end - start) / step) values, float when any bound is.
Outputs Arange(RuleCall& c) {
  auto num = [&](const char* n, double fb, bool* is_double) {
    const Val* v = c.Arg(n);
    if (!v) return fb;
    if (v->kind == Val::kDouble) {
      *is_double = true;
      return v->d;
    }
    if (v->kind == Val::kInt) return static_cast<double>(v->i);
    return fb;
  };
  bool dbl = false;
  double start = num("start", 0, &dbl), end = num("end", 0, &dbl), step = num("step", 1, &dbl);
  if (!c.Arg("end")) return c.Bad("end not known");
  if (step == 0) return c.Bad("step is 0");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  const DType dt = c.DtypeArg(dbl ? DType::kFloat32 : DType::kInt64);
  // Positions are kept as values (up to kMaxKnownValues) for the shape math that selects and
  // slices them (Funnel's relative positions).
  std::optional<std::vector<double>> vals;
  if (n <= static_cast<int64_t>(kMaxKnownValues)) {
    vals.emplace();
    for (int64_t i = 0; i < n; ++i) vals->push_back(IsFloat(dt) ? start + double(i) * step : std::trunc(start + double(i) * step));
  }
  return std::vector<Val>{c.NewKnown({n}, dt, vals)};
}

// A factory of `size`, of `dtype=` or else `fallback`.
Outputs Sized(RuleCall& c, DType fallback) {
  Dims size;
  if (!c.Ints("size", &size)) return c.Bad("size not known from shapes");
  return c.One(size, c.DtypeArg(fallback));
}

// zeros, ones, empty, rand, randn: float32 by default.
Outputs Factory(RuleCall& c) { return Sized(c, DType::kFloat32); }

// full: the fill value's type by default.
Outputs Full(RuleCall& c) {
  const Val* fv = c.Arg("fill_value");
  DType fb = DType::kFloat32;
  if (fv && fv->kind == Val::kInt) fb = DType::kInt64;
  if (fv && fv->kind == Val::kBool) fb = DType::kBool;
  return Sized(c, fb);
}

// new_zeros, new_ones, new_empty, new_full: self's type by default.
Outputs NewFactory(RuleCall& c) { return Sized(c, c.self ? c.self->dtype : DType::kFloat32); }

Outputs ScalarTensor(RuleCall& c) { return c.One({}, c.DtypeArg(DType::kFloat32)); }

// zeros_like, ones_like, ...: self's shape, self's type unless dtype= is given.
Outputs Like(RuleCall& c, const TensorInfo& self) { return c.One(DimsOf(self), c.DtypeArg(self.dtype)); }

// ---- The table -----------------------------------------------------------------------------

// A rule is either a Fn or a SelfFn; Infer calls a SelfFn only with the first argument a
// tensor of known shape.
using Fn = Outputs (*)(RuleCall&);
using SelfFn = Outputs (*)(RuleCall&, const TensorInfo&);
struct Rule {
  Fn fn = nullptr;
  SelfFn self_fn = nullptr;
};

class RuleTable {
 public:
  void Add(Fn fn, std::initializer_list<const char*> ops) { Put(ops, Rule{fn, nullptr}); }
  void Add(SelfFn fn, std::initializer_list<const char*> ops) { Put(ops, Rule{nullptr, fn}); }
  const Rule* Find(const std::string& op) const {
    auto it = rules_.find(op);
    return it == rules_.end() ? nullptr : &it->second;
  }

 private:
  void Put(std::initializer_list<const char*> ops, Rule r) {
    for (const char* op : ops)  // one rule per op: a second is a mistake in the table below
      if (!rules_.emplace(op, r).second) throw std::logic_error(std::string("two shape rules for aten::") + op);
  }
  std::unordered_map<std::string, Rule> rules_;
};

const RuleTable& Rules() {
  static const RuleTable table = [] {
    RuleTable t;
    // Element-wise.
    t.Add(SameShape, {"relu", "relu_", "relu6", "gelu", "gelu_", "silu", "silu_", "tanh", "tanh_", "sigmoid",
                      "sigmoid_", "hardtanh", "hardtanh_", "hardswish", "hardswish_", "hardsigmoid",
                      "hardsigmoid_", "mish", "elu", "selu", "celu", "softplus", "leaky_relu", "leaky_relu_",
                      "dropout", "dropout_", "feature_dropout", "alpha_dropout", "layer_norm", "batch_norm", "group_norm",
                      "instance_norm", "rms_norm", "exp", "log", "sqrt", "rsqrt", "erf",
                      "sin", "cos", "reciprocal", "sign", "floor", "ceil", "round", "clamp", "clamp_",
                      "clamp_min", "clamp_max", "masked_fill", "masked_fill_", "fill_", "zero_", "tril",
                      "triu", "roll", "flip", "copy_", "add_", "sub_", "mul_", "div_", "bitwise_not",
                      "square", "exp_", "log1p", "expm1", "trunc", "frac", "nan_to_num", "logit",
                      "erfinv", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "threshold",
                      "glu_", "clamp_max_", "clamp_min_", "hardshrink", "softshrink", "tanhshrink",
                      "sigmoid_backward", "bernoulli", "normal_", "uniform_", "_weight_norm"});
    t.Add(SignOp, {"neg", "abs"});
    t.Add(Passthrough, {"contiguous", "clone", "detach", "alias", "lift_fresh"});
    t.Add(SameShapeDtypeArg, {"softmax", "log_softmax", "_softmax", "_log_softmax"});
    t.Add(Cumulative, {"cumsum", "cumprod"});
    t.Add(Arithmetic, {"add", "sub", "mul", "div", "rsub", "pow", "maximum", "minimum", "floor_divide",
                       "remainder", "fmod", "atan2", "true_divide", "xlogy", "hypot", "copysign", "lerp"});
    t.Add(MaxMin, {"max", "min"});
    t.Add(Comparison, {"eq", "ne", "lt", "gt", "le", "ge", "__and__", "__or__", "__xor__", "bitwise_and",
                       "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logical_not",
                       "isnan", "isinf", "isfinite", "__iand__", "__ior__"});
    t.Add(Where, {"where"});
    t.Add(To, {"to", "type_as", "_to_copy"});
    // Matmul and linear.
    t.Add(Linear, {"linear"});
    t.Add(Matmul, {"matmul", "mm", "bmm"});
    t.Add(Addmm, {"addmm"});
    t.Add(Baddbmm, {"baddbmm"});
    t.Add(Addbmm, {"addbmm"});
    // Attention.
    t.Add(ScaledDotProductAttention, {"scaled_dot_product_attention"});
    t.Add(NativeMultiHeadAttention, {"_native_multi_head_attention"});
    // Convolution, pooling, resampling, padding.
    t.Add(Convolution, {"_convolution", "convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d"});
    t.Add(Pool, {"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d"});
    t.Add(PoolWithIndices, {"max_pool2d_with_indices"});
    t.Add(AdaptiveAvgPool, {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"});
    t.Add(AdaptiveMaxPool, {"adaptive_max_pool1d", "adaptive_max_pool2d"});
    t.Add(Upsample2d, {"upsample_nearest2d", "upsample_bilinear2d"});
    t.Add(Pad, {"constant_pad_nd", "pad"});
    // Reductions.
    t.Add(Reduce, {"amax", "amin", "std", "var", "norm", "logsumexp"});
    t.Add(Mean, {"linalg_vector_norm"});  // (self, ord, dim, keepdim, dtype=)
    t.Add(Mean, {"mean"});
    t.Add(Sum, {"sum"});
    t.Add(Prod, {"prod"});
    t.Add(ReduceToIndex, {"argmax", "argmin", "count_nonzero"});
    t.Add(ReduceToBool, {"all", "any"});
    t.Add(TopK, {"topk"});
    t.Add(Sort, {"sort"});
    // Views and reshapes.
    t.Add(View, {"view", "reshape", "_reshape_alias", "_unsafe_view"});
    t.Add(ViewAs, {"view_as", "reshape_as", "expand_as"});
    t.Add(Flatten, {"flatten"});
    t.Add(Unflatten, {"unflatten"});
    t.Add(Permute, {"permute"});
    t.Add(Transpose, {"transpose", "swapaxes"});
    t.Add(T2d, {"t"});
    t.Add(Unsqueeze, {"unsqueeze"});
    t.Add(Squeeze, {"squeeze"});
    t.Add(Expand, {"expand"});
    t.Add(Repeat, {"repeat"});
    // Indexing, slicing, splitting, joining.
    t.Add(Slice, {"slice"});
    t.Add(Narrow, {"narrow"});
    t.Add(Select, {"select"});
    t.Add(Index, {"index"});
    t.Add(Gather, {"gather"});
    t.Add(IndexSelect, {"index_select"});
    t.Add(Embedding, {"embedding"});
    t.Add(Split, {"split", "split_with_sizes", "tensor_split"});
    t.Add(Chunk, {"chunk"});
    t.Add(Unbind, {"unbind"});
    t.Add(Cat, {"cat", "concat"});
    t.Add(Stack, {"stack"});
    t.Add(Diff, {"diff"});
    // Creation.
    t.Add(Arange, {"arange"});
    t.Add(Factory, {"zeros", "ones", "empty", "rand", "randn"});
    t.Add(Full, {"full"});
    t.Add(NewFactory, {"new_zeros", "new_ones", "new_empty", "new_full"});
    t.Add(ScalarTensor, {"scalar_tensor"});
    t.Add(Like, {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"});
    return t;
  }();
  return table;
}

}  // namespace

Expected<std::vector<Val>> ShapeRules::Infer(const Call& call) {
  const Rule* rule = Rules().Find(call.op);
  if (!rule) return NoRule(call.op);
  RuleCall c(this, call);
  if (!rule->self_fn) return rule->fn(c);
  if (!c.self) return c.NoSelf();
  return rule->self_fn(c, *c.self);
}

Expected<std::vector<Val>> ShapeRules::RunMeta(const torch::jit::Node* node, const Call& call) {
  torch::jit::Stack stack;
  const c10::FunctionSchema* schema = node->maybeSchema();
  std::function<Expected<c10::IValue>(const Val&, const c10::TypePtr&)> to_iv =
      [&](const Val& v, const c10::TypePtr& type) -> Expected<c10::IValue> {
    switch (v.kind) {
      case Val::kNone: return c10::IValue();
      case Val::kInt: return c10::IValue(v.i);
      case Val::kDouble: return c10::IValue(v.d);
      case Val::kBool: return c10::IValue(v.b);
      case Val::kStr:
        if (type && (type->kind() == c10::TypeKind::DeviceObjType ||
                     (type->kind() == c10::TypeKind::OptionalType &&
                      type->containedTypes()[0]->kind() == c10::TypeKind::DeviceObjType)))
          return c10::IValue(c10::Device(c10::kMeta));
        return c10::IValue(v.s);
      case Val::kTensor: {
        const TensorInfo* t = T(v);
        if (!t) return InvalidInput("tensor without shape");
        std::vector<int64_t> d;
        for (const Dim& x : t->shape) d.push_back(x.value);
        return c10::IValue(at::empty(d, at::TensorOptions().dtype(ToScalarType(t->dtype)).device(c10::kMeta)));
      }
      case Val::kList: {
        bool tensors = !v.items.empty() && v.items[0].kind == Val::kTensor;
        bool ints = true, dbls = true;
        for (const Val& e : v.items) {
          ints &= e.kind == Val::kInt;
          dbls &= e.kind == Val::kDouble;
        }
        if (tensors) {
          c10::List<at::Tensor> l;
          for (const Val& e : v.items) {
            Expected<c10::IValue> x = to_iv(e, nullptr);
            if (!x.ok()) return x.status();
            l.push_back(x->toTensor());
          }
          return c10::IValue(l);
        }
        if (ints) return c10::IValue(c10::List<int64_t>([&] {
          std::vector<int64_t> x;
          for (const Val& e : v.items) x.push_back(e.i);
          return x;
        }()));
        if (dbls) return c10::IValue(c10::List<double>([&] {
          std::vector<double> x;
          for (const Val& e : v.items) x.push_back(e.d);
          return x;
        }()));
        return InvalidInput("a list argument of mixed or unknown values");
      }
      default: return InvalidInput("an argument whose value is not known");
    }
  };
  for (size_t i = 0; i < call.args.size(); ++i) {
    c10::TypePtr type = schema && i < schema->arguments().size() ? schema->arguments()[i].type() : nullptr;
    Expected<c10::IValue> iv = to_iv(call.args[i].second, type);
    if (!iv.ok()) return Bad(call.op, "argument '" + call.args[i].first + "': " + iv.status().message());
    stack.push_back(std::move(iv.value()));
  }
  try {
    torch::jit::Operation op = node->getOperation();
    op(stack);
  } catch (const std::exception& e) {
    return Bad(call.op, FirstLine(e.what()));
  }
  std::vector<Val> outs;
  std::function<Val(const c10::IValue&)> from = [&](const c10::IValue& iv) -> Val {
    if (iv.isTensor()) {
      const at::Tensor& t = iv.toTensor();
      return NewTensor(t.sizes().vec(), FromScalarType(t.scalar_type()));
    }
    if (iv.isTensorList()) {
      std::vector<Val> items;
      for (const at::Tensor& t : iv.toTensorVector()) items.push_back(NewTensor(t.sizes().vec(), FromScalarType(t.scalar_type())));
      return Val::List(items);
    }
    if (iv.isInt()) return Val::Int(iv.toInt());
    if (iv.isDouble()) return Val::Double(iv.toDouble());
    if (iv.isBool()) return Val::Bool(iv.toBool());
    if (iv.isNone()) return Val::None();
    if (iv.isTuple()) {
      std::vector<Val> items;
      for (const c10::IValue& e : iv.toTupleRef().elements()) items.push_back(from(e));
      return Val::List(items);
    }
    return Val();
  };
  for (const c10::IValue& iv : stack) outs.push_back(from(iv));
  return outs;
}

std::string ShapeRules::Compare(const std::vector<Val>& a, const std::vector<Val>& b) const {
  if (a.size() != b.size()) return std::to_string(a.size()) + " outputs vs " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind) return "output " + std::to_string(i) + " differs in kind";
    if (a[i].kind == Val::kList) {
      std::string d = Compare(a[i].items, b[i].items);
      if (!d.empty()) return d;
      continue;
    }
    const TensorInfo* x = T(a[i]);
    const TensorInfo* y = T(b[i]);
    if (!x || !y) continue;
    if (!(x->shape == y->shape) || x->dtype != y->dtype)
      return "output " + std::to_string(i) + ": ftax " + ShapeToString(x->shape) + " " + DTypeName(x->dtype) +
             ", meta " + ShapeToString(y->shape) + " " + DTypeName(y->dtype);
  }
  return "";
}

}  // namespace ftax::ts
