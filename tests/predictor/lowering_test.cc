#include "predictor/lowering.h"

#include <gtest/gtest.h>

#include "graph/arch_spec.h"
#include "graph/op_cost.h"
#include "graph/shape_inference.h"
#include "predictor/lowering_rules.h"
#include "test_graph.h"

namespace ftax {
namespace {

using testing::MakeOp;
using testing::T;

TEST(LoweringTest, AtenLinearIsOneGemmWithBiasEpilogue) {
  Graph g;
  g.tensors["x"] = T("x", {8, 128, 768});
  g.tensors["w"] = T("w", {3072, 768}, DType::kFloat32, true);
  g.tensors["b"] = T("b", {3072}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {8, 128, 3072});
  g.ops.push_back(MakeOp("aten", "linear", {"x", "w", "b"}, {"y"}));
  Expected<WorkList> w = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  ASSERT_EQ(w->dispatches.size(), 1u);
  const KernelWork& k = w->kernels[0];
  EXPECT_EQ(k.cls, KernelClass::kGemm);
  EXPECT_EQ(k.m, 8 * 128);
  EXPECT_EQ(k.n, 3072);
  EXPECT_EQ(k.k, 768);
  EXPECT_DOUBLE_EQ(k.flops, 2.0 * 1024 * 3072 * 768);
  EXPECT_DOUBLE_EQ(k.bytes, (1024.0 * 768 + 3072.0 * 768 + 1024.0 * 3072 + 3072) * 2);
  EXPECT_EQ(w->dispatches[0].cls, DispatchClass::kLibrary);
}

// GPT-2's tanh GELU: 0.5*x * (1 + tanh(c * (x + 0.044715 * x^3))), eight element-wise ops.
Graph GeluGraph() {
  Graph g;
  for (const char* n : {"x", "a", "b", "c", "d", "e", "f", "h", "y"}) g.tensors[n] = T(n, {8, 128, 3072});
  g.ops.push_back(MakeOp("aten", "mul", {"x"}, {"a"}));
  g.ops.push_back(MakeOp("aten", "pow", {"x"}, {"b"}));
  g.ops.push_back(MakeOp("aten", "mul", {"b"}, {"c"}));
  g.ops.push_back(MakeOp("aten", "add", {"x", "c"}, {"d"}));
  g.ops.push_back(MakeOp("aten", "mul", {"d"}, {"e"}));
  g.ops.push_back(MakeOp("aten", "tanh", {"e"}, {"f"}));
  g.ops.push_back(MakeOp("aten", "add", {"f"}, {"h"}));
  g.ops.push_back(MakeOp("aten", "mul", {"a", "h"}, {"y"}));
  g.outputs = {"y"};
  return g;
}

TEST(LoweringTest, TorchScriptFusesElementwiseGroupsEagerDoesNot) {
  Graph g = GeluGraph();
  Expected<WorkList> eager = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  Expected<WorkList> ts = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  Expected<WorkList> cg = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  Expected<WorkList> cge = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
  ASSERT_TRUE(eager.ok() && ts.ok() && cg.ok() && cge.ok());
  EXPECT_EQ(eager->kernels.size(), 8u);
  // A graph captured from the eager module replays the eager kernels, unfused.
  EXPECT_EQ(cge->kernels.size(), 8u);
  EXPECT_EQ(eager->dispatches.size(), 8u);
  // One kernel and one interpreter op, as CUPTI shows "fused_mul_pow_mul_add_mul_tanh_add_mul".
  ASSERT_EQ(ts->kernels.size(), 1u);
  EXPECT_EQ(ts->dispatches.size(), 1u);
  EXPECT_EQ(cg->kernels.size(), 1u);
  double flops = 0, bytes = 0;
  for (const KernelWork& k : eager->kernels) {
    flops += k.flops;
    bytes += k.bytes;
  }
  EXPECT_DOUBLE_EQ(ts->kernels[0].flops, flops);
  // Reads x, writes y: the seven intermediates never reach memory.
  EXPECT_DOUBLE_EQ(ts->kernels[0].bytes, 2 * 8 * 128 * 3072 * 2.0);
  EXPECT_LT(ts->kernels[0].bytes, bytes / 4);
}

TEST(LoweringTest, InPlaceOpsAndSharedIntermediatesAreNotFused) {
  Graph g;
  for (const char* n : {"x", "r", "s", "t", "u"}) g.tensors[n] = T(n, {4, 64});
  g.ops.push_back(MakeOp("aten", "add_", {"x", "r"}, {"s"}));  // ResNet's out += identity
  g.ops.push_back(MakeOp("aten", "relu_", {"s"}, {"t"}));
  g.ops.push_back(MakeOp("aten", "mul", {"t"}, {"u"}));
  g.outputs = {"u", "t"};  // t is read twice: mul and the graph output
  Expected<WorkList> w = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kernels.size(), 3u);
}

// RegNet's residual block: the shortcut's batch norm and the residual branch's last one feed
// an out-of-place add. NNC fuses inference batch norms with the element-wise ops they feed:
// under TorchScript and CUDA graphs of the trace the two batch norms and the add are one
// generated kernel ("fused_batch_norm_batch_norm_add" in CUPTI records, H100 and H200) and one
// interpreter op, at the add. A batch norm that feeds an in-place ReLU forms no group (NNC
// makes none of one op) and keeps its own kernels; eager code fuses nothing.
TEST(LoweringTest, TorchScriptFusesBatchNormsIntoTheAddTheyFeed) {
  Graph g;
  for (const char* n : {"x", "c1", "p", "c2", "q", "r", "c3", "s", "y", "z"}) g.tensors[n] = T(n, {1, 64, 28, 28});
  for (const char* n : {"w1", "w2", "w3"}) g.tensors[n] = T(n, {64, 64, 1, 1}, DType::kFloat32, true);
  for (const char* n : {"g", "b", "m", "v"}) g.tensors[n] = T(n, {64}, DType::kFloat32, true);
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w1"}, {"c1"}));
  g.ops.push_back(MakeOp("aten", "batch_norm", {"c1", "g", "b", "m", "v"}, {"p"}));  // 1: shortcut
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w2"}, {"c2"}));
  g.ops.push_back(MakeOp("aten", "batch_norm", {"c2", "g", "b", "m", "v"}, {"q"}));  // 3
  g.ops.push_back(MakeOp("aten", "relu_", {"q"}, {"r"}));
  g.ops.push_back(MakeOp("aten", "conv2d", {"r", "w3"}, {"c3"}));
  g.ops.push_back(MakeOp("aten", "batch_norm", {"c3", "g", "b", "m", "v"}, {"s"}));  // 6
  g.ops.push_back(MakeOp("aten", "add", {"p", "s"}, {"y"}));                          // 7
  g.ops.push_back(MakeOp("aten", "relu_", {"y"}, {"z"}));
  g.outputs = {"z"};
  Expected<WorkList> eager = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(eager.ok()) << eager.status().message();
  auto kernels_of = [](const WorkList& w, int op) {
    int n = 0;
    for (const KernelWork& k : w.kernels) n += k.op_index == op;
    return n;
  };
  // fp16 batch norm: two statistics kernels and the transform.
  const int bn_kernels = kernels_of(eager.value(), 1);
  EXPECT_EQ(bn_kernels, 3);
  EXPECT_EQ(kernels_of(eager.value(), 7), 1);
  for (Framework f : {Framework::kTorchscript, Framework::kCudaGraph}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    // Two batch norms and the add (7 kernels, 3 dispatches) become one kernel and one op.
    EXPECT_EQ(w->kernels.size(), eager->kernels.size() - 2 * size_t(bn_kernels) - 1 + 1);
    EXPECT_EQ(w->dispatches.size(), eager->dispatches.size() - 2);
    EXPECT_EQ(kernels_of(w.value(), 3), bn_kernels);  // before the in-place ReLU: its own kernels
    int group = -1;
    for (const DispatchWork& d : w->dispatches)
      if (d.op_index == 7) group = d.first_kernel;
    ASSERT_GE(group, 0);
    const KernelWork& k = w->kernels[size_t(group)];
    EXPECT_EQ(k.cls, KernelClass::kElementwise);
    EXPECT_EQ(k.dtype, DType::kFloat16);
    // Reads the two convolutions' outputs and the four per-channel tensors the batch norms
    // share (half precision, as the model runs), writes y.
    const double act = 64 * 28 * 28 * 2.0;
    EXPECT_DOUBLE_EQ(k.bytes, 3 * act + 4 * 64 * 2.0);
  }
}

// The ONNX form of a Swish / an SE block's gate: x -> Sigmoid -> Mul(x, sig), then a Relu of
// the product. The ATen types' ONNX equivalents are fused as NNC fuses the aten ops: under
// TorchScript and CUDA graphs one kernel (reading x once, writing y), one interpreter op; eager
// code runs three kernels. An op on folded shape values is no kernel and joins no group.
TEST(LoweringTest, OnnxGemmOfAStoredKxNWeightWithABiasIsAddmm) {
  // GPT-2's Conv1D: aten::addmm(bias, x, w) with w [k, n], exported as Gemm(x, w, b) with
  // transB = 0. TorchScript (and CUDA graphs of its trace) run mm and a broadcast bias add;
  // eager one GEMM with the bias in its epilogue. nn.Linear's Gemm (transB = 1, w [n, k]), and
  // a weight the exporter transposed from a Linear's (folded_from), stay one GEMM.
  auto graph = [](int64_t trans_b, const std::string& folded_from) {
    Graph g;
    g.tensors["x"] = T("x", {128, 768});
    g.tensors["w"] = T("w", trans_b ? std::vector<int64_t>{2304, 768} : std::vector<int64_t>{768, 2304},
                       DType::kFloat32, true);
    g.tensors["w"].folded_from = folded_from;
    g.tensors["b"] = T("b", {2304}, DType::kFloat32, true);
    g.tensors["y"] = T("y", {128, 2304});
    Op op = MakeOp("", "Gemm", {"x", "w", "b"}, {"y"});
    op.attrs["transB"].kind = Attribute::Kind::kInt;
    op.attrs["transB"].i = trans_b;
    g.ops.push_back(op);
    g.outputs = {"y"};
    return g;
  };
  auto kernels = [](const Graph& g, Framework f) {
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() ? w->kernels : std::vector<KernelWork>{};
  };
  const Graph addmm = graph(0, "");
  for (Framework f : {Framework::kTorchscript, Framework::kCudaGraph}) {
    std::vector<KernelWork> k = kernels(addmm, f);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].variant, KernelVariant::kGemmNN);
    EXPECT_EQ(k[1].cls, KernelClass::kElementwise);
    EXPECT_EQ(k[1].variant, KernelVariant::kBroadcast);
  }
  std::vector<KernelWork> eager = kernels(addmm, Framework::kPytorchEager);
  ASSERT_EQ(eager.size(), 1u);
  EXPECT_EQ(eager[0].variant, KernelVariant::kGemmNNBias);
  for (const Graph& linear : {graph(1, ""), graph(0, "h.0.attn.c_attn.weight")})
    EXPECT_EQ(kernels(linear, Framework::kTorchscript).size(), 1u);
}

// An exported nn.Linear is MatMul(x, stored W^T) with its bias an Add: PyTorch runs it as a
// linear layer, so its dispatch is priced by linear's measured cost under every framework that
// prices op types (a matrix product of two activations, attention's q.k^T, stays a matmul).
TEST(LoweringTest, OnnxMatMulOfAStoredWeightIsPricedAsALinearLayer) {
  auto graph = [](bool stored) {
    Graph g;
    g.tensors["x"] = T("x", {128, 768});
    g.tensors["w"] = T("w", {768, 3072}, DType::kFloat32, stored);
    g.tensors["b"] = T("b", {3072}, DType::kFloat32, true);
    g.tensors["m"] = T("m", {128, 3072});
    g.tensors["y"] = T("y", {128, 3072});
    g.ops.push_back(MakeOp("", "MatMul", {"x", "w"}, {"m"}));
    g.ops.push_back(MakeOp("", "Add", {"m", "b"}, {"y"}));
    g.inputs = stored ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "w"};
    g.outputs = {"y"};
    return g;
  };
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kTorchCompile}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> linear = Lower(graph(true), {f, DType::kFloat16});
    Expected<WorkList> matmul = Lower(graph(false), {f, DType::kFloat16});
    ASSERT_TRUE(linear.ok() && matmul.ok());
    auto keyed = [](const WorkList& w, const std::string& key) {
      for (const DispatchWork& d : w.dispatches)
        if (d.cost_key && *d.cost_key == key) return true;
      return false;
    };
    EXPECT_TRUE(keyed(linear.value(), "linear"));
    EXPECT_FALSE(keyed(linear.value(), "matmul"));
    EXPECT_TRUE(keyed(matmul.value(), "matmul"));
    EXPECT_FALSE(keyed(matmul.value(), "linear"));
  }
}

TEST(LoweringTest, OnnxElementwiseGroupsFuseAsTheirAtenOps) {
  Graph g;
  for (const char* n : {"x", "sig", "prod", "y"}) g.tensors[n] = T(n, {1, 32, 56, 56});
  g.tensors["shape"] = T("shape", {4}, DType::kInt64);
  g.tensors["shape"].int_values = std::vector<int64_t>{1, 32, 56, 56};
  g.tensors["two"] = T("two", {1}, DType::kInt64, true);
  g.tensors["two"].int_values = std::vector<int64_t>{2};
  g.tensors["twice"] = T("twice", {4}, DType::kInt64);
  g.tensors["twice"].int_values = std::vector<int64_t>{2, 64, 112, 112};
  g.ops.push_back(MakeOp("", "Sigmoid", {"x"}, {"sig"}));
  g.ops.push_back(MakeOp("", "Shape", {"x"}, {"shape"}));
  g.ops.push_back(MakeOp("", "Mul", {"shape", "two"}, {"twice"}));  // shape math: free
  g.ops.push_back(MakeOp("", "Mul", {"x", "sig"}, {"prod"}));
  g.ops.push_back(MakeOp("", "Relu", {"prod"}, {"y"}));
  g.outputs = {"y", "twice"};
  const double bytes = 1 * 32 * 56 * 56 * 2.0;  // one fp16 activation
  Expected<WorkList> eager = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(eager.ok()) << eager.status().message();
  EXPECT_EQ(eager->kernels.size(), 3u);
  EXPECT_EQ(eager->dispatches.size(), 3u);
  for (Framework f : {Framework::kTorchscript, Framework::kCudaGraph}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->kernels.size(), 1u);
    EXPECT_EQ(w->dispatches.size(), 1u);
    EXPECT_EQ(w->dispatches[0].op_index, 4);  // run at the group's last member, the Relu
    EXPECT_EQ(w->kernels[0].cls, KernelClass::kElementwise);
    EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2 * bytes);  // reads x, writes y
  }
  // The same network as aten ops gives the same kernels.
  Graph a;
  for (const char* n : {"x", "sig", "prod", "y"}) a.tensors[n] = T(n, {1, 32, 56, 56});
  a.ops.push_back(MakeOp("aten", "sigmoid", {"x"}, {"sig"}));
  a.ops.push_back(MakeOp("aten", "mul", {"x", "sig"}, {"prod"}));
  a.ops.push_back(MakeOp("aten", "relu", {"prod"}, {"y"}));
  a.outputs = {"y"};
  Expected<WorkList> wa = Lower(a, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(wa.ok()) << wa.status().message();
  ASSERT_EQ(wa->kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(wa->kernels[0].bytes, 2 * bytes);
}

// An exported erf GELU is priced as ATen's gelu kernel at its last Mul; gelu is not among the
// types NNC fuses here, so the Add after it stays a kernel of its own.
TEST(LoweringTest, OnnxGeluJoinsNoElementwiseGroup) {
  Graph g;
  for (const char* n : {"x", "d", "e", "s", "m", "y", "z", "r"}) g.tensors[n] = T(n, {128, 3072});
  for (const char* c : {"sqrt2", "one", "half"}) g.tensors[c] = T(c, {}, DType::kFloat32, true);
  g.ops.push_back(MakeOp("", "Div", {"x", "sqrt2"}, {"d"}));
  g.ops.push_back(MakeOp("", "Erf", {"d"}, {"e"}));
  g.ops.push_back(MakeOp("", "Add", {"e", "one"}, {"s"}));
  g.ops.push_back(MakeOp("", "Mul", {"x", "s"}, {"m"}));
  g.ops.push_back(MakeOp("", "Mul", {"m", "half"}, {"y"}));
  g.ops.push_back(MakeOp("", "Add", {"y", "r"}, {"z"}));
  g.outputs = {"z"};
  Expected<WorkList> w = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);  // GELU, Add
  ASSERT_EQ(w->dispatches.size(), 2u);
  EXPECT_EQ(w->dispatches[0].op_index, 4);
  EXPECT_EQ(w->dispatches[1].op_index, 5);
}

