// Tests of the --arch generators: MACs and params against published numbers, the op
// decomposition of each flavor, and the spec parser's errors.
#include "graph/arch_spec.h"

#include <gtest/gtest.h>
#if __has_include("graph/graph_stats.h")
#include "graph/graph_stats.h"
#define FTAX_ARCH_TEST_STATS 1
#endif

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace ftax {
namespace {

// Elements of a tensor's concrete shape (the generators always give one).
int64_t Elems(const Graph& g, const std::string& name) {
  const TensorInfo* t = g.Find(name);
  if (!t || !t->has_shape) return -1;
  auto n = NumElements(t->shape);
  return n ? *n : -1;
}

const Shape& ShapeOf(const Graph& g, const std::string& name) {
  static const Shape kEmpty;
  const TensorInfo* t = g.Find(name);
  return t ? t->shape : kEmpty;
}

// Multiply-accumulates of the ops that have them, computed here from the shapes alone, so the
// test does not depend on the counting registry.
double LocalMacs(const Graph& g) {
  double macs = 0;
  for (const Op& op : g.ops) {
    const std::string& t = op.type;
    if (t == "MatMul" || t == "matmul" || t == "bmm") {
      const Shape& a = ShapeOf(g, op.inputs[0]);
      macs += static_cast<double>(Elems(g, op.outputs[0])) * a.back().value;
    } else if (t == "Gemm" || t == "linear" || t == "addmm") {
      // Reduction length: the last dim of the activation input (addmm: input 1).
      const Shape& a = ShapeOf(g, op.inputs[t == "addmm" ? 1 : 0]);
      macs += static_cast<double>(Elems(g, op.outputs[0])) * a.back().value;
    } else if (t == "Conv" || t == "conv2d") {
      const Shape& w = ShapeOf(g, op.inputs[1]);
      macs += static_cast<double>(Elems(g, op.outputs[0])) * w[1].value * w[2].value *
              w[3].value;
    } else if (t == "scaled_dot_product_attention") {
      const Shape& q = ShapeOf(g, op.inputs[0]);
      const Shape& k = ShapeOf(g, op.inputs[1]);
      const double bh = static_cast<double>(Elems(g, op.inputs[0])) / (q[2].value * q[3].value);
      macs += 2.0 * bh * q[2].value * k[2].value * q[3].value;  // QK^T and PV
    } else if (t == "_native_multi_head_attention") {
      // x [B, L, E] @ W_qkv [3E, E]^T, QK^T and PV over all heads, output projection E x E.
      const Shape& q = ShapeOf(g, op.inputs[0]);
      const double tokens = static_cast<double>(q[0].value) * q[1].value, e = q[2].value;
      macs += tokens * 3 * e * e + 2.0 * tokens * q[1].value * e + tokens * e * e;
    }
  }
  return macs;
}

// MACs as `ftax inspect` counts them (ComputeStats through the counting registry) where that
// is built, else the local count.
double Macs(const Graph& g) {
#ifdef FTAX_ARCH_TEST_STATS
  Expected<GraphStats> st = ComputeStats(g);
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? st->totals.macs : -1;
#else
  return LocalMacs(g);
#endif
}

// Float initializers of rank >= 1 (scalar constants are not parameters), leaving out batch
// norm running statistics, which PyTorch keeps as buffers rather than parameters.
double Params(const Graph& g) {
  double n = 0;
  for (const auto& [name, t] : g.tensors) {
    if (!t.is_initializer || t.shape.empty()) continue;
    if (t.dtype != DType::kFloat32 && t.dtype != DType::kFloat16) continue;
    if (name.find("running_") != std::string::npos) continue;
    n += static_cast<double>(*NumElements(t.shape));
  }
  return n;
}

Graph Build(const std::string& spec, DimBindings dims = {}, ArchFlavor f = ArchFlavor::kOnnx) {
  Expected<Graph> g = BuildArchGraph(spec, dims, f);
  EXPECT_TRUE(g.ok()) << spec << ": " << g.status().message();
  return g.ok() ? g.value() : Graph{};
}

int CountType(const Graph& g, const std::string& type) {
  return static_cast<int>(
      std::count_if(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.type == type; }));
}

void ExpectWithin(double got, double want, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), rel * want)
      << what << ": got " << got << ", want " << want << " within " << rel * 100 << "%";
}

// Every op has a name, a scope and outputs; every tensor an op touches has a dtype and a
// concrete shape; names are unique.
void ExpectWellFormed(const Graph& g) {
  std::set<std::string> names;
  for (const Op& op : g.ops) {
    EXPECT_FALSE(op.name.empty());
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate op name " << op.name;
    EXPECT_FALSE(op.outputs.empty()) << op.name;
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (const std::string& t : *list) {
        if (t.empty()) continue;  // omitted optional input
        const TensorInfo* info = g.Find(t);
        ASSERT_NE(info, nullptr) << op.name << " uses unknown tensor " << t;
        EXPECT_NE(info->dtype, DType::kUnknown) << t;
        EXPECT_TRUE(info->has_shape) << t;
        EXPECT_TRUE(NumElements(info->shape).has_value()) << t;
      }
    }
  }
  for (const std::string& out : g.outputs) EXPECT_NE(g.Find(out), nullptr) << out;
  EXPECT_TRUE(g.warnings.empty());
}

std::string ErrorOf(const std::string& spec, DimBindings dims = {}) {
  Expected<Graph> g = BuildArchGraph(spec, dims, ArchFlavor::kOnnx);
  EXPECT_FALSE(g.ok()) << spec << " should fail";
  if (g.ok()) return "";
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidInput) << g.status().message();
  return g.status().message();
}

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- BERT ----

