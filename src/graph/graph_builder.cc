#include "graph/graph_builder.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

namespace ftax {
namespace arch {

namespace {
// Whether n bytes are equal, compared inline in words: the strings compared here (op types,
// scopes, value names) are short, and a memcmp call costs more than the compare. The last
// word of a string overlaps the one before it rather than being compared byte by byte.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  auto same8 = [](const char* x, const char* y) {
    uint64_t u, v;
    std::memcpy(&u, x, 8);
    std::memcpy(&v, y, 8);
    return u == v;
  };
  auto same4 = [](const char* x, const char* y) {
    uint32_t u, v;
    std::memcpy(&u, x, 4);
    std::memcpy(&v, y, 4);
    return u == v;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (!same8(a + i, b + i)) return false;
    return same8(a + n - 8, b + n - 8);
  }
  if (n >= 4) return same4(a, b) && same4(a + n - 4, b + n - 4);
  if (n == 0) return true;
  return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

// dst = src, skipping the copy when they are already equal (the common case when a search
// loop rebuilds a similar spec into the same graph).
inline void Set(std::string& dst, std::string_view src) {
  if (dst.size() != src.size() || !SameBytes(dst.data(), src.data(), src.size())) {
    dst.assign(src.data(), src.size());
  }
}

// Decimal digits of v > 0 into buf (at least 20 chars); returns their count.
inline size_t Digits(int64_t v, char* buf) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  for (size_t i = 0; i < n; ++i) buf[i] = tmp[n - 1 - i];
  return n;
}

// Op slots and tensor-map nodes a shrinking build dropped, kept per thread for the next build
// that grows (a search loop alternating between specs of different depth then allocates
// nothing). Bounded, so a thread holds at most a few thousand of each.
struct Spare {
  static constexpr size_t kMax = 8192;
  std::vector<Op> ops;
  std::vector<std::unordered_map<std::string, TensorInfo>::node_type> nodes;
};
thread_local Spare spare;

}  // namespace

GraphBuilder::GraphBuilder(Graph* graph, DType dtype, std::string domain)
    : g_(graph), dtype_(dtype), domain_(std::move(domain)), torch_(domain_ == "aten") {
  frames_.resize(8);
  // Reuse what a previous build left: its tensors are marked stale (dtype unknown, which no
  // tensor of a build has) and overwritten in place when a name recurs; ops are overwritten
  // slot by slot. Finish() drops what was not reused.
  for (auto& [name, t] : g_->tensors) t.dtype = DType::kUnknown;
  stale_left_ = g_->tensors.size();
  g_->inputs.clear();
  g_->outputs.clear();
  g_->warnings.clear();
}

void GraphBuilder::Finish() {
  if (finished_) return;
  finished_ = true;
  if (op_count_ > 0) CloseOp();
  while (g_->ops.size() > op_count_) {
    if (spare.ops.size() < Spare::kMax) spare.ops.push_back(std::move(g_->ops.back()));
    g_->ops.pop_back();
  }
  if (stale_left_ > 0) {
    for (auto it = g_->tensors.begin(); it != g_->tensors.end();) {
      if (it->second.dtype != DType::kUnknown) {
        ++it;
        continue;
      }
      auto next = std::next(it);
      if (spare.nodes.size() < Spare::kMax) {
        spare.nodes.push_back(g_->tensors.extract(it));
      } else {
        g_->tensors.erase(it);
      }
      it = next;
    }
  }
}

void GraphBuilder::Push(std::string_view component) {
  ++depth_;
  if (depth_ >= frames_.size()) frames_.resize(depth_ + 1);
  Frame& f = frames_[depth_];
  f.scope_len = scope_.size();
  f.prefix_len = param_prefix_.size();
  f.counts.clear();
  scope_ += '/';
  scope_ += component;
  if (!param_prefix_.empty()) param_prefix_ += '.';
  param_prefix_ += component;
}

