// The counting registry: one entry per (domain, op type). Conventions in docs/counting.md.
#include "graph/op_cost.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ftax {
namespace {

// FLOPs per element of the ops that are not multiply-accumulates (docs/counting.md).
constexpr double kSimpleFlops = 1;         // add, mul, max, compare, relu, ...
constexpr double kTranscendentalFlops = 4;  // exp, log, sqrt, tanh, sigmoid, erf, sin, pow, ...
constexpr double kSiluFlops = 5;           // sigmoid + mul
constexpr double kGeluFlops = 8;           // erf or tanh + 4 arithmetic
constexpr double kSoftmaxFlops = 5;        // max, sub, exp, sum, div
constexpr double kLayerNormFlops = 8;      // mean, sub, square, mean, rsqrt, mul, scale, shift
constexpr double kBatchNormFlops = 2;      // inference: x * a + b with folded a, b

struct Ctx {
  const Graph& g;
  const Op& op;

  std::string Node() const { return "node '" + op.name + "' (" + op.type + ")"; }
  const TensorInfo* In(size_t i) const {
    if (i >= op.inputs.size() || op.inputs[i].empty()) return nullptr;
    return g.Find(op.inputs[i]);
  }
  const TensorInfo* Out(size_t i) const {
    if (i >= op.outputs.size() || op.outputs[i].empty()) return nullptr;
    return g.Find(op.outputs[i]);
  }
  Status ShapeError(const std::string& name, const TensorInfo* t) const {
    if (!t || !t->has_shape)
      return InvalidInput(Node() + ": tensor '" + name + "' has no known shape");
    bool all_known = true;
    for (const Dim& d : t->shape) all_known &= d.known();
    if (all_known)
      return InvalidInput(Node() + ": tensor '" + name + "' has more than 2^63 elements (" +
                          ShapeToString(t->shape) + ")");
    return InvalidInput(Node() + ": tensor '" + name + "' has a shape that is not concrete (" +
                        ShapeToString(t->shape) + ")");
  }
  Expected<const Shape*> InShape(size_t i) const {
    const TensorInfo* t = In(i);
    if (!t || !t->has_shape || !NumElements(t->shape))
      return ShapeError(i < op.inputs.size() ? op.inputs[i] : "#" + std::to_string(i), t);
    return &t->shape;
  }
  Expected<const Shape*> OutShape(size_t i) const {
    const TensorInfo* t = Out(i);
    if (!t || !t->has_shape || !NumElements(t->shape))
      return ShapeError(i < op.outputs.size() ? op.outputs[i] : "#" + std::to_string(i), t);
    return &t->shape;
  }
  Expected<double> InElems(size_t i) const {
    Expected<const Shape*> s = InShape(i);
    if (!s.ok()) return s.status();
    return static_cast<double>(*NumElements(*s.value()));
  }
  Expected<double> OutElems(size_t i = 0) const {
    Expected<const Shape*> s = OutShape(i);
    if (!s.ok()) return s.status();
    return static_cast<double>(*NumElements(*s.value()));
  }
  // Bytes of every present input and output; fails on a missing or non-concrete shape.
  Status Bytes(OpCost* c, bool read_inputs = true) const {
    if (read_inputs) {
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (op.inputs[i].empty()) continue;
        const TensorInfo* t = In(i);
        if (!t || !t->has_shape || !NumElements(t->shape)) return ShapeError(op.inputs[i], t);
        c->bytes_read += static_cast<double>(*NumElements(t->shape)) * DTypeSize(t->dtype);
      }
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      if (op.outputs[i].empty()) continue;
      const TensorInfo* t = Out(i);
      if (!t || !t->has_shape || !NumElements(t->shape)) return ShapeError(op.outputs[i], t);
      c->bytes_written += static_cast<double>(*NumElements(t->shape)) * DTypeSize(t->dtype);
    }
    return Status::Ok();
  }
};

