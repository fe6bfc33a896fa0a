// `gpt`: HF GPT2Model (learned positions, pre-norm decoder blocks, Conv1D projections,
// tanh-approximated GELU), optionally with the tied LM head.
//
// kv_cache=0: a prompt of `seq` tokens with causal attention. kv_cache=1: one new token after
// `past` cached tokens (default: seq); the block's keys and values are concatenated to the
// past ones (inputs past_key_values.I.key/value [B, heads, past, head_dim]) and returned as
// present.I.key/value.
//
// kOnnx follows torch.onnx.export (opset 17) with eager attention: Conv1D as Reshape, Gemm
// (weight [in, out]), Reshape; Split into q/k/v; Reshape+Transpose per head;
// MatMul/Div/Where(causal)/Add(mask)/Softmax/MatMul; NewGELU as its 8 elementwise ops.
// kTorch follows a trace of the eager model as transformers 5 writes it (SDPA attention):
// view/addmm/view per Conv1D, split, view+transpose per head, cat with the past, the causal
// boolean SDPA mask built by 26 small ops, scaled_dot_product_attention with that mask,
// transpose/contiguous/reshape/contiguous, dropout dispatches. Checked against
// torch.jit.trace of GPT2Model (transformers 5.17, torch 2.11, use_cache=False): the same
// 494 ops.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

