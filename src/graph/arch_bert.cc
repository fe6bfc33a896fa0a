// `bert`: HF BertModel (embeddings, encoder, pooler) with eager attention; `distilbert`: HF
// DistilBertModel, the same layers without token-type embeddings, pooler or the dropout after
// the attention's output projection, under its own module names (transformer/layer.i/
// attention/q_lin, sa_layer_norm, ffn/lin1, output_layer_norm), as its trace shows.
//
// kOnnx follows torch.onnx.export (opset 17, static shapes) of BertModel(input_ids,
// attention_mask, token_type_ids): Gather embeddings, extended mask Unsqueeze/Unsqueeze/Cast/
// Sub/Mul, per layer Q/K/V MatMul+Add, Reshape+Transpose per head (K transposed once to
// [B,h,d,S]), MatMul/Div/Add(mask)/Softmax/MatMul, Transpose+Reshape back, Gelu as
// Div/Erf/Add/Mul/Mul, LayerNormalization; pooler Gather/Gemm/Tanh.
// kTorch follows a trace of the eager model as transformers 5 writes it (SDPA attention):
// one aten op per call, dropout kept (a dispatch with no kernel at inference), the boolean
// SDPA mask built by 26 small ops, transpose/contiguous/reshape/contiguous after attention.
// Checked against torch.jit.trace of BertModel (transformers 5.17, torch 2.11): 327 of its
// 328 ops (the one left out is Python integer arithmetic the tracer records).
#include <algorithm>
#include <cmath>
#include <optional>

#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

namespace {

struct BertConfig {
  int64_t layers, hidden, heads, ffn, vocab, max_pos, type_vocab;
  bool distil = false;
};

constexpr double kLnEps = 1e-12;
constexpr double kDropP = 0.1;

// One BertLayer in the current scope "/encoder/layer.i"; returns its output [B,S,H].
std::string BertLayer(GraphBuilder& b, const BertConfig& c, int64_t B, int64_t S,
                      const std::string& x, const std::string& mask) {
  const int64_t H = c.hidden, h = c.heads, d = c.hidden / c.heads;
  const Dims xd = {B, S, H};
  const Dims split = {B, S, h, d};
  const Dims heads = {B, h, S, d};
  // Module names: BertLayer's, or DistilBERT's TransformerBlock's.
  const bool D = c.distil;
  std::string attn, out_lin;
  {
    ScopeGuard a(b, "attention");
    std::string ctx;
    {
      std::optional<ScopeGuard> self;
      if (!D) self.emplace(b, "self");
      if (b.torch()) {
        auto head_view = [&](const char* module) {
          std::string y = Linear(b, module, x, xd, H);
          y = b.Op1("view", {y}, split);
          b.SetInts("size", split);
          y = b.Op1("transpose", {y}, heads);
          b.SetInt("dim0", 1);
          b.SetInt("dim1", 2);
          return y;
        };
        std::string q = head_view(D ? "q_lin" : "query");
        std::string k = head_view(D ? "k_lin" : "key");
        std::string v = head_view(D ? "v_lin" : "value");
        ctx = b.Op1("scaled_dot_product_attention", {q, k, v, mask}, heads);
        b.SetFloat("dropout_p", 0.0);
        b.SetInt("is_causal", 0);
        ctx = b.Op1("transpose", {ctx}, split);
        b.SetInt("dim0", 1);
        b.SetInt("dim1", 2);
        ctx = b.Op1("contiguous", {ctx}, split);
        ctx = b.Op1("reshape", {ctx}, xd);
        b.SetInts("shape", xd);
        ctx = b.Op1("contiguous", {ctx}, xd);
      } else {
        const std::string& shape = b.IntConst(split);
        auto to_heads = [&](const std::string& y, std::vector<int64_t> perm) {
          std::string r = b.Op1("Reshape", {y, shape}, split);
          Dims out = {split[perm[0]], split[perm[1]], split[perm[2]], split[perm[3]]};
          std::string t = b.Op1("Transpose", {r}, out);
          b.SetInts("perm", std::move(perm));
          return t;
        };
        std::string q_lin = Linear(b, D ? "q_lin" : "query", x, xd, H);
        std::string k_t = to_heads(Linear(b, D ? "k_lin" : "key", x, xd, H), {0, 2, 3, 1});  // [B,h,d,S]
        std::string v = to_heads(Linear(b, D ? "v_lin" : "value", x, xd, H), {0, 2, 1, 3});
        std::string q = to_heads(q_lin, {0, 2, 1, 3});
        const Dims sd = {B, h, S, S};
        std::string s = b.Op1("MatMul", {q, k_t}, sd);
        s = b.Op1("Div", {s, b.ScalarConst("sqrt_head_dim")}, sd);
        s = b.Op1("Add", {s, mask}, sd);
        s = b.Op1("Softmax", {s}, sd);
        b.SetInt("axis", -1);
        ctx = b.Op1("MatMul", {s, v}, heads);
        ctx = b.Op1("Transpose", {ctx}, split);
        b.SetInts("perm", {0, 2, 1, 3});
        ctx = b.Op1("Reshape", {ctx, b.IntConst(xd)}, xd);
      }
    }
    if (D) {  // out_lin in the attention module; the residual and its norm in the block's
      out_lin = Linear(b, "out_lin", ctx, xd, H);
    } else {
      ScopeGuard o(b, "output");
      std::string y = Linear(b, "dense", ctx, xd, H);
      y = Dropout(b, "dropout", y, xd, kDropP);
      y = b.Op1(b.torch() ? "add" : "Add", {y, x}, xd);
      attn = LayerNorm(b, "LayerNorm", y, xd, kLnEps);
    }
  }
  if (D) {
    std::string y = b.Op1(b.torch() ? "add" : "Add", {out_lin, x}, xd);
    attn = LayerNorm(b, "sa_layer_norm", y, xd, kLnEps);
  }
  const Dims fd = {B, S, c.ffn};
  std::string y;
  {
    std::optional<ScopeGuard> ffn;
    if (D) ffn.emplace(b, "ffn");
    std::string inter;
    {
      std::optional<ScopeGuard> i;
      if (!D) i.emplace(b, "intermediate");
      inter = Linear(b, D ? "lin1" : "dense", attn, xd, c.ffn);
      inter = Gelu(b, D ? "activation" : "intermediate_act_fn", inter, fd);
    }
    std::optional<ScopeGuard> o;
    if (!D) o.emplace(b, "output");
    y = Linear(b, D ? "lin2" : "dense", inter, fd, H);
    y = Dropout(b, "dropout", y, xd, kDropP);
    if (!D) {
      y = b.Op1(b.torch() ? "add" : "Add", {y, attn}, xd);
      return LayerNorm(b, "LayerNorm", y, xd, kLnEps);
    }
  }
  y = b.Op1(b.torch() ? "add" : "Add", {y, attn}, xd);
  return LayerNorm(b, "output_layer_norm", y, xd, kLnEps);
}

}  // namespace

