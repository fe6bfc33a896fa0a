// Constant folding of shape arithmetic: each op against contents derived by hand (integer and
// floating-point: the attention scale the TorchScript-based exporter computes from a shape), and the
// pad chain torch.onnx writes for Swin's F.pad (Shape -> Gather -> Mod -> Sub -> Mod -> Concat
// -> Reshape -> Slice(step -1) -> Transpose -> Reshape -> Cast -> Pad), which must give Pad a
// concrete output shape once the input is bound.
#include "graph/constant_folding.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"

namespace ftax {
namespace {

TensorInfo Const(std::vector<int64_t> dims, std::vector<int64_t> v, DType dt = DType::kInt64) {
  TensorInfo t;
  t.dtype = dt;
  t.has_shape = true;
  for (int64_t d : dims) t.shape.push_back(Dim::Known(d));
  t.int_values = std::move(v);
  return t;
}

TensorInfo Out(std::vector<int64_t> dims, DType dt = DType::kInt64) {
  TensorInfo t;
  t.dtype = dt;
  t.has_shape = true;
  for (int64_t d : dims) t.shape.push_back(Dim::Known(d));
  return t;
}

std::vector<int64_t> Fold(const Op& op, const std::vector<TensorInfo>& in, const TensorInfo& out,
                          int64_t opset = 17) {
  std::vector<const TensorInfo*> ins;
  for (const auto& t : in) ins.push_back(&t);
  auto r = FoldConstant(op, ins, {&out}, opset, 64);
  if (!r) return {-999};
  EXPECT_TRUE((*r)[0].is_int);
  return (*r)[0].ints;
}

TensorInfo FloatConst(std::vector<int64_t> dims, std::vector<double> v, DType dt = DType::kFloat32) {
  TensorInfo t = Out(std::move(dims), dt);
  t.float_values = std::move(v);
  return t;
}

// The folded contents of a floating-point output ({-999} when nothing folds).
std::vector<double> FoldF(const Op& op, const std::vector<TensorInfo>& in, const TensorInfo& out) {
  std::vector<const TensorInfo*> ins;
  for (const auto& t : in) ins.push_back(&t);
  auto r = FoldConstant(op, ins, {&out}, 17, 64);
  if (!r) return {-999};
  EXPECT_FALSE((*r)[0].is_int);
  return (*r)[0].floats;
}

Op MakeOp(const std::string& type, size_t inputs) {
  Op op;
  op.type = type;
  op.name = type;
  for (size_t i = 0; i < inputs; ++i) op.inputs.push_back("in" + std::to_string(i));
  op.outputs = {"out"};
  return op;
}

// Appends an op named after its one output; returns it.
Op* AddOp(Graph* g, const std::string& type, std::vector<std::string> in, const std::string& out) {
  Op o;
  o.type = type;
  o.name = out;
  o.inputs = std::move(in);
  o.outputs = {out};
  g->ops.push_back(o);
  return &g->ops.back();
}

TEST(ConstantFolding, TransposeOfTwoByThree) {
  Op op = MakeOp("Transpose", 1);
  op.attrs["perm"].kind = Attribute::Kind::kInts;
  op.attrs["perm"].ints = {1, 0};
  // [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]]
  EXPECT_EQ(Fold(op, {Const({2, 3}, {1, 2, 3, 4, 5, 6})}, Out({3, 2})),
            (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(ConstantFolding, SliceWithNegativeStepReversesRows) {
  Op op = MakeOp("Slice", 5);
  // x [3, 2]; rows reversed: starts -1, ends -INT64_MAX (as torch.onnx writes), axis 0, step -1
  std::vector<TensorInfo> in = {Const({3, 2}, {1, 2, 3, 4, 5, 6}), Const({1}, {-1}),
                                Const({1}, {-9223372036854775807LL}), Const({1}, {0}),
                                Const({1}, {-1})};
  EXPECT_EQ(Fold(op, in, Out({3, 2})), (std::vector<int64_t>{5, 6, 3, 4, 1, 2}));
}

TEST(ConstantFolding, GatherAlongAxisOneOfAMatrix) {
  Op op = MakeOp("Gather", 2);
  op.attrs["axis"].kind = Attribute::Kind::kInt;
  op.attrs["axis"].i = 1;
  // x [2, 3] = [[1,2,3],[4,5,6]]; indices [2, 0] -> [[3,1],[6,4]]
  EXPECT_EQ(Fold(op, {Const({2, 3}, {1, 2, 3, 4, 5, 6}), Const({2}, {2, 0})}, Out({2, 2})),
            (std::vector<int64_t>{3, 1, 6, 4}));
}

TEST(ConstantFolding, IntegerDivTruncatesAndModTakesTheDivisorsSign) {
  Op div = MakeOp("Div", 2);
  EXPECT_EQ(Fold(div, {Const({2}, {7, -7}), Const({}, {2})}, Out({2})), (std::vector<int64_t>{3, -3}));
  Op mod = MakeOp("Mod", 2);
  EXPECT_EQ(Fold(mod, {Const({2}, {7, -7}), Const({}, {3})}, Out({2})), (std::vector<int64_t>{1, 2}));
  Op by_zero = MakeOp("Div", 2);
  EXPECT_EQ(Fold(by_zero, {Const({1}, {7}), Const({1}, {0})}, Out({1})), (std::vector<int64_t>{-999}));
}

TEST(ConstantFolding, WhereBroadcastsItsCondition) {
  Op op = MakeOp("Where", 3);
  std::vector<TensorInfo> in = {Const({2, 1}, {1, 0}, DType::kBool), Const({2, 2}, {1, 2, 3, 4}),
                                Const({}, {9})};
  EXPECT_EQ(Fold(op, in, Out({2, 2})), (std::vector<int64_t>{1, 2, 9, 9}));
}

TEST(ConstantFolding, NotAConstantOrTooLargeIsLeftAlone) {
  Op op = MakeOp("Add", 2);
  TensorInfo unknown = Out({2});
  EXPECT_EQ(Fold(op, {Const({2}, {1, 2}), unknown}, Out({2})), (std::vector<int64_t>{-999}));
  std::vector<int64_t> big(100, 1);
  EXPECT_EQ(Fold(op, {Const({100}, big), Const({100}, big)}, Out({100})), (std::vector<int64_t>{-999}));
}

// Floating-point contents fold as doubles: an int cast to float, Sqrt, Reciprocal, and Div
// and Mul of a float by an int (broadcast), each against values worked out by hand.
TEST(ConstantFolding, FloatScalarsFoldByHand) {
  Op cast = MakeOp("Cast", 1);
  cast.attrs["to"].kind = Attribute::Kind::kInt;
  cast.attrs["to"].i = 1;  // FLOAT
  EXPECT_EQ(FoldF(cast, {Const({}, {64})}, Out({}, DType::kFloat32)), (std::vector<double>{64.0}));
  Op sqrt = MakeOp("Sqrt", 1);
  EXPECT_EQ(FoldF(sqrt, {FloatConst({2}, {64.0, 2.25})}, Out({2}, DType::kFloat32)),
            (std::vector<double>{8.0, 1.5}));
  EXPECT_EQ(FoldF(sqrt, {FloatConst({1}, {-1.0})}, Out({1}, DType::kFloat32)), (std::vector<double>{-999}));
  Op recip = MakeOp("Reciprocal", 1);
  EXPECT_EQ(FoldF(recip, {FloatConst({}, {8.0})}, Out({}, DType::kFloat32)), (std::vector<double>{0.125}));
  Op div = MakeOp("Div", 2);
  // 1 / [8, 4] = [0.125, 0.25]; a float by an int divides as floats: 3.0 / 2 = 1.5, not 1.
  EXPECT_EQ(FoldF(div, {FloatConst({1}, {1.0}), FloatConst({2}, {8.0, 4.0})}, Out({2}, DType::kFloat32)),
            (std::vector<double>{0.125, 0.25}));
  EXPECT_EQ(FoldF(div, {FloatConst({}, {3.0}), Const({}, {2})}, Out({}, DType::kFloat32)),
            (std::vector<double>{1.5}));
  Op mul = MakeOp("Mul", 2);
  EXPECT_EQ(FoldF(mul, {FloatConst({2, 1}, {0.5, 2.0}), FloatConst({2}, {3.0, 4.0})}, Out({2, 2}, DType::kFloat32)),
            (std::vector<double>{1.5, 2.0, 6.0, 8.0}));
  // A float cast back to an integer type truncates, as ONNX's Cast does.
  Op to_int = MakeOp("Cast", 1);
  to_int.attrs["to"].kind = Attribute::Kind::kInt;
  to_int.attrs["to"].i = 7;  // INT64
  EXPECT_EQ(Fold(to_int, {FloatConst({2}, {2.75, -2.75})}, Out({2})), (std::vector<int64_t>{2, -2}));
}

// nn.MultiheadAttention's scale as the TorchScript-based exporter writes it: head_dim = the
// last dim of q (64), scale = 1 / sqrt(float(head_dim)) = 0.125, applied as sqrt(scale) to q
// and to k^T (sqrt(0.125) = 0.35355...). Every tensor on the chain folds once q's shape is
// known.
TEST(ConstantFolding, AttentionScaleChainFoldsToFloats) {
  Graph g;
  g.opset[""] = 17;
  TensorInfo& q = g.Tensor("q");
  q.dtype = DType::kFloat32;
  q.has_shape = true;
  q.shape = {Dim::Known(1), Dim::Known(12), Dim::Known(197), Dim::Known(64)};
  q.is_graph_input = true;
  g.inputs = {"q"};
  TensorInfo last = Const({}, {-1});
  last.is_initializer = true;
  last.name = "last";
  g.tensors["last"] = last;
  TensorInfo one = FloatConst({1}, {1.0});
  one.is_initializer = true;
  one.name = "one";
  g.tensors["one"] = one;
  auto op = [&](const std::string& type, std::vector<std::string> in, const std::string& out) {
    return AddOp(&g, type, std::move(in), out);
  };
  op("Shape", {"q"}, "shape");
  op("Gather", {"shape", "last"}, "head_dim");
  Op* cast = op("Cast", {"head_dim"}, "head_dim_f");
  cast->attrs["to"].kind = Attribute::Kind::kInt;
  cast->attrs["to"].i = 1;
  op("Sqrt", {"head_dim_f"}, "root");
  op("Div", {"one", "root"}, "scale");
  op("Sqrt", {"scale"}, "half_scale");
  op("Mul", {"q", "half_scale"}, "q_scaled");
  ASSERT_TRUE(InferShapes(&g).ok());
  const TensorInfo* head_dim = g.Find("head_dim");
  ASSERT_TRUE(head_dim && head_dim->int_values);
  EXPECT_EQ(*head_dim->int_values, (std::vector<int64_t>{64}));
  const TensorInfo* scale = g.Find("scale");
  ASSERT_TRUE(scale && scale->float_values);
  EXPECT_EQ(*scale->float_values, (std::vector<double>{0.125}));
  const TensorInfo* half = g.Find("half_scale");
  ASSERT_TRUE(half && half->float_values && half->float_values->size() == 1);
  EXPECT_DOUBLE_EQ((*half->float_values)[0], 0.35355339059327373);
  // q * sqrt(scale) is the model's tensor: not folded.
  const TensorInfo* qs = g.Find("q_scaled");
  ASSERT_TRUE(qs && qs->has_shape);
  EXPECT_FALSE(qs->float_values.has_value());
  EXPECT_EQ(ShapeToString(qs->shape), "1x12x197x64");
}

// torch.onnx's F.pad(x, (0, pad_w)) with pad_w = (7 - W % 7) % 7, W = 10: pad_w = 4.
TEST(ConstantFolding, SwinPadChainGivesPadAConcreteShape) {
  Graph g;
  g.opset[""] = 17;
  TensorInfo& x = g.Tensor("x");
  x.dtype = DType::kFloat32;
  x.has_shape = true;
  x.shape = {Dim::Known(1), Dim::Known(3), Dim::Known(10), Dim::Known(10)};
  x.is_graph_input = true;
  g.inputs = {"x"};
  auto init = [&](const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> v) {
    TensorInfo t = Const(std::move(dims), std::move(v));
    t.is_initializer = true;
    t.name = name;
    g.tensors[name] = t;
  };
  init("three", {}, {3});
  init("seven", {}, {7});
  init("zeros", {6}, {0, 0, 0, 0, 0, 0});
  init("pairs", {2}, {-1, 2});
  init("flat", {1}, {-1});
  init("axes0", {1}, {0});
  init("start", {1}, {-1});
  init("end", {1}, {-9223372036854775807LL});
  init("step", {1}, {-1});
  auto op = [&](const std::string& type, std::vector<std::string> in, const std::string& out) {
    return AddOp(&g, type, std::move(in), out);
  };
  op("Shape", {"x"}, "shape");
  op("Gather", {"shape", "three"}, "w");
  op("Mod", {"w", "seven"}, "w_mod");
  op("Sub", {"seven", "w_mod"}, "rest");
  op("Mod", {"rest", "seven"}, "pad_w");
  op("Unsqueeze", {"pad_w", "axes0"}, "pad_w1");
  // (0, pad_w) padded with zeros to 2 * rank = 8 values, as the exporter writes it.
  Op* c = op("Concat", {"axes0", "pad_w1", "zeros"}, "pads_torch");
  c->attrs["axis"].kind = Attribute::Kind::kInt;
  op("Reshape", {"pads_torch", "pairs"}, "pairs2");
  op("Slice", {"pairs2", "start", "end", "axes0", "step"}, "reversed");
  Op* t = op("Transpose", {"reversed"}, "by_side");
  t->attrs["perm"].kind = Attribute::Kind::kInts;
  t->attrs["perm"].ints = {1, 0};
  op("Reshape", {"by_side", "flat"}, "pads_flat");
  Op* cast = op("Cast", {"pads_flat"}, "pads");
  cast->attrs["to"].kind = Attribute::Kind::kInt;
  cast->attrs["to"].i = 7;
  op("Pad", {"x", "pads"}, "y");
  ASSERT_TRUE(InferShapes(&g).ok());
  const TensorInfo* pads = g.Find("pads");
  ASSERT_TRUE(pads && pads->int_values);
  // torch's (W_left=0, W_right=4, H_top=0, H_bottom=0, 0, 0, 0, 0) -> ONNX begins then ends.
  EXPECT_EQ(*pads->int_values, (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 4}));
  const TensorInfo* y = g.Find("y");
  ASSERT_TRUE(y && y->has_shape);
  EXPECT_EQ(ShapeToString(y->shape), "1x3x10x14");
}

}  // namespace
}  // namespace ftax