#define TRY_ASSIGN(var, expr)            \
  auto var##_e = (expr);                 \
  if (!var##_e.ok()) return var##_e.status(); \
  auto var = var##_e.value()

#define TRY(expr)                        \
  do {                                   \
    Status try_s_ = (expr);              \
    if (!try_s_.ok()) return try_s_;     \
  } while (0)

Expected<OpCost> ShapeOnly(const Graph&, const Op&) {
  OpCost c;
  c.launches_work = false;
  return c;
}

CostFn PerOutputElement(double flops_per_element) {
  return [flops_per_element](const Graph& g, const Op& op) -> Expected<OpCost> {
    Ctx x{g, op};
    OpCost c;
    TRY(x.Bytes(&c));
    TRY_ASSIGN(n, x.OutElems(0));
    c.flops = n * flops_per_element;
    return c;
  };
}

// Variadic elementwise (Sum, Max, Min, Mean): one op per extra input per element.
Expected<OpCost> Variadic(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(n, x.OutElems(0));
  size_t inputs = 0;
  for (const auto& i : op.inputs) inputs += !i.empty();
  c.flops = n * std::max<double>(1, static_cast<double>(inputs) - 1);
  if (op.type == "Mean") c.flops += n;
  return c;
}

// Reads and writes, computes nothing (Transpose, Concat, Gather, Slice, Cast, ...).
Expected<OpCost> DataMovement(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  return c;
}

// Writes only (ConstantOfShape, Range, RandomNormal, EyeLike).
Expected<OpCost> Fill(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c, false));
  return c;
}

// Gather-like ops read only what they output, not the whole table (Embedding lookups).
Expected<OpCost> GatherCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c, false));
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i].empty()) continue;
    TRY_ASSIGN(n, x.InElems(i));
    const TensorInfo* t = x.In(i);
    c.bytes_read += n * DTypeSize(t->dtype);
  }
  c.bytes_read += c.bytes_written;
  return c;
}

Expected<OpCost> ReduceCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(n, x.InElems(0));
  double k = 1;
  if (op.type == "ReduceLogSumExp") k = 1 + kTranscendentalFlops;
  else if (op.type == "ReduceSumSquare" || op.type == "ReduceL2") k = 2;
  c.flops = n * k;
  return c;
}

// a[..., M, K] x b[..., K, N]: MACs = elements of the output times K.
Expected<OpCost> MatMulCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(a, x.InShape(0));
  TRY_ASSIGN(out, x.OutElems(0));
  if (a->empty()) return InvalidInput(x.Node() + ": MatMul of a scalar");
  c.macs = out * static_cast<double>(a->back().value);
  c.flops = 2 * c.macs;
  return c;
}

Expected<OpCost> GemmCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(a, x.InShape(0));
  TRY_ASSIGN(out, x.OutElems(0));
  if (a->size() != 2) return InvalidInput(x.Node() + ": Gemm input A is not 2-D");
  double k = static_cast<double>((op.IntAttr("transA", 0) ? (*a)[0] : (*a)[1]).value);
  c.macs = out * k;
  c.flops = 2 * c.macs + (x.In(2) ? out : 0);
  return c;
}

// Conv: every output element is a dot product over (C_in / group) x kernel, which is the
// weight's element count divided by C_out.
Expected<OpCost> ConvCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  size_t w_index = op.type == "QLinearConv" ? 3 : 1;
  TRY_ASSIGN(w, x.InShape(w_index));
  TRY_ASSIGN(out, x.OutElems(0));
  if (w->empty() || (*w)[0].value <= 0) return InvalidInput(x.Node() + ": weight has no output channels");
  const std::optional<int64_t> w_elems = NumElements(*w);
  if (!w_elems) return InvalidInput(x.Node() + ": weight " + ShapeToString(*w) + " is not concrete or too large");
  double per_output = static_cast<double>(*w_elems) / static_cast<double>((*w)[0].value);
  c.macs = out * per_output;
  c.flops = 2 * c.macs + (op.type == "Conv" && x.In(2) ? out : 0);
  return c;
}

// ConvTranspose: every input element scatters into (C_out / group) x kernel outputs.
Expected<OpCost> ConvTransposeCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(w, x.InShape(1));
  TRY_ASSIGN(in, x.InElems(0));
  TRY_ASSIGN(out, x.OutElems(0));
  if (w->empty() || (*w)[0].value <= 0) return InvalidInput(x.Node() + ": weight has no input channels");
  const std::optional<int64_t> w_elems = NumElements(*w);
  if (!w_elems) return InvalidInput(x.Node() + ": weight " + ShapeToString(*w) + " is not concrete or too large");
  double per_input = static_cast<double>(*w_elems) / static_cast<double>((*w)[0].value);
  c.macs = in * per_input;
  c.flops = 2 * c.macs + (x.In(2) ? out : 0);
  return c;
}

