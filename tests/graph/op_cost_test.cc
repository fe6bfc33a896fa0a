// One test per counting entry family, each with numbers derived by hand in the comment.
#include "graph/op_cost.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "graph_fixtures.h"

namespace ftax {
namespace {

using testing::AddInput;
using testing::AddOp;
using testing::AddTensor;
using testing::AddWeight;
using testing::Dims;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

OpCost CountOk(const Graph& g, size_t op_index = 0) {
  Expected<OpCost> c = CostRegistry::Default().Count(g, g.ops[op_index]);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value() : OpCost{};
}

TEST(OpCostTest, ConvCountsOutputTimesKernelVolume) {
  // 1x3x224x224 * 64x3x7x7, stride 2, pad 3 -> 1x64x112x112.
  // MACs = 64*112*112 outputs * (3*7*7) = 802816 * 147 = 118013952 (ResNet stem).
  Graph g;
  AddInput(g, "x", Dims({1, 3, 224, 224}));
  AddWeight(g, "w", Dims({64, 3, 7, 7}));
  AddTensor(g, "y", Dims({1, 64, 112, 112}));
  AddOp(g, "Conv", {"x", "w"}, {"y"});
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 118013952.0);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 118013952.0);  // no bias
  EXPECT_DOUBLE_EQ(c.bytes_read, (3 * 224 * 224 + 64 * 3 * 49) * 4.0);
  EXPECT_DOUBLE_EQ(c.bytes_written, 64 * 112 * 112 * 4.0);
  EXPECT_TRUE(c.launches_work);
}

TEST(OpCostTest, GroupedAndDepthwiseConv) {
  // Depthwise 1x32x56x56, weight 32x1x3x3, group 32: 32*56*56 * 9 = 903168 MACs.
  Graph g;
  AddInput(g, "x", Dims({1, 32, 56, 56}));
  AddWeight(g, "w", Dims({32, 1, 3, 3}));
  AddWeight(g, "b", Dims({32}));
  AddTensor(g, "y", Dims({1, 32, 56, 56}));
  Op& op = AddOp(g, "Conv", {"x", "w", "b"}, {"y"});
  SetInt(op, "group", 32);
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 903168.0);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 903168.0 + 32 * 56 * 56);  // + one add per output for bias

  // Grouped: 1x64x28x28 -> 128 channels, group 4, 3x3: weight 128x16x3x3.
  // 128*28*28 outputs * 16*9 = 100352 * 144 = 14450688.
  Graph h;
  AddInput(h, "x", Dims({1, 64, 28, 28}));
  AddWeight(h, "w", Dims({128, 16, 3, 3}));
  AddTensor(h, "y", Dims({1, 128, 28, 28}));
  SetInt(AddOp(h, "Conv", {"x", "w"}, {"y"}), "group", 4);
  EXPECT_DOUBLE_EQ(CountOk(h).macs, 14450688.0);
}

TEST(OpCostTest, ConvTransposeCountsInputTimesKernel) {
  // 1x16x8x8 input, weight 16x8x4x4 (C_in x C_out/g x k x k): 1024 inputs * 128 = 131072.
  Graph g;
  AddInput(g, "x", Dims({1, 16, 8, 8}));
  AddWeight(g, "w", Dims({16, 8, 4, 4}));
  AddTensor(g, "y", Dims({1, 8, 18, 18}));
  AddOp(g, "ConvTranspose", {"x", "w"}, {"y"});
  EXPECT_DOUBLE_EQ(CountOk(g).macs, 131072.0);
}

TEST(OpCostTest, GemmWithTransposeAndBias) {
  // A 8x512, B^T given as 1000x512 (transB=1): M=8, N=1000, K=512 -> 4096000 MACs;
  // bias C adds 8000 FLOPs.
  Graph g;
  AddInput(g, "a", Dims({8, 512}));
  AddWeight(g, "b", Dims({1000, 512}));
  AddWeight(g, "c", Dims({1000}));
  AddTensor(g, "y", Dims({8, 1000}));
  SetInt(AddOp(g, "Gemm", {"a", "b", "c"}, {"y"}), "transB", 1);
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 4096000.0);
  EXPECT_DOUBLE_EQ(c.flops, 8192000.0 + 8000.0);
}

