// Constant folding of small shape-arithmetic tensors (see constant_folding.h).
#include "graph/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace ftax {
namespace {

bool IsIntType(DType t) {
  return t == DType::kInt64 || t == DType::kInt32 || t == DType::kInt16 || t == DType::kInt8 ||
         t == DType::kUInt8 || t == DType::kBool;
}
bool IsFloatType(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat64;
}

// A dense constant in row-major order; exactly one of i / f is used.
struct Dense {
  std::vector<int64_t> dims;
  bool is_int = true;
  std::vector<int64_t> i;
  std::vector<double> f;

  size_t size() const { return is_int ? i.size() : f.size(); }
  double F(size_t k) const { return is_int ? static_cast<double>(i[k]) : f[k]; }
};

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<std::vector<int64_t>> ConcreteDims(const TensorInfo* t, int64_t max_elements) {
  if (!t || !t->has_shape) return std::nullopt;
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (const Dim& d : t->shape) {
    if (!d.known()) return std::nullopt;
    dims.push_back(d.value);
    if (d.value > max_elements) return std::nullopt;
    n *= d.value;
    if (n > max_elements) return std::nullopt;
  }
  return dims;
}

std::optional<Dense> Read(const TensorInfo* t, int64_t max_elements) {
  auto dims = ConcreteDims(t, max_elements);
  if (!dims) return std::nullopt;
  const size_t n = static_cast<size_t>(Numel(*dims));
  Dense d;
  d.dims = *dims;
  if (t->int_values && t->int_values->size() == n) {
    d.i = *t->int_values;
    return d;
  }
  if (t->float_values && t->float_values->size() == n) {
    d.is_int = false;
    d.f = *t->float_values;
    return d;
  }
  return std::nullopt;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

// Multi-index of flat position `flat` in `dims`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    if (dims[k] == 0) return idx;
    idx[k] = flat % dims[k];
    flat /= dims[k];
  }
  return idx;
}

// Flat position in `in` (numpy-broadcast against `out`) of the output multi-index `idx`.
int64_t BroadcastFlat(const std::vector<int64_t>& idx, const std::vector<int64_t>& in) {
  const size_t off = idx.size() - in.size();
  std::vector<int64_t> st = Strides(in);
  int64_t flat = 0;
  for (size_t k = 0; k < in.size(); ++k) flat += (in[k] == 1 ? 0 : idx[k + off]) * st[k];
  return flat;
}

// Output = input elements picked by `src` (flat indices into `in`).
Dense Pick(const Dense& in, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& src) {
  Dense o;
  o.dims = out_dims;
  o.is_int = in.is_int;
  for (int64_t s : src) {
    if (in.is_int) o.i.push_back(in.i[static_cast<size_t>(s)]);
    else o.f.push_back(in.f[static_cast<size_t>(s)]);
  }
  return o;
}

bool Broadcastable(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in.size() > out.size()) return false;
  const size_t off = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] != 1 && in[k] != out[k + off]) return false;
  return true;
}