// Einsum: with two or more operands, the loop nest runs over every distinct index once.
Expected<OpCost> EinsumCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(out, x.OutElems(0));
  std::string eq = op.StringAttr("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq.substr(0, eq.find("->"));
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() < 2) {  // transpose, trace or reduction of one operand
    TRY_ASSIGN(in, x.InElems(0));
    c.flops = in;
    return c;
  }
  std::map<char, double> dims;
  double ellipsis = 1;
  for (size_t i = 0; i < terms.size(); ++i) {
    TRY_ASSIGN(s, x.InShape(i));
    const std::string& t = terms[i];
    size_t ell = t.find("...");
    size_t named = t.size() - (ell == std::string::npos ? 0 : 3);
    if (named > s->size()) return InvalidInput(x.Node() + ": equation does not match ranks");
    size_t ell_rank = s->size() - named;
    size_t k = 0;
    double e = 1;
    for (size_t p = 0; p < t.size(); ++p) {
      if (t.compare(p, 3, "...") == 0) {
        for (size_t q = 0; q < ell_rank; ++q) e *= static_cast<double>((*s)[k + q].value);
        k += ell_rank;
        p += 2;
        continue;
      }
      double d = static_cast<double>((*s)[k++].value);
      dims[t[p]] = std::max(dims[t[p]], d);
    }
    ellipsis = std::max(ellipsis, e);
  }
  double loop = ellipsis;
  for (const auto& [ch, d] : dims) loop *= d;
  c.macs = loop * static_cast<double>(terms.size() - 1);
  c.flops = 2 * c.macs;
  (void)out;
  return c;
}

Expected<OpCost> PoolCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(out, x.OutElems(0));
  double window = 1;
  for (int64_t k : op.IntsAttr("kernel_shape")) window *= static_cast<double>(k);
  c.flops = out * window;
  return c;
}

Expected<OpCost> GlobalPoolCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(in, x.InElems(0));
  c.flops = in;
  return c;
}

// Recurrent layers: per step and direction, gates x (input + hidden) MACs.
CostFn RecurrentCost(int gates) {
  return [gates](const Graph& g, const Op& op) -> Expected<OpCost> {
    Ctx x{g, op};
    OpCost c;
    TRY(x.Bytes(&c));
    TRY_ASSIGN(xs, x.InShape(0));
    TRY_ASSIGN(w, x.InShape(1));
    TRY_ASSIGN(r, x.InShape(2));
    if (xs->size() != 3 || w->size() != 3 || r->size() != 3)
      return InvalidInput(x.Node() + ": X, W and R must be 3-D");
    bool batch_first = op.IntAttr("layout", 0) == 1;
    double seq = static_cast<double>((*xs)[batch_first ? 1 : 0].value);
    double batch = static_cast<double>((*xs)[batch_first ? 0 : 1].value);
    double dirs = static_cast<double>((*w)[0].value);
    double gh = static_cast<double>((*w)[1].value);  // gates * hidden
    double in = static_cast<double>((*w)[2].value);
    double hidden = static_cast<double>((*r)[2].value);
    c.macs = seq * batch * dirs * gh * (in + hidden);
    c.flops = 2 * c.macs + seq * batch * dirs * gh * kTranscendentalFlops;
    (void)gates;
    return c;
  };
}

// Attention with explicit heads: q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev].
Expected<OpCost> AttentionCore(const Ctx& x, const Shape& q, const Shape& k, const Shape& v,
                               OpCost* c) {
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return InvalidInput(x.Node() + ": attention inputs must be 4-D [batch, heads, seq, dim]");
  double b = static_cast<double>(q[0].value), h = static_cast<double>(q[1].value);
  double l = static_cast<double>(q[2].value), e = static_cast<double>(q[3].value);
  double s = static_cast<double>(k[2].value), ev = static_cast<double>(v[3].value);
  c->macs += b * h * l * s * (e + ev);
  c->flops += 2 * b * h * l * s * (e + ev) + kSoftmaxFlops * b * h * l * s;
  return *c;
}