TEST(LoweringTest, AddmmIsOneBiasedGemmEagerAndMmPlusBroadcastAddInTorchScript) {
  Graph g;
  g.tensors["bias"] = T("bias", {2304}, DType::kFloat32, true);
  g.tensors["x"] = T("x", {256, 768});
  g.tensors["w"] = T("w", {768, 2304}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {256, 2304});
  g.ops.push_back(MakeOp("aten", "addmm", {"bias", "x", "w"}, {"y"}));
  // Eager: cuBLASLt's bias epilogue, one kernel (CUPTI: nvjet ..._bias_NNT).
  Expected<WorkList> e = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->kernels.size(), 1u);
  EXPECT_EQ(e->kernels[0].cls, KernelClass::kGemm);
  EXPECT_EQ(e->kernels[0].variant, KernelVariant::kGemmNNBias);
  EXPECT_EQ(e->kernels[0].m, 256);
  EXPECT_EQ(e->kernels[0].n, 2304);
  // TorchScript (and graphs captured from it): DecomposeOps makes mm + add of the broadcast bias.
  for (Framework f : {Framework::kTorchscript, Framework::kCudaGraph}) {
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->kernels.size(), 2u);
    EXPECT_EQ(w->kernels[0].variant, KernelVariant::kGemmNN);
    EXPECT_EQ(w->kernels[1].cls, KernelClass::kElementwise);
    EXPECT_EQ(w->kernels[1].variant, KernelVariant::kBroadcast);
    EXPECT_EQ(w->dispatches.size(), 1u);
  }
  // A graph captured from the eager module: eager's one biased GEMM.
  Expected<WorkList> ge = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
  ASSERT_TRUE(ge.ok()) << ge.status().message();
  ASSERT_EQ(ge->kernels.size(), 1u);
  EXPECT_EQ(ge->kernels[0].variant, KernelVariant::kGemmNNBias);
}

// ATen adds a convolution's bias in a kernel of its own: the strided elementwise add over the
// output; a convolution without bias is one kernel.
TEST(LoweringTest, ConvolutionBiasIsABroadcastAddOfItsOwn) {
  Graph g;
  g.tensors["x"] = T("x", {8, 64, 56, 56});
  g.tensors["w"] = T("w", {128, 64, 3, 3}, DType::kFloat32, true);
  g.tensors["b"] = T("b", {128}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {8, 128, 56, 56});
  g.tensors["z"] = T("z", {8, 128, 56, 56});
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w", "b"}, {"y"}));
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w", ""}, {"z"}));
  g.outputs = {"y", "z"};
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 3u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kConv);
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kElementwise);
  EXPECT_EQ(w->kernels[1].variant, KernelVariant::kBroadcast);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 2.0 * 8 * 128 * 56 * 56 * 2 + 128 * 2);
  EXPECT_EQ(w->kernels[2].cls, KernelClass::kConv);
  ASSERT_EQ(w->dispatches.size(), 2u);
  EXPECT_EQ(w->dispatches[0].num_kernels, 2);
}

// Concatenating contiguous tensors streams blocks (ATen's vectorized kernel); with a
// transposed or sliced input, or an empty one, ATen runs its strided kernel, which the copy
// class prices.
TEST(LoweringTest, CatOfContiguousTensorsIsAContiguousCopy) {
  Graph g;
  g.tensors["a"] = T("a", {8, 64, 28, 28});
  g.tensors["b"] = T("b", {8, 32, 28, 28});
  g.tensors["c"] = T("c", {8, 96, 28, 28});
  g.tensors["k"] = T("k", {8, 12, 64, 128});
  g.tensors["kt"] = T("kt", {8, 12, 128, 64});
  g.tensors["past"] = T("past", {8, 12, 100, 64});
  g.tensors["kv"] = T("kv", {8, 12, 228, 64});
  g.tensors["h1"] = T("h1", {8, 48, 28, 28});
  g.tensors["h2"] = T("h2", {8, 48, 28, 28});
  g.tensors["d"] = T("d", {8, 96, 28, 28});
  g.ops.push_back(MakeOp("aten", "cat", {"a", "b"}, {"c"}));
  g.ops.push_back(MakeOp("aten", "transpose", {"k"}, {"kt"}));
  g.ops.push_back(MakeOp("aten", "cat", {"past", "kt"}, {"kv"}));
  g.ops.push_back(MakeOp("aten", "chunk", {"c"}, {"h1", "h2"}));
  g.ops.push_back(MakeOp("aten", "cat", {"h1", "b"}, {"d"}));
  g.outputs = {"kv", "d", "h2"};
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 3u);
  for (const KernelWork& k : w->kernels) EXPECT_EQ(k.cls, KernelClass::kCopy);
  EXPECT_EQ(w->kernels[0].variant, KernelVariant::kContiguous);
  EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2.0 * 8 * 96 * 28 * 28 * 2);
  EXPECT_EQ(w->kernels[1].variant, KernelVariant::kPlain);  // a transposed input
  EXPECT_EQ(w->kernels[2].variant, KernelVariant::kPlain);  // a chunk
}

TEST(LoweringTest, KernelVariantsFollowTheOp) {
  Graph g;
  g.tensors["x"] = T("x", {8, 64, 56, 56});
  g.tensors["w1"] = T("w1", {256, 64, 1, 1}, DType::kFloat32, true);
  g.tensors["w3"] = T("w3", {64, 64, 3, 3}, DType::kFloat32, true);
  g.tensors["a"] = T("a", {8, 256, 56, 56});
  g.tensors["c"] = T("c", {8, 64, 56, 56});
  g.tensors["row"] = T("row", {56});
  g.tensors["s"] = T("s", {8, 64, 56, 56});
  g.tensors["t"] = T("t", {8, 64, 56, 56});
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w1"}, {"a"}));
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w3"}, {"c"}));
  g.ops.push_back(MakeOp("aten", "add", {"c", "row"}, {"s"}));
  g.ops.push_back(MakeOp("aten", "add", {"c", "s"}, {"t"}));
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 4u);
  EXPECT_EQ(w->kernels[0].variant, KernelVariant::kPointwise);
  EXPECT_EQ(w->kernels[1].variant, KernelVariant::kPlain);
  EXPECT_EQ(w->kernels[2].variant, KernelVariant::kBroadcast);  // a row over the tensor
  EXPECT_EQ(w->kernels[3].variant, KernelVariant::kPlain);      // same shapes
}

// A 1x1 convolution over an odd number of positions per image (Inception's 35x35 and 17x17,
// ResNet's 7x7) is its own variant; an even number (14x14, 28x28) and a single position (a
// squeeze-excitation block's) stay pointwise, and channels-last under torch.compile has no
// such alignment.
TEST(LoweringTest, OddPositionsMakeAPointwiseConvolutionItsOwnVariant) {
  auto variant_at = [](int64_t hw, Framework f) {
    Graph g;
    g.tensors["x"] = T("x", {8, 192, hw, hw});
    g.tensors["w"] = T("w", {64, 192, 1, 1}, DType::kFloat32, true);
    g.tensors["y"] = T("y", {8, 64, hw, hw});
    g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w"}, {"y"}));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() && !w->kernels.empty() ? w->kernels[0].variant : KernelVariant::kPlain;
  };
  EXPECT_EQ(variant_at(35, Framework::kCudaGraph), KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_at(17, Framework::kPytorchEager), KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_at(7, Framework::kTorchscript), KernelVariant::kPointwiseOdd);
  EXPECT_EQ(variant_at(14, Framework::kCudaGraph), KernelVariant::kPointwise);
  EXPECT_EQ(variant_at(28, Framework::kCudaGraph), KernelVariant::kPointwise);
  EXPECT_EQ(variant_at(1, Framework::kCudaGraph), KernelVariant::kPointwise);
  EXPECT_EQ(variant_at(35, Framework::kTorchCompile), KernelVariant::kPointwiseNhwc);
}

// The odd-position variant is shaped as the library runs it, one GEMM per image: m is the
// positions of one image and batch the images; an even-position one stays one GEMM over all
// images. FLOPs are the same either way.
TEST(LoweringTest, AnOddPositionPointwiseConvolutionIsOneGemmPerImage) {
  auto kernel_at = [](int64_t hw) {
    Graph g;
    g.tensors["x"] = T("x", {8, 192, hw, hw});
    g.tensors["w"] = T("w", {64, 192, 1, 1}, DType::kFloat32, true);
    g.tensors["y"] = T("y", {8, 64, hw, hw});
    g.ops.push_back(MakeOp("aten", "conv2d", {"x", "w"}, {"y"}));
    Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
    EXPECT_TRUE(w.ok() && !w->kernels.empty());
    return w.ok() && !w->kernels.empty() ? w->kernels[0] : KernelWork{};
  };
  const KernelWork odd = kernel_at(17), even = kernel_at(14);
  EXPECT_EQ(odd.m, 17 * 17);
  EXPECT_EQ(odd.batch, 8);
  EXPECT_EQ(odd.n, 64);
  EXPECT_EQ(odd.k, 192);
  EXPECT_DOUBLE_EQ(odd.flops, 2.0 * 8 * 17 * 17 * 64 * 192);
  EXPECT_EQ(even.m, 8 * 14 * 14);
  EXPECT_EQ(even.batch, 1);
}

TEST(LoweringTest, HalfPrecisionBatchNormIsThreeKernelsFloatIsOne) {
  Graph g;
  g.tensors["x"] = T("x", {8, 64, 56, 56});
  for (const char* n : {"w", "b", "m", "v"}) g.tensors[n] = T(n, {64}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {8, 64, 56, 56});
  g.ops.push_back(MakeOp("aten", "batch_norm", {"x", "w", "b", "m", "v"}, {"y"}));
  Expected<WorkList> h = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  Expected<WorkList> f = Lower(g, {Framework::kCudaGraph, DType::kFloat32});
  ASSERT_TRUE(h.ok() && f.ok());
  ASSERT_EQ(h->kernels.size(), 3u);
  EXPECT_EQ(f->kernels.size(), 1u);
  EXPECT_EQ(h->kernels[0].cls, KernelClass::kNorm);
  // The transform kernel is the batch_norm variant (priced by the bench's batch-norm rows
  // where the profile has them); the statistics kernels are plain element-wise ones.
  EXPECT_EQ(h->kernels[0].variant, KernelVariant::kBatchNorm);
  EXPECT_EQ(f->kernels[0].variant, KernelVariant::kBatchNorm);
  EXPECT_EQ(h->kernels[1].variant, KernelVariant::kPlain);
  // Bytes as the bench's rows count them: activations in and out, four per-channel vectors.
  EXPECT_DOUBLE_EQ(f->kernels[0].bytes, (2.0 * 8 * 64 * 56 * 56 + 4 * 64) * 4);
  EXPECT_DOUBLE_EQ(h->kernels[1].bytes, 2 * 64 * 4.0);  // per-channel statistics only
  EXPECT_EQ(h->dispatches.size(), 1u);
  // Shaped by its positions per channel (8 images of 56x56) and its channels.
  EXPECT_EQ(h->kernels[0].m, 8 * 56 * 56);
  EXPECT_EQ(h->kernels[0].n, 64);
  EXPECT_EQ(h->kernels[0].k, 1);
  EXPECT_EQ(h->kernels[0].batch, 1);
}

TEST(LoweringTest, ViewsDispatchButLaunchNothingUntilAReshapeOfATranspose) {
  Graph g;
  g.tensors["x"] = T("x", {2, 4, 8});
  g.tensors["t"] = T("t", {2, 8, 4});
  g.tensors["r"] = T("r", {2, 32});
  g.ops.push_back(MakeOp("aten", "transpose", {"x"}, {"t"}));
  g.ops.push_back(MakeOp("aten", "reshape", {"t"}, {"r"}));
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat32});
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->dispatches.size(), 2u);
  EXPECT_EQ(w->dispatches[0].cls, DispatchClass::kView);
  EXPECT_EQ(w->dispatches[0].num_kernels, 0);
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kCopy);
  EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2.0 * 64 * 4);
}

TEST(LoweringTest, OnnxMatMulBiasAddFoldsAndShapeArithmeticIsFree) {
  Graph g;
  g.tensors["x"] = T("x", {128, 768});
  g.tensors["w"] = T("w", {768, 768}, DType::kFloat32, true);
  g.tensors["b"] = T("b", {768}, DType::kFloat32, true);
  g.tensors["mm"] = T("mm", {128, 768});
  g.tensors["y"] = T("y", {128, 768});
  g.tensors["s"] = T("s", {2}, DType::kInt64);
  g.ops.push_back(MakeOp("", "MatMul", {"x", "w"}, {"mm"}));
  g.ops.push_back(MakeOp("", "Add", {"mm", "b"}, {"y"}));
  g.ops.push_back(MakeOp("", "Shape", {"y"}, {"s"}));
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->dispatches.size(), 1u);
}

// nn.MultiheadAttention's scale as the TorchScript-based exporter writes it (Shape, Gather,
// Cast, Sqrt, Div, Sqrt on q's shape), folded by shape inference to the float 0.125 and its
// square root: like integer shape arithmetic, no kernel and no dispatch under any framework
// (the trace computes it in Python). Only q * sqrt(scale) is a kernel.
TEST(LoweringTest, OnnxFloatShapeMathIsFree) {
  Graph g;
  g.opset[""] = 17;
  g.tensors["q"] = T("q", {1, 12, 197, 64});
  g.tensors["q"].is_graph_input = true;
  g.inputs = {"q"};
  g.tensors["last"] = T("last", {}, DType::kInt64, true);
  g.tensors["last"].int_values = std::vector<int64_t>{-1};
  g.tensors["one"] = T("one", {1}, DType::kFloat32, true);
  g.tensors["one"].float_values = std::vector<double>{1.0};
  g.ops.push_back(MakeOp("", "Shape", {"q"}, {"shape"}));
  g.ops.push_back(MakeOp("", "Gather", {"shape", "last"}, {"head_dim"}));
  Op cast = MakeOp("", "Cast", {"head_dim"}, {"head_dim_f"});
  cast.attrs["to"].kind = Attribute::Kind::kInt;
  cast.attrs["to"].i = 1;  // FLOAT
  g.ops.push_back(cast);
  g.ops.push_back(MakeOp("", "Sqrt", {"head_dim_f"}, {"root"}));
  g.ops.push_back(MakeOp("", "Div", {"one", "root"}, {"scale"}));
  g.ops.push_back(MakeOp("", "Sqrt", {"scale"}, {"half_scale"}));
  g.ops.push_back(MakeOp("", "Mul", {"q", "half_scale"}, {"y"}));
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ASSERT_TRUE(g.Find("scale")->float_values);
  EXPECT_EQ(*g.Find("scale")->float_values, (std::vector<double>{0.125}));
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph,
                      Framework::kCudaGraphEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->kernels.size(), 1u);
    ASSERT_EQ(w->dispatches.size(), 1u);
    EXPECT_EQ(w->dispatches[0].op_index, 6);  // the Mul
    EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2 * 12 * 197 * 64 * 2.0 + 2);  // q, y and the fp16 scale
  }
}