void GraphBuilder::Pop() {
  if (depth_ == 0) return;
  const Frame& f = frames_[depth_];
  scope_.resize(f.scope_len);
  param_prefix_.resize(f.prefix_len);
  --depth_;
}

void GraphBuilder::NextName() {
  char buf[24];
  char* p = buf + sizeof(buf);
  int64_t v = next_value_++;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  *--p = '%';
  name_buf_.assign(p, buf + sizeof(buf));
}

TensorInfo& GraphBuilder::NewTensor(const std::string& name, DType dt, const Dims& dims) {
  auto it = g_->tensors.find(name);
  if (it == g_->tensors.end() && !spare.nodes.empty()) {
    // A node an earlier build dropped: re-key it (its buffers are reused).
    auto node = std::move(spare.nodes.back());
    spare.nodes.pop_back();
    node.key() = name;
    TensorInfo& t = node.mapped();
    t.name = name;
    t.is_initializer = false;
    t.is_graph_input = false;
    t.int_values.reset();
    it = g_->tensors.insert(std::move(node)).position;
  } else if (it == g_->tensors.end()) {
    it = g_->tensors.emplace(name, TensorInfo()).first;
    it->second.name = name;
  } else if (it->second.dtype == DType::kUnknown) {
    // A tensor of the previous build with the same name: reset the fields a build sets (that
    // build set no others); name and shape buffers stay.
    TensorInfo& t = it->second;
    t.is_initializer = false;
    t.is_graph_input = false;
    t.int_values.reset();
    --stale_left_;
  } else if (status_.ok()) {
    status_ = Internal("tensor '" + name + "' made twice");
  }
  TensorInfo& t = it->second;
  t.dtype = dt;
  t.has_shape = true;
  t.shape.resize(dims.size());
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    Dim& d = t.shape[i];
    d.value = dims[i];
    if (!d.symbol.empty()) d.symbol.clear();
    if (status_.ok() && (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))) {
      status_ = InvalidInput("tensor '" + t.name + "' would have more elements than int64 holds");
    }
  }
  return t;
}

const std::string& GraphBuilder::Input(std::string_view name, DType dt, const Dims& dims) {
  name_buf_.assign(name.data(), name.size());
  TensorInfo& t = NewTensor(name_buf_, dt, dims);
  t.is_graph_input = true;
  g_->inputs.push_back(t.name);
  return t.name;
}

const std::string& GraphBuilder::Weight(std::string_view leaf, const Dims& dims) {
  name_buf_.assign(param_prefix_);
  if (!name_buf_.empty()) name_buf_ += '.';
  name_buf_ += leaf;
  TensorInfo& t = NewTensor(name_buf_, dtype_, dims);
  t.is_initializer = true;
  return t.name;
}

const std::string& GraphBuilder::Initializer(std::string_view name, DType dt, const Dims& dims) {
  name_buf_.assign(name.data(), name.size());
  auto it = g_->tensors.find(name_buf_);
  if (it != g_->tensors.end() && it->second.dtype != DType::kUnknown) return it->second.name;
  TensorInfo& t = NewTensor(name_buf_, dt, dims);
  t.is_initializer = true;
  return t.name;
}

const std::string& GraphBuilder::IntConst(const Dims& values) {
  for (const auto& [v, name] : int_consts_) {
    if (v == values) return *name;
  }
  std::string name = "const_i64";
  for (int64_t v : values) {
    name += '_';
    if (v < 0) name += 'm';
    name += std::to_string(v < 0 ? -v : v);
  }
  TensorInfo& t = NewTensor(name, DType::kInt64, {static_cast<int64_t>(values.size())});
  t.is_initializer = true;
  t.int_values = values.vec();
  int_consts_.emplace_back(values, &t.name);
  return t.name;
}

const std::string& GraphBuilder::IntScalar(int64_t value) {
  for (const auto& [v, name] : int_scalars_) {
    if (v == value) return *name;
  }
  std::string name = "const_i64_scalar_" + std::string(value < 0 ? "m" : "") +
                     std::to_string(value < 0 ? -value : value);
  TensorInfo& t = NewTensor(name, DType::kInt64, {});
  t.is_initializer = true;
  t.int_values = std::vector<int64_t>{value};
  int_scalars_.emplace_back(value, &t.name);
  return t.name;
}

