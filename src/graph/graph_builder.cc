#include "graph/graph_builder.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace ftax {
namespace arch {

GraphBuilder::GraphBuilder(Graph* graph, DType dtype, std::string domain)
    : g_(graph), dtype_(dtype), domain_(std::move(domain)) {
  frames_.resize(8);
}

void GraphBuilder::Push(const std::string& component) {
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

std::string GraphBuilder::NextName() {
  char buf[24];
  char* p = buf + sizeof(buf);
  int64_t v = next_value_++;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  *--p = '%';
  return std::string(p, buf + sizeof(buf));
}

TensorInfo& GraphBuilder::NewTensor(std::string name, DType dt, const Dims& dims) {
  auto [it, inserted] = g_->tensors.try_emplace(std::move(name));
  TensorInfo& t = it->second;
  if (!inserted && status_.ok()) status_ = Internal("tensor '" + it->first + "' made twice");
  t.name = it->first;
  t.dtype = dt;
  t.has_shape = true;
  t.shape.resize(dims.size());
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    t.shape[i].value = dims[i];
    if (status_.ok() && (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))) {
      status_ = InvalidInput("tensor '" + t.name + "' would have more elements than int64 holds");
    }
  }
  return t;
}

std::string GraphBuilder::Input(const std::string& name, DType dt, const Dims& dims) {
  NewTensor(name, dt, dims).is_graph_input = true;
  g_->inputs.push_back(name);
  return name;
}

std::string GraphBuilder::Weight(const std::string& leaf, const Dims& dims) {
  std::string name;
  name.reserve(param_prefix_.size() + 1 + leaf.size());
  name += param_prefix_;
  if (!name.empty()) name += '.';
  name += leaf;
  TensorInfo& t = NewTensor(std::move(name), dtype_, dims);
  t.is_initializer = true;
  return t.name;
}

std::string GraphBuilder::Initializer(const std::string& name, DType dt, const Dims& dims) {
  auto it = g_->tensors.find(name);
  if (it != g_->tensors.end()) return name;
  NewTensor(name, dt, dims).is_initializer = true;
  return name;
}

std::string GraphBuilder::IntConst(const std::vector<int64_t>& values) {
  std::string name = "const_i64";
  for (int64_t v : values) {
    name += '_';
    if (v < 0) name += 'm';
    name += std::to_string(v < 0 ? -v : v);
  }
  auto it = g_->tensors.find(name);
  if (it != g_->tensors.end()) return name;
  TensorInfo& t = NewTensor(name, DType::kInt64, {static_cast<int64_t>(values.size())});
  t.is_initializer = true;
  t.int_values = values;
  return name;
}

std::string GraphBuilder::ScalarConst(const std::string& key) {
  std::string name = "const_" + key;
  auto it = g_->tensors.find(name);
  if (it != g_->tensors.end()) return name;
  NewTensor(name, dtype_, {}).is_initializer = true;
  return name;
}

Op& GraphBuilder::NewOp(const char* type, std::vector<std::string> inputs) {
  g_->ops.emplace_back();
  Op& op = g_->ops.back();
  op.type = type;
  op.domain = domain_;
  op.scope = scope_;
  int n = 0;
  auto& counts = frames_[depth_].counts;
  bool found = false;
  for (auto& c : counts) {
    if (c.first == type || std::strcmp(c.first, type) == 0) {
      n = c.second++;
      found = true;
      break;
    }
  }
  if (!found) counts.emplace_back(type, 1);
  std::string& name = op.name;
  name.reserve(scope_.size() + 1 + op.type.size() + (n ? 4 : 0));
  name += scope_;
  name += '/';
  name += op.type;
  if (n > 0) {
    name += '_';
    name += std::to_string(n);
  }
  op.inputs = std::move(inputs);
  return op;
}

std::string GraphBuilder::Op1(const char* type, std::vector<std::string> inputs, const Dims& out) {
  return Op1(type, std::move(inputs), out, dtype_);
}

std::string GraphBuilder::Op1(const char* type, std::vector<std::string> inputs, const Dims& out,
                              DType dt) {
  Op& op = NewOp(type, std::move(inputs));
  TensorInfo& t = NewTensor(NextName(), dt, out);
  op.outputs.push_back(t.name);
  return t.name;
}

std::vector<std::string> GraphBuilder::OpN(const char* type, std::vector<std::string> inputs,
                                           const std::vector<Dims>& outs) {
  Op& op = NewOp(type, std::move(inputs));
  op.outputs.reserve(outs.size());
  for (const Dims& d : outs) op.outputs.push_back(NewTensor(NextName(), dtype_, d).name);
  return op.outputs;
}

void GraphBuilder::SetInt(const char* key, int64_t v) {
  Attribute& a = last().attrs[key];
  a.kind = Attribute::Kind::kInt;
  a.i = v;
}

void GraphBuilder::SetFloat(const char* key, double v) {
  Attribute& a = last().attrs[key];
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
}