TEST(LoweringTest, UnknownShapeNamesTheNode) {
  Graph g;
  g.tensors["x"] = T("x", {8, 8});
  TensorInfo y;
  y.name = "y";
  g.tensors["y"] = y;  // no shape
  g.ops.push_back(MakeOp("aten", "relu", {"x"}, {"y"}));
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat32});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("relu_0"), std::string::npos);
}

TEST(LoweringTest, BertTorchFlavorKernelMix) {
  Expected<Graph> g = BuildArchGraph("bert:layers=2", {{"batch", 1}, {"seq", 128}}, ArchFlavor::kTorch);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Expected<WorkList> w = Lower(g.value(), {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  int gemm = 0, attn = 0;
  for (const auto& k : w->kernels) {
    gemm += k.cls == KernelClass::kGemm;
    attn += k.cls == KernelClass::kAttention;
  }
  EXPECT_EQ(gemm, 2 * 6 + 1);  // q, k, v, out, ffn1, ffn2 per layer + pooler
  EXPECT_EQ(attn, 2);
  EXPECT_GT(w->module_calls, 2 * 8);
  EXPECT_GT(w->dispatches.size(), w->kernels.size());  // views dispatch without kernels
}

TEST(LoweringTest, ModuleCallsCountScopesAndAncestorsOnce) {
  Graph g;
  for (const char* s : {"/encoder/layer.0/attention", "/encoder/layer.0/attention", "/encoder/layer.1", "/pooler"}) {
    Op op;
    op.scope = s;
    g.ops.push_back(op);
  }
  // root, /encoder, /encoder/layer.0, /encoder/layer.0/attention, /encoder/layer.1, /pooler
  EXPECT_EQ(CountModuleCalls(g), 6);
}

TEST(LoweringTest, ModuleCallsFromParameterNamesWhenTheFileHasNoScopes) {
  Graph g;
  auto param = [&](const std::string& name) {
    TensorInfo t;
    t.name = name;
    t.is_initializer = true;
    g.tensors[name] = t;
    return name;
  };
  auto op = [&](std::vector<std::string> inputs) {
    Op o;
    o.type = "MatMul";
    o.inputs = std::move(inputs);
    g.ops.push_back(o);
  };
  op({"x", param("embeddings.word_embeddings.weight")});
  op({"x", param("encoder.layer.0.attention.query.weight"), param("encoder.layer.0.attention.query.bias")});
  op({"x", param("encoder.layer.1.attention.query.weight")});
  op({"x", param("onnx::MatMul_7"), param("val_3")});  // exporter names: no module
  op({"x", param("val_9")});
  g.tensors["val_9"].folded_from = "pooler.dense.weight";  // pooler, pooler.dense
  // embeddings, embeddings.word_embeddings, encoder, encoder.layer, encoder.layer.0,
  // encoder.layer.0.attention, encoder.layer.0.attention.query, encoder.layer.1,
  // encoder.layer.1.attention, encoder.layer.1.attention.query, pooler, pooler.dense, and
  // the root
  EXPECT_EQ(ModuleCallsFromParameterNames(g), 13);
  EXPECT_EQ(CountModuleCalls(g), 1);  // no scopes
  Graph none;
  EXPECT_EQ(ModuleCallsFromParameterNames(none), 0);
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

// Every op ftax counts has a lowering rule, so no counted op is priced by a guess.
TEST(LoweringTableTest, EveryCountedOnnxAndAtenOpHasARule) {
  std::vector<std::string> missing;
  for (const auto& [domain, type] : CostRegistry::Default().Entries()) {
    if (domain != "" && domain != "aten") continue;  // contrib domains: the generic rule
    if (!FindLoweringRule(domain, type)) missing.push_back(domain + "::" + type);
  }
  EXPECT_TRUE(missing.empty()) << ::testing::PrintToString(missing);
}

TEST(LoweringTableTest, InPlaceOpsTakeTheirOutOfPlaceRule) {
  for (const char* t : {"silu", "hardswish", "dropout", "relu", "gelu", "sigmoid"}) {
    const std::string inplace = std::string(t) + "_";
    const LoweringRule* in = FindLoweringRule("aten", inplace);
    const LoweringRule* out = FindLoweringRule("aten", t);
    ASSERT_NE(in, nullptr) << inplace;
    ASSERT_NE(out, nullptr) << t;
    EXPECT_EQ(in->recipe, out->recipe) << inplace;
    EXPECT_EQ(in->dispatch_class, out->dispatch_class) << inplace;
    EXPECT_TRUE(CostRegistry::Default().Has("aten", inplace)) << inplace;
  }
  EXPECT_EQ(FindLoweringRule("aten", "dropout_")->recipe, KernelRecipe::kNone);
  EXPECT_EQ(FindLoweringRule("aten", "unflatten")->recipe, KernelRecipe::kNone);
  EXPECT_EQ(FindLoweringRule("aten", "__and_"), nullptr);  // not an in-place form of "__and"
}

// torchvision ViT's traced attention block: x [2, 197, 768], 12 heads. By hand: one QKV GEMM
// (394 x 2304 x 768), attention over 24 heads of 197 x 197 x 64, one output GEMM (394 x 768 x
// 768); one dispatch.
TEST(LoweringTest, NativeMultiHeadAttentionIsQkvGemmAttentionAndOutputGemm) {
  Graph g;
  g.tensors["x"] = T("x", {2, 197, 768});
  g.tensors["wqkv"] = T("wqkv", {2304, 768}, DType::kFloat32, true);
  g.tensors["bqkv"] = T("bqkv", {2304}, DType::kFloat32, true);
  g.tensors["wo"] = T("wo", {768, 768}, DType::kFloat32, true);
  g.tensors["bo"] = T("bo", {768}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {2, 197, 768});
  Op op = MakeOp("aten", "_native_multi_head_attention", {"x", "x", "x", "wqkv", "bqkv", "wo", "bo"}, {"y"});
  op.attrs["num_head"].kind = Attribute::Kind::kInt;
  op.attrs["num_head"].i = 12;
  g.ops.push_back(op);
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->dispatches.size(), 1u);
  ASSERT_EQ(w->kernels.size(), 3u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kGemm);
  EXPECT_EQ(w->kernels[0].m, 394);
  EXPECT_EQ(w->kernels[0].n, 2304);
  EXPECT_EQ(w->kernels[0].k, 768);
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kAttention);
  EXPECT_DOUBLE_EQ(w->kernels[1].flops, 4.0 * 24 * 197 * 197 * 64);
  EXPECT_EQ(w->kernels[2].cls, KernelClass::kGemm);
  EXPECT_EQ(w->kernels[2].n, 768);
  EXPECT_DOUBLE_EQ(w->kernels[0].flops + w->kernels[2].flops, 2.0 * 394 * 768 * (2304 + 768));
  EXPECT_TRUE(w->unpriced_ops.empty());
}

// ONNX's erf GELU: Div, Erf, Add, Mul, Mul priced as one kernel that reads x and writes y.
TEST(LoweringTest, OnnxErfGeluIsOneKernel) {
  Graph g;
  for (const char* n : {"x", "d", "e", "a", "m", "y"}) g.tensors[n] = T(n, {8, 128, 3072});
  for (const char* n : {"sqrt2", "one", "half"}) g.tensors[n] = T(n, {}, DType::kFloat32, true);
  g.ops.push_back(MakeOp("", "Div", {"x", "sqrt2"}, {"d"}));
  g.ops.push_back(MakeOp("", "Erf", {"d"}, {"e"}));
  g.ops.push_back(MakeOp("", "Add", {"e", "one"}, {"a"}));
  g.ops.push_back(MakeOp("", "Mul", {"x", "a"}, {"m"}));
  g.ops.push_back(MakeOp("", "Mul", {"m", "half"}, {"y"}));
  g.outputs = {"y"};
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->dispatches.size(), 1u);
  EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2.0 * 8 * 128 * 3072 * 2);
}

// The dynamo exporter writes the same GELU as x * (0.5 * (1 + erf(x / sqrt(2)))): the half
// multiplies the sum first, x last. One kernel too; a Mul of the sum by a tensor that is
// neither x nor a constant leaves the ops as they are.
TEST(LoweringTest, DynamoErfGeluIsOneKernel) {
  auto graph = [](const char* factor) {
    Graph g;
    for (const char* n : {"x", "d", "e", "a", "h", "y", "z"}) g.tensors[n] = T(n, {8, 128, 3072});
    for (const char* n : {"sqrt2", "one", "half"}) g.tensors[n] = T(n, {}, DType::kFloat32, true);
    g.ops.push_back(MakeOp("", "Div", {"x", "sqrt2"}, {"d"}));
    g.ops.push_back(MakeOp("", "Erf", {"d"}, {"e"}));
    g.ops.push_back(MakeOp("", "Add", {"e", "one"}, {"a"}));
    g.ops.push_back(MakeOp("", "Mul", {factor, "a"}, {"h"}));
    g.ops.push_back(MakeOp("", "Mul", {"x", "h"}, {"y"}));
    g.outputs = {"y"};
    return g;
  };
  Expected<WorkList> w = Lower(graph("half"), {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->dispatches.size(), 1u);
  EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2.0 * 8 * 128 * 3072 * 2);
  w = Lower(graph("z"), {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 5u);
}

// An exported F.scaled_dot_product_attention: q and k^T each scaled by sqrt(scale), MatMul,
// the mask added, Softmax, the NaN guard (IsNaN, Where), MatMul with v; q, k and v reach it
// through Transposes. One fused attention kernel (masked under CUDA graphs), one dispatch.
Graph ExportedSdpa(bool both_scaled) {
  Graph g;
  g.tensors["qh"] = T("qh", {2, 128, 12, 64});
  g.tensors["kh"] = T("kh", {2, 128, 12, 64});
  g.tensors["vh"] = T("vh", {2, 128, 12, 64});
  for (const char* n : {"q", "qs", "v"}) g.tensors[n] = T(n, {2, 12, 128, 64});
  for (const char* n : {"kt", "ks"}) g.tensors[n] = T(n, {2, 12, 64, 128});
  for (const char* n : {"s", "sm", "p", "pg"}) g.tensors[n] = T(n, {2, 12, 128, 128});
  g.tensors["nan"] = T("nan", {2, 12, 128, 128}, DType::kBool);
  g.tensors["mask"] = T("mask", {2, 1, 1, 128});
  g.tensors["o"] = T("o", {2, 12, 128, 64});
  for (const char* n : {"scale", "zero"}) g.tensors[n] = T(n, {}, DType::kFloat32, true);
  g.ops.push_back(MakeOp("", "Transpose", {"qh"}, {"q"}));
  g.ops.push_back(MakeOp("", "Transpose", {"kh"}, {"kt"}));
  g.ops.push_back(MakeOp("", "Transpose", {"vh"}, {"v"}));
  g.ops.push_back(MakeOp("", "Mul", {"q", "scale"}, {"qs"}));
  if (both_scaled) g.ops.push_back(MakeOp("", "Mul", {"kt", "scale"}, {"ks"}));
  g.ops.push_back(MakeOp("", "MatMul", {"qs", both_scaled ? "ks" : "kt"}, {"s"}));
  g.ops.push_back(MakeOp("", "Add", {"s", "mask"}, {"sm"}));
  g.ops.push_back(MakeOp("", "Softmax", {"sm"}, {"p"}));
  g.ops.push_back(MakeOp("", "IsNaN", {"p"}, {"nan"}));
  g.ops.push_back(MakeOp("", "Where", {"nan", "zero", "p"}, {"pg"}));
  g.ops.push_back(MakeOp("", "MatMul", {"pg", "v"}, {"o"}));
  g.outputs = {"o"};
  return g;
}

// With the kernels PyTorch runs around the fused call (KernelFacts), as for the aten op: a
// traced or captured module materializes the mask (a where, two fills); eager code, which
// drops an all-ones mask, clears the softmax statistics (a memset) in half precision.
TEST(LoweringTest, OnnxExportedAttentionIsOneFusedKernel) {
  const KernelFacts facts;
  Expected<WorkList> w = Lower(ExportedSdpa(true), {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), size_t(1 + facts.attention_mask_wheres + facts.attention_mask_fills));
  ASSERT_EQ(w->dispatches.size(), 1u);
  EXPECT_EQ(w->dispatches[0].num_kernels, int(w->kernels.size()));
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kElementwise);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 128 * (2 + facts.attention_mask_where_extra_bytes));
  const KernelWork& k = w->kernels[0];
  EXPECT_EQ(k.cls, KernelClass::kAttentionMasked);
  EXPECT_EQ(k.batch, 2 * 12);
  EXPECT_EQ(k.m, 128);
  EXPECT_DOUBLE_EQ(k.flops, 2.0 * 24 * 128 * 128 * (64 + 64));
  EXPECT_DOUBLE_EQ(k.bytes, 24.0 * 4 * 128 * 64 * 2);  // q, k, v read, the output written
  EXPECT_EQ(w->dispatches[0].cls, DispatchClass::kLibrary);
  // Python eager drops the all-ones padding mask before the kernel.
  w = Lower(ExportedSdpa(true), {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), size_t(1 + facts.attention_eager_memsets));
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kAttention);
  // In fp32 eager code clears no statistics.
  w = Lower(ExportedSdpa(true), {Framework::kPytorchEager, DType::kFloat32});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);
}