TEST(OpCostTest, BatchedMatMulCountsAttentionScores) {
  // Attention scores: Q 1x12x128x64 @ K^T 1x12x64x128 -> 1x12x128x128:
  // 12*128*128 outputs * 64 = 12582912 MACs.
  Graph g;
  AddInput(g, "q", Dims({1, 12, 128, 64}));
  AddInput(g, "kt", Dims({1, 12, 64, 128}));
  AddTensor(g, "s", Dims({1, 12, 128, 128}));
  AddOp(g, "MatMul", {"q", "kt"}, {"s"});
  EXPECT_DOUBLE_EQ(CountOk(g).macs, 12582912.0);
}

TEST(OpCostTest, MatMulBroadcastsWeightOverBatch) {
  // 4x128x768 @ 768x3072 (weight broadcast over batch): 4*128*3072*768 = 1207959552.
  Graph g;
  AddInput(g, "x", Dims({4, 128, 768}));
  AddWeight(g, "w", Dims({768, 3072}));
  g.ops.clear();
  AddOp(g, "MatMul", {"x", "w"}, {"y"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeToString(g.Find("y")->shape), "4x128x3072");
  EXPECT_DOUBLE_EQ(CountOk(g).macs, 1207959552.0);
}

TEST(OpCostTest, EinsumAttentionMatchesMatMul) {
  // "bhqd,bhkd->bhqk" with b=2,h=4,q=k=16,d=8: loop over b,h,q,k,d = 2*4*16*16*8 = 16384.
  Graph g;
  AddInput(g, "q", Dims({2, 4, 16, 8}));
  AddInput(g, "k", Dims({2, 4, 16, 8}));
  Op& op = AddOp(g, "Einsum", {"q", "k"}, {"s"});
  SetString(op, "equation", "bhqd,bhkd->bhqk");
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeToString(g.Find("s")->shape), "2x4x16x16");
  EXPECT_DOUBLE_EQ(CountOk(g).macs, 16384.0);
}

TEST(OpCostTest, ElementwiseAndTranscendentalFlops) {
  // Add of 2x3 and 3 (broadcast) -> 6 FLOPs; Exp of 6 elements -> 6 * 4 = 24 FLOPs.
  Graph g;
  AddInput(g, "a", Dims({2, 3}));
  AddWeight(g, "b", Dims({3}));
  AddTensor(g, "c", Dims({2, 3}));
  AddTensor(g, "e", Dims({2, 3}));
  AddOp(g, "Add", {"a", "b"}, {"c"});
  AddOp(g, "Exp", {"c"}, {"e"});
  EXPECT_DOUBLE_EQ(CountOk(g, 0).flops, 6.0);
  EXPECT_DOUBLE_EQ(CountOk(g, 0).macs, 0.0);
  EXPECT_DOUBLE_EQ(CountOk(g, 1).flops, 24.0);
}

TEST(OpCostTest, NormalizationAndSoftmaxFlopsPerElement) {
  // 1x128x768 = 98304 elements: LayerNorm 8 each, Softmax 5 each, BatchNorm 2 each.
  Graph g;
  AddInput(g, "x", Dims({1, 128, 768}));
  AddWeight(g, "gamma", Dims({768}));
  AddTensor(g, "ln", Dims({1, 128, 768}));
  AddTensor(g, "sm", Dims({1, 128, 768}));
  AddOp(g, "LayerNormalization", {"x", "gamma"}, {"ln"});
  AddOp(g, "Softmax", {"x"}, {"sm"});
  EXPECT_DOUBLE_EQ(CountOk(g, 0).flops, 98304.0 * 8);
  EXPECT_DOUBLE_EQ(CountOk(g, 1).flops, 98304.0 * 5);
}