TEST(ArchSpecTest, BertBaseMacsMatchPublished) {
  Graph g = Build("bert:layers=12,hidden=768,heads=12,ffn=3072", {{"batch", 1}, {"seq", 128}});
  ExpectWellFormed(g);
  ExpectWithin(Macs(g), 11.17e9, 0.01, "BERT-base MACs at seq 128");
  // The split the paper and model cards give: 10.87G in linear layers, 0.30G in attention.
  double linear = 0, attention = 0;
  for (const Op& op : g.ops) {
    if (op.type != "MatMul" && op.type != "Gemm") continue;
    const TensorInfo* w = g.Find(op.inputs[1]);
    Graph one;
    one.tensors = {{op.inputs[0], *g.Find(op.inputs[0])}, {op.outputs[0], *g.Find(op.outputs[0])}};
    one.ops = {op};
    (w->is_initializer ? linear : attention) += LocalMacs(one);
  }
  ExpectWithin(linear, 10.87e9, 0.01, "linear MACs");
  ExpectWithin(attention, 0.30e9, 0.02, "attention MACs");
}

// Without heads, a BERT, GPT or ViT spec gets hidden/64 of them, as BERT's configurations
// do (BERT-base 768/12, BERT-large 1024/16, BERT-narrow 384/6): hidden=512 builds (8 heads).
TEST(ArchSpecTest, DefaultHeadsAreHiddenOver64) {
  for (const char* family : {"bert", "gpt", "vit"}) {
    const std::string spec = std::string(family) + ":layers=2,hidden=512";
    Graph implicit = Build(spec, {{"batch", 1}, {"seq", 128}});
    Graph explicit_heads = Build(spec + ",heads=8", {{"batch", 1}, {"seq", 128}});
    EXPECT_EQ(implicit.ops.size(), explicit_heads.ops.size()) << family;
    EXPECT_DOUBLE_EQ(Macs(implicit), Macs(explicit_heads)) << family;
    bool eight_heads = false;
    for (const auto& [name, t] : implicit.tensors)
      for (const Dim& d : t.shape) eight_heads = eight_heads || (d.value == 8 && t.shape.size() == 4);
    EXPECT_TRUE(eight_heads) << family << ": no [B, 8, S, 64] tensor";
  }
}

TEST(ArchSpecTest, BertBaseParamsMatchPublished) {
  // bert-base-uncased: 109,482,240 parameters with the pooler.
  for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
    Graph g = Build("bert", {}, f);
    EXPECT_EQ(Params(g), 109482240.0) << (f == ArchFlavor::kOnnx ? "onnx" : "torch");
  }
}

TEST(ArchSpecTest, BertFlavorsAgreeOnMacs) {
  Graph onnx = Build("bert:layers=4,hidden=256,heads=4", {{"batch", 2}, {"seq", 64}});
  Graph torch = Build("bert:layers=4,hidden=256,heads=4", {{"batch", 2}, {"seq", 64}},
                      ArchFlavor::kTorch);
  ExpectWellFormed(torch);
  EXPECT_GT(LocalMacs(onnx), 0);
  ExpectWithin(LocalMacs(torch), LocalMacs(onnx), 1e-9, "torch vs onnx MACs");
}

TEST(ArchSpecTest, BertOnnxDecomposition) {
  Graph g = Build("bert:layers=3");
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"last_hidden_state", "pooler_output"}));
  EXPECT_EQ(ShapeToString(ShapeOf(g, "pooler_output")), "1x768");
  // Per layer: 6 linear MatMuls + 2 attention MatMuls; pooler is a Gemm.
  EXPECT_EQ(CountType(g, "MatMul"), 3 * 8);
  EXPECT_EQ(CountType(g, "Gemm"), 1);
  EXPECT_EQ(CountType(g, "Softmax"), 3);
  EXPECT_EQ(CountType(g, "Erf"), 3);
  EXPECT_EQ(CountType(g, "LayerNormalization"), 3 * 2 + 1);
  EXPECT_EQ(CountType(g, "Gather"), 3 + 1);
  EXPECT_EQ(CountType(g, "Reshape"), 3 * 4);
  EXPECT_EQ(CountType(g, "Transpose"), 3 * 4);
  for (const Op& op : g.ops) EXPECT_EQ(op.domain, "") << op.name;
  // Names and scopes as the exporter writes them.
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.name == "/encoder/layer.2/attention/self/query/MatMul";
  });
  ASSERT_NE(it, g.ops.end());
  EXPECT_EQ(it->scope, "/encoder/layer.2/attention/self/query");
  const TensorInfo* w = g.Find(it->inputs[1]);
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->is_initializer);
  EXPECT_EQ(ShapeToString(w->shape), "768x768");
  // Linear weights are stored transposed ([in, out]) for MatMul.
  auto inter = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.scope == "/encoder/layer.0/intermediate/dense" && op.type == "MatMul";
  });
  ASSERT_NE(inter, g.ops.end());
  EXPECT_EQ(ShapeToString(ShapeOf(g, inter->inputs[1])), "768x3072");
  // Second Reshape in a scope gets the exporter's "_1" suffix.
  EXPECT_TRUE(std::any_of(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.name == "/encoder/layer.0/attention/self/Reshape_1";
  }));
}

