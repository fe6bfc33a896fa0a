// Constant folding of shape arithmetic: each op against contents derived by hand, and the
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

Op MakeOp(const std::string& type, size_t inputs) {
  Op op;
  op.type = type;
  op.name = type;
  for (size_t i = 0; i < inputs; ++i) op.inputs.push_back("in" + std::to_string(i));
  op.outputs = {"out"};
  return op;
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
    Op o;
    o.type = type;
    o.name = out;
    o.inputs = std::move(in);
    o.outputs = {out};
    g.ops.push_back(o);
    return &g.ops.back();
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