const std::string& GraphBuilder::ScalarConst(const char* key) {
  for (const auto& [k, name] : scalars_) {
    if (k == key || std::strcmp(k, key) == 0) return *name;
  }
  TensorInfo& t = NewTensor(std::string("const_") + key, dtype_, {});
  t.is_initializer = true;
  scalars_.emplace_back(key, &t.name);
  return t.name;
}

void GraphBuilder::CloseOp() {
  Op& op = last();
  if (op.attrs.size() == attrs_set_.size()) return;
  // A reused slot kept attributes this build did not set.
  for (auto it = op.attrs.begin(); it != op.attrs.end();) {
    bool set = false;
    for (const char* k : attrs_set_) set = set || std::strcmp(it->first.c_str(), k) == 0;
    it = set ? std::next(it) : op.attrs.erase(it);
  }
}

Op& GraphBuilder::NewOp(const char* type, Inputs inputs) {
  if (op_count_ > 0) CloseOp();
  attrs_set_.clear();
  if (op_count_ == g_->ops.size()) {
    if (!spare.ops.empty()) {
      g_->ops.push_back(std::move(spare.ops.back()));
      spare.ops.pop_back();
    } else {
      g_->ops.emplace_back();
    }
  }
  Op& op = g_->ops[op_count_++];
  // A reused slot: the fields a build sets are overwritten below; reset the rest (an earlier
  // build set no others).
  op.repeat = 1.0;
  Set(op.type, type);
  Set(op.domain, domain_);
  Set(op.scope, scope_);
  int n = 0;
  auto& counts = frames_[depth_].counts;
  bool found = false;
  for (auto& c : counts) {
    if (c.first == type || (c.first[0] == type[0] && std::strcmp(c.first, type) == 0)) {
      n = c.second++;
      found = true;
      break;
    }
  }
  if (!found) counts.emplace_back(type, 1);
  // op.name = scope + "/" + type [+ "_" + n]; compared piecewise first, since a reused slot
  // usually holds that name already.
  const size_t type_len = op.type.size();
  const std::string& nm = op.name;
  char digits[24];
  const size_t num_digits = n > 0 ? Digits(n, digits) : 0;
  const size_t len = scope_.size() + 1 + type_len + (n > 0 ? 1 + num_digits : 0);
  const char* p = nm.data() + scope_.size();
  bool same = nm.size() == len && SameBytes(nm.data(), scope_.data(), scope_.size()) && p[0] == '/' &&
              SameBytes(p + 1, op.type.data(), type_len) &&
              (n == 0 || (p[1 + type_len] == '_' && SameBytes(p + 2 + type_len, digits, num_digits)));
  if (!same) {
    name_buf_.assign(scope_);
    name_buf_ += '/';
    name_buf_ += op.type;
    if (n > 0) {
      name_buf_ += '_';
      name_buf_.append(digits, num_digits);
    }
    Set(op.name, name_buf_);
  }
  op.inputs.resize(inputs.size());
  size_t i = 0;
  for (std::string_view in : inputs) Set(op.inputs[i++], in);
  return op;
}

const std::string& GraphBuilder::Op1(const char* type, Inputs inputs, const Dims& out) {
  return Op1(type, inputs, out, dtype_);
}

const std::string& GraphBuilder::Op1(const char* type, Inputs inputs, const Dims& out, DType dt) {
  Op& op = NewOp(type, inputs);
  NextName();
  TensorInfo& t = NewTensor(name_buf_, dt, out);
  op.outputs.resize(1);
  Set(op.outputs[0], t.name);
  return t.name;
}

std::vector<std::string> GraphBuilder::OpN(const char* type, Inputs inputs,
                                           std::initializer_list<Dims> outs) {
  Op& op = NewOp(type, inputs);
  op.outputs.resize(outs.size());
  size_t i = 0;
  for (const Dims& d : outs) {
    NextName();
    Set(op.outputs[i++], NewTensor(name_buf_, dtype_, d).name);
  }
  return op.outputs;
}