TEST(ArchSpecTest, BertTorchDecomposition) {
  Graph g = Build("bert:layers=2", {}, ArchFlavor::kTorch);
  for (const Op& op : g.ops) EXPECT_EQ(op.domain, "aten") << op.name;
  EXPECT_EQ(CountType(g, "linear"), 2 * 6 + 1);
  EXPECT_EQ(CountType(g, "scaled_dot_product_attention"), 2);
  EXPECT_EQ(CountType(g, "embedding"), 3);
  EXPECT_EQ(CountType(g, "dropout"), 1 + 2 * 2);
  EXPECT_EQ(CountType(g, "layer_norm"), 1 + 2 * 2);
  EXPECT_EQ(CountType(g, "view"), 2 * 3);
  EXPECT_EQ(CountType(g, "transpose"), 2 * 4);
  EXPECT_EQ(CountType(g, "gelu"), 2);
  EXPECT_EQ(CountType(g, "tanh"), 1);
  EXPECT_EQ(CountType(g, "select"), 1);
  // aten::linear takes (x, weight[out, in], bias[out]).
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.scope == "/encoder/layer.1/intermediate/dense";
  });
  ASSERT_NE(it, g.ops.end());
  EXPECT_EQ(it->type, "linear");
  ASSERT_EQ(it->inputs.size(), 3u);
  EXPECT_EQ(ShapeToString(ShapeOf(g, it->inputs[1])), "3072x768");
  EXPECT_EQ(ShapeToString(ShapeOf(g, it->inputs[2])), "3072");
  // SDPA takes q, k, v and the mask, each with concrete shapes.
  auto sdpa = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.type == "scaled_dot_product_attention";
  });
  ASSERT_NE(sdpa, g.ops.end());
  ASSERT_EQ(sdpa->inputs.size(), 4u);
  EXPECT_EQ(sdpa->scope, "/encoder/layer.0/attention/self");
  EXPECT_EQ(ShapeToString(ShapeOf(g, sdpa->inputs[0])), "1x12x128x64");
}

TEST(ArchSpecTest, BertBatchAndSeqScaleWhatTheyShould) {
  const std::string spec = "bert:layers=2,hidden=128,heads=2";
  double m1 = LocalMacs(Build(spec, {{"batch", 1}, {"seq", 64}}));
  double m4 = LocalMacs(Build(spec, {{"batch", 4}, {"seq", 64}}));
  ExpectWithin(m4, 4 * m1, 1e-9, "batch 4 vs 1");
  // Doubling seq doubles the linear part and quadruples attention: strictly between 2x and 4x.
  double s2 = LocalMacs(Build(spec, {{"batch", 1}, {"seq", 128}}));
  EXPECT_GT(s2, 2 * m1);
  EXPECT_LT(s2, 4 * m1);
  // Params do not depend on batch or seq.
  EXPECT_EQ(Params(Build(spec, {{"batch", 8}, {"seq", 32}})),
            Params(Build(spec, {{"batch", 1}, {"seq", 128}})));
  // Input shapes follow the bindings; unrelated dims are ignored.
  Graph g = Build(spec, {{"batch", 3}, {"seq", 17}, {"image", 5}});
  ASSERT_FALSE(g.inputs.empty());
  EXPECT_EQ(ShapeToString(ShapeOf(g, "input_ids")), "3x17");
}

TEST(ArchSpecTest, DTypeReachesWeightsAndActivations) {
  Expected<Graph> g = BuildArchGraph("bert:layers=1", {}, ArchFlavor::kOnnx, DType::kFloat16);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const TensorInfo* w = g->Find("encoder.layer.0.attention.self.query.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, DType::kFloat16);
  EXPECT_EQ(g->Find(g->outputs[0])->dtype, DType::kFloat16);
  EXPECT_EQ(g->Find("input_ids")->dtype, DType::kInt64);
  EXPECT_FALSE(BuildArchGraph("bert", {}, ArchFlavor::kOnnx, DType::kInt8).ok());
}

// ---- ResNet ----

TEST(ArchSpecTest, ResnetMacsMatchPublished) {
  // torchvision's model cards (GFLOPS there are multiply-accumulates).
  const std::pair<const char*, double> cases[] = {
      {"resnet:depth=18", 1.814e9}, {"resnet:depth=50", 4.089e9}, {"resnet:depth=101", 7.801e9}};
  for (const auto& [spec, macs] : cases) {
    Graph g = Build(spec);
    ExpectWellFormed(g);
    ExpectWithin(Macs(g), macs, 0.01, spec);
  }
}

TEST(ArchSpecTest, ResnetParamsMatchPublished) {
  // PyTorch parameters (batch norm running stats are buffers): 11,689,512 and 25,557,032.
  const std::pair<const char*, double> cases[] = {{"resnet:depth=18", 11689512.0},
                                                   {"resnet:depth=50", 25557032.0}};
  for (const auto& [spec, params] : cases) {
    Graph torch = Build(spec, {}, ArchFlavor::kTorch);
    EXPECT_EQ(Params(torch), params) << spec;
    // The ONNX file folds each batch norm (2C parameters) into a conv bias (C): it holds
    // exactly one number less per normalized channel.
    double bn_channels = 0;
    for (const auto& [name, t] : torch.tensors) {
      if (name.size() > 13 && name.compare(name.size() - 13, 13, ".running_mean") == 0) {
        bn_channels += static_cast<double>(*NumElements(t.shape));
      }
    }
    EXPECT_GT(bn_channels, 0);
    EXPECT_EQ(Params(Build(spec)), params - bn_channels) << spec;
  }
}

TEST(ArchSpecTest, ResnetOnnxDecomposition) {
  Graph g = Build("resnet:depth=50");
  // 1 stem conv + 16 blocks x 3 convs + 4 downsample convs; no BatchNormalization (folded).
  EXPECT_EQ(CountType(g, "Conv"), 1 + 16 * 3 + 4);
  EXPECT_EQ(CountType(g, "BatchNormalization"), 0);
  EXPECT_EQ(CountType(g, "Relu"), 1 + 16 * 3);
  EXPECT_EQ(CountType(g, "Add"), 16);
  EXPECT_EQ(CountType(g, "MaxPool"), 1);
  EXPECT_EQ(CountType(g, "GlobalAveragePool"), 1);
  EXPECT_EQ(CountType(g, "Flatten"), 1);
  EXPECT_EQ(CountType(g, "Gemm"), 1);
  EXPECT_EQ(g.ops.size(), 1u + 1 + 1 + (16 * 3 + 4) + 16 * 3 + 16 + 3);
  for (const Op& op : g.ops) {
    if (op.type != "Conv") continue;
    EXPECT_EQ(op.inputs.size(), 3u) << op.name << " has no folded bias";
  }
  auto it = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.name == "/layer2/layer2.0/conv2/Conv";
  });
  ASSERT_NE(it, g.ops.end());
  EXPECT_EQ(it->IntsAttr("strides"), (std::vector<int64_t>{2, 2}));  // v1.5: stride on 3x3
  EXPECT_EQ(ShapeToString(ShapeOf(g, it->outputs[0])), "1x128x28x28");
  EXPECT_TRUE(std::any_of(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.name == "/layer1/layer1.0/downsample/downsample.0/Conv";
  }));
  EXPECT_EQ(ShapeToString(ShapeOf(g, g.outputs[0])), "1x1000");
}