int64_t Norm(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Integer binary op with ONNX semantics; false on division by zero or overflow.
bool IntBinary(const std::string& t, int64_t a, int64_t b, int64_t fmod, int64_t* r) {
  if (t == "Add") return !__builtin_add_overflow(a, b, r);
  if (t == "Sub") return !__builtin_sub_overflow(a, b, r);
  if (t == "Mul") return !__builtin_mul_overflow(a, b, r);
  if (t == "Div") {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return false;
    *r = a / b;  // ONNX integer Div truncates, as C++ does
    return true;
  }
  if (t == "Mod") {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return false;
    int64_t m = a % b;
    if (!fmod && m != 0 && ((m < 0) != (b < 0))) m += b;  // the divisor's sign, as Python
    *r = m;
    return true;
  }
  if (t == "Max" || t == "Sum" || t == "Min") {
    if (t == "Sum") return !__builtin_add_overflow(a, b, r);
    *r = t == "Max" ? std::max(a, b) : std::min(a, b);
    return true;
  }
  if (t == "Equal") { *r = a == b; return true; }
  if (t == "Less") { *r = a < b; return true; }
  if (t == "Greater") { *r = a > b; return true; }
  if (t == "LessOrEqual") { *r = a <= b; return true; }
  if (t == "GreaterOrEqual") { *r = a >= b; return true; }
  if (t == "And") { *r = (a != 0) && (b != 0); return true; }
  if (t == "Or") { *r = (a != 0) || (b != 0); return true; }
  if (t == "Xor") { *r = (a != 0) != (b != 0); return true; }
  if (t == "Pow") {
    if (b < 0 || b > 62) return false;
    int64_t p = 1;
    for (int64_t k = 0; k < b; ++k)
      if (__builtin_mul_overflow(p, a, &p)) return false;
    *r = p;
    return true;
  }
  return false;
}

bool FloatBinary(const std::string& t, double a, double b, int64_t fmod, double* r) {
  if (t == "Add" || t == "Sum") *r = a + b;
  else if (t == "Sub") *r = a - b;
  else if (t == "Mul") *r = a * b;
  else if (t == "Div") { if (b == 0) return false; *r = a / b; }
  else if (t == "Mod") {
    if (b == 0) return false;
    *r = std::fmod(a, b);
    if (!fmod && *r != 0 && ((*r < 0) != (b < 0))) *r += b;
  }
  else if (t == "Pow") *r = std::pow(a, b);
  else if (t == "Max") *r = std::max(a, b);
  else if (t == "Min") *r = std::min(a, b);
  else if (t == "Equal") *r = a == b;
  else if (t == "Less") *r = a < b;
  else if (t == "Greater") *r = a > b;
  else if (t == "LessOrEqual") *r = a <= b;
  else if (t == "GreaterOrEqual") *r = a >= b;
  else if (t == "And") *r = (a != 0) && (b != 0);
  else if (t == "Or") *r = (a != 0) || (b != 0);
  else if (t == "Xor") *r = (a != 0) != (b != 0);
  else return false;
  return std::isfinite(*r);
}

bool IsComparison(const std::string& t) {
  return t == "Equal" || t == "Less" || t == "Greater" || t == "LessOrEqual" ||
         t == "GreaterOrEqual" || t == "And" || t == "Or" || t == "Xor";
}

// Converts a computed dense value to the output's dtype.
Dense ToDType(Dense d, DType out) {
  if (IsIntType(out) && !d.is_int) {
    d.is_int = true;
    for (double x : d.f) {
      if (!std::isfinite(x) || std::fabs(x) > 9.0e18) return Dense{{}, true, {}, {}};
      d.i.push_back(out == DType::kBool ? (x != 0) : static_cast<int64_t>(x));
    }
    d.f.clear();
  } else if (IsFloatType(out) && d.is_int) {
    d.is_int = false;
    for (int64_t x : d.i) d.f.push_back(static_cast<double>(x));
    d.i.clear();
  } else if (out == DType::kBool && d.is_int) {
    for (int64_t& x : d.i) x = x != 0;
  }
  return d;
}

class Folder {
 public:
  Folder(const Op& op, const std::vector<const TensorInfo*>& in,
         const std::vector<const TensorInfo*>& out, int64_t opset, int64_t max)
      : op_(op), in_(in), out_(out), opset_(opset), max_(max) {}

  std::optional<std::vector<Dense>> Run() {
    if (out_.empty()) return std::nullopt;
    for (const TensorInfo* o : out_) {
      auto d = ConcreteDims(o, max_);
      if (!d) return std::nullopt;
      out_dims_.push_back(*d);
    }
    // Every present input must be a known constant, except the data input of ops that only
    // need its shape (ConstantOfShape reads values; Shape/Size are folded elsewhere).
    for (const TensorInfo* t : in_) {
      if (!t) { args_.emplace_back(); continue; }
      auto d = Read(t, max_);
      if (!d) return std::nullopt;
      args_.push_back(std::move(*d));
    }
    const std::string& t = op_.type;
    std::optional<Dense> r;
    if (t == "Identity" || t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze") r = SameOrder();
    else if (t == "Expand") r = ExpandTo();
    else if (t == "Cast" || t == "CastLike") r = Arg(0);
    else if (t == "Neg" || t == "Abs" || t == "Sign" || t == "Not" || t == "Relu" || t == "Floor" ||
             t == "Ceil" || t == "Round" || t == "Sqrt" || t == "Reciprocal")
      r = Unary();
    else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Mod" || t == "Pow" ||
             t == "Max" || t == "Min" || t == "Sum" || IsComparison(t))
      r = Binary();
    else if (t == "Where") r = WhereOp();
    else if (t == "Transpose") r = TransposeOp();
    else if (t == "Slice") r = SliceOp();
    else if (t == "Concat") r = ConcatOp();
    else if (t == "Gather") r = GatherOp();
    else if (t == "Tile") r = TileOp();
    else if (t == "ConstantOfShape") r = Fill();
    else if (t == "ReduceSum" || t == "ReduceProd" || t == "ReduceMax" || t == "ReduceMin" ||
             t == "ReduceMean")
      r = Reduce();
    else if (t == "Split") return SplitOp();
    if (!r || static_cast<int64_t>(r->size()) != Numel(out_dims_[0])) return std::nullopt;
    return std::vector<Dense>{std::move(*r)};
  }

 private:
  std::optional<Dense> Arg(size_t k) const {
    if (!Present(k)) return std::nullopt;
    Dense d = args_[k];
    d.dims = out_dims_[0];
    return d;
  }
  bool Present(size_t k) const { return k < in_.size() && in_[k] != nullptr; }

  std::optional<Dense> SameOrder() const {
    if (!Present(0)) return std::nullopt;
    return Arg(0);
  }

  std::optional<Dense> ExpandTo() const {
    if (!Present(0) || !Broadcastable(args_[0].dims, out_dims_[0])) return std::nullopt;
    std::vector<int64_t> src;
    for (int64_t k = 0; k < Numel(out_dims_[0]); ++k)
      src.push_back(BroadcastFlat(Unflatten(k, out_dims_[0]), args_[0].dims));
    return Pick(args_[0], out_dims_[0], src);
  }

  std::optional<Dense> Unary() const {
    if (!Present(0)) return std::nullopt;
    const std::string& t = op_.type;
    Dense d = args_[0];
    d.dims = out_dims_[0];
    if (d.is_int) {
      if (t == "Sqrt" || t == "Reciprocal") return std::nullopt;
      for (int64_t& x : d.i) {
        if (t == "Neg") { if (x == std::numeric_limits<int64_t>::min()) return std::nullopt; x = -x; }
        else if (t == "Abs") { if (x == std::numeric_limits<int64_t>::min()) return std::nullopt; x = x < 0 ? -x : x; }
        else if (t == "Sign") x = (x > 0) - (x < 0);
        else if (t == "Not") x = x == 0;
        else if (t == "Relu") x = std::max<int64_t>(x, 0);
      }
      return d;
    }
    for (double& x : d.f) {
      if (t == "Neg") x = -x;
      else if (t == "Abs") x = std::fabs(x);
      else if (t == "Sign") x = (x > 0) - (x < 0);
      else if (t == "Not") x = x == 0;
      else if (t == "Relu") x = std::max(x, 0.0);
      else if (t == "Floor") x = std::floor(x);
      else if (t == "Ceil") x = std::ceil(x);
      else if (t == "Round") x = std::nearbyint(x);
      else if (t == "Sqrt") { if (x < 0) return std::nullopt; x = std::sqrt(x); }
      else if (t == "Reciprocal") { if (x == 0) return std::nullopt; x = 1 / x; }
    }
    return d;
  }

  std::optional<Dense> Binary() const {
    std::vector<const Dense*> xs;
    for (size_t k = 0; k < args_.size(); ++k)
      if (Present(k)) xs.push_back(&args_[k]);
    if (xs.size() < 2 && !(xs.size() == 1 && (op_.type == "Sum" || op_.type == "Max" || op_.type == "Min")))
      return std::nullopt;
    const auto& od = out_dims_[0];
    for (const Dense* x : xs)
      if (!Broadcastable(x->dims, od)) return std::nullopt;
    bool all_int = true;
    for (const Dense* x : xs) all_int &= x->is_int;
    const int64_t fmod = op_.IntAttr("fmod", 0);
    Dense r;
    r.dims = od;
    r.is_int = all_int || IsComparison(op_.type);
    const int64_t n = Numel(od);
    for (int64_t k = 0; k < n; ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      size_t first = static_cast<size_t>(BroadcastFlat(idx, xs[0]->dims));
      if (all_int) {
        int64_t acc = xs[0]->i[first];
        for (size_t j = 1; j < xs.size(); ++j) {
          int64_t b = xs[j]->i[static_cast<size_t>(BroadcastFlat(idx, xs[j]->dims))];
          if (!IntBinary(op_.type, acc, b, fmod, &acc)) return std::nullopt;
        }
        r.i.push_back(acc);
      } else {
        double acc = xs[0]->F(first);
        for (size_t j = 1; j < xs.size(); ++j) {
          double b = xs[j]->F(static_cast<size_t>(BroadcastFlat(idx, xs[j]->dims)));
          if (!FloatBinary(op_.type, acc, b, fmod, &acc)) return std::nullopt;
        }
        if (r.is_int) r.i.push_back(static_cast<int64_t>(acc));
        else r.f.push_back(acc);
      }
    }
    return r;
  }

  std::optional<Dense> WhereOp() const {
    if (!Present(0) || !Present(1) || !Present(2)) return std::nullopt;
    const auto& od = out_dims_[0];
    for (size_t k = 0; k < 3; ++k)
      if (!Broadcastable(args_[k].dims, od)) return std::nullopt;
    const bool as_int = args_[1].is_int && args_[2].is_int;
    Dense r;
    r.dims = od;
    r.is_int = as_int;
    for (int64_t k = 0; k < Numel(od); ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      bool c = args_[0].F(static_cast<size_t>(BroadcastFlat(idx, args_[0].dims))) != 0;
      const Dense& src = c ? args_[1] : args_[2];
      size_t at = static_cast<size_t>(BroadcastFlat(idx, src.dims));
      if (as_int) r.i.push_back(src.i[at]);
      else r.f.push_back(src.F(at));
    }
    return r;
  }

  std::optional<Dense> TransposeOp() const {
    if (!Present(0)) return std::nullopt;
    const auto& id = args_[0].dims;
    const int64_t rank = static_cast<int64_t>(id.size());
    std::vector<int64_t> perm = op_.IntsAttr("perm");
    if (perm.empty())
      for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
    if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
    std::vector<int64_t> od;
    for (int64_t& p : perm) {
      p = Norm(p, rank);
      if (p < 0 || p >= rank) return std::nullopt;
      od.push_back(id[static_cast<size_t>(p)]);
    }
    if (od != out_dims_[0]) return std::nullopt;
    std::vector<int64_t> st = Strides(id), src;
    for (int64_t k = 0; k < Numel(od); ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      int64_t flat = 0;
      for (int64_t a = 0; a < rank; ++a) flat += idx[static_cast<size_t>(a)] * st[static_cast<size_t>(perm[a])];
      src.push_back(flat);
    }
    return Pick(args_[0], od, src);
  }

  std::optional<Dense> SliceOp() const {
    if (!Present(0)) return std::nullopt;
    const auto& id = args_[0].dims;
    const int64_t rank = static_cast<int64_t>(id.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = op_.IntsAttr("starts");
      ends = op_.IntsAttr("ends");
      axes = op_.IntsAttr("axes");
    } else {
      if (!Present(1) || !Present(2) || !args_[1].is_int || !args_[2].is_int) return std::nullopt;
      starts = args_[1].i;
      ends = args_[2].i;
      if (Present(3)) { if (!args_[3].is_int) return std::nullopt; axes = args_[3].i; }
      if (Present(4)) { if (!args_[4].is_int) return std::nullopt; steps = args_[4].i; }
    }
    if (axes.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    if (starts.size() != ends.size() || axes.size() != starts.size()) return std::nullopt;
    if (!steps.empty() && steps.size() != starts.size()) return std::nullopt;
    std::vector<int64_t> first(id.size(), 0), step(id.size(), 1), count = id;
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = Norm(axes[k], rank);
      if (a < 0 || a >= rank) return std::nullopt;
      int64_t dim = id[static_cast<size_t>(a)];
      int64_t s = steps.empty() ? 1 : steps[k];
      if (s == 0) return std::nullopt;
      int64_t b = starts[k], e = ends[k];
      if (b < 0) b = b < -dim ? 0 : b + dim;  // INT64_MIN-safe: compare before adding
      if (e < 0) e = e < -dim ? -1 : e + dim;
      int64_t n;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        n = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        n = b > e ? (b - e + (-s) - 1) / (-s) : 0;
      }
      first[static_cast<size_t>(a)] = b;
      step[static_cast<size_t>(a)] = s;
      count[static_cast<size_t>(a)] = n;
    }
    if (count != out_dims_[0]) return std::nullopt;
    std::vector<int64_t> st = Strides(id), src;
    for (int64_t k = 0; k < Numel(count); ++k) {
      std::vector<int64_t> idx = Unflatten(k, count);
      int64_t flat = 0;
      for (size_t a = 0; a < id.size(); ++a) flat += (first[a] + idx[a] * step[a]) * st[a];
      src.push_back(flat);
    }
    return Pick(args_[0], count, src);
  }

  std::optional<Dense> ConcatOp() const {
    std::vector<const Dense*> xs;
    for (size_t k = 0; k < args_.size(); ++k)
      if (Present(k)) xs.push_back(&args_[k]);
    if (xs.empty()) return std::nullopt;
    const auto& od = out_dims_[0];
    const int64_t rank = static_cast<int64_t>(od.size());
    const int64_t axis = Norm(op_.IntAttr("axis", 0), rank);
    if (axis < 0 || axis >= rank) return std::nullopt;
    bool all_int = true;
    for (const Dense* x : xs) all_int &= x->is_int;
    Dense r;
    r.dims = od;
    r.is_int = all_int;
    for (int64_t k = 0; k < Numel(od); ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      int64_t pos = idx[static_cast<size_t>(axis)];
      const Dense* src = nullptr;
      for (const Dense* x : xs) {
        if (static_cast<int64_t>(x->dims.size()) != rank) return std::nullopt;
        if (pos < x->dims[static_cast<size_t>(axis)]) { src = x; break; }
        pos -= x->dims[static_cast<size_t>(axis)];
      }
      if (!src) return std::nullopt;
      idx[static_cast<size_t>(axis)] = pos;
      std::vector<int64_t> st = Strides(src->dims);
      int64_t flat = 0;
      for (size_t a = 0; a < idx.size(); ++a) flat += idx[a] * st[a];
      if (all_int) r.i.push_back(src->i[static_cast<size_t>(flat)]);
      else r.f.push_back(src->F(static_cast<size_t>(flat)));
    }
    return r;
  }

  std::optional<Dense> GatherOp() const {
    if (!Present(0) || !Present(1) || !args_[1].is_int) return std::nullopt;
    const auto& xd = args_[0].dims;
    const auto& id = args_[1].dims;
    const int64_t rank = static_cast<int64_t>(xd.size());
    if (rank == 0) return std::nullopt;
    const int64_t axis = Norm(op_.IntAttr("axis", 0), rank);
    if (axis < 0 || axis >= rank) return std::nullopt;
    std::vector<int64_t> od(xd.begin(), xd.begin() + axis);
    od.insert(od.end(), id.begin(), id.end());
    od.insert(od.end(), xd.begin() + axis + 1, xd.end());
    if (od != out_dims_[0]) return std::nullopt;
    std::vector<int64_t> st = Strides(xd), ist = Strides(id), src;
    const int64_t n_axis = xd[static_cast<size_t>(axis)];
    for (int64_t k = 0; k < Numel(od); ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      int64_t iflat = 0;
      for (size_t a = 0; a < id.size(); ++a) iflat += idx[static_cast<size_t>(axis) + a] * ist[a];
      int64_t g = args_[1].i[static_cast<size_t>(iflat)];
      if (g < 0) g += n_axis;
      if (g < 0 || g >= n_axis) return std::nullopt;
      int64_t flat = 0;
      for (int64_t a = 0; a < axis; ++a) flat += idx[static_cast<size_t>(a)] * st[static_cast<size_t>(a)];
      flat += g * st[static_cast<size_t>(axis)];
      for (int64_t a = axis + 1; a < rank; ++a)
        flat += idx[static_cast<size_t>(a - 1 + static_cast<int64_t>(id.size()))] * st[static_cast<size_t>(a)];
      src.push_back(flat);
    }
    return Pick(args_[0], od, src);
  }

  std::optional<Dense> TileOp() const {
    if (!Present(0)) return std::nullopt;
    const auto& id = args_[0].dims;
    const auto& od = out_dims_[0];
    if (id.size() != od.size()) return std::nullopt;
    std::vector<int64_t> st = Strides(id), src;
    for (int64_t k = 0; k < Numel(od); ++k) {
      std::vector<int64_t> idx = Unflatten(k, od);
      int64_t flat = 0;
      for (size_t a = 0; a < id.size(); ++a) {
        if (id[a] == 0) return std::nullopt;
        flat += (idx[a] % id[a]) * st[a];
      }
      src.push_back(flat);
    }
    return Pick(args_[0], od, src);
  }

  std::optional<Dense> Fill() const {
    const Attribute* a = op_.FindAttr("value");
    Dense r;
    r.dims = out_dims_[0];
    const int64_t n = Numel(r.dims);
    if (!a || !a->tensor) {
      r.is_int = false;
      r.f.assign(static_cast<size_t>(n), 0.0);
    } else if (a->tensor->int_values && a->tensor->int_values->size() == 1) {
      r.i.assign(static_cast<size_t>(n), (*a->tensor->int_values)[0]);
    } else if (a->tensor->float_values && a->tensor->float_values->size() == 1) {
      r.is_int = false;
      r.f.assign(static_cast<size_t>(n), (*a->tensor->float_values)[0]);
    } else {
      return std::nullopt;
    }
    return r;
  }

  std::optional<Dense> Reduce() const {
    if (!Present(0)) return std::nullopt;
    const auto& id = args_[0].dims;
    const int64_t rank = static_cast<int64_t>(id.size());
    std::vector<int64_t> axes;
    if (op_.FindAttr("axes")) axes = op_.IntsAttr("axes");
    else if (Present(1)) { if (!args_[1].is_int) return std::nullopt; axes = args_[1].i; }
    std::vector<bool> red(id.size(), axes.empty());
    if (axes.empty() && op_.IntAttr("noop_with_empty_axes", 0) != 0) return Arg(0);
    for (int64_t a : axes) {
      a = Norm(a, rank);
      if (a < 0 || a >= rank) return std::nullopt;
      red[static_cast<size_t>(a)] = true;
    }
    std::vector<int64_t> kept;  // output dims with reduced axes as 1
    for (size_t a = 0; a < id.size(); ++a) kept.push_back(red[a] ? 1 : id[a]);
    const int64_t n_out = Numel(kept);
    if (n_out != Numel(out_dims_[0])) return std::nullopt;
    const std::string& t = op_.type;
    const bool as_int = args_[0].is_int && t != "ReduceMean";
    std::vector<double> accf(static_cast<size_t>(n_out), t == "ReduceProd" ? 1.0 : 0.0);
    std::vector<int64_t> acci(static_cast<size_t>(n_out), t == "ReduceProd" ? 1 : 0);
    std::vector<int64_t> seen(static_cast<size_t>(n_out), 0);
    std::vector<int64_t> kst = Strides(kept);
    for (int64_t k = 0; k < Numel(id); ++k) {
      std::vector<int64_t> idx = Unflatten(k, id);
      int64_t o = 0;
      for (size_t a = 0; a < id.size(); ++a) o += (red[a] ? 0 : idx[a]) * kst[a];
      const size_t oi = static_cast<size_t>(o);
      if (as_int) {
        int64_t v = args_[0].i[static_cast<size_t>(k)];
        int64_t& acc = acci[oi];
        if (seen[oi] == 0 && (t == "ReduceMax" || t == "ReduceMin")) acc = v;
        else if (t == "ReduceSum") { if (__builtin_add_overflow(acc, v, &acc)) return std::nullopt; }
        else if (t == "ReduceProd") { if (__builtin_mul_overflow(acc, v, &acc)) return std::nullopt; }
        else if (t == "ReduceMax") acc = std::max(acc, v);
        else if (t == "ReduceMin") acc = std::min(acc, v);
      } else {
        double v = args_[0].F(static_cast<size_t>(k));
        double& acc = accf[oi];
        if (seen[oi] == 0 && (t == "ReduceMax" || t == "ReduceMin")) acc = v;
        else if (t == "ReduceSum" || t == "ReduceMean") acc += v;
        else if (t == "ReduceProd") acc *= v;
        else if (t == "ReduceMax") acc = std::max(acc, v);
        else if (t == "ReduceMin") acc = std::min(acc, v);
      }
      ++seen[oi];
    }
    Dense r;
    r.dims = out_dims_[0];
    r.is_int = as_int;
    for (size_t o = 0; o < static_cast<size_t>(n_out); ++o) {
      if (seen[o] == 0 && (t == "ReduceMax" || t == "ReduceMin")) return std::nullopt;
      if (as_int) r.i.push_back(acci[o]);
      else r.f.push_back(t == "ReduceMean" ? accf[o] / static_cast<double>(std::max<int64_t>(seen[o], 1)) : accf[o]);
    }
    return r;
  }

  // Split: each output takes the next run of its own size along the axis.
  std::optional<std::vector<Dense>> SplitOp() const {
    if (!Present(0)) return std::nullopt;
    const auto& id = args_[0].dims;
    const int64_t rank = static_cast<int64_t>(id.size());
    const int64_t axis = Norm(op_.IntAttr("axis", 0), rank);
    if (axis < 0 || axis >= rank) return std::nullopt;
    std::vector<Dense> outs;
    int64_t offset = 0;
    std::vector<int64_t> st = Strides(id);
    for (const auto& od : out_dims_) {
      if (od.size() != id.size()) return std::nullopt;
      std::vector<int64_t> src;
      for (int64_t k = 0; k < Numel(od); ++k) {
        std::vector<int64_t> idx = Unflatten(k, od);
        idx[static_cast<size_t>(axis)] += offset;
        int64_t flat = 0;
        for (size_t a = 0; a < idx.size(); ++a) {
          if (idx[a] >= id[a]) return std::nullopt;
          flat += idx[a] * st[a];
        }
        src.push_back(flat);
      }
      outs.push_back(Pick(args_[0], od, src));
      offset += od[static_cast<size_t>(axis)];
    }
    return outs;
  }

  const Op& op_;
  const std::vector<const TensorInfo*>& in_;
  const std::vector<const TensorInfo*>& out_;
  int64_t opset_;
  int64_t max_;
  std::vector<std::vector<int64_t>> out_dims_;
  std::vector<Dense> args_;
};

}  // namespace

std::optional<std::vector<FoldedValue>> FoldConstant(const Op& op,
                                                     const std::vector<const TensorInfo*>& inputs,
                                                     const std::vector<const TensorInfo*>& outputs,
                                                     int64_t opset, int64_t max_elements) {
  if (max_elements <= 0) return std::nullopt;
  Folder f(op, inputs, outputs, opset, max_elements);
  std::optional<std::vector<Dense>> r = f.Run();
  if (!r || r->size() != outputs.size()) return std::nullopt;
  std::vector<FoldedValue> out;
  for (size_t k = 0; k < r->size(); ++k) {
    DType dt = outputs[k]->dtype;
    Dense d = (*r)[k];
    if (dt != DType::kUnknown) d = ToDType(std::move(d), dt);
    if (static_cast<int64_t>(d.size()) != Numel((*r)[k].dims)) return std::nullopt;
    FoldedValue v;
    v.is_int = d.is_int;
    v.ints = std::move(d.i);
    v.floats = std::move(d.f);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ftax