void GraphBuilder::SetInts(const char* key, std::vector<int64_t> v) {
  Attribute& a = last().attrs[key];
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
}

void GraphBuilder::SetString(const char* key, std::string v) {
  Attribute& a = last().attrs[key];
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
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
  MaybeScope(GraphBuilder& b, const std::string& m) : b_(b), on_(!m.empty()) {
    if (on_) b_.Push(m);
  }
  ~MaybeScope() {
    if (on_) b_.Pop();
  }
  GraphBuilder& b_;
  bool on_;
};
}  // namespace

std::string Linear(GraphBuilder& b, const std::string& module, const std::string& x,
                   const Dims& xd, int64_t out_features, bool bias) {
  MaybeScope s(b, module);
  const int64_t in = xd.empty() ? 0 : xd.back();
  Dims yd = xd;
  if (!yd.empty()) yd.back() = out_features;
  if (b.torch()) {
    std::string w = b.Weight("weight", {out_features, in});
    std::string bb = bias ? b.Weight("bias", {out_features}) : std::string();
    return b.Op1("linear", {x, w, bb}, yd);
  }
  if (xd.size() == 2) {
    std::string w = b.Weight("weight", {out_features, in});
    std::vector<std::string> ins = {x, w};
    if (bias) ins.push_back(b.Weight("bias", {out_features}));
    std::string y = b.Op1("Gemm", std::move(ins), yd);
    b.SetFloat("alpha", 1.0);
    b.SetFloat("beta", 1.0);
    b.SetInt("transB", 1);
    return y;
  }
  std::string w = b.Weight("weight", {in, out_features});
  std::string y = b.Op1("MatMul", {x, w}, yd);
  if (!bias) return y;
  return b.Op1("Add", {y, b.Weight("bias", {out_features})}, yd);
}

std::string LayerNorm(GraphBuilder& b, const std::string& module, const std::string& x,
                      const Dims& xd, double eps) {
  MaybeScope s(b, module);
  const int64_t n = xd.empty() ? 0 : xd.back();
  std::string w = b.Weight("weight", {n});
  std::string bias = b.Weight("bias", {n});
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

std::string Gelu(GraphBuilder& b, const std::string& module, const std::string& x,
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

std::string Dropout(GraphBuilder& b, const std::string& module, const std::string& x,
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

std::string ConvBn(GraphBuilder& b, const std::string& conv, const std::string& bn,
                   const std::string& x, const Dims& xd, int64_t out_channels, int64_t kernel,
                   int64_t stride, int64_t pad, int64_t groups, Dims* yd) {
  const int64_t ho = ConvOut(xd[2], kernel, stride, pad), wo = ConvOut(xd[3], kernel, stride, pad);
  *yd = {xd[0], out_channels, ho, wo};
  const Dims wd = {out_channels, xd[1] / groups, kernel, kernel};
  if (!b.torch()) {
    ScopeGuard s(b, conv);
    std::string w = b.Weight("weight", wd);
    std::string bias = b.Weight("bias", {out_channels});
    std::string y = b.Op1("Conv", {x, w, bias}, *yd);
    SetConvAttrs(b, kernel, stride, pad, groups);
    return y;
  }
  std::string y;
  {
    ScopeGuard s(b, conv);
    std::string w = b.Weight("weight", wd);
    y = b.Op1("conv2d", {x, w, std::string()}, *yd);
    SetConvAttrs(b, kernel, stride, pad, groups);
  }
  ScopeGuard s(b, bn);
  const Dims cd = {out_channels};
  std::string w = b.Weight("weight", cd);
  std::string bias = b.Weight("bias", cd);
  std::string mean = b.Weight("running_mean", cd);
  std::string var = b.Weight("running_var", cd);
  y = b.Op1("batch_norm", {y, w, bias, mean, var}, *yd);
  b.SetInt("training", 0);
  b.SetFloat("momentum", 0.1);
  b.SetFloat("eps", 1e-5);
  return y;
}

std::string ConvBias(GraphBuilder& b, const std::string& module, const std::string& x,
                     const Dims& xd, int64_t out_channels, int64_t kernel, int64_t stride,
                     int64_t pad, Dims* yd) {
  *yd = {xd[0], out_channels, ConvOut(xd[2], kernel, stride, pad),
         ConvOut(xd[3], kernel, stride, pad)};
  ScopeGuard s(b, module);
  std::string w = b.Weight("weight", {out_channels, xd[1], kernel, kernel});
  std::string bias = b.Weight("bias", {out_channels});
  std::string y = b.Op1(b.torch() ? "conv2d" : "Conv", {x, w, bias}, *yd);
  SetConvAttrs(b, kernel, stride, pad, 1);
  return y;
}

std::string Relu(GraphBuilder& b, const std::string& module, const std::string& x,
                 const Dims& xd) {
  MaybeScope s(b, module);
  return b.Op1(b.torch() ? "relu" : "Relu", {x}, xd);
}

std::string Relu6(GraphBuilder& b, const std::string& module, const std::string& x,
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

}  // namespace arch
}  // namespace ftax