// ONNX Attention (opset 23): Q/K/V 4-D, or 3-D with q_num_heads/kv_num_heads.
Expected<OpCost> OnnxAttentionCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(q, x.InShape(0));
  TRY_ASSIGN(k, x.InShape(1));
  TRY_ASSIGN(v, x.InShape(2));
  if (q->size() == 3) {
    int64_t qh = op.IntAttr("q_num_heads", 0), kvh = op.IntAttr("kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) return InvalidInput(x.Node() + ": 3-D inputs need q_num_heads and kv_num_heads");
    auto split = [](const Shape& s, int64_t heads) {
      return Shape{s[0], Dim::Known(heads), s[1], Dim::Known(s[2].value / heads)};
    };
    return AttentionCore(x, split(*q, qh), split(*k, kvh), split(*v, kvh), &c);
  }
  return AttentionCore(x, *q, *k, *v, &c);
}

// com.microsoft Attention: input [B, S, D_in] x weights [D_in, 3 D] then attention over heads.
Expected<OpCost> MsAttentionCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(in, x.InShape(0));
  TRY_ASSIGN(w, x.InShape(1));
  if (in->size() != 3 || w->size() != 2) return InvalidInput(x.Node() + ": expects input [B,S,D] and weights [D,3D]");
  double b = static_cast<double>((*in)[0].value), s = static_cast<double>((*in)[1].value);
  double d_in = static_cast<double>((*in)[2].value), d3 = static_cast<double>((*w)[1].value);
  std::vector<int64_t> qkv = op.IntsAttr("qkv_hidden_sizes");
  double dq = qkv.size() == 3 ? qkv[0] : d3 / 3, dv = qkv.size() == 3 ? qkv[2] : d3 / 3;
  double heads = static_cast<double>(op.IntAttr("num_heads", 1));
  c.macs = b * s * d_in * d3;               // the QKV projection
  c.macs += b * s * s * (dq + dv);          // QK^T and softmax(QK^T) V over all heads
  c.flops = 2 * c.macs + kSoftmaxFlops * b * heads * s * s;
  return c;
}

// com.microsoft MultiHeadAttention: query [B, L, D], key [B, S, D], value [B, S, Dv].
Expected<OpCost> MsMultiHeadAttentionCost(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(q, x.InShape(0));
  TRY_ASSIGN(k, x.InShape(1));
  TRY_ASSIGN(v, x.InShape(2));
  if (q->size() != 3 || k->size() != 3 || v->size() != 3)
    return InvalidInput(x.Node() + ": expects 3-D query, key and value");
  double b = static_cast<double>((*q)[0].value), l = static_cast<double>((*q)[1].value);
  double d = static_cast<double>((*q)[2].value), s = static_cast<double>((*k)[1].value);
  double dv = static_cast<double>((*v)[2].value);
  double heads = static_cast<double>(op.IntAttr("num_heads", 1));
  c.macs = b * l * s * (d + dv);
  c.flops = 2 * c.macs + kSoftmaxFlops * b * heads * l * s;
  return c;
}

// ---- aten (TorchScript and torch-flavored arch specs): shapes are concrete, read them.

// aten::linear(x[..., in], weight[out, in], bias?)
Expected<OpCost> AtenLinear(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(xs, x.InShape(0));
  TRY_ASSIGN(out, x.OutElems(0));
  if (xs->empty()) return InvalidInput(x.Node() + ": linear of a scalar");
  c.macs = out * static_cast<double>(xs->back().value);
  c.flops = 2 * c.macs + (x.In(2) ? out : 0);
  return c;
}

// aten::addmm(bias, a, b) / baddbmm(bias, a, b): a's last dim is the reduction.
Expected<OpCost> AtenAddmm(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(a, x.InShape(1));
  TRY_ASSIGN(out, x.OutElems(0));
  if (a->empty()) return InvalidInput(x.Node() + ": addmm of a scalar");
  c.macs = out * static_cast<double>(a->back().value);
  c.flops = 2 * c.macs + out;
  return c;
}