TEST(LoweringTest, HandWrittenAttentionStaysOpByOp) {
  // One scale, on q only: not the exporters' SDPA, so PyTorch runs it as written.
  Expected<WorkList> w = Lower(ExportedSdpa(false), {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_GE(w->kernels.size(), 5u);
  for (const KernelWork& k : w->kernels) EXPECT_NE(k.cls, KernelClass::kAttentionMasked);
}

// Attention over [1, 12, 197, 64] (ViT-B/16's: bh = 12, sq = sk = 197, d = 64) as an ONNX
// graph: k transposed, MatMul(q', k^T'), an optional scale on the scores, Softmax, MatMul with v.
struct DecomposedAttention {
  int scaled_sides = 2;        // q and k^T each multiplied by a constant (the exporters' sqrt(scale))
  bool scores_scale = false;   // the scores multiplied by a constant
  bool sdpa_name = false;      // the last MatMul's output named as the dynamo exporter names SDPA's
  bool read_twice = false;     // the Softmax output read by another op too
  bool bool_mask = false;      // a boolean mask [1, 1, 1, 197] made additive (Where) and added
  int64_t softmax_axis = -1;
};

Graph DecomposedAttentionGraph(const DecomposedAttention& o) {
  Graph g;
  g.opset[""] = 17;
  for (const char* n : {"q", "k", "v", "qs"}) g.tensors[n] = T(n, {1, 12, 197, 64});
  for (const char* n : {"kt", "ks"}) g.tensors[n] = T(n, {1, 12, 64, 197});
  for (const char* n : {"s", "ss", "p", "p2"}) g.tensors[n] = T(n, {1, 12, 197, 197});
  const std::string out = o.sdpa_name ? "scaled_dot_product_attention" : "o";
  g.tensors[out] = T(out, {1, 12, 197, 64});
  g.tensors["scale"] = T("scale", {}, DType::kFloat32, true);
  Op transpose = MakeOp("", "Transpose", {"k"}, {"kt"});
  transpose.attrs["perm"].kind = Attribute::Kind::kInts;
  transpose.attrs["perm"].ints = {0, 1, 3, 2};
  g.ops.push_back(transpose);
  if (o.scaled_sides >= 1) g.ops.push_back(MakeOp("", "Mul", {"q", "scale"}, {"qs"}));
  if (o.scaled_sides >= 2) g.ops.push_back(MakeOp("", "Mul", {"kt", "scale"}, {"ks"}));
  g.ops.push_back(MakeOp("", "MatMul", {o.scaled_sides >= 1 ? "qs" : "q", o.scaled_sides >= 2 ? "ks" : "kt"}, {"s"}));
  if (o.scores_scale) g.ops.push_back(MakeOp("", "Mul", {"s", "scale"}, {"ss"}));
  std::string scores = o.scores_scale ? "ss" : "s";
  if (o.bool_mask) {
    g.tensors["keep"] = T("keep", {1, 1, 1, 197}, DType::kBool);
    g.tensors["additive"] = T("additive", {1, 1, 1, 197});
    g.tensors["sm"] = T("sm", {1, 12, 197, 197});
    for (const char* n : {"zero", "neg_inf"}) g.tensors[n] = T(n, {}, DType::kFloat32, true);
    g.inputs = {"keep"};
    g.ops.push_back(MakeOp("", "Where", {"keep", "zero", "neg_inf"}, {"additive"}));
    g.ops.push_back(MakeOp("", "Add", {scores, "additive"}, {"sm"}));
    scores = "sm";
  }
  Op softmax = MakeOp("", "Softmax", {scores}, {"p"});
  softmax.attrs["axis"].kind = Attribute::Kind::kInt;
  softmax.attrs["axis"].i = o.softmax_axis;
  g.ops.push_back(softmax);
  g.ops.push_back(MakeOp("", "MatMul", {"p", "v"}, {out}));
  g.outputs = {out};
  if (o.read_twice) {
    g.ops.push_back(MakeOp("", "Mul", {"p", "scale"}, {"p2"}));
    g.outputs.push_back("p2");
  }
  return g;
}

int AttentionKernels(const WorkList& w) {
  int n = 0;
  for (const KernelWork& k : w.kernels)
    n += k.cls == KernelClass::kAttention || k.cls == KernelClass::kAttentionMasked;
  return n;
}

bool HasDecomposedAttentionNote(const WorkList& w, int n) {
  for (const std::string& s : w.notes)
    if (s.rfind(std::to_string(n) + " decomposed attention blocks", 0) == 0 && s.find("priced as fused attention") != std::string::npos)
      return true;
  return false;
}

// The exporters' forms of F.scaled_dot_product_attention, priced as the trace's call: the
// TorchScript-based exporter's (sqrt(scale) on q and on k^T) and the dynamo exporter's with
// the scale folded away or left on the scores (its output named after the call). By hand
// against aten::scaled_dot_product_attention over the same [1, 12, 197, 64] operands: one
// attention kernel of 4 * 12 * 197 * 197 * 64 FLOPs reading q, k, v and writing the output
// (4 * 12 * 197 * 64 * 2 bytes in fp16), the same side kernels, one library dispatch with the
// call's cost key; and a note saying so.
TEST(LoweringTest, DecomposedAttentionIsPricedAsTheTracesFusedAttention) {
  Graph sdpa;
  for (const char* n : {"q", "k", "v", "o"}) sdpa.tensors[n] = T(n, {1, 12, 197, 64});
  sdpa.ops.push_back(MakeOp("aten", "scaled_dot_product_attention", {"q", "k", "v", ""}, {"o"}));
  sdpa.outputs = {"o"};
  DecomposedAttention both_scaled, folded, on_scores;
  folded.scaled_sides = 0;
  folded.sdpa_name = true;
  on_scores.scaled_sides = 0;
  on_scores.scores_scale = true;
  on_scores.sdpa_name = true;
  for (Framework f : {Framework::kCudaGraph, Framework::kTorchscript, Framework::kPytorchEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> ref = Lower(sdpa, {f, DType::kFloat16});
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    ASSERT_EQ(ref->dispatches.size(), 1u);
    ASSERT_FALSE(ref->kernels.empty());
    EXPECT_EQ(ref->kernels[0].cls, KernelClass::kAttention);
    EXPECT_DOUBLE_EQ(ref->kernels[0].flops, 4.0 * 12 * 197 * 197 * 64);
    EXPECT_DOUBLE_EQ(ref->kernels[0].bytes, 4.0 * 12 * 197 * 64 * 2);
    for (const DecomposedAttention& form : {both_scaled, folded, on_scores}) {
      SCOPED_TRACE(std::to_string(form.scaled_sides) + " operands scaled, scores scaled " +
                   std::to_string(form.scores_scale));
      Expected<WorkList> w = Lower(DecomposedAttentionGraph(form), {f, DType::kFloat16});
      ASSERT_TRUE(w.ok()) << w.status().message();
      ASSERT_EQ(w->kernels.size(), ref->kernels.size());
      for (size_t i = 0; i < w->kernels.size(); ++i) {
        EXPECT_EQ(w->kernels[i].cls, ref->kernels[i].cls);
        EXPECT_DOUBLE_EQ(w->kernels[i].flops, ref->kernels[i].flops);
        EXPECT_DOUBLE_EQ(w->kernels[i].bytes, ref->kernels[i].bytes);
      }
      EXPECT_EQ(w->kernels[0].batch, 12);
      EXPECT_EQ(w->kernels[0].m, 197);
      ASSERT_EQ(w->dispatches.size(), 1u);
      EXPECT_EQ(w->dispatches[0].cls, ref->dispatches[0].cls);
      ASSERT_TRUE(w->dispatches[0].cost_key && ref->dispatches[0].cost_key);
      EXPECT_EQ(*w->dispatches[0].cost_key, *ref->dispatches[0].cost_key);
      EXPECT_TRUE(HasDecomposedAttentionNote(w.value(), 1));
    }
  }
}

// A boolean mask made additive for the call (Where(mask, 0, -inf), then Add) is the where a
// trace runs per call: priced once, with the call's side kernels, not also as an op of its
// own. Against aten::scaled_dot_product_attention with a mask: under CUDA graphs the masked
// kernel, a where and two fills (KernelFacts); under Python eager, which drops the all-ones
// mask, the plain kernel and its memset.
TEST(LoweringTest, DecomposedAttentionBooleanMaskIsTheCallsWhere) {
  Graph sdpa;
  for (const char* n : {"q", "k", "v", "o"}) sdpa.tensors[n] = T(n, {1, 12, 197, 64});
  sdpa.tensors["mask"] = T("mask", {1, 1, 1, 197});
  sdpa.ops.push_back(MakeOp("aten", "scaled_dot_product_attention", {"q", "k", "v", "mask"}, {"o"}));
  sdpa.outputs = {"o"};
  DecomposedAttention masked;
  masked.bool_mask = true;
  for (Framework f : {Framework::kCudaGraph, Framework::kTorchscript, Framework::kPytorchEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> ref = Lower(sdpa, {f, DType::kFloat16});
    Expected<WorkList> w = Lower(DecomposedAttentionGraph(masked), {f, DType::kFloat16});
    ASSERT_TRUE(ref.ok() && w.ok());
    ASSERT_EQ(w->kernels.size(), ref->kernels.size());
    for (size_t i = 0; i < w->kernels.size(); ++i) EXPECT_EQ(w->kernels[i].cls, ref->kernels[i].cls);
    EXPECT_EQ(w->kernels[0].cls, f == Framework::kPytorchEager ? KernelClass::kAttention : KernelClass::kAttentionMasked);
    EXPECT_DOUBLE_EQ(w->kernels[0].flops, ref->kernels[0].flops);
    EXPECT_EQ(w->dispatches.size(), 1u);
  }
}

// Near misses stay op by op: the Softmax output read twice, a softmax over another axis, and
// attention written by hand (one scale, on the scores: SqueezeBERT's and BERT's eager code,
// whose traces run matmul, div, softmax, matmul as written).
TEST(LoweringTest, DecomposedAttentionNearMissesStayOpByOp) {
  DecomposedAttention read_twice, other_axis, hand_written;
  read_twice.read_twice = true;
  read_twice.sdpa_name = true;
  other_axis.softmax_axis = 2;
  other_axis.sdpa_name = true;
  hand_written.scaled_sides = 0;
  hand_written.scores_scale = true;
  for (const DecomposedAttention& form : {read_twice, other_axis, hand_written}) {
    Expected<WorkList> w = Lower(DecomposedAttentionGraph(form), {Framework::kCudaGraph, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(AttentionKernels(w.value()), 0);
    EXPECT_GE(w->kernels.size(), 3u);  // MatMul, Softmax, MatMul at least
    EXPECT_FALSE(HasDecomposedAttentionNote(w.value(), 1));
  }
  // Softmax's last axis named positively is the last axis.
  DecomposedAttention last_axis;
  last_axis.softmax_axis = 3;
  Expected<WorkList> w = Lower(DecomposedAttentionGraph(last_axis), {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(AttentionKernels(w.value()), 1);
}

// nn.MultiheadAttention's slow path as the exporters write it, one layer of L = 4 tokens, N = 1,
// E = 8, 2 heads (d = 4): the in_proj MatMul + bias Add [4, 1, 24], Reshape [4, 1, 3, 8],
// Unsqueeze, Transpose (3, 1, 2, 0, 4), Squeeze [3, 4, 1, 8], three Gathers (0, 1, 2) for q, k
// and v, each Reshape [4, 2, 4], Transpose [2, 4, 4], Reshape [1, 2, 4, 4] into the exported
// SDPA (sqrt(scale) on q and k^T), then the heads Transposed and Reshaped back [4, 8] and the
// out_proj Gemm.
struct PackedQkv {
  bool gather_read_twice = false;  // q's Gather output also read by another op
  bool swapped = false;            // q taken at index 1 and k at index 0
};

Graph PackedQkvGraph(const PackedQkv& o) {
  Graph g;
  g.opset[""] = 17;
  g.tensors["x"] = T("x", {4, 1, 8});
  g.tensors["x"].is_graph_input = true;
  g.inputs = {"x"};
  g.tensors["w"] = T("w", {8, 24}, DType::kFloat32, true);
  g.tensors["b"] = T("b", {24}, DType::kFloat32, true);
  g.tensors["wo"] = T("wo", {8, 8}, DType::kFloat32, true);
  g.tensors["bo"] = T("bo", {8}, DType::kFloat32, true);
  g.tensors["scale"] = T("scale", {}, DType::kFloat32, true);
  for (const char* n : {"mm", "proj"}) g.tensors[n] = T(n, {4, 1, 24});
  g.tensors["r"] = T("r", {4, 1, 3, 8});
  g.tensors["u"] = T("u", {1, 4, 1, 3, 8});
  g.tensors["tr"] = T("tr", {3, 4, 1, 1, 8});
  g.tensors["packed"] = T("packed", {3, 4, 1, 8});
  auto ints = [&](const std::string& name, std::vector<int64_t> v, std::vector<int64_t> dims) {
    g.tensors[name] = T(name, dims, DType::kInt64, true);
    g.tensors[name].int_values = std::move(v);
  };
  ints("i0", {0}, {});
  ints("i1", {1}, {});
  ints("i2", {2}, {});
  ints("s_r", {4, 1, 3, 8}, {4});
  ints("s_heads", {4, 2, 4}, {3});
  ints("s_4d", {1, 2, 4, 4}, {4});
  ints("s_out", {4, 8}, {2});
  ints("axis0", {0}, {1});
  ints("axis3", {3}, {1});
  auto perm = [](Op op, std::vector<int64_t> p) {
    op.attrs["perm"].kind = Attribute::Kind::kInts;
    op.attrs["perm"].ints = std::move(p);
    return op;
  };
  g.ops.push_back(MakeOp("", "MatMul", {"x", "w"}, {"mm"}));
  g.ops.push_back(MakeOp("", "Add", {"mm", "b"}, {"proj"}));
  g.ops.push_back(MakeOp("", "Reshape", {"proj", "s_r"}, {"r"}));
  g.ops.push_back(MakeOp("", "Unsqueeze", {"r", "axis0"}, {"u"}));
  g.ops.push_back(perm(MakeOp("", "Transpose", {"u"}, {"tr"}), {3, 1, 2, 0, 4}));
  g.ops.push_back(MakeOp("", "Squeeze", {"tr", "axis3"}, {"packed"}));
  const char* index[3] = {o.swapped ? "i1" : "i0", o.swapped ? "i0" : "i1", "i2"};
  const char* name[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string n = name[i];
    g.tensors[n + "0"] = T(n + "0", {4, 1, 8});
    g.tensors[n + "r"] = T(n + "r", {4, 2, 4});
    g.tensors[n + "x"] = T(n + "x", {2, 4, 4});
    g.tensors[n + "h"] = T(n + "h", {1, 2, 4, 4});
    g.ops.push_back(MakeOp("", "Gather", {"packed", index[i]}, {n + "0"}));
    g.ops.push_back(MakeOp("", "Reshape", {n + "0", "s_heads"}, {n + "r"}));
    g.ops.push_back(perm(MakeOp("", "Transpose", {n + "r"}, {n + "x"}), {1, 0, 2}));
    g.ops.push_back(MakeOp("", "Reshape", {n + "x", "s_4d"}, {n + "h"}));
  }
  for (const char* n : {"kt", "qs", "ks", "s", "p", "o"}) g.tensors[n] = T(n, {1, 2, 4, 4});
  g.ops.push_back(perm(MakeOp("", "Transpose", {"kh"}, {"kt"}), {0, 1, 3, 2}));
  g.ops.push_back(MakeOp("", "Mul", {"qh", "scale"}, {"qs"}));
  g.ops.push_back(MakeOp("", "Mul", {"kt", "scale"}, {"ks"}));
  g.ops.push_back(MakeOp("", "MatMul", {"qs", "ks"}, {"s"}));
  Op softmax = MakeOp("", "Softmax", {"s"}, {"p"});
  softmax.attrs["axis"].kind = Attribute::Kind::kInt;
  softmax.attrs["axis"].i = -1;
  g.ops.push_back(softmax);
  g.ops.push_back(MakeOp("", "MatMul", {"p", "vh"}, {"o"}));
  g.tensors["ot"] = T("ot", {4, 1, 2, 4});
  g.tensors["o2"] = T("o2", {4, 8});
  g.tensors["y"] = T("y", {4, 8});
  g.ops.push_back(perm(MakeOp("", "Transpose", {"o"}, {"ot"}), {2, 0, 1, 3}));
  g.ops.push_back(MakeOp("", "Reshape", {"ot", "s_out"}, {"o2"}));
  Op gemm = MakeOp("", "Gemm", {"o2", "wo", "bo"}, {"y"});
  gemm.attrs["transB"].kind = Attribute::Kind::kInt;
  gemm.attrs["transB"].i = 1;
  g.ops.push_back(gemm);
  g.outputs = {"y"};
  if (o.gather_read_twice) {
    g.tensors["q2"] = T("q2", {4, 1, 8});
    g.ops.push_back(MakeOp("", "Mul", {"q0", "scale"}, {"q2"}));
    g.outputs.push_back("q2");
  }
  return g;
}

int KernelsOf(const WorkList& w, KernelClass c) {
  int n = 0;
  for (const KernelWork& k : w.kernels) n += k.cls == c;
  return n;
}

bool HasPackedQkvNote(const WorkList& w, int n) {
  for (const std::string& s : w.notes)
    if (s.rfind(std::to_string(n) + " nn.MultiheadAttention blocks exported through its slow path", 0) == 0)
      return true;
  return false;
}

// By hand, aten::_native_multi_head_attention over the same block ([1, 4, 8] batch first, 2
// heads) is one QKV GEMM (4 x 24 x 8), attention over 2 heads of 4 x 4 x 4 and the output GEMM
// (4 x 8 x 8): three kernels (with the attention's side kernels), nothing for the split, one
// dispatch. The export prices the same kernels, and the block (in_proj MatMul and its bias,
// the attention, the heads' Transpose and Reshape back, the out_proj Gemm) is that one
// dispatch, priced as the fused call. Op by op the split alone is 7 more dispatches (Reshape,
// Unsqueeze, Transpose, Squeeze, three Gathers) and 3 Gather kernels
// (PackedQkvNearMissesStayOpByOp). Under torch.compile the block is split into its calls as the
// trace's fused call is (InductorFusion's rule: in_proj GEMM, q, k and v copied by Triton
// kernels, the attention, out_proj GEMM), so both forms give the same calls and kernels.
TEST(LoweringTest, PackedQkvSplitIsPricedAsTheFastPath) {
  Graph native;
  native.tensors["x"] = T("x", {1, 4, 8});
  native.tensors["wqkv"] = T("wqkv", {24, 8}, DType::kFloat32, true);
  native.tensors["bqkv"] = T("bqkv", {24}, DType::kFloat32, true);
  native.tensors["wo"] = T("wo", {8, 8}, DType::kFloat32, true);
  native.tensors["bo"] = T("bo", {8}, DType::kFloat32, true);
  native.tensors["y"] = T("y", {1, 4, 8});
  Op mha = MakeOp("aten", "_native_multi_head_attention", {"x", "x", "x", "wqkv", "bqkv", "wo", "bo"}, {"y"});
  mha.attrs["num_head"].kind = Attribute::Kind::kInt;
  mha.attrs["num_head"].i = 2;
  native.ops.push_back(mha);
  for (Framework f : {Framework::kCudaGraph, Framework::kTorchscript, Framework::kPytorchEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> ref = Lower(native, {f, DType::kFloat16});
    Expected<WorkList> w = Lower(PackedQkvGraph({}), {f, DType::kFloat16});
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(ref->dispatches.size(), 1u);
    ASSERT_EQ(w->kernels.size(), ref->kernels.size());
    for (size_t i = 0; i < w->kernels.size(); ++i) EXPECT_EQ(w->kernels[i].cls, ref->kernels[i].cls);
    EXPECT_EQ(KernelsOf(w.value(), KernelClass::kGemm), 2);
    EXPECT_EQ(KernelsOf(w.value(), KernelClass::kGather), 0);
    EXPECT_EQ(KernelsOf(w.value(), KernelClass::kCopy), 0);
    EXPECT_DOUBLE_EQ(w->kernels[0].flops, 2.0 * 4 * 24 * 8);
    EXPECT_DOUBLE_EQ(w->kernels[1].flops, ref->kernels[1].flops);
    EXPECT_DOUBLE_EQ(w->kernels[1].bytes, ref->kernels[1].bytes);
    EXPECT_DOUBLE_EQ(w->kernels.back().flops, ref->kernels.back().flops);
    ASSERT_EQ(w->dispatches.size(), 1u);
    EXPECT_EQ(w->dispatches[0].cls, DispatchClass::kLibrary);
    ASSERT_NE(w->dispatches[0].cost_key, nullptr);
    EXPECT_EQ(*w->dispatches[0].cost_key, "multi_head_attention");
    EXPECT_EQ(*w->dispatches[0].cost_key, *ref->dispatches[0].cost_key);
    EXPECT_EQ(w->dispatches[0].first_kernel, 0);
    EXPECT_EQ(size_t(w->dispatches[0].num_kernels), w->kernels.size());
    EXPECT_TRUE(HasPackedQkvNote(w.value(), 1));
  }
  Expected<WorkList> compiled = Lower(PackedQkvGraph({}), {Framework::kTorchCompile, DType::kFloat16});
  Expected<WorkList> compiled_ref = Lower(native, {Framework::kTorchCompile, DType::kFloat16});
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  ASSERT_TRUE(compiled_ref.ok()) << compiled_ref.status().message();
  int library = 0;
  for (const DispatchWork& d : compiled->dispatches) {
    library += d.cls == DispatchClass::kLibrary;
    EXPECT_TRUE(d.cost_key == nullptr || *d.cost_key != "multi_head_attention");
  }
  EXPECT_EQ(library, 3);  // in_proj GEMM, attention, out_proj GEMM
  EXPECT_EQ(KernelsOf(compiled.value(), KernelClass::kCopy), 3);  // q, k and v made contiguous
  ASSERT_EQ(compiled->kernels.size(), compiled_ref->kernels.size());
  for (size_t i = 0; i < compiled->kernels.size(); ++i)
    EXPECT_EQ(compiled->kernels[i].cls, compiled_ref->kernels[i].cls);
  ASSERT_EQ(compiled->dispatches.size(), compiled_ref->dispatches.size());
}

// Near misses stay op by op: q's Gather output read by another op too, and the Gathers' indices
// not 0, 1, 2 for q, k, v. The attention itself is still the fused call.
// A slice assignment as the TorchScript-based exporter writes it (Swin's attention mask,
// `mask[0:5, 0:5] = 3`): a ScatterND into the 8 x 8 mask whose indices are built from a Range
// expanded to 5 x 5, unsqueezed and concatenated into [5, 5, 2], and whose updates are the
// value expanded to 5 x 5. PyTorch runs the assignment as views and one fill: by hand, the
// ScatterND's dispatch and kernel alone; op by op the Expand, two Unsqueezes, the Concat and
// the updates' Expand would add 5 dispatches and 3 kernels. An index tensor that another op
// also reads is left as it is.
Graph SliceAssignmentGraph(bool index_read_elsewhere) {
  Graph g;
  g.opset[""] = 17;
  g.tensors["m"] = T("m", {8, 8});
  g.tensors["m"].is_graph_input = true;
  g.inputs = {"m"};
  auto ints = [&](const std::string& name, std::vector<int64_t> v, std::vector<int64_t> dims) {
    g.tensors[name] = T(name, dims, DType::kInt64, true);
    g.tensors[name].int_values = std::move(v);
  };
  ints("zero", {0}, {});
  ints("five", {5}, {});
  ints("one", {1}, {});
  ints("s55", {5, 5}, {2});
  ints("ax1", {1}, {1});
  ints("ax2", {2}, {1});
  g.tensors["three"] = T("three", {}, DType::kFloat32, true);
  g.tensors["three"].float_values = std::vector<double>{3.0};
  g.tensors["r"] = T("r", {5}, DType::kInt64);
  g.tensors["ru"] = T("ru", {5, 1}, DType::kInt64);
  g.tensors["rows"] = T("rows", {5, 5}, DType::kInt64);
  g.tensors["rows3"] = T("rows3", {5, 5, 1}, DType::kInt64);
  g.tensors["cols3"] = T("cols3", {5, 5, 1}, DType::kInt64);
  g.tensors["idx"] = T("idx", {5, 5, 2}, DType::kInt64);
  g.tensors["upd"] = T("upd", {5, 5});
  g.tensors["y"] = T("y", {8, 8});
  g.ops.push_back(MakeOp("", "Range", {"zero", "five", "one"}, {"r"}));
  g.ops.push_back(MakeOp("", "Unsqueeze", {"r", "ax1"}, {"ru"}));
  g.ops.push_back(MakeOp("", "Expand", {"ru", "s55"}, {"rows"}));
  g.ops.push_back(MakeOp("", "Unsqueeze", {"rows", "ax2"}, {"rows3"}));
  g.ops.push_back(MakeOp("", "Unsqueeze", {"rows", "ax2"}, {"cols3"}));
  Op cat = MakeOp("", "Concat", {"rows3", "cols3"}, {"idx"});
  cat.attrs["axis"].kind = Attribute::Kind::kInt;
  cat.attrs["axis"].i = 2;
  g.ops.push_back(cat);
  g.ops.push_back(MakeOp("", "Expand", {"three", "s55"}, {"upd"}));
  g.ops.push_back(MakeOp("", "ScatterND", {"m", "idx", "upd"}, {"y"}));
  g.outputs = {"y"};
  if (index_read_elsewhere) {
    g.tensors["rf"] = T("rf", {5, 5});
    g.ops.push_back(MakeOp("", "Cast", {"rows"}, {"rf"}));
    g.outputs.push_back("rf");
  }
  return g;
}

TEST(LoweringTest, ASliceAssignmentsIndicesCostNothing) {
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(SliceAssignmentGraph(false), {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->dispatches.size(), 1u);
    EXPECT_EQ(w->dispatches[0].op_index, 7);  // the ScatterND
    EXPECT_EQ(w->kernels.size(), 1u);
    bool noted = false;
    for (const std::string& n : w->notes) noted = noted || n.rfind("1 slice assignments exported as ScatterND", 0) == 0;
    EXPECT_TRUE(noted);
  }
  // The row indices read by another op too: they, and what builds them, stay priced.
  Expected<WorkList> kept = Lower(SliceAssignmentGraph(true), {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_GT(kept->dispatches.size(), 3u);
}

TEST(LoweringTest, PackedQkvNearMissesStayOpByOp) {
  PackedQkv read_twice, swapped;
  read_twice.gather_read_twice = true;
  swapped.swapped = true;
  for (const PackedQkv& form : {read_twice, swapped}) {
    SCOPED_TRACE(form.swapped ? "swapped" : "read twice");
    Expected<WorkList> w = Lower(PackedQkvGraph(form), {Framework::kCudaGraph, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(KernelsOf(w.value(), KernelClass::kGather), 3);
    EXPECT_EQ(KernelsOf(w.value(), KernelClass::kAttention), 1);
    EXPECT_FALSE(HasPackedQkvNote(w.value(), 1));
    // The 5 of the fast-path pricing, the split's 7, and the extra reader's own.
    EXPECT_EQ(w->dispatches.size(), form.gather_read_twice ? 13u : 12u);
  }
}

// The TorchScript-based exporter deduplicates equal parameters: BERT's all-zero key bias is
// read as Identity(query bias). Its Add still folds into the MatMul's GEMM, as any bias does.
TEST(LoweringTest, OnnxBiasReadThroughIdentityFoldsIntoItsGemm) {
  Graph g;
  g.tensors["x"] = T("x", {2, 128, 768});
  g.tensors["w"] = T("w", {768, 768}, DType::kFloat32, true);
  g.tensors["query.bias"] = T("query.bias", {768}, DType::kFloat32, true);
  g.tensors["key.bias"] = T("key.bias", {768});
  g.tensors["m"] = T("m", {2, 128, 768});
  g.tensors["y"] = T("y", {2, 128, 768});
  g.ops.push_back(MakeOp("", "Identity", {"query.bias"}, {"key.bias"}));
  g.ops.push_back(MakeOp("", "MatMul", {"x", "w"}, {"m"}));
  g.ops.push_back(MakeOp("", "Add", {"key.bias", "m"}, {"y"}));
  g.outputs = {"y"};
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kGemm);
}

// Convolutions and poolings whose kernels differ from a dense convolution's or a reduction's
// carry a variant of their own (the bench times each at real layers' shapes): aten ops read
// stride and groups from their arguments, as the TorchScript loader stores them.
TEST(LoweringTest, ConvolutionAndPoolingVariants) {
  auto conv = [](std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> y,
                 std::vector<int64_t> stride, int64_t groups) {
    Graph g;
    g.tensors["x"] = T("x", x, DType::kFloat16);
    g.tensors["w"] = T("w", w, DType::kFloat16, true);
    g.tensors["y"] = T("y", y, DType::kFloat16);
    Op op = MakeOp("aten", "conv2d", {"x", "w"}, {"y"});
    op.attrs["stride"].kind = Attribute::Kind::kInts;
    op.attrs["stride"].ints = stride;
    op.attrs["groups"].kind = Attribute::Kind::kInt;
    op.attrs["groups"].i = groups;
    g.ops.push_back(op);
    Expected<WorkList> wl = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
    EXPECT_TRUE(wl.ok()) << wl.status().message();
    return wl.ok() && !wl->kernels.empty() ? wl->kernels.front() : KernelWork{};
  };
  // ViT-B/16's patch embedding.
  KernelWork k = conv({1, 3, 224, 224}, {768, 3, 16, 16}, {1, 768, 14, 14}, {16, 16}, 1);
  EXPECT_EQ(k.cls, KernelClass::kConv);
  EXPECT_EQ(k.variant, KernelVariant::kPatchify);
  EXPECT_EQ(k.m, 196);
  EXPECT_EQ(k.k, 768);
  // ConvNeXt's 2x2 stride-2 downsampling over 192 channels has the same GEMM shape as a patch
  // embedding but runs cuDNN's ordinary kernels: plain.
  EXPECT_EQ(conv({1, 192, 28, 28}, {384, 192, 2, 2}, {1, 384, 14, 14}, {2, 2}, 1).variant, KernelVariant::kPlain);
  // A 3x3 stride-1 convolution stays plain; a stride-2 3x3 too (overlapping windows).
  EXPECT_EQ(conv({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56}, {1, 1}, 1).variant, KernelVariant::kPlain);
  EXPECT_EQ(conv({1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 28, 28}, {2, 2}, 1).variant, KernelVariant::kPlain);
  // RegNet's grouped 3x3 (group width 8) and a grouped 1x1 (SqueezeBERT-like).
  k = conv({1, 64, 56, 56}, {64, 8, 3, 3}, {1, 64, 56, 56}, {1, 1}, 8);
  EXPECT_EQ(k.variant, KernelVariant::kGrouped);
  EXPECT_EQ(k.batch, 8);
  EXPECT_EQ(k.n, 8);
  EXPECT_EQ(k.k, 72);
  EXPECT_EQ(conv({1, 64, 56, 56}, {64, 16, 1, 1}, {1, 64, 56, 56}, {1, 1}, 4).variant, KernelVariant::kGrouped);
  // RegNetX-1.6GF's 72 channels in 3 groups (24 a group, not a power of two) and 48 in 2.
  k = conv({1, 72, 56, 56}, {72, 24, 3, 3}, {1, 72, 56, 56}, {1, 1}, 3);
  EXPECT_EQ(k.variant, KernelVariant::kGroupedNonPow2);
  EXPECT_EQ(k.n, 24);
  EXPECT_EQ(k.batch, 3);
  EXPECT_EQ(conv({1, 96, 28, 28}, {96, 48, 3, 3}, {1, 96, 28, 28}, {1, 1}, 2).variant, KernelVariant::kGroupedNonPow2);
  EXPECT_EQ(conv({1, 128, 28, 28}, {128, 32, 3, 3}, {1, 128, 28, 28}, {1, 1}, 4).variant, KernelVariant::kGrouped);
  // Depthwise 3x3 is the plain depthwise class; 7x7 (ConvNeXt) its large-kernel variant.
  k = conv({1, 96, 56, 56}, {96, 1, 3, 3}, {1, 96, 56, 56}, {1, 1}, 96);
  EXPECT_EQ(k.cls, KernelClass::kDepthwise);
  EXPECT_EQ(k.variant, KernelVariant::kPlain);
  EXPECT_EQ(k.m, 0);  // priced by bytes
  k = conv({2, 96, 56, 56}, {96, 1, 7, 7}, {2, 96, 56, 56}, {1, 1}, 96);
  EXPECT_EQ(k.cls, KernelClass::kDepthwise);
  EXPECT_EQ(k.variant, KernelVariant::kLargeKernel);
  EXPECT_EQ(k.m, 2 * 56 * 56);  // and by its geometry
  EXPECT_EQ(k.n, 96);
  EXPECT_EQ(k.k, 49);
  EXPECT_EQ(k.batch, 1);
  // Windowed pooling is the pool variant of the reduction class; global pooling is plain.
  // (Channels-last convolutions: ChannelsLastConvolutions below.)
  for (const char* type : {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"}) {
    Graph g;
    g.tensors["x"] = T("x", {1, 64, 112, 112}, DType::kFloat16);
    g.tensors["y"] = T("y", {1, 64, 56, 56}, DType::kFloat16);
    g.ops.push_back(MakeOp("aten", type, {"x"}, {"y"}));
    Expected<WorkList> wl = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
    ASSERT_TRUE(wl.ok()) << wl.status().message();
    ASSERT_FALSE(wl->kernels.empty()) << type;
    EXPECT_EQ(wl->kernels[0].cls, KernelClass::kReduction) << type;
    EXPECT_EQ(wl->kernels[0].variant,
              std::string(type) == "adaptive_avg_pool2d" ? KernelVariant::kPlain : KernelVariant::kPool)
        << type;
    EXPECT_DOUBLE_EQ(wl->kernels[0].bytes, (64.0 * 112 * 112 + 64.0 * 56 * 56) * 2) << type;
  }
}

// ConvNeXt's block: depthwise 7x7, permute to NHWC, LayerNorm (and MLP), permute back, layer scale,
// residual add, and the next block's depthwise 7x7. The permute back leaves NCHW sizes over
// NHWC memory; the scale and the add keep it, so the next convolution runs cuDNN's NHWC kernel
// (variant nhwc), while the first one, reading a contiguous tensor, stays large_kernel. Moving
// the channels of the NHWC tensor last again is contiguous: a view of it copies nothing.
TEST(LoweringTest, ChannelsLastConvolutions) {
  Graph g;
  const std::vector<int64_t> nchw = {8, 96, 56, 56}, nhwc = {8, 56, 56, 96};
  for (const char* n : {"x", "y", "z", "u", "v"}) g.tensors[n] = T(n, nchw, DType::kFloat16);
  for (const char* n : {"p", "q", "r"}) g.tensors[n] = T(n, nhwc, DType::kFloat16);
  g.tensors["w"] = T("w", {96, 1, 7, 7}, DType::kFloat16, true);
  g.tensors["s"] = T("s", {96, 1, 1}, DType::kFloat16, true);
  g.tensors["flat"] = T("flat", {8 * 56 * 56, 96}, DType::kFloat16);
  auto ints = [](std::vector<int64_t> v) {
    Attribute a;
    a.kind = Attribute::Kind::kInts;
    a.ints = std::move(v);
    return a;
  };
  auto dwconv = [&](const char* in, const char* out) {
    Op op = MakeOp("aten", "conv2d", {in, "w"}, {out});
    op.attrs["stride"] = ints({1, 1});
    op.attrs["groups"].kind = Attribute::Kind::kInt;
    op.attrs["groups"].i = 96;
    return op;
  };
  g.ops.push_back(dwconv("x", "y"));
  Op to_nhwc = MakeOp("aten", "permute", {"y"}, {"p"});
  to_nhwc.attrs["dims"] = ints({0, 2, 3, 1});
  g.ops.push_back(to_nhwc);
  g.ops.push_back(MakeOp("aten", "layer_norm", {"p"}, {"q"}));  // writes a contiguous NHWC tensor
  Op back = MakeOp("aten", "permute", {"q"}, {"z"});
  back.attrs["dims"] = ints({0, 3, 1, 2});
  g.ops.push_back(back);
  g.ops.push_back(MakeOp("aten", "mul", {"s", "z"}, {"u"}));
  g.ops.push_back(MakeOp("aten", "add", {"u", "x"}, {"v"}));
  g.ops.push_back(dwconv("v", "y2"));
  g.tensors["y2"] = T("y2", nchw, DType::kFloat16);
  Op again = MakeOp("aten", "permute", {"y2"}, {"r"});
  again.attrs["dims"] = ints({0, 2, 3, 1});
  g.ops.push_back(again);
  g.ops.push_back(MakeOp("aten", "reshape", {"r"}, {"flat"}));
  Expected<WorkList> wl = Lower(g, {Framework::kCudaGraphEager, DType::kFloat16});
  ASSERT_TRUE(wl.ok()) << wl.status().message();
  std::vector<KernelWork> convs;
  int copies = 0;
  for (const KernelWork& k : wl->kernels) {
    if (k.cls == KernelClass::kDepthwise) convs.push_back(k);
    copies += k.cls == KernelClass::kCopy;
  }
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(convs[0].variant, KernelVariant::kLargeKernel);
  EXPECT_EQ(convs[1].variant, KernelVariant::kNhwc);
  EXPECT_EQ(convs[1].m, 8 * 56 * 56);  // shaped as large_kernel
  EXPECT_EQ(convs[1].n, 96);
  EXPECT_EQ(convs[1].k, 49);
  // The layer norm of the first permute (of an NCHW output) copies it; the NHWC conv output
  // moved channels-last is contiguous, and its reshape copies nothing.
  EXPECT_EQ(copies, 1);
}

// torch.compile's Inductor runs a graph's convolutions channels-last when its layout rule
// says so (InductorRunsConvsChannelsLast): a 3x3 dense convolution then runs cuDNN's NHWC
// kernel (variant nhwc, no layout transposes), a 1x1 one stays a GEMM (pointwise). By hand:
// ResNet-like, a 3x3 64->128 and a 1x1 128->128, neither grouped nor small nor narrowing, so
// weighted FLOPs are 0.823 of the plain ones: on. One grouped 3x3 (4 channels a group) weighs
// 1.358: off. One convolution among 300 other ops (and the graph's two weights): off. Eager
// code never.
// torch.compile takes every tensor of model state its generated kernels read as an input of the
// compiled graph: here a convolution's bias (added by the kernel after the convolution), a batch
// norm's weight, bias and running statistics, and a parameter added to the linear layer's output.
// Not counted: the weights of library calls (the bench's op chains hold them), a one-element
// initializer (an exporter's scalar constant), a traced constant and a tensor read twice again.
TEST(LoweringTest, TorchCompileCountsTheModelStateItsKernelsRead) {
  Graph g;
  g.tensors["x"] = T("x", {1, 3, 8, 8}, DType::kFloat16);
  g.tensors["cw"] = T("cw", {16, 3, 3, 3}, DType::kFloat16, true);
  g.tensors["cb"] = T("cb", {16}, DType::kFloat16, true);
  for (const char* n : {"c", "y", "y2", "s2"}) g.tensors[n] = T(n, {1, 16, 8, 8}, DType::kFloat16);
  for (const char* n : {"w", "b", "m", "v"}) g.tensors[n] = T(n, {16}, DType::kFloat16, true);
  g.tensors["f"] = T("f", {1, 1024}, DType::kFloat16);
  g.tensors["lw"] = T("lw", {10, 1024}, DType::kFloat16, true);
  g.tensors["lb"] = T("lb", {10}, DType::kFloat16, true);
  g.tensors["pb"] = T("pb", {1, 10}, DType::kFloat16, true);
  g.tensors["one"] = T("one", {1}, DType::kFloat16, true);
  g.tensors["const.3"] = T("const.3", {1, 10}, DType::kFloat16, true);
  for (const char* n : {"z", "o", "o2", "o3"}) g.tensors[n] = T(n, {1, 10}, DType::kFloat16);
  g.ops.push_back(MakeOp("aten", "conv2d", {"x", "cw", "cb"}, {"c"}));
  g.ops.push_back(MakeOp("aten", "batch_norm", {"c", "w", "b", "m", "v"}, {"y"}));
  g.ops.push_back(MakeOp("aten", "batch_norm", {"y", "w", "b", "m", "v"}, {"y2"}));  // the same four
  g.ops.push_back(MakeOp("aten", "relu", {"y2"}, {"s2"}));
  g.ops.push_back(MakeOp("aten", "flatten", {"s2"}, {"f"}));
  g.ops.push_back(MakeOp("aten", "linear", {"f", "lw", "lb"}, {"z"}));
  g.ops.push_back(MakeOp("aten", "add", {"z", "pb"}, {"o"}));
  g.ops.push_back(MakeOp("aten", "mul", {"o", "one"}, {"o2"}));
  g.ops.push_back(MakeOp("aten", "add", {"o2", "const.3"}, {"o3"}));
  g.outputs = {"o3"};
  for (Framework f : {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead}) {
    Expected<WorkList> wl = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(wl.ok()) << wl.status().message();
    EXPECT_EQ(wl->graph_inputs, 6) << FrameworkName(f);  // cb, w, b, m, v, pb
  }
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph}) {
    Expected<WorkList> wl = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(wl.ok()) << wl.status().message();
    EXPECT_EQ(wl->graph_inputs, 0) << FrameworkName(f);
  }
  // An ONNX export folds a batch norm into its convolution: one bias is left of its four
  // tensors, and the prediction says so.
  Graph onnx;
  onnx.tensors["x"] = T("x", {1, 3, 8, 8}, DType::kFloat16);
  onnx.tensors["cw"] = T("cw", {16, 3, 3, 3}, DType::kFloat16, true);
  onnx.tensors["cb"] = T("cb", {16}, DType::kFloat16, true);
  for (const char* n : {"c", "r"}) onnx.tensors[n] = T(n, {1, 16, 8, 8}, DType::kFloat16);
  onnx.ops.push_back(MakeOp("", "Conv", {"x", "cw", "cb"}, {"c"}));
  onnx.ops.push_back(MakeOp("", "Relu", {"c"}, {"r"}));
  onnx.outputs = {"r"};
  Expected<WorkList> wl = Lower(onnx, {Framework::kTorchCompile, DType::kFloat16});
  ASSERT_TRUE(wl.ok()) << wl.status().message();
  EXPECT_EQ(wl->graph_inputs, 1);
  bool noted = false;
  for (const std::string& n : wl->notes) noted = noted || n.find("folded batch norms") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(LoweringTest, TorchCompileRunsConvolutionsChannelsLastByInductorsRule) {
  auto conv = [](const char* in, const char* w, const char* out, int64_t groups) {
    Op op = MakeOp("aten", "conv2d", {in, w}, {out});
    op.attrs["groups"].kind = Attribute::Kind::kInt;
    op.attrs["groups"].i = groups;
    return op;
  };
  auto variants = [](const Graph& g, Framework f) {
    Expected<WorkList> wl = Lower(g, {f, DType::kFloat16});
    EXPECT_TRUE(wl.ok()) << wl.status().message();
    std::vector<KernelVariant> v;
    if (!wl.ok()) return v;
    for (const KernelWork& k : wl->kernels)
      if (k.cls == KernelClass::kConv) v.push_back(k.variant);
    return v;
  };
  // x -> a dense convolution (weight w1) -> y -> one of `groups` groups (weight w2) -> z.
  using Dims = std::vector<int64_t>;
  auto two_convs = [&](const Dims& x, const Dims& w1, const Dims& y, const Dims& w2, const Dims& z,
                       int64_t groups) {
    Graph g;
    g.tensors["x"] = T("x", x, DType::kFloat16);
    g.tensors["w1"] = T("w1", w1, DType::kFloat16, true);
    g.tensors["y"] = T("y", y, DType::kFloat16);
    g.tensors["w2"] = T("w2", w2, DType::kFloat16, true);
    g.tensors["z"] = T("z", z, DType::kFloat16);
    g.ops = {conv("x", "w1", "y", 1), conv("y", "w2", "z", groups)};
    return g;
  };
  Graph resnet = two_convs({8, 64, 56, 56}, {128, 64, 3, 3}, {8, 128, 54, 54}, {128, 128, 1, 1}, {8, 128, 54, 54}, 1);
  EXPECT_EQ(variants(resnet, Framework::kTorchCompile),
            (std::vector<KernelVariant>{KernelVariant::kNhwc, KernelVariant::kPointwiseNhwc}));
  EXPECT_EQ(variants(resnet, Framework::kTorchCompileReduceOverhead),
            (std::vector<KernelVariant>{KernelVariant::kNhwc, KernelVariant::kPointwiseNhwc}));
  EXPECT_EQ(variants(resnet, Framework::kPytorchEager),
            (std::vector<KernelVariant>{KernelVariant::kPlain, KernelVariant::kPointwise}));

  Graph grouped;
  grouped.tensors["x"] = T("x", {8, 128, 56, 56}, DType::kFloat16);
  grouped.tensors["w"] = T("w", {128, 4, 3, 3}, DType::kFloat16, true);
  grouped.tensors["y"] = T("y", {8, 128, 54, 54}, DType::kFloat16);
  grouped.ops = {conv("x", "w", "y", 32)};
  EXPECT_EQ(variants(grouped, Framework::kTorchCompile), (std::vector<KernelVariant>{KernelVariant::kGrouped}));

  // RegNetX's block: a dense 3x3 convolution, then a grouped one of 24 channels a group; the
  // dense one's FLOPs keep the layout on (by hand: weighted 417 MFLOPs against 434 plain), and
  // the grouped one is its own channels-last variant, its weight copied like any other's. Of
  // 32 channels a group (weighted 625 against 629) it is a plain channels-last convolution.
  for (int64_t width : {24, 32}) {
    SCOPED_TRACE(width);
    const int64_t c = width * 4;
    const Graph regnet = two_convs({1, 64, 56, 56}, {c, 64, 3, 3}, {1, c, 54, 54}, {c, width, 3, 3}, {1, c, 52, 52}, 4);
    const KernelVariant want = width == 24 ? KernelVariant::kNhwcGroupedNonPow2 : KernelVariant::kNhwc;
    EXPECT_EQ(variants(regnet, Framework::kTorchCompile), (std::vector<KernelVariant>{KernelVariant::kNhwc, want}));
    Expected<WorkList> wl = Lower(regnet, {Framework::kTorchCompile, DType::kFloat16});
    ASSERT_TRUE(wl.ok()) << wl.status().message();
    int weight_copies = 0;
    for (const KernelWork& k : wl->kernels)
      if (k.op_index == 1 && k.cls == KernelClass::kCopy) ++weight_copies;
    EXPECT_EQ(weight_copies, 1);
    EXPECT_EQ(variants(regnet, Framework::kPytorchEager),
              (std::vector<KernelVariant>{KernelVariant::kPlain, GroupedVariant(width)}));
  }

  // A MobileNet block: the depthwise 3x3 convolution after a dense one runs channels-last
  // under torch.compile too, shaped by its geometry (outputs per channel 52x52, 96 channels,
  // kernel area 9); Python eager's is priced by its bytes alone.
  const Graph mobile = two_convs({1, 64, 56, 56}, {96, 64, 3, 3}, {1, 96, 54, 54}, {96, 1, 3, 3}, {1, 96, 52, 52}, 96);
  auto depthwise = [&](Framework f) {
    Expected<WorkList> wl = Lower(mobile, {f, DType::kFloat16});
    EXPECT_TRUE(wl.ok()) << wl.status().message();
    KernelWork d;
    if (wl.ok())
      for (const KernelWork& k : wl->kernels)
        if (k.cls == KernelClass::kDepthwise) d = k;
    return d;
  };
  KernelWork d = depthwise(Framework::kTorchCompileReduceOverhead);
  EXPECT_EQ(d.cls, KernelClass::kDepthwise);
  EXPECT_EQ(d.variant, KernelVariant::kNhwc);
  EXPECT_EQ(std::vector<int64_t>({d.m, d.n, d.k, d.batch}), std::vector<int64_t>({52 * 52, 96, 9, 1}));
  d = depthwise(Framework::kPytorchEager);
  EXPECT_EQ(d.variant, KernelVariant::kPlain);
  EXPECT_EQ(std::vector<int64_t>({d.m, d.n, d.k}), std::vector<int64_t>({0, 0, 0}));

  Graph few = resnet;
  few.ops = {conv("x", "w1", "y", 1)};
  for (int i = 0; i < 300; ++i) few.ops.push_back(MakeOp("aten", "relu", {"y"}, {"y"}));
  EXPECT_EQ(variants(few, Framework::kTorchCompile), (std::vector<KernelVariant>{KernelVariant::kPlain}));
  few.ops.resize(297);  // 1 convolution and 296 relus, with the 2 parameters 299 nodes: under 300
  EXPECT_EQ(variants(few, Framework::kTorchCompile), (std::vector<KernelVariant>{KernelVariant::kNhwc}));
}

// Channels-last under torch.compile: every call copies each convolution weight over 1x1 into
// an NHWC buffer (Inductor lifts parameters into the graph as NCHW inputs), and the model input
// a convolution reads: by hand, the 3x3 convolution reading graph input x gets a copy of x
// (8*64*56*56 halves, read and written) and of its weight (128*64*9 halves), inside its own
// dispatch; the 1x1 convolution none. Eager has neither.
TEST(LoweringTest, TorchCompileCopiesAChannelsLastConvolutionsWeightAndInputEveryCall) {
  auto conv = [](const char* in, const char* w, const char* out) { return MakeOp("aten", "conv2d", {in, w}, {out}); };
  Graph g;
  g.tensors["x"] = T("x", {8, 64, 56, 56}, DType::kFloat16);
  g.tensors["w3"] = T("w3", {128, 64, 3, 3}, DType::kFloat16, true);
  g.tensors["y"] = T("y", {8, 128, 54, 54}, DType::kFloat16);
  g.tensors["w1"] = T("w1", {128, 128, 1, 1}, DType::kFloat16, true);
  g.tensors["z"] = T("z", {8, 128, 54, 54}, DType::kFloat16);
  g.inputs = {"x"};
  g.ops = {conv("x", "w3", "y"), conv("y", "w1", "z")};
  for (Framework f : {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead, Framework::kPytorchEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> wl = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(wl.ok()) << wl.status().message();
    std::vector<double> copies;
    for (const KernelWork& k : wl->kernels)
      if (k.cls == KernelClass::kCopy) {
        EXPECT_EQ(k.variant, KernelVariant::kContiguous);
        copies.push_back(k.bytes);
      }
    if (f == Framework::kPytorchEager) {
      EXPECT_TRUE(copies.empty());
      continue;
    }
    EXPECT_EQ(copies, (std::vector<double>{2.0 * 8 * 64 * 56 * 56 * 2, 2.0 * 128 * 64 * 9 * 2}));
    ASSERT_EQ(wl->dispatches.size(), 2u);
    EXPECT_EQ(wl->dispatches[0].num_kernels, 3);
    EXPECT_EQ(wl->dispatches[1].num_kernels, 1);
  }
}

// A trace turns Python's int arithmetic on sizes into aten ops on 0-d CPU tensors (Swin's
// window padding): no GPU kernel, no op at all for code that runs in Python, a CPU dispatch
// for the TorchScript interpreter. What they compute can still scale a GPU tensor, which is a
// kernel. torch.roll over two dims is two kernels, each a strided element-wise pass.
TEST(LoweringTest, HostScalarArithmeticLaunchesNoKernel) {
  Graph g;
  TensorInfo h = T("h", {});
  h.dtype = DType::kInt64;
  h.int_values = std::vector<int64_t>{56};
  TensorInfo seven = h;
  seven.name = "seven";
  seven.int_values = std::vector<int64_t>{7};
  seven.is_initializer = true;  // a constant of the code
  g.tensors["h"] = h;
  g.tensors["seven"] = seven;
  g.tensors["q"] = T("q", {});  // no value carried: still a CPU scalar, from CPU scalars
  g.tensors["q"].dtype = DType::kInt64;
  g.tensors["p"] = T("p", {});
  g.tensors["x"] = T("x", {1, 56, 56, 96}, DType::kFloat16);
  g.tensors["y"] = T("y", {1, 56, 56, 96}, DType::kFloat16);
  g.tensors["z"] = T("z", {1, 56, 56, 96}, DType::kFloat16);
  g.ops.push_back(MakeOp("aten", "floor_divide", {"h", "seven"}, {"q"}));
  g.ops.push_back(MakeOp("aten", "pow", {"q"}, {"p"}));
  g.ops.push_back(MakeOp("aten", "mul", {"x", "p"}, {"y"}));
  Op roll = MakeOp("aten", "roll", {"y"}, {"z"});
  roll.attrs["dims"].kind = Attribute::Kind::kInts;
  roll.attrs["dims"].ints = {1, 2};
  g.ops.push_back(roll);
  for (Framework f : {Framework::kCudaGraphEager, Framework::kPytorchEager, Framework::kTorchscript}) {
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    SCOPED_TRACE(FrameworkName(f));
    ASSERT_EQ(w->kernels.size(), 3u);  // the mul and two roll passes
    EXPECT_EQ(w->kernels[0].op_index, 2);
    EXPECT_EQ(w->kernels[1].op_index, 3);
    EXPECT_EQ(w->kernels[2].op_index, 3);
    EXPECT_DOUBLE_EQ(w->kernels[2].bytes, 2.0 * 56 * 56 * 96 * 2);
    // A roll pass finds each source by index arithmetic: the strided element-wise kernel.
    EXPECT_EQ(w->kernels[1].cls, KernelClass::kElementwise);
    EXPECT_EQ(w->kernels[1].variant, KernelVariant::kStrided);
    // Python's ints are no op; the interpreter dispatches the two scalar ops on the CPU.
    EXPECT_EQ(w->dispatches.size(), f == Framework::kTorchscript ? 4u : 2u);
  }
}

// WavLM's relative positions, as its trace runs them: torch.arange(49) on the CPU (no device
// given), bucket arithmetic on it (CPU ops: a dispatch each, no kernel), .to(cuda:0) (a copy
// from pageable memory: the CPU waits for the GPU there), an embedding on the GPU. An arange
// given the GPU as its device is a GPU kernel, and so is what reads it.
TEST(LoweringTest, CpuTensorsOfATraceRunOnTheCpuAndTheirUploadWaitsForTheGpu) {
  Graph g;
  g.tensors["pos"] = T("pos", {49});
  g.tensors["pos"].dtype = DType::kInt64;
  g.tensors["rel"] = g.tensors["pos"];
  g.tensors["rel"].name = "rel";
  g.tensors["rel"].shape = T("r", {49, 49}).shape;
  g.tensors["bucket"] = g.tensors["rel"];
  g.tensors["bucket"].name = "bucket";
  g.tensors["idx"] = g.tensors["rel"];
  g.tensors["idx"].name = "idx";
  g.tensors["w"] = T("w", {320, 12}, DType::kFloat16, true);
  g.tensors["bias"] = T("bias", {49, 49, 12}, DType::kFloat16);
  g.ops.push_back(MakeOp("aten", "arange", {}, {"pos"}));
  g.ops.push_back(MakeOp("aten", "sub", {"pos", "pos"}, {"rel"}));
  g.ops.push_back(MakeOp("aten", "abs", {"rel"}, {"bucket"}));
  Op to = MakeOp("aten", "to", {"bucket"}, {"idx"});
  to.attrs["device"].kind = Attribute::Kind::kString;
  to.attrs["device"].s = "cuda:0";
  g.ops.push_back(to);
  g.ops.push_back(MakeOp("aten", "embedding", {"w", "idx"}, {"bias"}));
  g.outputs = {"bias"};
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->kernels.size(), 1u);  // the embedding's gather
    EXPECT_EQ(w->kernels[0].op_index, 4);
    ASSERT_EQ(w->dispatches.size(), 5u);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(w->dispatches[size_t(i)].waits_for_gpu, i == 3) << i;
    EXPECT_EQ(w->dispatches[0].cls, DispatchClass::kView);  // a CPU op costs no launch
    bool noted = false;
    for (const std::string& n : w->notes) noted |= n.find("1 copy of a CPU tensor to the GPU in the forward pass") != std::string::npos;
    EXPECT_TRUE(noted);
  }
  // On the GPU from the start: every op launches its kernels there, and nothing waits.
  g.ops[0].attrs["device"].kind = Attribute::Kind::kString;
  g.ops[0].attrs["device"].s = "cuda:0";
  Expected<WorkList> w = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_GE(w->kernels.size(), 3u);  // arange, sub and abs (fused or not), embedding
  for (const DispatchWork& d : w->dispatches) EXPECT_FALSE(d.waits_for_gpu);
  // A trace made on the CPU names no CUDA device anywhere: where its tensors will live is not
  // known, so its factories are priced on the GPU as before.
  g.ops[0].attrs.erase("device");
  g.ops[3].attrs["device"].s = "cpu";
  w = Lower(g, {Framework::kTorchscript, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_GE(w->kernels.size(), 3u);
  for (const DispatchWork& d : w->dispatches) EXPECT_FALSE(d.waits_for_gpu);
}

// F.scaled_dot_product_attention over [2, 12, 128, 64] (bh = 24, sq = sk = 128), with or
// without an additive mask [2, 1, 128, 128].
Graph SdpaGraph(bool masked) {
  Graph g;
  for (const char* n : {"q", "k", "v", "o"}) g.tensors[n] = T(n, {2, 12, 128, 64});
  g.tensors["mask"] = T("mask", {2, 1, 128, 128});
  g.ops.push_back(MakeOp("aten", "scaled_dot_product_attention", {"q", "k", "v", masked ? "mask" : ""}, {"o"}));
  g.outputs = {"o"};
  return g;
}

// The side kernels around fused attention are the options' kernel facts. By hand, bh = 24,
// sq = sk = 128, fp16: eager's memset clears 24 * 128 * 4 bytes; a trace with a mask runs a
// where over 24 * 128 * 128 * (2 + 1) bytes and two fills of 24 * 128 * 4 bytes.
TEST(LoweringTest, AttentionSideKernelsFollowTheKernelFacts) {
  LoweringOptions eager{Framework::kPytorchEager, DType::kFloat16};
  Expected<WorkList> w = Lower(SdpaGraph(false), eager);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kAttention);
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kElementwise);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 4);
  // No memset on this host: the attention kernel alone.
  eager.facts.attention_eager_memsets = 0;
  w = Lower(SdpaGraph(false), eager);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kAttention);
  EXPECT_EQ(w->dispatches.size(), 1u);
  // Two memsets of 8 bytes a row.
  eager.facts.attention_eager_memsets = 2;
  eager.facts.attention_memset_bytes_per_row = 8;
  w = Lower(SdpaGraph(false), eager);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 3u);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 8);
  EXPECT_DOUBLE_EQ(w->kernels[2].bytes, 24.0 * 128 * 8);

  LoweringOptions traced{Framework::kTorchscript, DType::kFloat16};
  w = Lower(SdpaGraph(true), traced);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 4u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kAttentionMasked);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 128 * 3);
  EXPECT_DOUBLE_EQ(w->kernels[2].bytes, 24.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(w->kernels[3].bytes, 24.0 * 128 * 4);
  // No where, one fill of 16 bytes a row; the where's mask read of 2 bytes an element.
  traced.facts.attention_mask_wheres = 0;
  traced.facts.attention_mask_fills = 1;
  traced.facts.attention_mask_fill_bytes_per_row = 16;
  w = Lower(SdpaGraph(true), traced);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 16);
  traced.facts = KernelFacts();
  traced.facts.attention_mask_where_extra_bytes = 2;
  traced.facts.attention_mask_fills = 0;
  w = Lower(SdpaGraph(true), traced);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 128 * (2 + 2));
  // A graph captured from the eager module runs eager's memset and a trace's where and fills;
  // in fp32 no memset.
  LoweringOptions captured{Framework::kCudaGraphEager, DType::kFloat16};
  w = Lower(SdpaGraph(true), captured);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 5u);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 24.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(w->kernels[2].bytes, 24.0 * 128 * 128 * 3);
  w = Lower(SdpaGraph(false), captured);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 2u);
  captured.precision = DType::kFloat32;
  w = Lower(SdpaGraph(false), captured);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);
}

// Batch norm's statistics kernels, a convolution's bias add and torch.roll's kernel per dim
// are kernel facts too; against hand counts over the graphs of the tests above.
TEST(LoweringTest, BatchNormConvBiasAndRollKernelsFollowTheKernelFacts) {
  Graph bn;
  bn.tensors["x"] = T("x", {8, 64, 56, 56});
  for (const char* n : {"w", "b", "m", "v"}) bn.tensors[n] = T(n, {64}, DType::kFloat32, true);
  bn.tensors["y"] = T("y", {8, 64, 56, 56});
  bn.ops.push_back(MakeOp("aten", "batch_norm", {"x", "w", "b", "m", "v"}, {"y"}));
  LoweringOptions o{Framework::kCudaGraph, DType::kFloat16};
  o.facts.batch_norm_half_stat_kernels = 1;
  o.facts.batch_norm_stat_bytes_per_channel = 12;
  Expected<WorkList> w = Lower(bn, o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);  // the transform and one statistics kernel
  EXPECT_EQ(w->kernels[1].dtype, DType::kFloat32);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 64 * 12.0);
  o.facts.batch_norm_half_stat_kernels = 0;
  w = Lower(bn, o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);
  // An exported BatchNormalization (one the exporter left unfolded) is the same module: the
  // default two statistics kernels in half precision, none in fp32.
  Graph onnx_bn = bn;
  onnx_bn.ops[0] = MakeOp("", "BatchNormalization", {"x", "w", "b", "m", "v"}, {"y"});
  w = Lower(onnx_bn, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), size_t(1 + KernelFacts().batch_norm_half_stat_kernels));
  w = Lower(onnx_bn, {Framework::kCudaGraph, DType::kFloat32});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);

  Graph conv;
  conv.tensors["x"] = T("x", {8, 64, 56, 56});
  conv.tensors["w"] = T("w", {128, 64, 3, 3}, DType::kFloat32, true);
  conv.tensors["b"] = T("b", {128}, DType::kFloat32, true);
  conv.tensors["y"] = T("y", {8, 128, 56, 56});
  conv.ops.push_back(MakeOp("aten", "conv2d", {"x", "w", "b"}, {"y"}));
  LoweringOptions e{Framework::kPytorchEager, DType::kFloat16};
  w = Lower(conv, e);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 2u);  // the convolution and its bias add
  e.facts.conv_bias_kernel = false;
  w = Lower(conv, e);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kConv);

  Graph roll;
  roll.tensors["y"] = T("y", {1, 56, 56, 96}, DType::kFloat16);
  roll.tensors["z"] = T("z", {1, 56, 56, 96}, DType::kFloat16);
  Op r = MakeOp("aten", "roll", {"y"}, {"z"});
  r.attrs["dims"].kind = Attribute::Kind::kInts;
  r.attrs["dims"].ints = {1, 2};
  roll.ops.push_back(r);
  e.facts = KernelFacts();
  w = Lower(roll, e);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 2u);  // one pass per rolled dim
  e.facts.roll_kernel_per_dim = false;
  w = Lower(roll, e);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(w->kernels[0].bytes, 2.0 * 56 * 56 * 96 * 2);
  EXPECT_EQ(w->dispatches.size(), 1u);
}

