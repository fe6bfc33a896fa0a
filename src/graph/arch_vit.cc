// `vit`: torchvision VisionTransformer (vit_b_16 layout: conv patch embedding, class token,
// learned position embedding, pre-norm encoder blocks with nn.MultiheadAttention, head on
// the class token).
//
// Attention, torch flavor, fast_path=1 (the default): nn.MultiheadAttention's inference fast
// path, which PyTorch takes in eval mode under torch.no_grad / inference_mode (batch_first,
// need_weights=False): one aten::_native_multi_head_attention per block, as torch.jit.trace of
// torchvision's vit_b_16 records it (its QKV GEMM, fused attention and output GEMM are priced
// by the lowering). fast_path=0, and the onnx flavor always (the exporter cannot write the
// fast path, so it exports the general one), is the general path below.
//
// General path: nn.MultiheadAttention(batch_first=True)
// (F.multi_head_attention_forward with need_weights=False): transpose to sequence-first,
// packed in-projection, unflatten/unsqueeze/transpose/squeeze and three selects to split
// q/k/v, per-head views, scaled_dot_product_attention, out-projection on the flattened
// tokens, transpose back. kOnnx writes what torch.onnx.export (opset 17) makes of that path
// (SDPA becomes Transpose, Mul, Mul, MatMul, Softmax, MatMul with the scale split over q and
// k); kTorch one aten op per call.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