const std::string& GraphBuilder::NameLastOutput(std::string_view name) {
  Op& op = last();
  std::string& out = op.outputs[0];
  auto cur = g_->tensors.find(out);
  name_buf_.assign(name.data(), name.size());
  if (cur == g_->tensors.end() || name_buf_ == out) return out;
  TensorInfo t = cur->second;
  // The "%N" node goes to the spare pool; the named tensor is made like any other.
  if (spare.nodes.size() < Spare::kMax) {
    spare.nodes.push_back(g_->tensors.extract(cur));
  } else {
    g_->tensors.erase(cur);
  }
  Dims d;
  for (const Dim& x : t.shape) d.push_back(x.value);
  TensorInfo& n = NewTensor(name_buf_, t.dtype, d);
  Set(out, n.name);
  return n.name;
}

Attribute& GraphBuilder::Attr(const char* key) {
  attrs_set_.push_back(key);
  Op& op = last();
  // A reused slot usually has the key already; an op has a few, so a scan with strcmp beats a
  // map lookup, which would first make a std::string of the key.
  for (auto& [k, a] : op.attrs)
    if (k[0] == key[0] && std::strcmp(k.c_str(), key) == 0) return a;
  return op.attrs.emplace(key, Attribute()).first->second;
}

void GraphBuilder::SetInt(const char* key, int64_t v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kInt;
  a.i = v;
}

void GraphBuilder::SetFloat(const char* key, double v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
}

void GraphBuilder::SetInts(const char* key, std::initializer_list<int64_t> v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kInts;
  a.ints.assign(v.begin(), v.end());
}

void GraphBuilder::SetInts(const char* key, const std::vector<int64_t>& v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kInts;
  a.ints.assign(v.begin(), v.end());
}

void GraphBuilder::SetInts(const char* key, const Dims& v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kInts;
  a.ints.assign(v.begin(), v.end());
}

void GraphBuilder::SetString(const char* key, const char* v) {
  Attribute& a = Attr(key);
  a.kind = Attribute::Kind::kString;
  a.s.assign(v);
}

// ---- spec values ----