TEST(LoweringTest, UnknownOpsAreListedNotSilent) {
  Graph g;
  g.tensors["x"] = T("x", {4, 4});
  g.tensors["y"] = T("y", {4, 4});
  g.tensors["z"] = T("z", {4, 4});
  g.ops.push_back(MakeOp("custom.domain", "MysteryOp", {"x"}, {"y"}));
  g.ops.push_back(MakeOp("com.microsoft", "FusedMatMul", {"x", "y"}, {"z"}));
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->unpriced_ops, (std::map<std::string, int>{{"custom.domain::MysteryOp", 1}}));
  EXPECT_EQ(w->generic_ops, (std::map<std::string, int>{{"com.microsoft::FusedMatMul", 1}}));
  ASSERT_EQ(w->kernels.size(), 2u);
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kGemm);  // priced from its counted MACs
  EXPECT_DOUBLE_EQ(w->kernels[1].flops, 2.0 * 4 * 4 * 4);
}


// Each dispatch is keyed by its op type for per-op costs; a view that copies is priced by the
// class it became, so it carries no key.
TEST(LoweringTest, DispatchesCarryTheirOpTypesCostKey) {
  EXPECT_EQ(DispatchCostKey("aten", "_convolution"), "conv");
  EXPECT_EQ(DispatchCostKey("aten", "conv2d"), "conv");
  EXPECT_EQ(DispatchCostKey("aten", "addmm"), "linear");
  EXPECT_EQ(DispatchCostKey("aten", "bmm"), "matmul");
  EXPECT_EQ(DispatchCostKey("aten", "relu_"), "relu");
  EXPECT_EQ(DispatchCostKey("aten", "_native_multi_head_attention"), "multi_head_attention");
  EXPECT_EQ(DispatchCostKey("aten", "__and__"), "__and__");
  EXPECT_EQ(DispatchCostKey("", "Conv"), "conv");
  EXPECT_EQ(DispatchCostKey("", "LayerNormalization"), "layer_norm");
  EXPECT_EQ(DispatchCostKey("", "Erf"), "");
  EXPECT_EQ(DispatchCostKey("com.microsoft", "Attention"), "");
  EXPECT_EQ(&DispatchCostKey("aten", "conv1d"), &DispatchCostKey("", "Conv"));  // one string

  Graph g;
  g.tensors["x"] = T("x", {8, 128, 768});
  g.tensors["t"] = T("t", {8, 768, 128});
  g.tensors["r"] = T("r", {8, 98304});
  g.tensors["y"] = T("y", {8, 98304});
  g.ops.push_back(MakeOp("aten", "transpose", {"x"}, {"t"}));
  g.ops.push_back(MakeOp("aten", "reshape", {"t"}, {"r"}));
  g.ops.push_back(MakeOp("aten", "relu_", {"r"}, {"y"}));
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->dispatches.size(), 3u);
  ASSERT_NE(w->dispatches[0].cost_key, nullptr);
  EXPECT_EQ(*w->dispatches[0].cost_key, "transpose");
  EXPECT_EQ(w->dispatches[1].cls, DispatchClass::kKernel);  // the reshape copies
  EXPECT_EQ(w->dispatches[1].cost_key, nullptr);
  ASSERT_NE(w->dispatches[2].cost_key, nullptr);
  EXPECT_EQ(*w->dispatches[2].cost_key, "relu");
}