TEST(ArchSpecTest, ResnetTorchDecomposition) {
  Graph g = Build("resnet:depth=18", {{"batch", 2}}, ArchFlavor::kTorch);
  ExpectWellFormed(g);
  for (const Op& op : g.ops) EXPECT_EQ(op.domain, "aten") << op.name;
  EXPECT_EQ(CountType(g, "conv2d"), 1 + 8 * 2 + 3);
  EXPECT_EQ(CountType(g, "batch_norm"), CountType(g, "conv2d"));
  EXPECT_EQ(CountType(g, "relu_"), 1 + 8 * 2);
  EXPECT_EQ(CountType(g, "add_"), 8);
  EXPECT_EQ(CountType(g, "max_pool2d"), 1);
  EXPECT_EQ(CountType(g, "adaptive_avg_pool2d"), 1);
  EXPECT_EQ(CountType(g, "flatten"), 1);
  EXPECT_EQ(CountType(g, "linear"), 1);
  auto bn = std::find_if(g.ops.begin(), g.ops.end(),
                         [](const Op& op) { return op.type == "batch_norm"; });
  ASSERT_NE(bn, g.ops.end());
  EXPECT_EQ(bn->scope, "/bn1");
  ASSERT_EQ(bn->inputs.size(), 5u);  // x, weight, bias, running_mean, running_var
  EXPECT_EQ(bn->inputs[3], "bn1.running_mean");
  // The block's ReLU module runs twice: two scopes, as the exporter names them.
  std::set<std::string> relu_scopes;
  for (const Op& op : g.ops) {
    if (op.type == "relu_" && op.scope.rfind("/layer1/layer1.0/", 0) == 0) {
      relu_scopes.insert(op.scope);
    }
  }
  EXPECT_EQ(relu_scopes, (std::set<std::string>{"/layer1/layer1.0/relu",
                                                "/layer1/layer1.0/relu_1"}));
  ExpectWithin(LocalMacs(g), LocalMacs(Build("resnet:depth=18", {{"batch", 2}})), 1e-9,
               "torch vs onnx MACs");
}

TEST(ArchSpecTest, ResnetKeysChangeTheNetwork) {
  double base = LocalMacs(Build("resnet:depth=50"));
  // Batch scales MACs linearly.
  ExpectWithin(LocalMacs(Build("resnet:depth=50", {{"batch", 8}})), 8 * base, 1e-9, "batch 8");
  // blocks overrides the depth table: 3-4-6-3 bottleneck is ResNet-50.
  EXPECT_EQ(LocalMacs(Build("resnet:blocks=3-4-6-3,bottleneck=1")), base);
  EXPECT_EQ(LocalMacs(Build("resnet:depth=34,bottleneck=1")), base);
  // Halving the width quarters the conv MACs roughly (stem input channels stay 3).
  double half = LocalMacs(Build("resnet:depth=50,width=32"));
  EXPECT_LT(half, 0.3 * base);
  EXPECT_GT(half, 0.2 * base);
  // A larger image grows MACs with the pixel count.
  ExpectWithin(LocalMacs(Build("resnet:depth=50,image=448")), 4 * base, 0.01, "image 448");
  Graph g = Build("resnet:depth=18,classes=10");
  EXPECT_EQ(ShapeToString(ShapeOf(g, g.outputs[0])), "1x10");
}

// ---- MobileNetV2 ----

