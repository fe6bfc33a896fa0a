// Tests of the --arch generators: MACs and params against published numbers, the op
// decomposition of each flavor, and the spec parser's errors.
#include "graph/arch_spec.h"

#include <gtest/gtest.h>

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
    }
  }
  return macs;
}

// Float initializers of rank >= 1 (scalar constants are not parameters), leaving out batch
// norm running statistics, which PyTorch keeps as buffers rather than parameters.
double Params(const Graph& g) {
  double n = 0;
  for (const auto& [name, t] : g.tensors) {
    if (!t.is_initializer || t.shape.empty()) continue;
    if (t.dtype == DType::kInt64) continue;
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

// ---- BERT ----

TEST(ArchSpecTest, BertBaseMacsMatchPublished) {
  Graph g = Build("bert:layers=12,hidden=768,heads=12,ffn=3072", {{"batch", 1}, {"seq", 128}});
  ExpectWellFormed(g);
  ExpectWithin(LocalMacs(g), 11.17e9, 0.01, "BERT-base MACs at seq 128");
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

// ---- parser errors ----

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
