#include "graph/shape_inference.h"

#include <gtest/gtest.h>

#include "graph/dim_binding.h"
#include "graph_fixtures.h"

namespace ftax {
namespace {

using testing::AddInput;
using testing::AddIntConst;
using testing::AddOp;
using testing::AddTensor;
using testing::AddWeight;
using testing::Dims;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

std::string ShapeOf(const Graph& g, const std::string& name) {
  const TensorInfo* t = g.Find(name);
  if (!t) return "<missing>";
  if (!t->has_shape) return "<no shape>";
  return ShapeToString(t->shape);
}

Graph WithOpset(int64_t v) {
  Graph g;
  g.opset[""] = v;
  return g;
}

TEST(ShapeInferenceTest, ConvWithStridePadAndDilation) {
  // 224 + 6 - 7 = 223, /2 = 111, +1 = 112.  Dilated 3x3 (eff 5), pad 2, stride 1: 56.
  Graph g = WithOpset(17);
  AddInput(g, "x", Dims({1, 3, 224, 224}));
  AddWeight(g, "w", Dims({64, 3, 7, 7}));
  AddWeight(g, "w2", Dims({64, 64, 3, 3}));
  Op& c = AddOp(g, "Conv", {"x", "w"}, {"y"});
  SetInts(c, "strides", {2, 2});
  SetInts(c, "pads", {3, 3, 3, 3});
  AddTensor(g, "z_in", Dims({1, 64, 56, 56}));
  Op& d = AddOp(g, "Conv", {"z_in", "w2"}, {"z"});
  SetInts(d, "dilations", {2, 2});
  SetInts(d, "pads", {2, 2, 2, 2});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "1x64x112x112");
  EXPECT_EQ(ShapeOf(g, "z"), "1x64x56x56");
}

TEST(ShapeInferenceTest, PoolingCeilModeAndSamePadding) {
  // 112, k3 s2 pad 1: floor((112+2-3)/2)+1 = 56. ceil_mode, no pad, 7, k2 s2: ceil(5/2)+1 = 4.
  Graph g = WithOpset(17);
  AddInput(g, "x", Dims({1, 8, 112, 112}));
  AddInput(g, "s", Dims({1, 8, 7, 7}));
  Op& p = AddOp(g, "MaxPool", {"x"}, {"y"});
  SetInts(p, "kernel_shape", {3, 3});
  SetInts(p, "strides", {2, 2});
  SetInts(p, "pads", {1, 1, 1, 1});
  Op& q = AddOp(g, "AveragePool", {"s"}, {"t"});
  SetInts(q, "kernel_shape", {2, 2});
  SetInts(q, "strides", {2, 2});
  SetInt(q, "ceil_mode", 1);
  Op& r = AddOp(g, "MaxPool", {"s"}, {"u"});
  SetInts(r, "kernel_shape", {3, 3});
  SetInts(r, "strides", {2, 2});
  SetString(r, "auto_pad", "SAME_UPPER");
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "1x8x56x56");
  EXPECT_EQ(ShapeOf(g, "t"), "1x8x4x4");
  EXPECT_EQ(ShapeOf(g, "u"), "1x8x4x4");
}