TEST(ArchSpecTest, MobilenetV2MacsAndParamsMatchPublished) {
  Graph g = Build("mobilenet");
  ExpectWellFormed(g);
  ExpectWithin(Macs(g), 0.301e9, 0.01, "MobileNetV2 MACs");
  EXPECT_EQ(Params(Build("mobilenet", {}, ArchFlavor::kTorch)), 3504872.0);
  // 17 inverted residual blocks: 16 with expansion have 3 convs, the first 2; plus the stem
  // and the last 1x1 conv. Depthwise convs have group == channels.
  EXPECT_EQ(CountType(g, "Conv"), 16 * 3 + 2 + 2);
  EXPECT_EQ(CountType(g, "Clip"), 16 * 2 + 1 + 2);
  EXPECT_EQ(CountType(g, "Add"), 10);
  int depthwise = 0;
  for (const Op& op : g.ops) {
    if (op.type == "Conv" && op.IntAttr("group", 1) > 1) {
      ++depthwise;
      EXPECT_EQ(op.IntAttr("group", 1), ShapeOf(g, op.outputs[0])[1].value) << op.name;
    }
  }
  EXPECT_EQ(depthwise, 17);
}

TEST(ArchSpecTest, MobilenetKeys) {
  Graph torch = Build("mobilenet", {}, ArchFlavor::kTorch);
  ExpectWellFormed(torch);
  ExpectWithin(LocalMacs(torch), LocalMacs(Build("mobilenet")), 1e-9, "torch vs onnx");
  EXPECT_EQ(CountType(torch, "hardtanh"), 35);
  double base = LocalMacs(Build("mobilenet"));
  EXPECT_LT(LocalMacs(Build("mobilenet:width_mult=0.5")), 0.5 * base);
  EXPECT_GT(LocalMacs(Build("mobilenet:width_mult=1.4")), 1.5 * base);
  EXPECT_LT(LocalMacs(Build("mobilenet:expansion=4")), base);
  EXPECT_TRUE(Has(ErrorOf("mobilenet:width_mult=0"), "key 'width_mult' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("mobilenet:width_mult=x1"), "key 'width_mult' must be a number"));
}

// ---- ViT ----

TEST(ArchSpecTest, VitB16MacsAndParamsMatchPublished) {
  for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
    Graph g = Build("vit:layers=12,hidden=768,heads=12,ffn=3072,patch=16", {}, f);
    ExpectWellFormed(g);
    ExpectWithin(Macs(g), 17.56e9, 0.01, "ViT-B/16 MACs");
    EXPECT_EQ(Params(g), 86567656.0);
  }
  Graph g = Build("vit");
  EXPECT_EQ(CountType(g, "Softmax"), 12);
  EXPECT_EQ(CountType(g, "LayerNormalization"), 12 * 2 + 1);
  EXPECT_EQ(ShapeToString(ShapeOf(g, g.outputs[0])), "1x1000");
  EXPECT_TRUE(Has(ErrorOf("vit:image=224,patch=15"), "key 'image' (224)"));
  // Patch 32 has a quarter of the tokens.
  EXPECT_LT(LocalMacs(Build("vit:patch=32")), 0.3 * LocalMacs(g));
}

// ---- GPT ----

double AttentionMacs(const Graph& g) {
  Graph only = g;
  only.ops.clear();
  for (const Op& op : g.ops) {
    bool weight = op.inputs.size() > 1 && g.Find(op.inputs[1]) &&
                  g.Find(op.inputs[1])->is_initializer;
    bool addmm = op.type == "addmm";
    if (op.type == "scaled_dot_product_attention" || (op.type == "MatMul" && !weight && !addmm)) {
      only.ops.push_back(op);
    }
  }
  return LocalMacs(only);
}

TEST(ArchSpecTest, Gpt2ParamsAndPromptMacs) {
  for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
    Graph g = Build("gpt:layers=12,hidden=768,heads=12", {{"seq", 128}}, f);
    ExpectWellFormed(g);
    EXPECT_EQ(Params(g), 124439808.0);  // GPT-2 small
    // Per token per layer 12 H^2 in projections; causal attention still multiplies the full
    // S x S score matrix: 2 S^2 H per layer.
    const double H = 768, S = 128;
    ExpectWithin(Macs(g), 12 * (12 * H * H * S + 2 * S * S * H), 1e-6, "GPT-2 MACs");
  }
  Graph onnx = Build("gpt:layers=2");
  EXPECT_EQ(CountType(onnx, "Where"), 2);   // causal mask
  EXPECT_EQ(CountType(onnx, "Gemm"), 2 * 4);  // Conv1D projections
  EXPECT_EQ(CountType(onnx, "Tanh"), 2);
  Graph torch = Build("gpt:layers=2", {}, ArchFlavor::kTorch);
  auto sdpa = std::find_if(torch.ops.begin(), torch.ops.end(), [](const Op& op) {
    return op.type == "scaled_dot_product_attention";
  });
  ASSERT_NE(sdpa, torch.ops.end());
  // transformers 5 passes causality as a boolean [B, 1, S, L] mask, not is_causal.
  ASSERT_EQ(sdpa->inputs.size(), 4u);
  const TensorInfo* mask = torch.Find(sdpa->inputs[3]);
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->dtype, DType::kBool);
  EXPECT_EQ(ShapeToString(mask->shape), "1x1x128x128");
  EXPECT_EQ(CountType(torch, "le"), 1);
  EXPECT_EQ(CountType(torch, "addmm"), 2 * 4);
}