const std::string* ArchParams::Find(const std::string& key) const {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {

Status BadValue(const ArchParams& p, const char* key, const std::string& value,
                const std::string& what) {
  return InvalidInput("arch spec '" + p.spec + "': key '" + key + "' " + what + ", got '" +
                      value + "'");
}

// Parses a decimal integer with nothing else around it.
bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace

Status GetInt(const ArchParams& p, const char* key, int64_t def, int64_t max, int64_t* out) {
  const std::string* v = p.Find(key);
  if (!v) {
    *out = def;
    return Status::Ok();
  }
  int64_t x = 0;
  if (!ParseInt(*v, &x)) return BadValue(p, key, *v, "must be an integer");
  if (x <= 0) return BadValue(p, key, *v, "must be positive");
  if (x > max) return BadValue(p, key, *v, "must be at most " + std::to_string(max));
  *out = x;
  return Status::Ok();
}

Status GetBool(const ArchParams& p, const char* key, bool def, bool* out) {
  const std::string* v = p.Find(key);
  if (!v) {
    *out = def;
    return Status::Ok();
  }
  if (*v == "0" || *v == "false") {
    *out = false;
  } else if (*v == "1" || *v == "true") {
    *out = true;
  } else {
    return BadValue(p, key, *v, "must be 0 or 1");
  }
  return Status::Ok();
}

Status GetFloat(const ArchParams& p, const char* key, double def, double max, double* out) {
  const std::string* v = p.Find(key);
  if (!v) {
    *out = def;
    return Status::Ok();
  }
  if (v->empty()) return BadValue(p, key, *v, "must be a number");
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (errno == ERANGE || end != v->c_str() + v->size() || !std::isfinite(x)) {
    return BadValue(p, key, *v, "must be a number");
  }
  if (x <= 0) return BadValue(p, key, *v, "must be positive");
  if (x > max) return BadValue(p, key, *v, "must be at most " + std::to_string(max));
  *out = x;
  return Status::Ok();
}

Status GetIntList(const ArchParams& p, const char* key, int64_t max, std::vector<int64_t>* out) {
  out->clear();
  const std::string* v = p.Find(key);
  if (!v) return Status::Ok();
  size_t start = 0;
  while (true) {
    size_t dash = v->find('-', start);
    std::string item = v->substr(start, dash == std::string::npos ? std::string::npos : dash - start);
    int64_t x = 0;
    if (!ParseInt(item, &x)) {
      return BadValue(p, key, *v, "must be positive integers separated by '-' (e.g. 3-4-6-3)");
    }
    if (x <= 0) return BadValue(p, key, *v, "must hold positive counts");
    if (x > max) return BadValue(p, key, *v, "must hold counts of at most " + std::to_string(max));
    out->push_back(x);
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  return Status::Ok();
}

Status CheckDivisible(const char* key, int64_t value, const char* by_key, int64_t by) {
  if (by > 0 && value % by == 0) return Status::Ok();
  return InvalidInput("key '" + std::string(key) + "' (" + std::to_string(value) +
                      ") must be divisible by key '" + by_key + "' (" + std::to_string(by) + ")");
}

}  // namespace arch
}  // namespace ftax

namespace ftax {
namespace arch {

namespace {
struct MaybeScope {
  MaybeScope(GraphBuilder& b, std::string_view m) : b_(b), on_(!m.empty()) {
    if (on_) b_.Push(m);
  }
  ~MaybeScope() {
    if (on_) b_.Pop();
  }
  GraphBuilder& b_;
  bool on_;
};
}  // namespace

std::string Linear(GraphBuilder& b, std::string_view module, const std::string& x,
                   const Dims& xd, int64_t out_features, bool bias) {
  MaybeScope s(b, module);
  const int64_t in = xd.empty() ? 0 : xd.back();
  Dims yd = xd;
  if (!yd.empty()) yd.back() = out_features;
  if (b.torch()) {
    const std::string& w = b.Weight("weight", {out_features, in});
    if (!bias) return b.Op1("linear", {x, w, ""}, yd);
    return b.Op1("linear", {x, w, b.Weight("bias", {out_features})}, yd);
  }
  if (xd.size() == 2) {
    const std::string& w = b.Weight("weight", {out_features, in});
    std::string y = bias ? b.Op1("Gemm", {x, w, b.Weight("bias", {out_features})}, yd)
                         : b.Op1("Gemm", {x, w}, yd);
    b.SetFloat("alpha", 1.0);
    b.SetFloat("beta", 1.0);
    b.SetInt("transB", 1);
    return y;
  }
  std::string y = b.Op1("MatMul", {x, b.Weight("weight", {in, out_features})}, yd);
  if (!bias) return y;
  return b.Op1("Add", {y, b.Weight("bias", {out_features})}, yd);
}

std::string LayerNorm(GraphBuilder& b, std::string_view module, const std::string& x,
                      const Dims& xd, double eps) {
  MaybeScope s(b, module);
  const int64_t n = xd.empty() ? 0 : xd.back();
  const std::string& w = b.Weight("weight", {n});
  const std::string& bias = b.Weight("bias", {n});
  if (b.torch()) {
    std::string y = b.Op1("layer_norm", {x, w, bias}, xd);
    b.SetInts("normalized_shape", {n});
    b.SetFloat("eps", eps);
    return y;
  }
  std::string y = b.Op1("LayerNormalization", {x, w, bias}, xd);
  b.SetInt("axis", -1);
  b.SetFloat("epsilon", eps);
  return y;
}

std::string Gelu(GraphBuilder& b, std::string_view module, const std::string& x,
                 const Dims& xd) {
  MaybeScope s(b, module);
  if (b.torch()) {
    std::string y = b.Op1("gelu", {x}, xd);
    b.SetString("approximate", "none");
    return y;
  }
  std::string d = b.Op1("Div", {x, b.ScalarConst("sqrt2")}, xd);
  std::string e = b.Op1("Erf", {d}, xd);
  std::string a = b.Op1("Add", {e, b.ScalarConst("one")}, xd);
  std::string m = b.Op1("Mul", {x, a}, xd);
  return b.Op1("Mul", {m, b.ScalarConst("half")}, xd);
}

std::string Dropout(GraphBuilder& b, std::string_view module, const std::string& x,
                    const Dims& xd, double p) {
  if (!b.torch()) return x;
  MaybeScope s(b, module);
  std::string y = b.Op1("dropout", {x}, xd);
  b.SetFloat("p", p);
  b.SetInt("train", 0);
  return y;
}

int64_t OnnxTypeCode(DType t) {
  switch (t) {
    case DType::kFloat32: return 1;
    case DType::kFloat16: return 10;
    case DType::kBFloat16: return 16;
    case DType::kFloat64: return 11;
    case DType::kInt64: return 7;
    case DType::kInt32: return 6;
    case DType::kBool: return 9;
    default: return 0;
  }
}

}  // namespace arch
}  // namespace ftax

namespace ftax {
namespace arch {

namespace {
void SetConvAttrs(GraphBuilder& b, int64_t kernel, int64_t stride, int64_t pad, int64_t groups) {
  if (b.torch()) {
    b.SetInts("stride", {stride, stride});
    b.SetInts("padding", {pad, pad});
    b.SetInts("dilation", {1, 1});
    b.SetInt("groups", groups);
  } else {
    b.SetInts("dilations", {1, 1});
    b.SetInt("group", groups);
    b.SetInts("kernel_shape", {kernel, kernel});
    b.SetInts("pads", {pad, pad, pad, pad});
    b.SetInts("strides", {stride, stride});
  }
}
}  // namespace

std::string ConvBn(GraphBuilder& b, std::string_view conv, std::string_view bn,
                   const std::string& x, const Dims& xd, int64_t out_channels, int64_t kernel,
                   int64_t stride, int64_t pad, int64_t groups, Dims* yd) {
  const int64_t ho = ConvOut(xd[2], kernel, stride, pad), wo = ConvOut(xd[3], kernel, stride, pad);
  *yd = {xd[0], out_channels, ho, wo};
  const Dims wd = {out_channels, xd[1] / groups, kernel, kernel};
  if (!b.torch()) {
    ScopeGuard s(b, conv);
    const std::string& w = b.Weight("weight", wd);
    const std::string& bias = b.Weight("bias", {out_channels});
    std::string y = b.Op1("Conv", {x, w, bias}, *yd);
    SetConvAttrs(b, kernel, stride, pad, groups);
    return y;
  }
  std::string y;
  {
    ScopeGuard s(b, conv);
    y = b.Op1("conv2d", {x, b.Weight("weight", wd), ""}, *yd);
    SetConvAttrs(b, kernel, stride, pad, groups);
  }
  ScopeGuard s(b, bn);
  const Dims cd = {out_channels};
  const std::string& w = b.Weight("weight", cd);
  const std::string& bias = b.Weight("bias", cd);
  const std::string& mean = b.Weight("running_mean", cd);
  const std::string& var = b.Weight("running_var", cd);
  y = b.Op1("batch_norm", {y, w, bias, mean, var}, *yd);
  b.SetInt("training", 0);
  b.SetFloat("momentum", 0.1);
  b.SetFloat("eps", 1e-5);
  return y;
}

std::string ConvBias(GraphBuilder& b, std::string_view module, const std::string& x,
                     const Dims& xd, int64_t out_channels, int64_t kernel, int64_t stride,
                     int64_t pad, Dims* yd) {
  *yd = {xd[0], out_channels, ConvOut(xd[2], kernel, stride, pad),
         ConvOut(xd[3], kernel, stride, pad)};
  ScopeGuard s(b, module);
  const std::string& w = b.Weight("weight", {out_channels, xd[1], kernel, kernel});
  const std::string& bias = b.Weight("bias", {out_channels});
  std::string y = b.Op1(b.torch() ? "conv2d" : "Conv", {x, w, bias}, *yd);
  SetConvAttrs(b, kernel, stride, pad, 1);
  return y;
}

std::string Relu(GraphBuilder& b, std::string_view module, const std::string& x,
                 const Dims& xd, bool inplace) {
  MaybeScope s(b, module);
  return b.Op1(b.torch() ? (inplace ? "relu_" : "relu") : "Relu", {x}, xd);
}

std::string Relu6(GraphBuilder& b, std::string_view module, const std::string& x,
                  const Dims& xd) {
  MaybeScope s(b, module);
  if (b.torch()) {
    std::string y = b.Op1("hardtanh", {x}, xd);
    b.SetFloat("min_val", 0.0);
    b.SetFloat("max_val", 6.0);
    return y;
  }
  return b.Op1("Clip", {x, b.ScalarConst("zero"), b.ScalarConst("six")}, xd);
}

std::string HfSdpaMask(GraphBuilder& b, const std::string& mask2d, int64_t B, int64_t S,
                       int64_t L, bool causal) {
  const DType i64 = DType::kInt64, bl = DType::kBool;
  std::string pad = b.Op1("to", {mask2d}, {B, L}, bl);
  // The mask's aranges take the input's device (transformers' device=...): GPU tensors.
  std::string q = b.Op1("arange", {}, {S}, i64);       // cache_position
  b.SetString("device", "cuda:0");
  std::string kv = b.Op1("arange", {}, {L}, i64);      // kv_arange
  b.SetString("device", "cuda:0");
  kv = b.Op1("add", {kv}, {L}, i64);                   // += kv_offset
  std::string bi = b.Op1("arange", {}, {B}, i64);      // batch_arange
  b.SetString("device", "cuda:0");
  std::string hi = b.Op1("add", {q}, {S}, i64);        // position of the queries
  // batch[:, None, None, None], head[None, :, None, None], q[None, None, :, None],
  // kv[None, None, None, :]
  bi = b.Op1("slice", {bi}, {B}, i64);
  bi = b.Op1("unsqueeze", {bi}, {B, 1}, i64);
  bi = b.Op1("unsqueeze", {bi}, {B, 1, 1}, i64);
  bi = b.Op1("unsqueeze", {bi}, {B, 1, 1, 1}, i64);
  std::string qi = b.Op1("unsqueeze", {hi}, {1, S}, i64);
  qi = b.Op1("unsqueeze", {qi}, {1, 1, S}, i64);
  qi = b.Op1("slice", {qi}, {1, 1, S}, i64);
  qi = b.Op1("unsqueeze", {qi}, {1, 1, S, 1}, i64);
  std::string ki = b.Op1("unsqueeze", {kv}, {1, L}, i64);
  ki = b.Op1("unsqueeze", {ki}, {1, 1, L}, i64);
  ki = b.Op1("unsqueeze", {ki}, {1, 1, 1, L}, i64);
  ki = b.Op1("slice", {ki}, {1, 1, 1, L}, i64);
  std::string m = b.Op1("new_ones", {qi}, {}, bl);
  std::string c = b.Op1(causal ? "le" : "ge", {ki, qi}, {1, 1, S, L}, bl);
  c = b.Op1("to", {c}, {1, 1, S, L}, bl);
  m = b.Op1("__and__", {m, c}, {1, 1, S, L}, bl);
  std::string p = b.Op1("index", {pad, bi, ki}, {B, 1, 1, L}, bl);
  p = b.Op1("to", {p}, {B, 1, 1, L}, bl);
  m = b.Op1("__and__", {m, p}, {B, 1, S, L}, bl);
  return b.Op1("expand", {m}, {B, 1, S, L}, bl);
}

}  // namespace arch
}  // namespace ftax