TEST(ShapeInferenceTest, ReshapeFromShapeArithmeticIsFolded) {
  // x: 2x3x4 -> Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape: 2x12.
  Graph g = WithOpset(13);
  AddInput(g, "x", Dims({2, 3, 4}));
  AddIntConst(g, "zero", {0}, true);
  AddIntConst(g, "axes0", {0});
  AddIntConst(g, "minus1", {-1});
  AddOp(g, "Shape", {"x"}, {"s"});
  AddOp(g, "Gather", {"s", "zero"}, {"n"});
  AddOp(g, "Unsqueeze", {"n", "axes0"}, {"n1"});
  AddOp(g, "Concat", {"n1", "minus1"}, {"target"});
  AddOp(g, "Reshape", {"x", "target"}, {"y"});
  ASSERT_TRUE(InferShapes(&g).ok());
  ASSERT_TRUE(g.Find("target")->int_values.has_value());
  EXPECT_EQ(*g.Find("target")->int_values, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(ShapeOf(g, "y"), "2x12");
}

TEST(ShapeInferenceTest, ReshapeZeroCopiesAndMinusOneInfers) {
  Graph g = WithOpset(17);
  AddInput(g, "x", Dims({4, 128, 768}));
  AddIntConst(g, "t", {0, 0, 12, -1});
  AddOp(g, "Reshape", {"x", "t"}, {"y"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "4x128x12x64");
}

// A float Range whose limit lies far on the wrong side of start is empty; its element count
// (-7e43 here) must be clamped before it becomes an int64 (found by inspect_fuzz under UBSan).
TEST(ShapeInferenceTest, RangeWithAHugeNegativeCountIsEmpty) {
  Graph g = WithOpset(17);
  for (auto [name, v] : {std::pair<const char*, double>{"s", 0.0}, {"l", -7.03687e43}, {"d", 1.0}}) {
    TensorInfo& t = AddTensor(g, name, Shape{}, DType::kFloat32, true);
    t.float_values = std::vector<double>{v};
  }
  AddOp(g, "Range", {"s", "l", "d"}, {"y"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "0");
}

TEST(ShapeInferenceTest, SymbolicDimsPropagateByName) {
  Graph g = WithOpset(17);
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Known(128), Dim::Known(768)});
  AddWeight(g, "w", Dims({768, 3072}));
  AddOp(g, "MatMul", {"x", "w"}, {"h"});
  AddOp(g, "Relu", {"h"}, {"r"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "r"), "batchx128x3072");
  // Binding the dim makes everything concrete.
  Graph b = g;
  ASSERT_TRUE(BindDims(&b, {{"batch", 4}}, {}).ok());
  EXPECT_EQ(ShapeOf(b, "x"), "4x128x768");
}

TEST(ShapeInferenceTest, TransposeSplitSliceConcat) {
  Graph g = WithOpset(13);
  AddInput(g, "x", Dims({2, 10, 6}));
  SetInts(AddOp(g, "Transpose", {"x"}, {"t"}), "perm", {0, 2, 1});
  AddIntConst(g, "parts", {2, 4});
  SetInt(AddOp(g, "Split", {"x", "parts"}, {"a", "b"}), "axis", 2);
  AddIntConst(g, "st", {-4});
  AddIntConst(g, "en", {1000});
  AddIntConst(g, "ax", {1});
  AddOp(g, "Slice", {"x", "st", "en", "ax"}, {"sl"});
  SetInt(AddOp(g, "Concat", {"a", "b"}, {"cat"}), "axis", -1);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "t"), "2x6x10");
  EXPECT_EQ(ShapeOf(g, "a"), "2x10x2");
  EXPECT_EQ(ShapeOf(g, "b"), "2x10x4");
  EXPECT_EQ(ShapeOf(g, "sl"), "2x4x6");
  EXPECT_EQ(ShapeOf(g, "cat"), "2x10x6");
}

TEST(ShapeInferenceTest, GatherFlattenSqueezeExpandWhere) {
  Graph g = WithOpset(13);
  AddWeight(g, "table", Dims({1000, 64}));
  AddInput(g, "ids", Dims({2, 7}), DType::kInt64);
  AddOp(g, "Gather", {"table", "ids"}, {"emb"});
  AddOp(g, "Flatten", {"emb"}, {"flat"});
  AddIntConst(g, "ax", {0});
  AddInput(g, "one", Dims({1, 5}));
  AddOp(g, "Squeeze", {"one", "ax"}, {"sq"});
  AddIntConst(g, "shape", {3, 1, 5});
  AddOp(g, "Expand", {"sq", "shape"}, {"ex"});
  AddInput(g, "cond", Dims({3, 1, 1}), DType::kBool);
  AddOp(g, "Where", {"cond", "ex", "sq"}, {"w"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "emb"), "2x7x64");
  EXPECT_EQ(ShapeOf(g, "flat"), "2x448");
  EXPECT_EQ(ShapeOf(g, "sq"), "5");
  EXPECT_EQ(ShapeOf(g, "ex"), "3x1x5");
  EXPECT_EQ(ShapeOf(g, "w"), "3x1x5");
}

