// ftax's shape rules for aten ops (see torchscript_shapes.h).
#include "graph/torchscript_shapes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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

#define REQUIRE_SELF()                 \
  do {                                 \
    Status s_ = need_self();           \
    if (!s_.ok()) return s_;           \
  } while (0)

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
  if (kind == "prim::device") return Val::Str("cpu");
  if (kind == "prim::requires_grad" || kind == "prim::is_cuda") return Val::Bool(false);
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
  }
  return Val::Tensor(name);
}

Val ShapeRules::NumToTensor(const Val& s) {
  if (s.kind == Val::kInt) return NewTensor({}, DType::kInt64, std::vector<int64_t>{s.i});
  if (s.kind == Val::kBool) return NewTensor({}, DType::kBool, std::vector<int64_t>{s.b});
  return NewTensor({}, s.kind == Val::kDouble ? DType::kFloat64 : DType::kInt64);
}

Expected<std::optional<Val>> ShapeRules::ScalarOp(const std::string& kind, const std::vector<Val>& in) {
  const std::string op = kind.substr(6);
  using R = std::optional<Val>;
  // Tensor to scalar.
  if (op == "size" || op == "dim" || op == "numel" || op == "Int" || op == "Float" ||
      op == "ScalarImplicit" || op == "item" || op == "Bool") {
    const TensorInfo* t = in.empty() ? nullptr : T(in[0]);
    if (!t) {
      if (!in.empty() && (in[0].kind == Val::kInt || in[0].kind == Val::kDouble || in[0].kind == Val::kBool))
        return R(in[0]);  // aten::Int(int) and friends
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
    return Bad(op, "the value of a computed tensor is needed for shapes, and ftax does not know it");
  }
  // Pure scalar arithmetic: every input a number.
  if (in.empty()) return R();
  bool scalars = true, any_double = false;
  for (const Val& v : in) {
    scalars &= v.kind == Val::kInt || v.kind == Val::kDouble || v.kind == Val::kBool;
    any_double |= v.kind == Val::kDouble;
  }
  if (!scalars) {
    if (op == "list" && in[0].kind == Val::kList) return R(in[0]);
    return R();
  }
  auto num = [](const Val& v) { return v.kind == Val::kDouble ? v.d : static_cast<double>(v.kind == Val::kBool ? v.b : v.i); };
  auto ival = [](const Val& v) { return v.kind == Val::kBool ? static_cast<int64_t>(v.b) : v.i; };
  const double a = num(in[0]), b = in.size() > 1 ? num(in[1]) : 0;
  auto out = [&](double x) { return any_double ? Val::Double(x) : Val::Int(static_cast<int64_t>(x)); };
  if (op == "add") return R(out(a + b));
  if (op == "sub") return R(out(a - b));
  if (op == "mul") return R(out(a * b));
  if (op == "div" || op == "truediv") {
    if (b == 0) return Bad(op, "division by zero in shape arithmetic");
    return R(Val::Double(a / b));
  }
  if (op == "floordiv" || op == "floor_divide") {
    if (b == 0) return Bad(op, "division by zero in shape arithmetic");
    if (!any_double) {
      int64_t x = ival(in[0]), y = ival(in[1]);
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return R(Val::Int(q));
    }
    return R(Val::Double(std::floor(a / b)));
  }
  if (op == "remainder" || op == "fmod") {
    if (b == 0) return Bad(op, "division by zero in shape arithmetic");
    return R(out(a - b * std::floor(a / b)));
  }
  if (op == "neg") return R(out(-a));
  if (op == "pow") return R(out(std::pow(a, b)));
  if (op == "sqrt") return R(Val::Double(std::sqrt(a)));
  if (op == "ceil") return R(Val::Int(static_cast<int64_t>(std::ceil(a))));
  if (op == "floor") return R(Val::Int(static_cast<int64_t>(std::floor(a))));
  if (op == "max") return R(out(std::max(a, b)));
  if (op == "min") return R(out(std::min(a, b)));
  if (op == "eq") return R(Val::Bool(a == b));
  if (op == "ne") return R(Val::Bool(a != b));
  if (op == "lt") return R(Val::Bool(a < b));
  if (op == "gt") return R(Val::Bool(a > b));
  if (op == "le") return R(Val::Bool(a <= b));
  if (op == "ge") return R(Val::Bool(a >= b));
  if (op == "__and__") return R(Val::Bool(a != 0 && b != 0));
  if (op == "__or__") return R(Val::Bool(a != 0 || b != 0));
  if (op == "__not__") return R(Val::Bool(a == 0));
  return R();
}

Expected<std::vector<Val>> ShapeRules::Infer(const Call& c) {
  const std::string& op = c.op;
  auto tensor = [&](const char* name) -> const TensorInfo* { const Val* v = c.Arg(name); return v ? T(*v) : nullptr; };
  auto dims_of = [](const TensorInfo* t) {
    Dims d;
    for (const Dim& x : t->shape) d.push_back(x.value);
    return d;
  };
  auto int_arg = [&](const char* name, int64_t fallback) -> int64_t {
    const Val* v = c.Arg(name);
    if (!v) return fallback;
    if (v->kind == Val::kInt) return v->i;
    if (v->kind == Val::kBool) return v->b;
    return fallback;
  };
  auto has = [&](const char* name) { const Val* v = c.Arg(name); return v && v->kind != Val::kNone && v->kind != Val::kUnknown; };
  // An int list argument; a single int stands for itself (and is repeated to `n` if n > 0).
  auto ints_arg = [&](const char* name, Dims* out, size_t n = 0) -> bool {
    const Val* v = c.Arg(name);
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
  };
  auto dtype_arg = [&](DType fallback) {
    const Val* v = c.Arg("dtype");
    if (v && v->kind == Val::kInt) {
      DType d = FromScalarType(static_cast<c10::ScalarType>(v->i));
      if (d != DType::kUnknown) return d;
    }
    return fallback;
  };
  const TensorInfo* self = c.args.empty() ? nullptr : T(c.args[0].second);
  auto one = [&](const Dims& d, DType t) -> Expected<std::vector<Val>> { return std::vector<Val>{NewTensor(d, t)}; };
  auto need_self = [&]() -> Status {
    if (!self) return Bad(op, "first argument is not a tensor of known shape");
    return Status::Ok();
  };

  static const std::unordered_map<std::string, int> kSame = [] {
    std::unordered_map<std::string, int> m;
    for (const char* s : {"relu", "relu_", "relu6", "gelu", "gelu_", "silu", "silu_", "tanh", "tanh_", "sigmoid",
                          "sigmoid_", "hardtanh", "hardtanh_", "hardswish", "hardswish_", "hardsigmoid",
                          "hardsigmoid_", "mish", "elu", "selu", "celu", "softplus", "leaky_relu", "leaky_relu_",
                          "dropout", "dropout_", "feature_dropout", "alpha_dropout", "contiguous", "clone",
                          "detach", "alias", "lift_fresh", "layer_norm", "batch_norm", "group_norm",
                          "instance_norm", "rms_norm", "neg", "exp", "log", "sqrt", "rsqrt", "erf", "abs",
                          "sin", "cos", "reciprocal", "sign", "floor", "ceil", "round", "clamp", "clamp_",
                          "clamp_min", "clamp_max", "masked_fill", "masked_fill_", "fill_", "zero_", "tril",
                          "triu", "roll", "flip", "copy_", "add_", "sub_", "mul_", "div_", "bitwise_not",
                          "square", "exp_", "log1p", "expm1", "trunc", "frac", "nan_to_num", "logit",
                          "erfinv", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "threshold",
                          "glu_", "clamp_max_", "clamp_min_", "hardshrink", "softshrink", "tanhshrink",
                          "sigmoid_backward", "bernoulli", "normal_", "uniform_", "_weight_norm"})
      m[s] = 1;
    for (const char* s : {"softmax", "log_softmax", "_softmax", "_log_softmax", "cumsum", "cumprod"}) m[s] = 2;
    for (const char* s : {"add", "sub", "mul", "div", "rsub", "pow", "maximum", "minimum", "floor_divide",
                          "remainder", "fmod", "atan2", "max", "min", "true_divide", "xlogy", "hypot",
                          "copysign", "lerp"})
      m[s] = 3;
    for (const char* s : {"eq", "ne", "lt", "gt", "le", "ge", "__and__", "__or__", "__xor__", "bitwise_and",
                          "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
                          "logical_not", "isnan", "isinf", "isfinite", "__iand__", "__ior__"})
      m[s] = 4;
    return m;
  }();
  auto it = kSame.find(op);
  const int family = it == kSame.end() ? 0 : it->second;

  // Element-wise, same shape as self (unary, in-place).
  if (family == 1 || family == 2) {
    REQUIRE_SELF();
    DType dt = self->dtype;
    if (op == "cumsum" || op == "cumprod") dt = IsFloat(dt) ? dt : DType::kInt64;  // integral sums widen
    if (family == 2) dt = dtype_arg(dt);
    return one(dims_of(self), dt);
  }
  // Element-wise over broadcast operands (binary arithmetic and comparisons).
  if (family == 3 || family == 4) {
    if ((op == "max" || op == "min") && c.Arg("dim")) {
      REQUIRE_SELF();
      Dims d = dims_of(self);
      int64_t dim = Wrap(int_arg("dim", 0), d.size());
      if (dim < 0 || dim >= static_cast<int64_t>(d.size())) return Bad(op, "dim out of range");
      if (int_arg("keepdim", 0)) d[static_cast<size_t>(dim)] = 1;
      else d.erase(d.begin() + dim);
      return std::vector<Val>{NewTensor(d, self->dtype), NewTensor(d, DType::kInt64)};
    }
    if ((op == "max" || op == "min") && c.args.size() == 1) {
      REQUIRE_SELF();
      return one({}, self->dtype);
    }
    Dims shape;
    DType dt = DType::kUnknown;
    bool have_tensor = false, any_float_tensor = false, double_scalar = false;
    std::vector<int64_t> a_vals, b_vals;
    int k = 0;
    for (const auto& [name, v] : c.args) {
      if (name == "alpha" || name == "rounding_mode" || name == "out") continue;
      if (const TensorInfo* t = T(v)) {
        Dims d = dims_of(t);
        if (!have_tensor) {
          shape = d;
          dt = t->dtype;
        } else {
          Expected<Dims> b = Broadcast(shape, d);
          if (!b.ok()) return Bad(op, b.status().message());
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
        if (k < 2 && t->int_values) (k == 0 ? a_vals : b_vals) = *t->int_values;
      } else if (v.kind == Val::kDouble) {
        double_scalar = true;
      } else if (v.kind == Val::kInt && k < 2) {
        (k == 0 ? a_vals : b_vals) = {v.i};
      }
      ++k;
    }
    if (!have_tensor) return Bad(op, "no tensor operand");
    if (double_scalar && !any_float_tensor) dt = DType::kFloat32;
    if (op == "div" && !IsFloat(dt) && !has("rounding_mode")) dt = DType::kFloat32;
    if (family == 4) dt = DType::kBool;
    // Integer shape arithmetic on 0-d tensors (traced size() math) keeps its value.
    std::optional<std::vector<int64_t>> vals;
    if (a_vals.size() == 1 && b_vals.size() == 1 && shape.empty() && !IsFloat(dt)) {
      int64_t a = a_vals[0], b = b_vals[0];
      if (op == "add") vals = std::vector<int64_t>{a + b};
      if (op == "sub") vals = std::vector<int64_t>{a - b};
      if (op == "rsub") vals = std::vector<int64_t>{b - a};
      if (op == "mul") vals = std::vector<int64_t>{a * b};
      if ((op == "floor_divide" || op == "div") && b != 0) vals = std::vector<int64_t>{a / b};
      if (op == "remainder" && b != 0) vals = std::vector<int64_t>{a % b};
    }
    return std::vector<Val>{NewTensor(shape, dt, vals)};
  }
  if (op == "where" && c.args.size() >= 3) {
    Dims shape;
    DType dt = DType::kUnknown;
    for (size_t i = 0; i < 3; ++i) {
      const TensorInfo* t = T(c.args[i].second);
      if (!t) continue;
      Expected<Dims> b = Broadcast(shape, dims_of(t));
      if (!b.ok()) return Bad(op, b.status().message());
      shape = b.value();
      if (i > 0 && (dt == DType::kUnknown || Rank(t->dtype) > Rank(dt))) dt = t->dtype;
    }
    if (dt == DType::kUnknown) dt = DType::kFloat32;
    return one(shape, dt);
  }
  if (op == "to" || op == "type_as" || op == "_to_copy") {
    REQUIRE_SELF();
    DType dt = self->dtype;
    if (const TensorInfo* other = tensor("other")) dt = other->dtype;
    dt = dtype_arg(dt);
    return one(dims_of(self), dt);
  }
  if (op == "linear") {
    REQUIRE_SELF();
    const TensorInfo* w = tensor("weight");
    if (!w || w->shape.empty()) return Bad(op, "weight is not a tensor of known shape");
    Dims d = dims_of(self);
    if (d.empty()) return Bad(op, "input is a scalar");
    if (w->shape.size() == 2 && d.back() != w->shape[1].value)
      return Bad(op, "input " + DimsText(d) + " does not match weight " + DimsText(dims_of(w)));
    d.back() = w->shape.size() == 2 ? w->shape[0].value : 1;
    if (w->shape.size() == 1) d.pop_back();
    return one(d, self->dtype);
  }
  if (op == "matmul" || op == "mm" || op == "bmm") {
    const TensorInfo* a = self;
    const TensorInfo* b = c.args.size() > 1 ? T(c.args[1].second) : nullptr;
    if (!a || !b) return Bad(op, "operands are not tensors of known shape");
    Dims x = dims_of(a), y = dims_of(b);
    if (x.empty() || y.empty()) return Bad(op, "matmul of a scalar");
    bool vx = x.size() == 1, vy = y.size() == 1;
    if (vx) x.insert(x.begin(), 1);
    if (vy) y.push_back(1);
    if (x.back() != y[y.size() - 2])
      return Bad(op, "inner dims differ: " + DimsText(dims_of(a)) + " @ " + DimsText(dims_of(b)));
    Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
    Expected<Dims> batch = Broadcast(bx, by);
    if (!batch.ok()) return Bad(op, batch.status().message());
    Dims out = batch.value();
    if (!vx) out.push_back(x[x.size() - 2]);
    if (!vy) out.push_back(y.back());
    return one(out, a->dtype);
  }
  if (op == "addmm" || op == "baddbmm" || op == "addbmm") {
    const TensorInfo* a = tensor(op == "addmm" ? "mat1" : "batch1");
    const TensorInfo* b = tensor(op == "addmm" ? "mat2" : "batch2");
    if (!a || !b) return Bad(op, "operands are not tensors of known shape");
    Dims x = dims_of(a), y = dims_of(b);
    if (op == "addmm" && x.size() == 2 && y.size() == 2) return one({x[0], y[1]}, a->dtype);
    if (op == "baddbmm" && x.size() == 3 && y.size() == 3) return one({x[0], x[1], y[2]}, a->dtype);
    if (op == "addbmm" && x.size() == 3 && y.size() == 3) return one({x[1], y[2]}, a->dtype);
    return Bad(op, "unexpected operand ranks");
  }
  if (op == "_convolution" || op == "convolution" || op == "conv1d" || op == "conv2d" || op == "conv3d" ||
      op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d") {
    REQUIRE_SELF();
    const TensorInfo* w = tensor("weight");
    if (!w || w->shape.size() < 3) return Bad(op, "weight is not a tensor of known shape");
    Dims x = dims_of(self), k = dims_of(w);
    const size_t n = k.size() - 2;
    const bool batched = x.size() == n + 2;
    if (!batched && x.size() != n + 1) return Bad(op, "input rank " + std::to_string(x.size()) + " for a " + std::to_string(n) + "-D convolution");
    if (!batched) x.insert(x.begin(), 1);
    const bool transposed = op.rfind("conv_transpose", 0) == 0 || int_arg("transposed", 0) != 0;
    const int64_t groups = int_arg("groups", 1);
    Dims stride, pad, dil, opad;
    if (!ints_arg("stride", &stride, n)) stride.assign(n, 1);
    if (!ints_arg("dilation", &dil, n)) dil.assign(n, 1);
    if (!ints_arg("output_padding", &opad, n)) opad.assign(n, 0);
    const Val* pv = c.Arg("padding");
    bool same = pv && pv->kind == Val::kStr && pv->s == "same";
    if (pv && pv->kind == Val::kStr) pad.assign(n, 0);
    else if (!ints_arg("padding", &pad, n)) pad.assign(n, 0);
    if (stride.size() != n || pad.size() != n || dil.size() != n) return Bad(op, "stride/padding/dilation of the wrong length");
    Dims out = {x[0], transposed ? k[1] * groups : k[0]};
    for (size_t i = 0; i < n; ++i) {
      int64_t in = x[i + 2], kk = k[i + 2];
      int64_t o = same ? in
                : transposed ? (in - 1) * stride[i] - 2 * pad[i] + dil[i] * (kk - 1) + opad[i] + 1
                             : (in + 2 * pad[i] - dil[i] * (kk - 1) - 1) / stride[i] + 1;
      if (o <= 0) return Bad(op, "output size " + std::to_string(o) + " along spatial dim " + std::to_string(i));
      out.push_back(o);
    }
    if (!batched) out.erase(out.begin());
    return one(out, self->dtype);
  }
  if (op == "max_pool1d" || op == "max_pool2d" || op == "max_pool3d" || op == "avg_pool1d" ||
      op == "avg_pool2d" || op == "avg_pool3d" || op == "max_pool2d_with_indices") {
    REQUIRE_SELF();
    const size_t n = static_cast<size_t>(op[op.find("pool") + 4] - '0');
    Dims x = dims_of(self), kernel, stride, pad, dil;
    if (x.size() < n + 1) return Bad(op, "input rank too small");
    if (!ints_arg("kernel_size", &kernel, n)) return Bad(op, "kernel_size not known");
    if (!ints_arg("stride", &stride, n) || stride.empty()) stride = kernel;
    if (!ints_arg("padding", &pad, n)) pad.assign(n, 0);
    if (!ints_arg("dilation", &dil, n)) dil.assign(n, 1);
    const bool ceil_mode = int_arg("ceil_mode", 0) != 0;
    Dims out(x.begin(), x.end() - static_cast<long>(n));
    for (size_t i = 0; i < n; ++i) {
      int64_t in = x[x.size() - n + i];
      int64_t span = in + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1;
      int64_t o = (ceil_mode ? (span + stride[i] - 1) / stride[i] : span / stride[i]) + 1;
      if (ceil_mode && (o - 1) * stride[i] >= in + pad[i]) --o;
      out.push_back(o);
    }
    if (op == "max_pool2d_with_indices") return std::vector<Val>{NewTensor(out, self->dtype), NewTensor(out, DType::kInt64)};
    return one(out, self->dtype);
  }
  if (op == "adaptive_avg_pool1d" || op == "adaptive_avg_pool2d" || op == "adaptive_avg_pool3d" ||
      op == "adaptive_max_pool1d" || op == "adaptive_max_pool2d") {
    REQUIRE_SELF();
    Dims x = dims_of(self), size;
    if (!ints_arg("output_size", &size)) return Bad(op, "output_size not known");
    if (x.size() < size.size()) return Bad(op, "input rank too small");
    Dims out(x.begin(), x.end() - static_cast<long>(size.size()));
    out.insert(out.end(), size.begin(), size.end());
    if (op.find("max") != std::string::npos) return std::vector<Val>{NewTensor(out, self->dtype), NewTensor(out, DType::kInt64)};
    return one(out, self->dtype);
  }
  if (op == "mean" || op == "sum" || op == "amax" || op == "amin" || op == "prod" || op == "std" ||
      op == "var" || op == "norm" || op == "logsumexp" || op == "argmax" || op == "argmin" || op == "all" ||
      op == "any" || op == "count_nonzero") {
    REQUIRE_SELF();
    Dims x = dims_of(self), dims;
    bool reduce_all = !ints_arg("dim", &dims);
    const bool keep = int_arg("keepdim", 0) != 0;
    std::vector<bool> red(x.size(), reduce_all);
    for (int64_t d : dims) {
      int64_t w = Wrap(d, x.size());
      if (w < 0 || w >= static_cast<int64_t>(x.size())) return Bad(op, "dim " + std::to_string(d) + " out of range");
      red[static_cast<size_t>(w)] = true;
    }
    if (dims.empty() && !reduce_all) std::fill(red.begin(), red.end(), true);  // dim=[]
    Dims out;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!red[i]) out.push_back(x[i]);
      else if (keep) out.push_back(1);
    }
    DType dt = self->dtype;
    if (op == "argmax" || op == "argmin" || op == "count_nonzero") dt = DType::kInt64;
    if (op == "all" || op == "any") dt = DType::kBool;
    if ((op == "sum" || op == "prod") && !IsFloat(dt)) dt = DType::kInt64;
    if (op == "mean" || op == "sum") dt = dtype_arg(dt);
    return one(out, dt);
  }
  if (op == "view" || op == "reshape" || op == "_reshape_alias" || op == "_unsafe_view") {
    REQUIRE_SELF();
    Dims size;
    if (!ints_arg(c.Arg("size") ? "size" : "shape", &size)) return Bad(op, "target shape not known from shapes");
    int64_t total = NumElements(self->shape).value_or(-1), known = 1;
    int infer = -1;
    for (size_t i = 0; i < size.size(); ++i) {
      if (size[i] == -1) {
        if (infer >= 0) return Bad(op, "more than one -1 in " + DimsText(size));
        infer = static_cast<int>(i);
      } else {
        known *= size[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return Bad(op, "cannot view " + DimsText(dims_of(self)) + " as " + DimsText(size));
      size[static_cast<size_t>(infer)] = total / known;
    } else if (known != total) {
      return Bad(op, "cannot view " + DimsText(dims_of(self)) + " (" + std::to_string(total) + " elements) as " + DimsText(size));
    }
    return one(size, self->dtype);
  }
  if (op == "view_as" || op == "reshape_as" || op == "expand_as") {
    REQUIRE_SELF();
    const TensorInfo* other = tensor("other");
    if (!other) return Bad(op, "other is not a tensor of known shape");
    return one(dims_of(other), self->dtype);
  }
  if (op == "flatten") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    if (x.empty()) return one({1}, self->dtype);
    int64_t s = Wrap(int_arg("start_dim", 0), x.size()), e = Wrap(int_arg("end_dim", -1), x.size());
    if (s < 0 || e >= static_cast<int64_t>(x.size()) || s > e) return Bad(op, "start_dim/end_dim out of range");
    Dims out(x.begin(), x.begin() + s);
    int64_t p = 1;
    for (int64_t i = s; i <= e; ++i) p *= x[static_cast<size_t>(i)];
    out.push_back(p);
    out.insert(out.end(), x.begin() + e + 1, x.end());
    return one(out, self->dtype);
  }
  if (op == "unflatten") {
    REQUIRE_SELF();
    Dims x = dims_of(self), sizes;
    if (!ints_arg("sizes", &sizes)) return Bad(op, "sizes not known");
    int64_t d = Wrap(int_arg("dim", 0), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) infer = static_cast<int64_t>(i);
      else known *= sizes[i];
    }
    if (infer >= 0 && known) sizes[static_cast<size_t>(infer)] = x[static_cast<size_t>(d)] / known;
    Dims out(x.begin(), x.begin() + d);
    out.insert(out.end(), sizes.begin(), sizes.end());
    out.insert(out.end(), x.begin() + d + 1, x.end());
    return one(out, self->dtype);
  }
  if (op == "permute") {
    REQUIRE_SELF();
    Dims x = dims_of(self), perm;
    if (!ints_arg("dims", &perm) || perm.size() != x.size()) return Bad(op, "dims do not match rank " + std::to_string(x.size()));
    Dims out;
    for (int64_t p : perm) {
      int64_t w = Wrap(p, x.size());
      if (w < 0 || w >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
      out.push_back(x[static_cast<size_t>(w)]);
    }
    return one(out, self->dtype);
  }
  if (op == "transpose" || op == "t" || op == "swapaxes") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    if (op == "t") {
      if (x.size() == 2) std::swap(x[0], x[1]);
      return one(x, self->dtype);
    }
    int64_t a = Wrap(int_arg("dim0", int_arg("axis0", 0)), x.size()), b = Wrap(int_arg("dim1", int_arg("axis1", 1)), x.size());
    if (a < 0 || b < 0 || a >= static_cast<int64_t>(x.size()) || b >= static_cast<int64_t>(x.size()))
      return Bad(op, "dims out of range for rank " + std::to_string(x.size()));
    std::swap(x[static_cast<size_t>(a)], x[static_cast<size_t>(b)]);
    return one(x, self->dtype);
  }
  if (op == "unsqueeze") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    int64_t d = Wrap(int_arg("dim", 0), x.size() + 1);
    if (d < 0 || d > static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    x.insert(x.begin() + d, 1);
    return one(x, self->dtype);
  }
  if (op == "squeeze") {
    REQUIRE_SELF();
    Dims x = dims_of(self), dims, out;
    const bool all = !ints_arg("dim", &dims);
    std::vector<bool> sq(x.size(), all);
    for (int64_t d : dims) {
      int64_t w = Wrap(d, x.size());
      if (w >= 0 && w < static_cast<int64_t>(x.size())) sq[static_cast<size_t>(w)] = true;
    }
    for (size_t i = 0; i < x.size(); ++i)
      if (!(sq[i] && x[i] == 1)) out.push_back(x[i]);
    return one(out, self->dtype);
  }
  if (op == "expand") {
    REQUIRE_SELF();
    Dims x = dims_of(self), size;
    if (!ints_arg("size", &size)) return Bad(op, "size not known from shapes");
    if (size.size() < x.size()) return Bad(op, "expanding to fewer dims");
    Dims out = size;
    const size_t lead = size.size() - x.size();
    for (size_t i = 0; i < size.size(); ++i) {
      if (size[i] == -1) {
        if (i < lead) return Bad(op, "-1 in a new leading dim");
        out[i] = x[i - lead];
      } else if (i >= lead && x[i - lead] != 1 && x[i - lead] != size[i]) {
        return Bad(op, "cannot expand " + DimsText(x) + " to " + DimsText(size));
      }
    }
    return one(out, self->dtype);
  }
  if (op == "slice" || op == "narrow") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    if (x.empty()) return Bad(op, "slice of a scalar");
    int64_t d = Wrap(int_arg("dim", 0), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    const int64_t len = x[static_cast<size_t>(d)];
    int64_t n = 0;
    if (op == "narrow") {
      n = int_arg("length", 0);
    } else {
      const Val* sv = c.Arg("start");
      const Val* ev = c.Arg("end");
      int64_t start = sv && sv->kind == Val::kInt ? sv->i : 0;
      int64_t end = ev && ev->kind == Val::kInt ? ev->i : std::numeric_limits<int64_t>::max();
      int64_t step = int_arg("step", 1);
      if (step <= 0) return Bad(op, "step must be positive");
      if (start < 0) start += len;
      if (end < 0) end += len;
      start = std::clamp<int64_t>(start, 0, len);
      end = std::clamp<int64_t>(end, start, len);
      n = (end - start + step - 1) / step;
    }
    x[static_cast<size_t>(d)] = n;
    return one(x, self->dtype);
  }
  if (op == "select") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    int64_t d = Wrap(int_arg("dim", 0), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    x.erase(x.begin() + d);
    return one(x, self->dtype);
  }
  if (op == "index") {
    REQUIRE_SELF();
    const Val* idx = c.Arg("indices");
    if (!idx || idx->kind != Val::kList) return Bad(op, "indices not known");
    Dims x = dims_of(self), bshape;
    std::vector<int> indexed;
    for (size_t i = 0; i < idx->items.size(); ++i) {
      const TensorInfo* t = T(idx->items[i]);
      if (!t) continue;
      Dims d = dims_of(t);
      if (t->dtype == DType::kBool) return Bad(op, "boolean-mask indexing has a data-dependent shape");
      Expected<Dims> b = Broadcast(bshape, d);
      if (!b.ok()) return Bad(op, b.status().message());
      bshape = b.value();
      indexed.push_back(static_cast<int>(i));
    }
    if (indexed.empty()) return one(x, self->dtype);
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
    return one(out, self->dtype);
  }
  if (op == "split" || op == "split_with_sizes" || op == "chunk" || op == "unbind" || op == "tensor_split") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    int64_t d = Wrap(int_arg("dim", 0), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    const int64_t len = x[static_cast<size_t>(d)];
    Dims sizes;
    if (op == "unbind") {
      std::vector<Val> parts;
      Dims y = x;
      y.erase(y.begin() + d);
      for (int64_t i = 0; i < len; ++i) parts.push_back(NewTensor(y, self->dtype));
      return std::vector<Val>{Val::List(parts)};
    }
    if (op == "chunk") {
      int64_t chunks = int_arg("chunks", 1);
      if (chunks <= 0) return Bad(op, "chunks must be positive");
      int64_t each = (len + chunks - 1) / chunks;
      for (int64_t done = 0; done < len; done += each) sizes.push_back(std::min(each, len - done));
    } else {
      const Val* sv = c.Arg(op == "split_with_sizes" ? "split_sizes" : "split_size");
      if (!sv) sv = c.Arg("split_size_or_sections");
      if (sv && sv->kind == Val::kInt) {
        if (sv->i <= 0) return Bad(op, "split size must be positive");
        for (int64_t done = 0; done < len; done += sv->i) sizes.push_back(std::min(sv->i, len - done));
      } else if (!ints_arg(op == "split_with_sizes" ? "split_sizes" : "split_size", &sizes)) {
        return Bad(op, "split sizes not known");
      }
    }
    std::vector<Val> parts;
    for (int64_t s : sizes) {
      Dims y = x;
      y[static_cast<size_t>(d)] = s;
      parts.push_back(NewTensor(y, self->dtype));
    }
    return std::vector<Val>{Val::List(parts)};
  }
  if (op == "cat" || op == "concat" || op == "stack") {
    const Val* tv = c.Arg("tensors");
    if (!tv || tv->kind != Val::kList || tv->items.empty()) return Bad(op, "tensors not known");
    Dims out;
    DType dt = DType::kUnknown;
    bool first = true;
    int64_t dim = int_arg("dim", 0);
    for (const Val& v : tv->items) {
      const TensorInfo* t = T(v);
      if (!t) return Bad(op, "an operand is not a tensor of known shape");
      Dims d = dims_of(t);
      if (op != "stack" && d.size() == 1 && d[0] == 0) continue;  // legacy empty tensors
      if (dt == DType::kUnknown || Rank(t->dtype) > Rank(dt)) dt = t->dtype;
      if (first) {
        first = false;
        out = d;
        const size_t rank = op == "stack" ? d.size() + 1 : d.size();
        dim = Wrap(dim, rank);
        if (dim < 0 || dim >= static_cast<int64_t>(rank)) return Bad(op, "dim out of range");
        if (op == "stack") out.insert(out.begin() + dim, 1);
        continue;
      }
      if (op == "stack") {
        out[static_cast<size_t>(dim)] += 1;
      } else {
        if (d.size() != out.size()) return Bad(op, "operands of different rank");
        out[static_cast<size_t>(dim)] += d[static_cast<size_t>(dim)];
      }
    }
    if (first) return Bad(op, "no non-empty operand");
    return one(out, dt);
  }
  if (op == "embedding") {
    const TensorInfo* w = tensor("weight");
    const TensorInfo* idx = tensor("indices");
    if (!w || !idx || w->shape.size() != 2) return Bad(op, "weight/indices are not tensors of known shape");
    Dims out = dims_of(idx);
    out.push_back(w->shape[1].value);
    return one(out, w->dtype);
  }
  if (op == "gather") {
    REQUIRE_SELF();
    const TensorInfo* idx = tensor("index");
    if (!idx) return Bad(op, "index is not a tensor of known shape");
    return one(dims_of(idx), self->dtype);
  }
  if (op == "index_select") {
    REQUIRE_SELF();
    const TensorInfo* idx = tensor("index");
    if (!idx) return Bad(op, "index is not a tensor of known shape");
    Dims x = dims_of(self);
    int64_t d = Wrap(int_arg("dim", 0), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    x[static_cast<size_t>(d)] = NumElements(idx->shape).value_or(0);
    return one(x, self->dtype);
  }
  if (op == "scaled_dot_product_attention") {
    const TensorInfo* q = tensor("query");
    const TensorInfo* v = tensor("value");
    if (!q || !v || q->shape.size() < 2 || v->shape.empty()) return Bad(op, "query/value are not tensors of known shape");
    Dims out = dims_of(q);
    out.back() = v->shape.back().value;
    return one(out, q->dtype);
  }
  if (op == "diff") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    int64_t d = Wrap(int_arg("dim", -1), x.size());
    if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
    int64_t len = x[static_cast<size_t>(d)];
    for (const char* extra : {"prepend", "append"})
      if (const TensorInfo* t = tensor(extra)) len += t->shape.size() == x.size() ? t->shape[static_cast<size_t>(d)].value : 1;
    x[static_cast<size_t>(d)] = std::max<int64_t>(0, len - int_arg("n", 1));
    return one(x, self->dtype);
  }
  if (op == "_native_multi_head_attention") {  // nn.MultiheadAttention's inference fast path
    const TensorInfo* q = tensor("query");
    if (!q) return Bad(op, "query is not a tensor of known shape");
    return std::vector<Val>{NewTensor(dims_of(q), q->dtype), NewTensor({0}, q->dtype)};
  }
  if (op == "arange") {
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
    if (!c.Arg("end")) return Bad(op, "end not known");
    if (step == 0) return Bad(op, "step is 0");
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
    DType dt = dtype_arg(dbl ? DType::kFloat32 : DType::kInt64);
    return one({n}, dt);
  }
  if (op == "zeros" || op == "ones" || op == "empty" || op == "full" || op == "rand" || op == "randn" ||
      op == "new_zeros" || op == "new_ones" || op == "new_empty" || op == "new_full" || op == "scalar_tensor") {
    Dims size;
    if (op != "scalar_tensor" && !ints_arg("size", &size)) return Bad(op, "size not known from shapes");
    DType fb = DType::kFloat32;
    if (op.rfind("new_", 0) == 0 && self) fb = self->dtype;
    if (op == "full") {
      const Val* fv = c.Arg("fill_value");
      if (fv && fv->kind == Val::kInt) fb = DType::kInt64;
      if (fv && fv->kind == Val::kBool) fb = DType::kBool;
    }
    return one(size, dtype_arg(fb));
  }
  if (op == "zeros_like" || op == "ones_like" || op == "empty_like" || op == "full_like" || op == "rand_like" ||
      op == "randn_like") {
    REQUIRE_SELF();
    return one(dims_of(self), dtype_arg(self->dtype));
  }
  if (op == "repeat") {
    REQUIRE_SELF();
    Dims x = dims_of(self), rep;
    if (!ints_arg("repeats", &rep) || rep.size() < x.size()) return Bad(op, "repeats not known");
    Dims out = rep;
    for (size_t i = 0; i < x.size(); ++i) out[rep.size() - x.size() + i] *= x[i];
    return one(out, self->dtype);
  }
  if (op == "constant_pad_nd" || op == "pad") {
    REQUIRE_SELF();
    Dims x = dims_of(self), pad;
    if (!ints_arg("pad", &pad) || pad.size() % 2 || pad.size() / 2 > x.size()) return Bad(op, "pad not known");
    for (size_t i = 0; i < pad.size() / 2; ++i) x[x.size() - 1 - i] += pad[2 * i] + pad[2 * i + 1];
    return one(x, self->dtype);
  }
  if (op == "upsample_nearest2d" || op == "upsample_bilinear2d") {
    REQUIRE_SELF();
    Dims x = dims_of(self), size;
    if (x.size() != 4) return Bad(op, "expects a 4-D input");
    if (ints_arg("output_size", &size) && size.size() == 2) {
      x[2] = size[0];
      x[3] = size[1];
      return one(x, self->dtype);
    }
    const Val* sf = c.Arg("scale_factors");
    if (sf && sf->kind == Val::kList && sf->items.size() == 2) {
      for (size_t i = 0; i < 2; ++i) {
        double s = sf->items[i].kind == Val::kDouble ? sf->items[i].d : static_cast<double>(sf->items[i].i);
        x[2 + i] = static_cast<int64_t>(std::floor(static_cast<double>(x[2 + i]) * s));
      }
      return one(x, self->dtype);
    }
    return Bad(op, "output size not known");
  }
  if (op == "topk" || op == "sort") {
    REQUIRE_SELF();
    Dims x = dims_of(self);
    if (op == "topk") {
      int64_t d = Wrap(int_arg("dim", -1), x.size());
      if (d < 0 || d >= static_cast<int64_t>(x.size())) return Bad(op, "dim out of range");
      x[static_cast<size_t>(d)] = int_arg("k", 1);
    }
    return std::vector<Val>{NewTensor(x, self->dtype), NewTensor(x, DType::kInt64)};
  }
  return Unsupported("aten::" + op + ": no shape rule");
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