namespace {

struct VitConfig {
  int64_t layers, hidden, heads, ffn, patch, image, classes;
  bool fast_path;
};

constexpr double kLnEps = 1e-6;

// nn.MultiheadAttention self-attention on x [B, N, E]; scope is the module's.
std::string SelfAttention(GraphBuilder& b, const VitConfig& c, int64_t B, int64_t N,
                          const std::string& x) {
  const int64_t E = c.hidden, h = c.heads, d = c.hidden / c.heads;
  const bool torch = b.torch();
  if (torch && c.fast_path) {
    std::string y = b.Op1("_native_multi_head_attention",
                          {x, x, x, b.Weight("in_proj_weight", {3 * E, E}),
                           b.Weight("in_proj_bias", {3 * E}), b.Weight("out_proj.weight", {E, E}),
                           b.Weight("out_proj.bias", {E})},
                          {B, N, E});
    b.SetInt("embed_dim", E);
    b.SetInt("num_head", h);
    b.SetInt("need_weights", 0);
    return y;
  }
  const Dims sbe = {N, B, E};
  std::string t = b.Op1(torch ? "transpose" : "Transpose", {x}, sbe);
  if (torch) {
    b.SetInt("dim0", 1);
    b.SetInt("dim1", 0);
  } else {
    b.SetInts("perm", {1, 0, 2});
  }
  // Packed in-projection: F.linear(x, in_proj_weight [3E, E], in_proj_bias) in the MHA scope.
  std::string proj;
  const Dims pd = {N, B, 3 * E};
  if (torch) {
    proj = b.Op1("linear", {t, b.Weight("in_proj_weight", {3 * E, E}),
                            b.Weight("in_proj_bias", {3 * E})}, pd);
  } else {
    proj = b.Op1("MatMul", {t, b.Weight("in_proj_weight", {E, 3 * E})}, pd);
    proj = b.Op1("Add", {proj, b.Weight("in_proj_bias", {3 * E})}, pd);
  }
  // proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
  const Dims u = {N, B, 3, E}, u1 = {1, N, B, 3, E}, u2 = {3, N, B, 1, E}, u3 = {3, N, B, E};
  if (torch) {
    proj = b.Op1("unflatten", {proj}, u);
    proj = b.Op1("unsqueeze", {proj}, u1);
    b.SetInt("dim", 0);
    proj = b.Op1("transpose", {proj}, u2);
    b.SetInt("dim0", 0);
    b.SetInt("dim1", -2);
    proj = b.Op1("squeeze", {proj}, u3);
    b.SetInt("dim", -2);
    proj = b.Op1("contiguous", {proj}, u3);
  } else {
    proj = b.Op1("Reshape", {proj, b.IntConst(u)}, u);
    proj = b.Op1("Unsqueeze", {proj, b.IntConst({0})}, u1);
    proj = b.Op1("Transpose", {proj}, u2);
    b.SetInts("perm", {3, 1, 2, 0, 4});
    proj = b.Op1("Squeeze", {proj, b.IntConst({-2})}, u3);
  }
  std::string qkv[3];
  for (int i = 0; i < 3; ++i) {
    if (torch) {
      qkv[i] = b.Op1("select", {proj}, sbe);
      b.SetInt("dim", 0);
      b.SetInt("index", i);
    } else {
      qkv[i] = b.Op1("Gather", {proj, b.IntScalar(i)}, sbe);
      b.SetInt("axis", 0);
    }
  }
  // q.view(N, B*h, d).transpose(0, 1) for q, k, v; then .view(B, h, N, d).
  const Dims v1 = {N, B * h, d}, v2 = {B * h, N, d}, v3 = {B, h, N, d};
  for (auto& y : qkv) {
    if (torch) {
      y = b.Op1("view", {y}, v1);
      b.SetInts("size", v1);
      y = b.Op1("transpose", {y}, v2);
      b.SetInt("dim0", 0);
      b.SetInt("dim1", 1);
    } else {
      y = b.Op1("Reshape", {y, b.IntConst(v1)}, v1);
      y = b.Op1("Transpose", {y}, v2);
      b.SetInts("perm", {1, 0, 2});
    }
  }
  for (auto& y : qkv) {
    if (torch) {
      y = b.Op1("view", {y}, v3);
      b.SetInts("size", v3);
    } else {
      y = b.Op1("Reshape", {y, b.IntConst(v3)}, v3);
    }
  }
  std::string ctx;
  if (torch) {
    ctx = b.Op1("scaled_dot_product_attention", {qkv[0], qkv[1], qkv[2], ""}, v3);
    b.SetFloat("dropout_p", 0.0);
    b.SetInt("is_causal", 0);
  } else {
    const Dims kt = {B, h, d, N}, sd = {B, h, N, N};
    std::string k = b.Op1("Transpose", {qkv[1]}, kt);
    b.SetInts("perm", {0, 1, 3, 2});
    std::string q = b.Op1("Mul", {qkv[0], b.ScalarConst("sqrt_scale")}, v3);
    k = b.Op1("Mul", {k, b.ScalarConst("sqrt_scale")}, kt);
    std::string s = b.Op1("MatMul", {q, k}, sd);
    s = b.Op1("Softmax", {s}, sd);
    b.SetInt("axis", -1);
    ctx = b.Op1("MatMul", {s, qkv[2]}, v3);
  }
  // attn.permute(2, 0, 1, 3).contiguous().view(N * B, E); out_proj; view(N, B, E)
  const Dims nbhd = {N, B, h, d}, flat = {N * B, E};
  if (torch) {
    ctx = b.Op1("permute", {ctx}, nbhd);
    b.SetInts("dims", {2, 0, 1, 3});
    ctx = b.Op1("contiguous", {ctx}, nbhd);
    ctx = b.Op1("view", {ctx}, flat);
    b.SetInts("size", flat);
    ctx = b.Op1("linear", {ctx, b.Weight("out_proj.weight", {E, E}),
                           b.Weight("out_proj.bias", {E})}, flat);
    ctx = b.Op1("view", {ctx}, sbe);
    b.SetInts("size", sbe);
    ctx = b.Op1("transpose", {ctx}, {B, N, E});
    b.SetInt("dim0", 1);
    b.SetInt("dim1", 0);
  } else {
    ctx = b.Op1("Transpose", {ctx}, nbhd);
    b.SetInts("perm", {2, 0, 1, 3});
    ctx = b.Op1("Reshape", {ctx, b.IntConst(flat)}, flat);
    ctx = b.Op1("Gemm", {ctx, b.Weight("out_proj.weight", {E, E}),
                         b.Weight("out_proj.bias", {E})}, flat);
    b.SetFloat("alpha", 1.0);
    b.SetFloat("beta", 1.0);
    b.SetInt("transB", 1);
    ctx = b.Op1("Reshape", {ctx, b.IntConst(sbe)}, sbe);
    ctx = b.Op1("Transpose", {ctx}, {B, N, E});
    b.SetInts("perm", {1, 0, 2});
  }
  return ctx;
}

}  // namespace