TEST(ArchSpecTest, GptKvCacheGeneratesOneToken) {
  const std::string spec = "gpt:layers=4,hidden=256,heads=4";
  for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
    Graph prompt = Build(spec, {{"seq", 64}}, f);
    Graph step = Build(spec + ",kv_cache=1", {{"seq", 64}}, f);
    ExpectWellFormed(step);
    EXPECT_EQ(ShapeToString(ShapeOf(step, "input_ids")), "1x1");
    EXPECT_EQ(ShapeToString(ShapeOf(step, "past_key_values.3.key")), "1x4x64x64");
    // present keys/values (2 per layer) follow the hidden state among the outputs.
    EXPECT_EQ(step.outputs.size(), 1u + 2 * 4);
    EXPECT_EQ(step.outputs[0], "last_hidden_state");
    EXPECT_EQ(step.outputs[1], "present.0.key");
    EXPECT_EQ(ShapeToString(ShapeOf(step, "present.3.value")), "1x4x65x64");
    // Projections: exactly one token's worth of the prompt's; attention: one query row
    // against 65 keys.
    double lin_prompt = LocalMacs(prompt) - AttentionMacs(prompt);
    double lin_step = LocalMacs(step) - AttentionMacs(step);
    ExpectWithin(lin_step, lin_prompt / 64, 1e-9, "projection MACs per token");
    ExpectWithin(AttentionMacs(step), 4 * 2.0 * 65 * 256, 1e-9, "attention MACs");
    EXPECT_EQ(Params(step), Params(prompt));
  }
  Graph past = Build(spec + ",kv_cache=1,past=500");
  EXPECT_EQ(ShapeToString(ShapeOf(past, "past_key_values.0.value")), "1x4x500x64");
  EXPECT_TRUE(Has(ErrorOf(spec + ",past=10"), "key 'past' needs kv_cache=1"));
  EXPECT_TRUE(Has(ErrorOf(spec + ",kv_cache=1,past=1024"), "key 'max_pos'"));
  EXPECT_TRUE(Has(ErrorOf(spec + ",kv_cache=2"), "key 'kv_cache' must be 0 or 1"));
}

TEST(ArchSpecTest, GptLmHeadIsTiedInTorch) {
  Graph torch = Build("gpt:layers=1,lm_head=1", {{"seq", 8}}, ArchFlavor::kTorch);
  Graph no_head = Build("gpt:layers=1", {{"seq", 8}}, ArchFlavor::kTorch);
  EXPECT_EQ(Params(torch), Params(no_head));  // shares wte.weight
  EXPECT_EQ(ShapeToString(ShapeOf(torch, torch.outputs.back())), "1x8x50257");
  ExpectWithin(LocalMacs(torch) - LocalMacs(no_head), 8.0 * 768 * 50257, 1e-9, "LM head MACs");
}

// Op counts of real files, measured with torch 2.11, torchvision 0.26 and transformers 5.17:
// torch.jit.trace (aten nodes after inlining, constants and size bookkeeping left out) and
// torch.onnx.export (opset 17). The generators must be within 5%.
TEST(ArchSpecTest, OpCountsMatchRealTracesAndExports) {
  const struct {
    const char* spec;
    ArchFlavor flavor;
    double real;
    const char* what;
  } cases[] = {
      {"bert", ArchFlavor::kTorch, 328, "BertModel trace, SDPA attention"},
      {"gpt", ArchFlavor::kTorch, 494, "GPT2Model trace, SDPA, use_cache=False"},
      {"resnet:depth=50", ArchFlavor::kTorch, 175, "resnet50 trace"},
      {"resnet:depth=18", ArchFlavor::kTorch, 69, "resnet18 trace"},
      {"mobilenet", ArchFlavor::kTorch, 153, "mobilenet_v2 trace"},
      // ONNX files of untrained torchvision models also hold Identity nodes (deduplicated
      // all-zero folded biases) and Clip's min/max as Constant nodes; counted without those:
      {"resnet:depth=50", ArchFlavor::kOnnx, 169 - 47, "resnet50 export"},
      {"resnet:depth=18", ArchFlavor::kOnnx, 65 - 16, "resnet18 export"},
      {"mobilenet", ArchFlavor::kOnnx, 209 - 70 - 39, "mobilenet_v2 export"},
  };
  for (const auto& c : cases) {
    Graph g = Build(c.spec, {{"seq", 128}}, c.flavor);
    ExpectWithin(static_cast<double>(g.ops.size()), c.real, 0.05, c.what);
  }
}

// ---- every family and flavor ----

TEST(ArchSpecTest, EveryFamilyIsWellFormedInBothFlavorsAndDtypes) {
  for (const char* spec : {"bert:layers=2", "gpt:layers=2", "gpt:layers=2,kv_cache=1",
                           "resnet:depth=18", "resnet:depth=152", "mobilenet", "vit:layers=2"}) {
    for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
      for (DType dt : {DType::kFloat32, DType::kFloat16}) {
        Expected<Graph> g = BuildArchGraph(spec, {{"batch", 2}, {"seq", 16}}, f, dt);
        ASSERT_TRUE(g.ok()) << spec << ": " << g.status().message();
        SCOPED_TRACE(spec);
        ExpectWellFormed(g.value());
        EXPECT_FALSE(g->inputs.empty());
        EXPECT_FALSE(g->outputs.empty());
        EXPECT_EQ(g->source, spec);
        for (const Op& op : g->ops) {
          EXPECT_EQ(op.domain, f == ArchFlavor::kTorch ? "aten" : "");
          EXPECT_EQ(op.name.rfind(op.scope + "/", 0), 0u) << op.name << " not in " << op.scope;
        }
        const TensorInfo* out = g->Find(g->outputs[0]);
        EXPECT_EQ(out->dtype, dt);
        EXPECT_EQ(out->shape[0].value, 2) << "batch not bound";
      }
    }
  }
}