TEST(ShapeInferenceTest, ResizeByScalesAndReduce) {
  Graph g = WithOpset(13);
  AddInput(g, "x", Dims({1, 3, 20, 30}));
  TensorInfo& scales = AddTensor(g, "scales", Dims({4}), DType::kFloat32, true);
  scales.float_values = std::vector<double>{1, 1, 2, 1.5};
  AddOp(g, "Resize", {"x", "", "scales"}, {"y"});
  AddIntConst(g, "axes", {2, 3});
  SetInt(AddOp(g, "ReduceSum", {"x", "axes"}, {"r"}), "keepdims", 0);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "1x3x40x45");
  EXPECT_EQ(ShapeOf(g, "r"), "1x3");
}

TEST(ShapeInferenceTest, LayerNormSoftmaxBatchNormKeepShape) {
  Graph g = WithOpset(17);
  AddInput(g, "x", Dims({2, 16, 32}));
  AddWeight(g, "g", Dims({32}));
  AddOp(g, "LayerNormalization", {"x", "g"}, {"y", "mean"});
  AddOp(g, "Softmax", {"y"}, {"s"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "2x16x32");
  EXPECT_EQ(ShapeOf(g, "mean"), "2x16x1");
  EXPECT_EQ(ShapeOf(g, "s"), "2x16x32");
}

TEST(ShapeInferenceTest, DeclaredConcreteShapesAreKept) {
  // A graph whose shapes are all concrete is left as it is (here the declared shape is even
  // "wrong" for a Relu: inference must not touch it).
  Graph g = WithOpset(17);
  AddInput(g, "x", Dims({2, 3}));
  AddTensor(g, "y", Dims({7, 7}));
  AddOp(g, "Relu", {"x"}, {"y"});
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(g, "y"), "7x7");
}

TEST(ShapeInferenceTest, BroadcastMismatchIsAWarningNamingTheNode) {
  Graph g = WithOpset(17);
  AddInput(g, "a", Dims({2, 3}));
  AddInput(g, "b", Dims({4}));
  AddOp(g, "Add", {"a", "b"}, {"c"});
  g.ops[0].name = "bad_add";
  ASSERT_TRUE(InferShapes(&g).ok());
  ASSERT_FALSE(g.warnings.empty());
  EXPECT_NE(g.warnings[0].find("'bad_add'"), std::string::npos);
  EXPECT_NE(g.warnings[0].find("cannot broadcast"), std::string::npos);
  ShapeInferenceOptions strict;
  strict.strict = true;
  Graph h = g;
  h.warnings.clear();
  EXPECT_FALSE(InferShapes(&h, strict).ok());
}

TEST(ShapeInferenceTest, BroadcastRules) {
  Expected<Shape> s = BroadcastShapes(Dims({8, 1, 6, 1}), Dims({7, 1, 5}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(ShapeToString(s.value()), "8x7x6x5");
  Expected<Shape> sym = BroadcastShapes({Dim::Symbol("b"), Dim::Known(1)}, Dims({1, 4}));
  ASSERT_TRUE(sym.ok());
  EXPECT_EQ(ShapeToString(sym.value()), "bx4");
  EXPECT_FALSE(BroadcastShapes(Dims({3}), Dims({4})).ok());
}

TEST(ShapeInferenceTest, LoopTripCountMultipliesBodyRepeat) {
  Graph g = WithOpset(16);
  AddIntConst(g, "trips", {5}, true);
  AddInput(g, "a", Dims({4, 8}));
  auto body = std::make_shared<Graph>();
  AddInput(*body, "i", {}, DType::kInt64);
  AddInput(*body, "c", {}, DType::kBool);
  body->inputs.push_back("acc");
  body->Tensor("acc");
  AddOp(*body, "Identity", {"c"}, {"c_out"});
  AddOp(*body, "Relu", {"acc"}, {"acc_out"});
  body->outputs = {"c_out", "acc_out"};
  Op& loop = AddOp(g, "Loop", {"trips", "", "a"}, {"out"});
  loop.attrs["body"].kind = Attribute::Kind::kGraph;
  loop.attrs["body"].graph = body;
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(ShapeOf(*body, "acc_out"), "4x8");
  EXPECT_EQ(ShapeOf(g, "out"), "4x8");
  EXPECT_DOUBLE_EQ(body->ops[1].repeat, 5.0);
}

}  // namespace
}  // namespace ftax