Attribute IntsAttribute(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

int CopyKernels(const WorkList& w) {
  int n = 0;
  for (const KernelWork& k : w.kernels) n += k.cls == KernelClass::kCopy;
  return n;
}

// Swin's window attention: qkv [64 windows, 49, 3, 3 heads, 32] permuted to [3, 64, 3, 49, 32];
// q, k and v are selects of it, and q @ k^T and attn @ v are aten::matmul of 4-D operands
// whose batch dims (windows, heads) are not one after the other in memory, so matmul's
// reshape copies k^T and v (q * scale is a new, contiguous tensor). A head split that only
// swaps the last two dims of a contiguous tensor, or a 3-D product, copies nothing.
TEST(LoweringTest, AMatmulOfPermutedFourDimOperandsCopiesThemFirst) {
  Graph g;
  g.tensors["qkv"] = T("qkv", {64, 49, 3, 3, 32}, DType::kFloat16);
  g.tensors["p"] = T("p", {3, 64, 3, 49, 32}, DType::kFloat16);
  for (const char* n : {"q", "k", "v", "qs"}) g.tensors[n] = T(n, {64, 3, 49, 32}, DType::kFloat16);
  g.tensors["kt"] = T("kt", {64, 3, 32, 49}, DType::kFloat16);
  g.tensors["a"] = T("a", {64, 3, 49, 49}, DType::kFloat16);
  g.tensors["o"] = T("o", {64, 3, 49, 32}, DType::kFloat16);
  g.tensors["s"] = T("s", {}, DType::kFloat16, true);
  g.tensors["i0"] = T("i0", {}, DType::kInt64, true);
  Op perm = MakeOp("aten", "permute", {"qkv"}, {"p"});
  perm.attrs["dims"] = IntsAttribute({2, 0, 3, 1, 4});
  g.ops.push_back(perm);
  for (const char* n : {"q", "k", "v"}) g.ops.push_back(MakeOp("aten", "select", {"p"}, {n}));
  g.ops.push_back(MakeOp("aten", "mul", {"q", "s"}, {"qs"}));
  Op t = MakeOp("aten", "transpose", {"k"}, {"kt"});
  t.attrs["dim0"].kind = t.attrs["dim1"].kind = Attribute::Kind::kInt;
  t.attrs["dim0"].i = -2;
  t.attrs["dim1"].i = -1;
  g.ops.push_back(t);
  g.ops.push_back(MakeOp("aten", "matmul", {"qs", "kt"}, {"a"}));
  g.ops.push_back(MakeOp("aten", "matmul", {"a", "v"}, {"o"}));
  g.inputs = {"qkv"};
  g.outputs = {"o"};
  for (Framework f : {Framework::kPytorchEager, Framework::kTorchscript, Framework::kCudaGraph}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(CopyKernels(w.value()), 2);
    for (const KernelWork& k : w->kernels)
      if (k.cls == KernelClass::kCopy) {
        EXPECT_GE(k.op_index, 6);  // inside the matmuls' dispatches
        EXPECT_DOUBLE_EQ(k.bytes, 2.0 * 64 * 3 * 49 * 32 * 2);
      }
  }
  // q, k and v split from a contiguous [64, 3, 49, 32] by a transpose of the last two dims
  // only: their batch dims stay in order, and nothing is copied.
  g.ops[0] = MakeOp("aten", "reshape", {"qkv"}, {"p"});
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(CopyKernels(w.value()), 0);
}

// Out-of-place masked_fill clones its input and fills the clone (a device-to-device copy, then
// the fill kernel); masked_fill_ fills in place.
TEST(LoweringTest, AnOutOfPlaceMaskedFillClonesItsInputFirst) {
  Graph g;
  g.tensors["m"] = T("m", {64, 49, 49}, DType::kFloat16);
  g.tensors["b"] = T("b", {64, 49, 49}, DType::kBool);
  g.tensors["v"] = T("v", {}, DType::kFloat32, true);
  g.tensors["y"] = T("y", {64, 49, 49}, DType::kFloat16);
  g.inputs = {"m", "b"};
  g.ops.push_back(MakeOp("aten", "masked_fill", {"m", "b", "v"}, {"y"}));
  g.outputs = {"y"};
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 2u);
  ASSERT_EQ(w->dispatches.size(), 1u);
  EXPECT_EQ(w->kernels[1].cls, KernelClass::kCopy);
  EXPECT_EQ(w->kernels[1].variant, KernelVariant::kContiguous);
  EXPECT_DOUBLE_EQ(w->kernels[1].bytes, 2.0 * 64 * 49 * 49 * 2);
  g.ops[0].type = "masked_fill_";
  w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);
}