TEST(ArchSpecTest, ResnetErrorsNameTheKey) {
  EXPECT_TRUE(Has(ErrorOf("resnet:depth=20"), "key 'depth' must be one of"));
  EXPECT_TRUE(Has(ErrorOf("resnet:blocks=2-x-2"), "key 'blocks'"));
  EXPECT_TRUE(Has(ErrorOf("resnet:blocks=2--2"), "key 'blocks'"));
  EXPECT_TRUE(Has(ErrorOf("resnet:blocks=2-0-2"), "key 'blocks' must hold positive"));
  EXPECT_TRUE(Has(ErrorOf("resnet:bottleneck=yes"), "key 'bottleneck' must be 0 or 1"));
  EXPECT_TRUE(Has(ErrorOf("resnet:width=0"), "key 'width' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("resnet:layers=3"), "unknown key 'layers'"));
}

#ifdef FTAX_ARCH_TEST_STATS
// The counting registry knows every op the generators emit, and counts the same MACs as the
// shape arithmetic above.
TEST(ArchSpecTest, CountingRegistryCountsEveryGeneratedOp) {
  for (const char* spec : {"bert:layers=2", "gpt:layers=2", "gpt:layers=2,kv_cache=1",
                           "resnet:depth=50", "mobilenet", "vit:layers=2"}) {
    for (ArchFlavor f : {ArchFlavor::kOnnx, ArchFlavor::kTorch}) {
      SCOPED_TRACE(std::string(spec) + (f == ArchFlavor::kOnnx ? " onnx" : " torch"));
      Graph g = Build(spec, {{"batch", 2}, {"seq", 32}}, f);
      StatsOptions o;
      o.strict = true;
      Expected<GraphStats> st = ComputeStats(g, o);
      ASSERT_TRUE(st.ok()) << st.status().message();
      EXPECT_TRUE(st->unknown_op_types.empty());
      EXPECT_EQ(st->uncounted_ops, 0);
      EXPECT_EQ(st->totals.ops, static_cast<int64_t>(g.ops.size()));
      EXPECT_GT(st->totals.macs, 0);
      ExpectWithin(st->totals.macs, LocalMacs(g), 1e-9, "registry vs shape arithmetic");
    }
  }
  // Params as inspect reports them: the weights plus a handful of scalar constants.
  Expected<GraphStats> st = ComputeStats(Build("bert"));
  ASSERT_TRUE(st.ok());
  EXPECT_GE(st->totals.params, 109482240);
  EXPECT_LE(st->totals.params, 109482240 + 16);
}
#endif

// ---- reuse ----

// Two graphs are the same: ops field by field, tensors, inputs, outputs.
void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.opset, b.opset);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    EXPECT_EQ(x.type, y.type) << i;
    EXPECT_EQ(x.domain, y.domain) << i;
    EXPECT_EQ(x.name, y.name) << i;
    EXPECT_EQ(x.scope, y.scope) << i;
    EXPECT_EQ(x.inputs, y.inputs) << x.name;
    EXPECT_EQ(x.outputs, y.outputs) << x.name;
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << x.name;
    for (const auto& [k, v] : x.attrs) {
      const Attribute* w = y.FindAttr(k);
      ASSERT_NE(w, nullptr) << x.name << " " << k;
      EXPECT_EQ(v.kind, w->kind) << x.name << " " << k;
      EXPECT_EQ(v.i, w->i);
      EXPECT_EQ(v.f, w->f);
      EXPECT_EQ(v.ints, w->ints);
      EXPECT_EQ(v.s, w->s);
    }
  }
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    const TensorInfo* u = b.Find(name);
    ASSERT_NE(u, nullptr) << name;
    EXPECT_EQ(t.name, u->name);
    EXPECT_EQ(t.dtype, u->dtype) << name;
    EXPECT_EQ(t.shape, u->shape) << name;
    EXPECT_EQ(t.is_initializer, u->is_initializer) << name;
    EXPECT_EQ(t.is_graph_input, u->is_graph_input) << name;
    EXPECT_EQ(t.int_values, u->int_values) << name;
  }
}

TEST(ArchSpecTest, BuildingIntoAUsedGraphEqualsAFreshBuild) {
  // Each step reuses what the step before left: larger, smaller, other family, other flavor.
  const std::pair<const char*, ArchFlavor> steps[] = {
      {"bert:layers=3", ArchFlavor::kOnnx},    {"bert:layers=5,hidden=512,heads=8", ArchFlavor::kOnnx},
      {"bert:layers=2", ArchFlavor::kTorch},   {"resnet:depth=18", ArchFlavor::kTorch},
      {"resnet:depth=18", ArchFlavor::kOnnx},  {"gpt:layers=2,kv_cache=1", ArchFlavor::kOnnx},
      {"vit:layers=2", ArchFlavor::kTorch},    {"mobilenet", ArchFlavor::kOnnx},
      {"bert:layers=3", ArchFlavor::kOnnx}};
  Graph reused;
  for (const auto& [spec, flavor] : steps) {
    SCOPED_TRACE(spec);
    Status s = BuildArchGraphInto(spec, {{"seq", 32}}, flavor, DType::kFloat32, &reused);
    ASSERT_TRUE(s.ok()) << s.message();
    Graph fresh = Build(spec, {{"seq", 32}}, flavor);
    ExpectSameGraph(reused, fresh);
  }
  // A failed build leaves the graph empty.
  EXPECT_FALSE(BuildArchGraphInto("bert:layers=0", {}, ArchFlavor::kOnnx, DType::kFloat32,
                                  &reused).ok());
  EXPECT_TRUE(reused.ops.empty());
  EXPECT_TRUE(reused.tensors.empty());
}