namespace {

struct GptConfig {
  int64_t layers, hidden, heads, ffn, vocab, max_pos, past;
  bool kv_cache, lm_head;
};

constexpr double kLnEps = 1e-5;

// Conv1D(nf, nx) in scope `module`: x [B, S, nx] -> [B, S, nf], weight [nx, nf].
std::string Conv1D(GraphBuilder& b, const std::string& module, const std::string& x, int64_t B,
                   int64_t S, int64_t nx, int64_t nf) {
  ScopeGuard m(b, module);
  const bool torch = b.torch();
  const std::string& w = b.Weight("weight", {nx, nf});
  const std::string& bias = b.Weight("bias", {nf});
  const Dims flat = {B * S, nx}, flat_out = {B * S, nf}, out = {B, S, nf};
  if (torch) {
    std::string y = b.Op1("view", {x}, flat);
    b.SetInts("size", {-1, nx});
    y = b.Op1("addmm", {bias, y, w}, flat_out);
    y = b.Op1("view", {y}, out);
    b.SetInts("size", out);
    return y;
  }
  std::string y = b.Op1("Reshape", {x, b.IntConst({-1, nx})}, flat);
  y = b.Op1("Gemm", {y, w, bias}, flat_out);
  b.SetFloat("alpha", 1.0);
  b.SetFloat("beta", 1.0);
  y = b.Op1("Reshape", {y, b.IntConst(out)}, out);
  return y;
}

// NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
std::string NewGelu(GraphBuilder& b, const std::string& x, const Dims& xd) {
  ScopeGuard m(b, "act");
  const bool t = b.torch();
  std::string half = b.Op1(t ? "mul" : "Mul", {x, b.ScalarConst("half")}, xd);
  std::string cube = b.Op1(t ? "pow" : "Pow", {x, b.ScalarConst("three")}, xd);
  cube = b.Op1(t ? "mul" : "Mul", {cube, b.ScalarConst("gelu_coef")}, xd);
  std::string inner = b.Op1(t ? "add" : "Add", {x, cube}, xd);
  inner = b.Op1(t ? "mul" : "Mul", {inner, b.ScalarConst("sqrt_2_over_pi")}, xd);
  inner = b.Op1(t ? "tanh" : "Tanh", {inner}, xd);
  inner = b.Op1(t ? "add" : "Add", {inner, b.ScalarConst("one")}, xd);
  return b.Op1(t ? "mul" : "Mul", {half, inner}, xd);
}

// One GPT2Block in scope "/h.i". S new tokens attend to L = past + S keys.
std::string Block(GraphBuilder& b, const GptConfig& c, int64_t i, int64_t B, int64_t S,
                  int64_t L, const std::string& x, const std::string& mask,
                  std::vector<std::string>* present) {
  const bool torch = b.torch();
  const int64_t H = c.hidden, h = c.heads, d = c.hidden / c.heads;
  const int64_t past = c.kv_cache ? c.past : 0;
  const Dims xd = {B, S, H}, split = {B, S, h, d}, heads = {B, h, S, d};
  std::string y = LayerNorm(b, "ln_1", x, xd, kLnEps);
  {
    ScopeGuard a(b, "attn");
    y = Conv1D(b, "c_attn", y, B, S, H, 3 * H);
    std::vector<std::string> qkv;
    if (torch) {
      qkv = b.OpN("split", {y}, {xd, xd, xd});
      b.SetInt("split_size", H);
      b.SetInt("dim", 2);
    } else {
      qkv = b.OpN("Split", {y, b.IntConst({H, H, H})}, {xd, xd, xd});
      b.SetInt("axis", 2);
    }
    // _split_heads: view(B, S, h, d).permute(0, 2, 1, 3). Without a cache the key's
    // transpose for Q.K^T folds into its permute in the ONNX file.
    auto split_heads = [&](const std::string& t, std::vector<int64_t> perm) {
      if (torch) {
        std::string v = b.Op1("view", {t}, split);
        b.SetInts("size", split);
        v = b.Op1("transpose", {v}, heads);
        b.SetInt("dim0", 1);
        b.SetInt("dim1", 2);
        return v;
      }
      std::string r = b.Op1("Reshape", {t, b.IntConst(split)}, split);
      Dims out = {split[perm[0]], split[perm[1]], split[perm[2]], split[perm[3]]};
      r = b.Op1("Transpose", {r}, out);
      b.SetInts("perm", std::move(perm));
      return r;
    };
    const bool fold_k = !torch && !c.kv_cache;
    std::string q = split_heads(qkv[0], {0, 2, 1, 3});
    std::string k = split_heads(qkv[1], fold_k ? std::vector<int64_t>{0, 2, 3, 1}
                                               : std::vector<int64_t>{0, 2, 1, 3});
    std::string v = split_heads(qkv[2], {0, 2, 1, 3});
    const Dims kv = {B, h, L, d};
    if (c.kv_cache) {
      const std::string n = std::to_string(i);
      const std::string& pk = b.Input("past_key_values." + n + ".key", b.dtype(), {B, h, past, d});
      const std::string& pv = b.Input("past_key_values." + n + ".value", b.dtype(), {B, h, past, d});
      b.Op1(torch ? "cat" : "Concat", {pk, k}, kv);
      b.SetInt(torch ? "dim" : "axis", -2);
      k = b.NameLastOutput("present." + n + ".key");
      b.Op1(torch ? "cat" : "Concat", {pv, v}, kv);
      b.SetInt(torch ? "dim" : "axis", -2);
      v = b.NameLastOutput("present." + n + ".value");
      present->push_back(k);
      present->push_back(v);
    }
    std::string ctx;
    if (torch) {
      ctx = b.Op1("scaled_dot_product_attention", {q, k, v, mask}, heads);
      b.SetFloat("dropout_p", 0.0);
      b.SetInt("is_causal", 0);  // causality is in the mask
      ctx = b.Op1("transpose", {ctx}, split);
      b.SetInt("dim0", 1);
      b.SetInt("dim1", 2);
      ctx = b.Op1("contiguous", {ctx}, split);
      ctx = b.Op1("reshape", {ctx}, xd);
      b.SetInts("shape", xd);
      ctx = b.Op1("contiguous", {ctx}, xd);
    } else {
      if (!fold_k) {
        k = b.Op1("Transpose", {k}, {B, h, d, L});
        b.SetInts("perm", {0, 1, 3, 2});
      }
      const Dims sd = {B, h, S, L};
      std::string s = b.Op1("MatMul", {q, k}, sd);
      s = b.Op1("Div", {s, b.ScalarConst("sqrt_head_dim")}, sd);
      // causal_mask = bias[:, :, past:past+S, :L] (a constant once shapes are static).
      const std::string& causal = b.Initializer("const_causal_mask", DType::kBool, {1, 1, S, L});
      s = b.Op1("Where", {causal, s, b.ScalarConst("finfo_min")}, sd);
      s = b.Op1("Add", {s, mask}, sd);
      s = b.Op1("Softmax", {s}, sd);
      b.SetInt("axis", -1);
      ctx = b.Op1("MatMul", {s, v}, heads);
      ctx = b.Op1("Transpose", {ctx}, split);
      b.SetInts("perm", {0, 2, 1, 3});
      ctx = b.Op1("Reshape", {ctx, b.IntConst(xd)}, xd);
    }
    y = Conv1D(b, "c_proj", ctx, B, S, H, H);
    y = Dropout(b, "resid_dropout", y, xd, 0.1);
  }
  std::string r = b.Op1(torch ? "add" : "Add", {y, x}, xd);
  y = LayerNorm(b, "ln_2", r, xd, kLnEps);
  {
    ScopeGuard m(b, "mlp");
    y = Conv1D(b, "c_fc", y, B, S, H, c.ffn);
    y = NewGelu(b, y, {B, S, c.ffn});
    y = Conv1D(b, "c_proj", y, B, S, c.ffn, H);
    y = Dropout(b, "dropout", y, xd, 0.1);
  }
  return b.Op1(torch ? "add" : "Add", {r, y}, xd);
}

}  // namespace