// F.pad that pads nothing (Swin's window padding where the map is a whole number of windows)
// returns a clone: a contiguous memcpy, priced at element-wise speed; a pad that pads is
// ATen's strided copy into the larger tensor.
TEST(LoweringTest, APadThatPadsNothingIsAContiguousCopy) {
  Graph g;
  g.tensors["x"] = T("x", {1, 56, 56, 96}, DType::kFloat16);
  g.tensors["y"] = T("y", {1, 56, 56, 96}, DType::kFloat16);
  g.inputs = {"x"};
  g.ops.push_back(MakeOp("aten", "pad", {"x"}, {"y"}));
  g.outputs = {"y"};
  Expected<WorkList> w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].cls, KernelClass::kCopy);
  EXPECT_EQ(w->kernels[0].variant, KernelVariant::kContiguous);
  g.tensors["y"] = T("y", {1, 63, 63, 96}, DType::kFloat16);
  w = Lower(g, {Framework::kCudaGraph, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->kernels.size(), 1u);
  EXPECT_EQ(w->kernels[0].variant, KernelVariant::kPlain);
}

// Whisper's encoder: positions added to a transposed convolution output keep its layout
// (TensorIterator follows its first full-size operand), so the residual stream stays
// permuted; a layer norm of it copies first, and an add of it to a contiguous tensor is
// ATen's strided kernel (the broadcast variant). An add of two tensors of the same layout is
// the vectorized one.
TEST(LoweringTest, APermutedResidualStreamKeepsItsLayout) {
  Graph g;
  g.tensors["x"] = T("x", {2, 512, 1500}, DType::kFloat16);
  g.tensors["t"] = T("t", {2, 1500, 512}, DType::kFloat16);
  g.tensors["pos"] = T("pos", {1500, 512}, DType::kFloat16, true);
  g.tensors["h"] = T("h", {2, 1500, 512}, DType::kFloat16);
  g.tensors["n"] = T("n", {2, 1500, 512}, DType::kFloat16);
  g.tensors["r"] = T("r", {2, 1500, 512}, DType::kFloat16);
  g.tensors["r2"] = T("r2", {2, 1500, 512}, DType::kFloat16);
  Op t = MakeOp("aten", "transpose", {"x"}, {"t"});
  t.attrs["dim0"].kind = t.attrs["dim1"].kind = Attribute::Kind::kInt;
  t.attrs["dim0"].i = 1;
  t.attrs["dim1"].i = 2;
  g.ops.push_back(t);
  g.ops.push_back(MakeOp("aten", "add", {"t", "pos"}, {"h"}));   // 1: broadcast, keeps the layout
  g.ops.push_back(MakeOp("aten", "layer_norm", {"h"}, {"n"}));   // 2: copy, then the norm
  g.ops.push_back(MakeOp("aten", "add", {"h", "n"}, {"r"}));     // 3: mixed layouts, strided
  g.ops.push_back(MakeOp("aten", "add", {"r", "h"}, {"r2"}));    // 4: both permuted
  g.inputs = {"x"};
  g.outputs = {"r2"};
  // (TorchScript fuses the adds into one kernel.)
  for (Framework f : {Framework::kPytorchEager, Framework::kCudaGraphEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    std::vector<const KernelWork*> of[5];
    for (const KernelWork& k : w->kernels)
      if (k.op_index >= 0 && k.op_index < 5) of[k.op_index].push_back(&k);
    ASSERT_EQ(of[2].size(), 2u);
    EXPECT_EQ(of[2][0]->cls, KernelClass::kCopy);
    EXPECT_DOUBLE_EQ(of[2][0]->bytes, 2.0 * 2 * 1500 * 512 * 2);
    EXPECT_EQ(of[2][1]->cls, KernelClass::kNorm);
    ASSERT_EQ(of[3].size(), 1u);
    EXPECT_EQ(of[3][0]->variant, KernelVariant::kStrided);
    ASSERT_EQ(of[4].size(), 1u);
    EXPECT_EQ(of[4][0]->variant, KernelVariant::kPlain);
  }
  // The same stream made contiguous before the add: no copy, no strided add.
  g.ops[0] = MakeOp("aten", "reshape", {"x"}, {"t"});
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(CopyKernels(w.value()), 0);
  for (const KernelWork& k : w->kernels)
    if (k.op_index >= 3) EXPECT_EQ(k.variant, KernelVariant::kPlain);
}

// cuDNN's attention, which runs half-precision SDPA, writes its output in the query's
// layout: token-major for a head split's transposed view, whose transpose back is free, but
// head-major for a query made contiguous first (Whisper), whose transpose back copies.
TEST(LoweringTest, AttentionOutputFollowsTheQueryLayout) {
  auto graph = [](bool contiguous_q) {
    Graph g;
    g.tensors["x"] = T("x", {2, 1500, 8, 64}, DType::kFloat16);
    g.tensors["q"] = T("q", {2, 8, 1500, 64}, DType::kFloat16);
    g.tensors["qc"] = T("qc", {2, 8, 1500, 64}, DType::kFloat16);
    g.tensors["o"] = T("o", {2, 8, 1500, 64}, DType::kFloat16);
    g.tensors["ot"] = T("ot", {2, 1500, 8, 64}, DType::kFloat16);
    g.tensors["oc"] = T("oc", {2, 1500, 8, 64}, DType::kFloat16);
    auto transpose = [](const char* in, const char* out) {
      Op t = MakeOp("aten", "transpose", {in}, {out});
      t.attrs["dim0"].kind = t.attrs["dim1"].kind = Attribute::Kind::kInt;
      t.attrs["dim0"].i = 1;
      t.attrs["dim1"].i = 2;
      return t;
    };
    g.ops.push_back(transpose("x", "q"));
    g.ops.push_back(MakeOp("aten", contiguous_q ? "contiguous" : "dropout", {"q"}, {"qc"}));
    g.ops.push_back(MakeOp("aten", "scaled_dot_product_attention", {"qc", "qc", "qc"}, {"o"}));
    g.ops.push_back(transpose("o", "ot"));
    g.ops.push_back(MakeOp("aten", "contiguous", {"ot"}, {"oc"}));
    g.inputs = {"x"};
    g.outputs = {"oc"};
    return g;
  };
  auto copies_after_attention = [](const Graph& g, DType d) {
    Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, d});
    EXPECT_TRUE(w.ok()) << w.status().message();
    int n = 0;
    for (const KernelWork& k : w->kernels) n += k.cls == KernelClass::kCopy && k.op_index == 4;
    return n;
  };
  EXPECT_EQ(copies_after_attention(graph(true), DType::kFloat16), 1);
  EXPECT_EQ(copies_after_attention(graph(false), DType::kFloat16), 0);
  // Single precision runs PyTorch's own kernels, which always write token-major.
  EXPECT_EQ(copies_after_attention(graph(true), DType::kFloat32), 0);
}