// ---- parser errors ----

TEST(ArchSpecTest, UnknownFamilyIsNamed) {
  std::string m = ErrorOf("berta:layers=2");
  EXPECT_TRUE(Has(m, "unknown family 'berta'")) << m;
  EXPECT_TRUE(Has(m, "bert")) << m;  // lists the families
  EXPECT_TRUE(Has(ErrorOf(""), "no family")) << ErrorOf("");
}

TEST(ArchSpecTest, UnknownKeyIsNamed) {
  std::string m = ErrorOf("bert:layers=2,hiden=512");
  EXPECT_TRUE(Has(m, "unknown key 'hiden'")) << m;
  EXPECT_TRUE(Has(m, "hidden")) << m;  // lists the valid keys
  m = ErrorOf("bert:seq=64");
  EXPECT_TRUE(Has(m, "--dim seq")) << m;
}

TEST(ArchSpecTest, BadValuesNameTheKey) {
  EXPECT_TRUE(Has(ErrorOf("bert:layers=0"), "key 'layers' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("bert:layers=-2"), "key 'layers' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("bert:hidden=abc"), "key 'hidden' must be an integer"));
  EXPECT_TRUE(Has(ErrorOf("bert:hidden=7.5"), "key 'hidden' must be an integer"));
  EXPECT_TRUE(Has(ErrorOf("bert:ffn="), "key 'ffn' has no value"));
  EXPECT_TRUE(Has(ErrorOf("bert:layers"), "'layers' is not KEY=VALUE"));
  EXPECT_TRUE(Has(ErrorOf("bert:layers=2,layers=3"), "key 'layers' given twice"));
  EXPECT_TRUE(Has(ErrorOf("bert:layers=99999999999999999999"), "key 'layers'"));
  EXPECT_TRUE(Has(ErrorOf("bert:layers=100000"), "key 'layers' must be at most"));
}

TEST(ArchSpecTest, HiddenMustDivideByHeads) {
  std::string m = ErrorOf("bert:hidden=768,heads=5");
  EXPECT_TRUE(Has(m, "key 'hidden' (768)")) << m;
  EXPECT_TRUE(Has(m, "key 'heads' (5)")) << m;
}

TEST(ArchSpecTest, BadDimsAreNamed) {
  EXPECT_TRUE(Has(ErrorOf("bert", {{"batch", 0}}), "dim 'batch' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("bert", {{"seq", -1}}), "dim 'seq' must be positive"));
  EXPECT_TRUE(Has(ErrorOf("bert", {{"seq", 513}}), "key 'max_pos'"));
}

TEST(ArchSpecTest, WhitespaceAndTrailingCommaAreAccepted) {
  Graph a = Build(" bert : layers = 2 , hidden=128, heads=2, ");
  Graph b = Build("bert:layers=2,hidden=128,heads=2");
  EXPECT_EQ(a.ops.size(), b.ops.size());
  EXPECT_EQ(LocalMacs(a), LocalMacs(b));
}

TEST(ArchSpecTest, HelpListsEveryFamilyAndKey) {
  std::string h = ArchSpecHelp();
  for (const char* s : {"bert", "gpt", "resnet", "mobilenet", "vit", "layers=12", "kv_cache",
                        "width_mult", "patch"}) {
    EXPECT_TRUE(Has(h, s)) << s;
  }
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

// DistilBERT is BERT's layers without token-type embeddings (an embedding and an add), without
// the pooler (slice, select, linear, tanh) and without the dropout after each layer's
// attention output: 2 + 4 + 6 ops fewer than `bert:layers=6` in the torch flavor, with the same
// MACs less the pooler's, under DistilBertModel's module names.
TEST(ArchSpecTest, DistilbertIsBertLessTokenTypesPoolerAndOneDropoutPerLayer) {
  for (ArchFlavor f : {ArchFlavor::kTorch, ArchFlavor::kOnnx}) {
    Expected<Graph> bert = BuildArchGraph("bert:layers=6", {{"batch", 1}, {"seq", 128}}, f);
    Expected<Graph> distil = BuildArchGraph("distilbert", {{"batch", 1}, {"seq", 128}}, f);
    ASSERT_TRUE(bert.ok() && distil.ok());
    if (f == ArchFlavor::kTorch) EXPECT_EQ(bert->ops.size() - distil->ops.size(), 12u);
    int q_lin = 0, encoder = 0, ffn_lin1 = 0;
    for (const Op& op : distil->ops) {
      q_lin += op.scope.find("/transformer/layer.0/attention/q_lin") == 0;
      ffn_lin1 += op.scope.find("/transformer/layer.5/ffn/lin1") == 0;
      encoder += op.scope.find("/encoder") == 0 || op.scope.find("pooler") != std::string::npos;
    }
    const int per_linear = f == ArchFlavor::kTorch ? 1 : 2;  // aten::linear, or MatMul and Add
    EXPECT_EQ(q_lin, per_linear);
    EXPECT_EQ(ffn_lin1, per_linear);
    EXPECT_EQ(encoder, 0);
  }
  EXPECT_FALSE(BuildArchGraph("distilbert:type_vocab=2", {{"batch", 1}, {"seq", 128}}, ArchFlavor::kTorch).ok());
}

}  // namespace
}  // namespace ftax