namespace {

Status BuildBertFamily(const ArchParams& p, Graph* g, bool distil) {
  BertConfig c{};
  c.distil = distil;
  Status s;
  if (!(s = GetInt(p, "layers", distil ? 6 : 12, 1024, &c.layers)).ok()) return s;
  if (!(s = GetInt(p, "hidden", 768, 1 << 16, &c.hidden)).ok()) return s;
  if (!(s = GetInt(p, "heads", std::max<int64_t>(1, c.hidden / 64), 1 << 12, &c.heads)).ok()) return s;
  if (!(s = GetInt(p, "ffn", 4 * c.hidden, 1 << 20, &c.ffn)).ok()) return s;
  if (!(s = GetInt(p, "vocab", 30522, 1 << 24, &c.vocab)).ok()) return s;
  if (!(s = GetInt(p, "max_pos", 512, 1 << 20, &c.max_pos)).ok()) return s;
  if (!distil && !(s = GetInt(p, "type_vocab", 2, 1 << 16, &c.type_vocab)).ok()) return s;
  if (!(s = CheckDivisible("hidden", c.hidden, "heads", c.heads)).ok()) return s;
  const int64_t B = p.batch, S = p.seq, H = c.hidden;
  if (S > c.max_pos) {
    return InvalidInput("dim 'seq' (" + std::to_string(S) + ") exceeds key 'max_pos' (" +
                        std::to_string(c.max_pos) + ")");
  }

  const bool torch = p.flavor == ArchFlavor::kTorch;
  GraphBuilder b(g, p.dtype, torch ? "aten" : "");
  g->ops.reserve(static_cast<size_t>(c.layers) * (torch ? 32 : 36) + 24);
  g->tensors.reserve(static_cast<size_t>(c.layers) * (torch ? 48 : 56) + 48);

  const std::string& ids = b.Input("input_ids", DType::kInt64, {B, S});
  const std::string& mask_in = b.Input("attention_mask", DType::kInt64, {B, S});
  const std::string types = distil ? "" : b.Input("token_type_ids", DType::kInt64, {B, S});
  const Dims md = {B, 1, 1, S};
  const Dims xd = {B, S, H};

  // kOnnx: extended attention mask (1 - mask[:, None, None, :]) * finfo(dtype).min, before
  // the embeddings. kTorch: the boolean SDPA mask transformers 5 builds, after them.
  std::string mask;
  if (!torch) {
    mask = b.Op1("Unsqueeze", {mask_in, b.IntConst({1})}, {B, 1, S}, DType::kInt64);
    mask = b.Op1("Unsqueeze", {mask, b.IntConst({2})}, md, DType::kInt64);
    mask = b.Op1("Cast", {mask}, md);
    b.SetInt("to", OnnxTypeCode(p.dtype));
    mask = b.Op1("Sub", {b.ScalarConst("one"), mask}, md);
    mask = b.Op1("Mul", {mask, b.ScalarConst("finfo_min")}, md);
  }

  std::string x;
  {
    ScopeGuard e(b, "embeddings");
    std::string pos_ids = b.Initializer("embeddings.position_ids", DType::kInt64,
                                        {1, torch ? c.max_pos : S});
    if (torch) {
      // self.position_ids[:, 0:seq] of the [1, max_pos] buffer: two slices in a trace.
      pos_ids = b.Op1("slice", {pos_ids}, {1, S}, DType::kInt64);
      pos_ids = b.Op1("slice", {pos_ids}, {1, S}, DType::kInt64);
    }
    auto embed = [&](const char* module, int64_t rows, const std::string& idx, const Dims& od) {
      ScopeGuard m(b, module);
      const std::string& w = b.Weight("weight", {rows, H});
      if (torch) return b.Op1("embedding", {w, idx}, od);
      std::string y = b.Op1("Gather", {w, idx}, od);
      b.SetInt("axis", 0);
      return y;
    };
    const char* add = torch ? "add" : "Add";
    x = embed("word_embeddings", c.vocab, ids, xd);
    if (!distil) {
      std::string t = embed("token_type_embeddings", c.type_vocab, types, xd);
      x = b.Op1(add, {x, t}, xd);
    }
    std::string pe = embed("position_embeddings", c.max_pos, pos_ids, {1, S, H});
    x = b.Op1(add, {x, pe}, xd);
    x = LayerNorm(b, "LayerNorm", x, xd, kLnEps);
    x = Dropout(b, "dropout", x, xd, kDropP);
  }
  if (torch) mask = HfSdpaMask(b, mask_in, B, S, S, /*causal=*/false);
  {
    ScopeGuard e(b, distil ? "transformer" : "encoder");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard l(b, "layer." + std::to_string(i));
      x = BertLayer(b, c, B, S, x, mask);
    }
  }
  x = b.NameLastOutput("last_hidden_state");
  b.Output(x);
  if (distil) return b.status();
  {
    ScopeGuard pool(b, "pooler");
    std::string first;
    if (torch) {
      first = b.Op1("slice", {x}, xd);  // hidden_states[:, 0]: slice, then select
      first = b.Op1("select", {first}, {B, H});
      b.SetInt("dim", 1);
      b.SetInt("index", 0);
    } else {
      first = b.Op1("Gather", {x, b.IntScalar(0)}, {B, H});
      b.SetInt("axis", 1);
    }
    std::string y = Linear(b, "dense", first, {B, H}, H);
    ScopeGuard act(b, "activation");
    b.Op1(torch ? "tanh" : "Tanh", {y}, {B, H});
    b.Output(b.NameLastOutput("pooler_output"));
  }
  return b.status();
}

}  // namespace

Status BuildBert(const ArchParams& p, Graph* g) { return BuildBertFamily(p, g, /*distil=*/false); }
Status BuildDistilbert(const ArchParams& p, Graph* g) { return BuildBertFamily(p, g, /*distil=*/true); }

}  // namespace arch
}  // namespace ftax