// A permute that moves only dims of size 1 (Swin's window partition of a 7x7 map into one
// 7x7 window) leaves the tensor contiguous: the reshape after it is a view.
TEST(LoweringTest, APermuteOfUnitDimsCopiesNothing) {
  auto copies = [](std::vector<int64_t> shape) {
    Graph g;
    std::vector<int64_t> out = {shape[0], shape[1], shape[3], shape[2], shape[4], shape[5]};
    g.tensors["x"] = T("x", shape, DType::kFloat16);
    g.tensors["p"] = T("p", out, DType::kFloat16);
    g.tensors["y"] = T("y", {shape[0] * shape[1] * shape[3], shape[2] * shape[4], shape[5]}, DType::kFloat16);
    Op perm = MakeOp("aten", "permute", {"x"}, {"p"});
    perm.attrs["dims"] = IntsAttribute({0, 1, 3, 2, 4, 5});
    g.ops.push_back(perm);
    g.ops.push_back(MakeOp("aten", "reshape", {"p"}, {"y"}));
    g.inputs = {"x"};
    g.outputs = {"y"};
    Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() ? CopyKernels(w.value()) : -1;
  };
  EXPECT_EQ(copies({1, 1, 7, 1, 7, 768}), 0);
  EXPECT_EQ(copies({1, 8, 7, 8, 7, 96}), 1);
}

// Decode attention, one query token against a KV cache, runs cuDNN's sm80 kernel, which sets no
// statistics: no memset, where 128 query tokens have one.
// torch.compile hands the padding mask to the cuDNN kernel eager runs unmasked: the kernel reads
// it (priced as the masked class, as under a trace), with eager's memset and none of the
// trace's where and fills; Python eager drops the mask.
TEST(LoweringTest, CompiledAttentionReadsTheMaskWithEagersSideKernels) {
  for (Framework f : {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead, Framework::kPytorchEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> masked = Lower(SdpaGraph(true), {f, DType::kFloat16});
    Expected<WorkList> plain = Lower(SdpaGraph(false), {f, DType::kFloat16});
    ASSERT_TRUE(masked.ok() && plain.ok());
    ASSERT_EQ(masked->kernels.size(), plain->kernels.size());
    EXPECT_EQ(masked->kernels[0].cls, f == Framework::kPytorchEager ? KernelClass::kAttention : KernelClass::kAttentionMasked);
    EXPECT_EQ(plain->kernels[0].cls, KernelClass::kAttention);
  }
}

TEST(LoweringTest, DecodeAttentionHasNoMemset) {
  Graph g = SdpaGraph(false);
  g.tensors["q"] = T("q", {2, 12, 1, 64});
  g.tensors["o"] = T("o", {2, 12, 1, 64});
  for (Framework f : {Framework::kPytorchEager, Framework::kCudaGraphEager}) {
    SCOPED_TRACE(FrameworkName(f));
    Expected<WorkList> w = Lower(g, {f, DType::kFloat16});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_EQ(w->kernels.size(), 1u);
    EXPECT_EQ(w->kernels[0].cls, KernelClass::kAttention);
  }
}

// An op whose output has no elements (a KV cache's empty initial tensor cast with `to`) is a
// dispatch that launches no kernel.
TEST(LoweringTest, AnEmptyOutputLaunchesNoKernel) {
  Graph g;
  g.tensors["e"] = T("e", {0}, DType::kFloat16);
  g.tensors["y"] = T("y", {0}, DType::kFloat16);
  g.inputs = {"e"};
  g.ops.push_back(MakeOp("aten", "relu", {"e"}, {"y"}));
  g.outputs = {"y"};
  Expected<WorkList> w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 0u);
  EXPECT_EQ(w->dispatches.size(), 1u);
  g.tensors["e"] = T("e", {4}, DType::kFloat16);
  g.tensors["y"] = T("y", {4}, DType::kFloat16);
  w = Lower(g, {Framework::kPytorchEager, DType::kFloat16});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->kernels.size(), 1u);
}

}  // namespace
}  // namespace ftax