Status BuildGpt(const ArchParams& p, Graph* g) {
  GptConfig c{};
  Status s;
  if (!(s = GetInt(p, "layers", 12, 1024, &c.layers)).ok()) return s;
  if (!(s = GetInt(p, "hidden", 768, 1 << 16, &c.hidden)).ok()) return s;
  if (!(s = GetInt(p, "heads", std::max<int64_t>(1, c.hidden / 64), 1 << 12, &c.heads)).ok()) return s;
  if (!(s = GetInt(p, "ffn", 4 * c.hidden, 1 << 20, &c.ffn)).ok()) return s;
  if (!(s = GetInt(p, "vocab", 50257, 1 << 24, &c.vocab)).ok()) return s;
  if (!(s = GetInt(p, "max_pos", 1024, 1 << 20, &c.max_pos)).ok()) return s;
  if (!(s = GetBool(p, "kv_cache", false, &c.kv_cache)).ok()) return s;
  if (!(s = GetInt(p, "past", p.seq, 1 << 20, &c.past)).ok()) return s;
  if (!(s = GetBool(p, "lm_head", false, &c.lm_head)).ok()) return s;
  if (!(s = CheckDivisible("hidden", c.hidden, "heads", c.heads)).ok()) return s;
  if (p.Find("past") && !c.kv_cache) {
    return InvalidInput("key 'past' needs kv_cache=1");
  }
  const int64_t B = p.batch, H = c.hidden;
  const int64_t S = c.kv_cache ? 1 : p.seq;
  const int64_t past = c.kv_cache ? c.past : 0;
  const int64_t L = past + S;
  if (L > c.max_pos) {
    return InvalidInput(std::string(c.kv_cache ? "key 'past' + 1" : "dim 'seq'") + " (" +
                        std::to_string(L) + ") exceeds key 'max_pos' (" +
                        std::to_string(c.max_pos) + ")");
  }

  const bool torch = p.flavor == ArchFlavor::kTorch;
  GraphBuilder b(g, p.dtype, torch ? "aten" : "");
  g->ops.reserve(static_cast<size_t>(c.layers) * 48 + 24);
  const Dims xd = {B, S, H};
  const std::string& ids = b.Input("input_ids", DType::kInt64, {B, S});
  const std::string& mask_in = b.Input("attention_mask", DType::kInt64, {B, L});
  std::string mask;
  if (!torch) {
    // attention_mask.view(B, -1)[:, None, None, :], cast, (1 - mask) * finfo.min
    const Dims md = {B, 1, 1, L};
    mask = b.Op1("Reshape", {mask_in, b.IntConst({B, -1})}, {B, L}, DType::kInt64);
    mask = b.Op1("Unsqueeze", {mask, b.IntConst({1})}, {B, 1, L}, DType::kInt64);
    mask = b.Op1("Unsqueeze", {mask, b.IntConst({2})}, md, DType::kInt64);
    mask = b.Op1("Cast", {mask}, md);
    b.SetInt("to", OnnxTypeCode(p.dtype));
    mask = b.Op1("Sub", {b.ScalarConst("one"), mask}, md);
    mask = b.Op1("Mul", {mask, b.ScalarConst("finfo_min")}, md);
  }
  std::string wte_w;
  auto embed = [&](const char* module, int64_t rows, const std::string& idx, const Dims& od,
                   std::string* weight) {
    ScopeGuard m(b, module);
    const std::string& w = b.Weight("weight", {rows, H});
    if (weight) *weight = w;
    if (torch) return b.Op1("embedding", {w, idx}, od);
    std::string y = b.Op1("Gather", {w, idx}, od);
    b.SetInt("axis", 0);
    return y;
  };
  std::string x, pe;
  if (torch) {
    // input_ids.view(-1, S); wte; cache_position = arange(S) + past; position_ids =
    // cache_position.unsqueeze(0); wpe; .to(device); add; attention_mask.view(B, -1); the
    // causal SDPA mask; dropout.
    std::string v = b.Op1("view", {ids}, {B, S}, DType::kInt64);
    b.SetInts("size", {-1, S});
    x = embed("wte", c.vocab, v, xd, &wte_w);
    std::string pos = b.Op1("arange", {}, {S}, DType::kInt64);
    b.SetString("device", "cuda:0");  // device=input_ids.device: on the GPU
    pos = b.Op1("add", {pos}, {S}, DType::kInt64);
    pos = b.Op1("unsqueeze", {pos}, {1, S}, DType::kInt64);
    b.SetInt("dim", 0);
    pe = embed("wpe", c.max_pos, pos, {1, S, H}, nullptr);
    pe = b.Op1("to", {pe}, {1, S, H});
    x = b.Op1("add", {x, pe}, xd);
    mask = b.Op1("view", {mask_in}, {B, L}, DType::kInt64);
    b.SetInts("size", {B, -1});
    mask = HfSdpaMask(b, mask, B, S, L, /*causal=*/true);
  } else {
    const std::string& pos = b.Initializer("position_ids", DType::kInt64, {1, S});
    x = embed("wte", c.vocab, ids, xd, &wte_w);
    pe = embed("wpe", c.max_pos, pos, {1, S, H}, nullptr);
    x = b.Op1("Add", {x, pe}, xd);
  }
  x = Dropout(b, "drop", x, xd, 0.1);
  std::vector<std::string> present;  // graph outputs after the hidden state, as HF orders them
  for (int64_t i = 0; i < c.layers; ++i) {
    ScopeGuard h(b, "h." + std::to_string(i));
    x = Block(b, c, i, B, S, L, x, mask, &present);
  }
  x = LayerNorm(b, "ln_f", x, xd, kLnEps);
  if (torch) {
    b.Op1("view", {x}, xd);
    b.SetInts("size", xd);
  } else {
    b.Op1("Reshape", {x, b.IntConst(xd)}, xd);
  }
  x = b.NameLastOutput("last_hidden_state");
  b.Output(x);
  for (const std::string& t : present) b.Output(t);
  if (c.lm_head) {
    ScopeGuard m(b, "lm_head");
    const Dims ld = {B, S, c.vocab};
    if (torch) {
      x = b.Op1("linear", {x, wte_w, ""}, ld);  // tied to wte.weight
    } else {
      // The exporter folds the transpose of the tied weight into a second initializer.
      x = b.Op1("MatMul", {x, b.Weight("weight", {H, c.vocab})}, ld);
    }
    b.Output(b.NameLastOutput("logits"));
  }
  return b.status();
}

}  // namespace arch
}  // namespace ftax