Expected<OpCost> AtenSdpa(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(q, x.InShape(0));
  TRY_ASSIGN(k, x.InShape(1));
  TRY_ASSIGN(v, x.InShape(2));
  if (q->size() == 3 && k->size() == 3 && v->size() == 3) {  // [B*H, L, E]
    Shape q4 = {Dim::Known(1), (*q)[0], (*q)[1], (*q)[2]};
    Shape k4 = {Dim::Known(1), (*k)[0], (*k)[1], (*k)[2]};
    Shape v4 = {Dim::Known(1), (*v)[0], (*v)[1], (*v)[2]};
    return AttentionCore(x, q4, k4, v4, &c);
  }
  return AttentionCore(x, *q, *k, *v, &c);
}

// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
// qkv_bias, proj_weight, proj_bias, ...): nn.MultiheadAttention's inference fast path, the
// q/k/v projections, attention and the output projection in one op.
Expected<OpCost> AtenNativeMha(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c));
  TRY_ASSIGN(q, x.InShape(0));
  TRY_ASSIGN(k, x.InShape(1));
  if (q->size() != 3 || k->size() != 3) return InvalidInput(x.Node() + ": expects 3-D query and key");
  double b = static_cast<double>((*q)[0].value), l = static_cast<double>((*q)[1].value);
  double e = static_cast<double>((*q)[2].value), s = static_cast<double>((*k)[1].value);
  double heads = static_cast<double>(op.IntAttr("num_head", 1));
  double proj = b * l * e * e + 2 * b * s * e * e + b * l * e * e;  // q, k, v and output
  double attn = 2 * b * l * s * e;                                  // q.k^T and p.v
  c.macs = proj + attn;
  c.flops = 2 * c.macs + kSoftmaxFlops * b * heads * l * s;
  return c;
}

// aten::embedding(weight, indices): a gather from the table.
Expected<OpCost> AtenEmbedding(const Graph& g, const Op& op) {
  Ctx x{g, op};
  OpCost c;
  TRY(x.Bytes(&c, false));
  TRY_ASSIGN(idx, x.InElems(1));
  c.bytes_read = c.bytes_written + idx * DTypeSize(x.In(1)->dtype);
  return c;
}

std::string Key(const std::string& domain, const std::string& type) {
  std::string d = domain == "ai.onnx" ? "" : domain;
  return d + "::" + type;
}