TEST(OpCostTest, PoolingCountsWindowPerOutput) {
  // MaxPool 3x3 on 1x64x112x112 -> 1x64x56x56: 200704 outputs * 9 = 1806336 FLOPs.
  Graph g;
  AddInput(g, "x", Dims({1, 64, 112, 112}));
  AddTensor(g, "y", Dims({1, 64, 56, 56}));
  SetInts(AddOp(g, "MaxPool", {"x"}, {"y"}), "kernel_shape", {3, 3});
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.flops, 1806336.0);
  EXPECT_DOUBLE_EQ(c.macs, 0.0);
}

TEST(OpCostTest, LstmCountsGatesTimesInputPlusHidden) {
  // seq 10, batch 2, input 32, hidden 16, one direction: W 1x64x32, R 1x64x16.
  // MACs = 10 * 2 * 64 * (32 + 16) = 61440.
  Graph g;
  AddInput(g, "x", Dims({10, 2, 32}));
  AddWeight(g, "w", Dims({1, 64, 32}));
  AddWeight(g, "r", Dims({1, 64, 16}));
  AddTensor(g, "y", Dims({10, 1, 2, 16}));
  AddOp(g, "LSTM", {"x", "w", "r"}, {"y"});
  EXPECT_DOUBLE_EQ(CountOk(g).macs, 61440.0);
}

TEST(OpCostTest, ShapeOnlyOpsLaunchNoWork) {
  Graph g;
  AddInput(g, "x", Dims({2, 3}));
  AddTensor(g, "s", Dims({2}), DType::kInt64);
  AddOp(g, "Shape", {"x"}, {"s"});
  OpCost c = CountOk(g);
  EXPECT_FALSE(c.launches_work);
  EXPECT_DOUBLE_EQ(c.flops, 0.0);
}

TEST(OpCostTest, UnknownOpTypeIsUnsupportedAndNamed) {
  Graph g;
  AddInput(g, "x", Dims({2}));
  AddOp(g, "FrobnicateOp", {"x"}, {"y"}, "com.example");
  Expected<OpCost> c = CostRegistry::Default().Count(g, g.ops[0]);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(c.status().message().find("com.example::FrobnicateOp"), std::string::npos);
}

TEST(OpCostTest, MissingShapeNamesNodeAndTensor) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Known(4)});
  AddWeight(g, "w", Dims({4, 4}));
  AddOp(g, "MatMul", {"x", "w"}, {"y"});
  g.ops[0].name = "proj";
  Expected<OpCost> c = CostRegistry::Default().Count(g, g.ops[0]);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(c.status().message().find("'proj'"), std::string::npos);
  EXPECT_NE(c.status().message().find("batchx4"), std::string::npos);
}

TEST(OpCostTest, HugeDimsDoNotOverflowSilently) {
  // 2^40 x 2^40 elements overflow int64: reported, never a wrapped count.
  Graph g;
  AddInput(g, "x", Dims({int64_t{1} << 40, int64_t{1} << 40}));
  AddTensor(g, "y", Dims({int64_t{1} << 40, int64_t{1} << 40}));
  AddOp(g, "Relu", {"x"}, {"y"});
  Expected<OpCost> c = CostRegistry::Default().Count(g, g.ops[0]);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("2^63"), std::string::npos);
}

// ---- aten flavor: shapes are concrete and entries read them.

TEST(OpCostTest, AtenLinearAndAddmm) {
  // linear(x 1x128x768, W 3072x768, b): 128*3072 outputs * 768 = 301989888 MACs, + 393216 bias.
  Graph g;
  AddInput(g, "x", Dims({1, 128, 768}));
  AddWeight(g, "w", Dims({3072, 768}));
  AddWeight(g, "b", Dims({3072}));
  AddTensor(g, "y", Dims({1, 128, 3072}));
  AddOp(g, "linear", {"x", "w", "b"}, {"y"}, "aten");
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 301989888.0);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 301989888.0 + 393216.0);

  // addmm(bias 64, a 8x32, b 32x64): 8*64*32 = 16384.
  Graph h;
  AddWeight(h, "bias", Dims({64}));
  AddInput(h, "a", Dims({8, 32}));
  AddWeight(h, "b", Dims({32, 64}));
  AddTensor(h, "y", Dims({8, 64}));
  AddOp(h, "addmm", {"bias", "a", "b"}, {"y"}, "aten");
  EXPECT_DOUBLE_EQ(CountOk(h).macs, 16384.0);
}