Status BuildVit(const ArchParams& p, Graph* g) {
  VitConfig c{};
  Status s;
  if (!(s = GetInt(p, "layers", 12, 1024, &c.layers)).ok()) return s;
  if (!(s = GetInt(p, "hidden", 768, 1 << 16, &c.hidden)).ok()) return s;
  if (!(s = GetInt(p, "heads", std::max<int64_t>(1, c.hidden / 64), 1 << 12, &c.heads)).ok()) return s;
  if (!(s = GetInt(p, "ffn", 4 * c.hidden, 1 << 20, &c.ffn)).ok()) return s;
  if (!(s = GetInt(p, "patch", 16, 1 << 12, &c.patch)).ok()) return s;
  if (!(s = GetInt(p, "image", 224, 1 << 14, &c.image)).ok()) return s;
  if (!(s = GetInt(p, "classes", 1000, 1 << 20, &c.classes)).ok()) return s;
  if (!(s = GetBool(p, "fast_path", true, &c.fast_path)).ok()) return s;
  if (!(s = CheckDivisible("hidden", c.hidden, "heads", c.heads)).ok()) return s;
  if (!(s = CheckDivisible("image", c.image, "patch", c.patch)).ok()) return s;

  const bool torch = p.flavor == ArchFlavor::kTorch;
  GraphBuilder b(g, p.dtype, torch ? "aten" : "");
  g->ops.reserve(static_cast<size_t>(c.layers) * 48 + 16);
  const int64_t B = p.batch, E = c.hidden, grid = c.image / c.patch;
  const int64_t P = grid * grid, N = P + 1;
  const Dims xd = {B, N, E};

  Dims id = {B, 3, c.image, c.image}, yd;
  std::string x = b.Input("input", p.dtype, id);
  x = ConvBias(b, "conv_proj", x, id, E, c.patch, c.patch, 0, &yd);
  // x.reshape(n, E, P).permute(0, 2, 1); class token expanded and concatenated in front.
  if (torch) {
    x = b.Op1("reshape", {x}, {B, E, P});
    b.SetInts("shape", {B, E, P});
    x = b.Op1("permute", {x}, {B, P, E});
    b.SetInts("dims", {0, 2, 1});
  } else {
    x = b.Op1("Reshape", {x, b.IntConst({B, E, P})}, {B, E, P});
    x = b.Op1("Transpose", {x}, {B, P, E});
    b.SetInts("perm", {0, 2, 1});
  }
  std::string cls = b.Weight("class_token", {1, 1, E});  // a copy: reassigned below
  if (torch) {
    cls = b.Op1("expand", {cls}, {B, 1, E});
    b.SetInts("size", {B, -1, -1});
    x = b.Op1("cat", {cls, x}, xd);
    b.SetInt("dim", 1);
  } else {
    cls = b.Op1("Expand", {cls, b.IntConst({B, 1, E})}, {B, 1, E});
    x = b.Op1("Concat", {cls, x}, xd);
    b.SetInt("axis", 1);
  }
  {
    ScopeGuard enc(b, "encoder");
    x = b.Op1(torch ? "add" : "Add", {x, b.Weight("pos_embedding", {1, N, E})}, xd);
    x = Dropout(b, "dropout", x, xd, 0.0);
    {
      ScopeGuard layers(b, "layers");
      for (int64_t i = 0; i < c.layers; ++i) {
        ScopeGuard l(b, "encoder_layer_" + std::to_string(i));
        std::string y = LayerNorm(b, "ln_1", x, xd, kLnEps);
        {
          ScopeGuard a(b, "self_attention");
          y = SelfAttention(b, c, B, N, y);
        }
        y = Dropout(b, "dropout", y, xd, 0.0);
        x = b.Op1(torch ? "add" : "Add", {y, x}, xd);
        y = LayerNorm(b, "ln_2", x, xd, kLnEps);
        {
          ScopeGuard mlp(b, "mlp");
          const Dims fd = {B, N, c.ffn};
          y = Linear(b, "mlp.0", y, xd, c.ffn);
          y = Gelu(b, "mlp.1", y, fd);
          y = Dropout(b, "mlp.2", y, fd, 0.0);
          y = Linear(b, "mlp.3", y, fd, E);
          y = Dropout(b, "mlp.4", y, xd, 0.0);
        }
        x = b.Op1(torch ? "add" : "Add", {x, y}, xd);
      }
    }
    x = LayerNorm(b, "ln", x, xd, kLnEps);
  }
  // x[:, 0]
  if (torch) {
    x = b.Op1("slice", {x}, xd);  // x[:, 0]: slice, then select
    x = b.Op1("select", {x}, {B, E});
    b.SetInt("dim", 1);
    b.SetInt("index", 0);
  } else {
    x = b.Op1("Gather", {x, b.IntScalar(0)}, {B, E});
    b.SetInt("axis", 1);
  }
  {
    ScopeGuard heads(b, "heads");
    x = Linear(b, "head", x, {B, E}, c.classes);
  }
  b.Output(b.NameLastOutput("output"));
  return b.status();
}

}  // namespace arch
}  // namespace ftax