void RegisterOnnx(CostRegistry& r) {
  auto reg = [&](std::initializer_list<const char*> types, CostFn fn) {
    for (const char* t : types) r.Register("", t, fn);
  };
  reg({"Shape", "Size", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Constant",
       "Dropout", "If", "Loop", "Scan", "Optional", "OptionalHasElement", "OptionalGetElement",
       "SequenceEmpty"},
      ShapeOnly);
  reg({"Add", "Sub", "Mul", "Div", "Neg", "Abs", "Relu", "LeakyRelu", "PRelu", "Clip", "Floor",
       "Ceil", "Round", "Sign", "Mod", "Not", "And", "Or", "Xor", "Equal", "Less", "Greater",
       "LessOrEqual", "GreaterOrEqual", "Where", "Reciprocal", "ThresholdedRelu", "Shrink",
       "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "IsNaN", "IsInf",
       "CumSum", "Trilu", "QuantizeLinear", "DequantizeLinear", "BiasAdd"},
      PerOutputElement(kSimpleFlops));
  reg({"Exp", "Log", "Sqrt", "Erf", "Tanh", "Sigmoid", "Sin", "Cos", "Tan", "Asin", "Acos",
       "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Pow", "Softplus", "Elu", "Selu",
       "Celu"},
      PerOutputElement(kTranscendentalFlops));
  reg({"HardSigmoid", "Softsign"}, PerOutputElement(2));
  reg({"HardSwish"}, PerOutputElement(3));
  reg({"Swish"}, PerOutputElement(kSiluFlops));
  reg({"Gelu", "Mish"}, PerOutputElement(kGeluFlops));
  reg({"Softmax", "LogSoftmax", "Hardmax"}, PerOutputElement(kSoftmaxFlops));
  reg({"LayerNormalization", "InstanceNormalization", "GroupNormalization",
       "MeanVarianceNormalization", "LpNormalization"},
      PerOutputElement(kLayerNormFlops));
  reg({"BatchNormalization"}, PerOutputElement(kBatchNormFlops));
  reg({"LRN"}, [](const Graph& g, const Op& op) -> Expected<OpCost> {
    return PerOutputElement(2.0 * static_cast<double>(op.IntAttr("size", 1)) + 4)(g, op);
  });
  reg({"Sum", "Max", "Min", "Mean"}, Variadic);
  reg({"Transpose", "Concat", "Split", "Slice", "Pad", "Expand", "Tile", "Cast", "CastLike",
       "ScatterND", "ScatterElements", "Scatter", "DepthToSpace", "SpaceToDepth",
       "ReverseSequence", "Compress", "NonZero", "Unique", "TopK", "OneHot", "ArgMax", "ArgMin",
       "GatherND", "GatherElements"},
      DataMovement);
  reg({"Gather"}, GatherCost);
  reg({"ConstantOfShape", "Range", "EyeLike", "RandomNormal", "RandomUniform",
       "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"},
      Fill);
  reg({"Resize", "Upsample"}, PerOutputElement(4));  // bilinear: 4 taps per output (upper bound)
  reg({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
      ReduceCost);
  reg({"MatMul", "MatMulInteger", "QLinearMatMul"}, [](const Graph& g, const Op& op) {
    if (op.type != "QLinearMatMul") return MatMulCost(g, op);
    Op shadow = op;
    shadow.inputs = {op.inputs.size() > 0 ? op.inputs[0] : "", op.inputs.size() > 3 ? op.inputs[3] : ""};
    Expected<OpCost> c = MatMulCost(g, shadow);
    return c;
  });
  reg({"Gemm"}, GemmCost);
  reg({"Conv", "ConvInteger", "QLinearConv"}, ConvCost);
  reg({"ConvTranspose"}, ConvTransposeCost);
  reg({"Einsum"}, EinsumCost);
  reg({"MaxPool", "AveragePool", "LpPool"}, PoolCost);
  reg({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}, GlobalPoolCost);
  reg({"LSTM"}, RecurrentCost(4));
  reg({"GRU"}, RecurrentCost(3));
  reg({"RNN"}, RecurrentCost(1));
  reg({"Attention"}, OnnxAttentionCost);
  reg({"Det"}, PerOutputElement(1));
  reg({"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"},
      [](const Graph& g, const Op& op) -> Expected<OpCost> {
        Ctx x{g, op};
        OpCost c;
        TRY(x.Bytes(&c));
        TRY_ASSIGN(n, x.InElems(0));
        c.flops = n * (op.type == "SoftmaxCrossEntropyLoss" ? kSoftmaxFlops + 1 : 1);
        return c;
      });
  reg({"HannWindow", "HammingWindow", "BlackmanWindow"}, Fill);
  reg({"GridSample"}, PerOutputElement(8));  // bilinear: 4 taps, 4 weights per output
  reg({"RoiAlign"}, [](const Graph& g, const Op& op) -> Expected<OpCost> {
    double s = static_cast<double>(std::max<int64_t>(op.IntAttr("sampling_ratio", 2), 1));
    return PerOutputElement(4 * s * s)(g, op);  // bilinear samples per bin
  });
  reg({"MaxUnpool", "StringNormalizer", "TfIdfVectorizer"}, DataMovement);
  // Sequence (list) ops: bookkeeping on tensor lists; no shapes to count.
  reg({"SequenceLength", "SequenceAt", "SequenceConstruct", "SequenceInsert", "SequenceErase",
       "SequenceMap"},
      ShapeOnly);
  reg({"SplitToSequence", "ConcatFromSequence"}, [](const Graph& g, const Op& op) -> Expected<OpCost> {
    Expected<OpCost> c = DataMovement(g, op);
    return c.ok() ? c : Expected<OpCost>(OpCost{});  // list sizes are often unknown
  });
  reg({"DynamicQuantizeLinear"}, PerOutputElement(3));

  // com.microsoft contrib ops that exporters and optimizers commonly write.
  auto ms = [&](std::initializer_list<const char*> types, CostFn fn) {
    for (const char* t : types) r.Register("com.microsoft", t, fn);
  };
  ms({"Attention"}, MsAttentionCost);
  ms({"MultiHeadAttention"}, MsMultiHeadAttentionCost);
  ms({"FastGelu", "BiasGelu", "Gelu", "QuickGelu"}, PerOutputElement(kGeluFlops));
  ms({"SkipLayerNormalization", "LayerNormalization", "SimplifiedLayerNormalization",
      "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization"},
     PerOutputElement(kLayerNormFlops));
  ms({"FusedMatMul"}, MatMulCost);
  ms({"BiasAdd"}, PerOutputElement(kSimpleFlops));
  ms({"RotaryEmbedding"}, PerOutputElement(3));
}

void RegisterAten(CostRegistry& r) {
  auto reg = [&](std::initializer_list<const char*> types, CostFn fn) {
    for (const char* t : types) r.Register("aten", t, fn);
  };
  // Views and metadata: a dispatch, but no kernel.
  reg({"view", "reshape", "_reshape_alias", "permute", "transpose", "t", "unsqueeze", "squeeze",
       "expand", "expand_as", "slice", "select", "flatten", "unflatten", "split", "chunk",
       "narrow", "size", "as_strided", "alias", "detach", "unbind", "view_as", "dropout",
       "identity", "numel", "dim", "lift_fresh", "_unsafe_view", "split_with_sizes"},
      ShapeOnly);
  reg({"contiguous", "clone", "cat", "stack", "to", "_to_copy", "copy_", "type_as", "pad",
       "constant_pad_nd", "index_select", "repeat", "roll", "flip", "masked_select", "topk",
       "argmax", "argmin", "gather", "scatter", "index", "tril", "triu"},
      DataMovement);
  reg({"zeros", "ones", "full", "arange", "empty", "zeros_like", "ones_like", "full_like",
       "new_zeros", "new_ones", "randn", "rand", "scalar_tensor", "empty_like", "full_like",
       "rand_like", "randn_like", "new_full", "new_empty", "tensor"},
      Fill);
  reg({"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "abs", "relu",
       "relu_", "relu6", "hardtanh", "hardtanh_", "clamp", "clamp_min", "clamp_max",
       "leaky_relu", "masked_fill", "masked_fill_", "where", "eq", "ne", "lt", "gt", "le", "ge",
       "logical_not", "logical_and", "logical_or", "maximum", "minimum", "rsub", "floor",
       "ceil", "round", "sign", "reciprocal", "bitwise_not", "cumsum", "fill_", "__and__",
       "__or__", "__xor__", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor", "diff",
       "floor_divide", "remainder", "fmod", "true_divide", "square", "trunc", "frac", "isnan",
       "isinf", "isfinite", "nan_to_num", "threshold", "copysign", "lerp", "cumprod", "clamp_",
       "zero_", "clamp_min_", "clamp_max_"},
      PerOutputElement(kSimpleFlops));
  reg({"log1p", "expm1", "log2", "log10", "sinh", "cosh", "asin", "acos", "atan", "atan2",
       "erfinv", "logit", "hypot", "xlogy", "exp_"},
      PerOutputElement(kTranscendentalFlops));
  reg({"exp", "log", "sqrt", "rsqrt", "erf", "tanh", "sigmoid", "sin", "cos", "pow",
       "softplus", "elu", "selu", "celu"},
      PerOutputElement(kTranscendentalFlops));
  reg({"hardsigmoid", "hardswish"}, PerOutputElement(3));
  // v * g / ||v|| over every dim but one (weight-normalized convolutions, e.g. WavLM's
  // positional convolution): a square, a sum and a scale per element.
  reg({"_weight_norm"}, PerOutputElement(3));
  reg({"silu", "silu_"}, PerOutputElement(kSiluFlops));
  reg({"gelu", "mish"}, PerOutputElement(kGeluFlops));
  reg({"softmax", "_softmax", "log_softmax", "_log_softmax"}, PerOutputElement(kSoftmaxFlops));
  reg({"layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "instance_norm",
       "rms_norm"},
      PerOutputElement(kLayerNormFlops));
  reg({"batch_norm", "_native_batch_norm_legit_no_training", "native_batch_norm"},
      PerOutputElement(kBatchNormFlops));
  reg({"sum", "mean", "amax", "amin", "max", "min", "prod", "norm", "linalg_vector_norm", "var", "std"},
      [](const Graph& g, const Op& op) -> Expected<OpCost> {
        Ctx x{g, op};
        OpCost c;
        TRY(x.Bytes(&c));
        TRY_ASSIGN(n, x.InElems(0));
        c.flops = n;
        return c;
      });
  reg({"linear"}, AtenLinear);
  reg({"matmul", "mm", "bmm"}, MatMulCost);
  reg({"addmm", "baddbmm", "addbmm"}, AtenAddmm);
  reg({"conv1d", "conv2d", "conv3d", "_convolution", "convolution"},
      [](const Graph& g, const Op& op) -> Expected<OpCost> {
        Ctx x{g, op};
        if (op.IntAttr("transposed", 0) != 0) return ConvTransposeCost(g, op);
        Expected<OpCost> c = ConvCost(g, op);
        if (c.ok() && x.In(2)) {
          TRY_ASSIGN(out, x.OutElems(0));
          c->flops += out;
        }
        return c;
      });
  reg({"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}, ConvTransposeCost);
  reg({"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
       "_scaled_dot_product_efficient_attention"},
      AtenSdpa);
  reg({"embedding"}, AtenEmbedding);
  reg({"_native_multi_head_attention"}, AtenNativeMha);
  reg({"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d"},
      PoolCost);
  reg({"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
       "adaptive_max_pool2d"},
      GlobalPoolCost);
  reg({"einsum"}, EinsumCost);
  reg({"upsample_nearest2d", "upsample_bilinear2d", "interpolate"}, PerOutputElement(4));
}

}  // namespace

void CostRegistry::Register(const std::string& domain, const std::string& op_type, CostFn fn) {
  entries_[Key(domain, op_type)] = std::move(fn);
}

const CostFn* CostRegistry::Find(const std::string& domain, const std::string& op_type) const {
  auto look = [&](const std::string& d, const std::string& t) -> const CostFn* {
    auto it = entries_.find(Key(d, t));
    return it == entries_.end() ? nullptr : &it->second;
  };
  const CostFn* f = look(domain, op_type);
  if (!f && domain == "aten" && op_type.rfind("aten::", 0) == 0) return Find(domain, op_type.substr(6));
  if (!f && domain == "com.microsoft") f = look("", op_type);
  if (!f && domain == "aten" && op_type.size() > 1 && op_type.back() == '_' &&
      op_type[op_type.size() - 2] != '_')
    f = look(domain, op_type.substr(0, op_type.size() - 1));  // in-place form: "silu_"
  return f;
}

bool CostRegistry::Has(const std::string& domain, const std::string& op_type) const {
  return Find(domain, op_type) != nullptr;
}

std::vector<std::pair<std::string, std::string>> CostRegistry::Entries() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, fn] : entries_) {
    size_t sep = key.find("::");
    out.emplace_back(key.substr(0, sep), key.substr(sep + 2));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Expected<OpCost> CostRegistry::Count(const Graph& graph, const Op& op) const {
  const CostFn* fn = Find(op.domain, op.type);
  if (!fn) {
    std::string d = op.domain.empty() ? "" : op.domain + "::";
    return Unsupported("node '" + op.name + "': unknown op type '" + d + op.type +
                       "' (no counting entry)");
  }
  Expected<OpCost> c = (*fn)(graph, op);
  if (!c.ok()) return c;
  if (!std::isfinite(c->macs) || !std::isfinite(c->flops) || c->macs < 0 || c->flops < 0)
    return InvalidInput("node '" + op.name + "' (" + op.type + "): cost overflows");
  return c;
}

const CostRegistry& CostRegistry::Default() {
  static const CostRegistry* reg = [] {
    auto* r = new CostRegistry();
    RegisterOnnx(*r);
    RegisterAten(*r);
    return r;
  }();
  return *reg;
}

}  // namespace ftax