TEST(OpCostTest, AtenLinalgVectorNorm) {
  // F.normalize's norm (Swin V2's cosine attention): one FLOP per input element read,
  // 2x3x49x32 = 9408 elements; fp32 bytes: 9408 read, 2x3x49x1 = 294 written.
  Graph g;
  AddInput(g, "x", Dims({2, 3, 49, 32}));
  AddTensor(g, "n", Dims({2, 3, 49, 1}));
  AddOp(g, "linalg_vector_norm", {"x"}, {"n"}, "aten");
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 0.0);
  EXPECT_DOUBLE_EQ(c.flops, 9408.0);
  EXPECT_DOUBLE_EQ(c.bytes_read, 9408.0 * 4);
  EXPECT_DOUBLE_EQ(c.bytes_written, 294.0 * 4);
}

TEST(OpCostTest, AtenScaledDotProductAttention) {
  // q,k,v 1x12x128x64: QK^T 12*128*128*64 + AV 12*128*128*64 = 25165824 MACs;
  // softmax 5 * 12*128*128 = 983040 FLOPs.
  Graph g;
  for (const char* n : {"q", "k", "v"}) AddInput(g, n, Dims({1, 12, 128, 64}));
  AddTensor(g, "o", Dims({1, 12, 128, 64}));
  AddOp(g, "scaled_dot_product_attention", {"q", "k", "v"}, {"o"}, "aten");
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.macs, 25165824.0);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 25165824.0 + 983040.0);
}

TEST(OpCostTest, AtenConvViewsAndContiguous) {
  Graph g;
  AddInput(g, "x", Dims({1, 3, 32, 32}));
  AddWeight(g, "w", Dims({8, 3, 3, 3}));
  AddTensor(g, "y", Dims({1, 8, 32, 32}));
  AddTensor(g, "v", Dims({1, 8192}));
  AddTensor(g, "c", Dims({1, 8192}));
  AddOp(g, "conv2d", {"x", "w"}, {"y"}, "aten");
  AddOp(g, "view", {"y"}, {"v"}, "aten");
  AddOp(g, "contiguous", {"v"}, {"c"}, "aten");
  EXPECT_DOUBLE_EQ(CountOk(g, 0).macs, 8 * 32 * 32 * 27.0);  // 221184
  EXPECT_FALSE(CountOk(g, 1).launches_work);
  OpCost copy = CountOk(g, 2);
  EXPECT_TRUE(copy.launches_work);
  EXPECT_DOUBLE_EQ(copy.bytes_written, 8192 * 4.0);
}

TEST(OpCostTest, AtenEmbeddingReadsOnlyGatheredRows) {
  // Table 30522x768 (93.8 MB) but 128 lookups read 128 rows: 128*768*4 + 128*8 bytes.
  Graph g;
  AddWeight(g, "table", Dims({30522, 768}));
  AddInput(g, "ids", Dims({1, 128}), DType::kInt64);
  AddTensor(g, "e", Dims({1, 128, 768}));
  AddOp(g, "embedding", {"table", "ids"}, {"e"}, "aten");
  OpCost c = CountOk(g);
  EXPECT_DOUBLE_EQ(c.bytes_read, 128 * 768 * 4.0 + 128 * 8.0);
}

TEST(OpCostTest, RegistryCanBeExtended) {
  CostRegistry reg;
  EXPECT_FALSE(reg.Has("", "Relu"));
  reg.Register("", "Relu", [](const Graph&, const Op&) -> Expected<OpCost> {
    OpCost c;
    c.flops = 42;
    return c;
  });
  EXPECT_TRUE(reg.Has("", "Relu"));
  EXPECT_TRUE(reg.Has("ai.onnx", "Relu"));
  Graph g;
  AddOp(g, "Relu", {"x"}, {"y"});
  EXPECT_DOUBLE_EQ(reg.Count(g, g.ops[0])->flops, 42.0);
}

}  // namespace
}  // namespace ftax
