#include "graph/dim_binding.h"

#include <gtest/gtest.h>

#include "graph_fixtures.h"

namespace ftax {
namespace {

using testing::AddInput;
using testing::AddOp;
using testing::Dims;

TEST(DimBindingTest, ParsesDimFlags) {
  Expected<DimFlag> d = ParseDimFlag("batch=8");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->name, "batch");
  EXPECT_EQ(d->value, 8);
  for (const char* bad : {"batch", "=8", "batch=", "batch=0", "batch=-2", "batch=8x",
                          "batch=99999999999999999999"}) {
    Expected<DimFlag> b = ParseDimFlag(bad);
    EXPECT_FALSE(b.ok()) << bad;
    if (!b.ok()) EXPECT_NE(b.status().message().find("--dim"), std::string::npos) << bad;
  }
}

TEST(DimBindingTest, ParsesInputShapes) {
  Expected<InputShapeFlag> a = ParseInputShapeFlag("1x3x224x224");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->input, "");
  EXPECT_EQ(a->dims, (std::vector<int64_t>{1, 3, 224, 224}));
  Expected<InputShapeFlag> b = ParseInputShapeFlag("input_ids=4,128");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->input, "input_ids");
  EXPECT_EQ(b->dims, (std::vector<int64_t>{4, 128}));
  for (const char* bad : {"", "x=", "1x0x3", "1x-3", "1xx3", "=1x3", "1x$x3", "1x3:float99", "1x3:"})
    EXPECT_FALSE(ParseInputShapeFlag(bad).ok()) << bad;
}

TEST(DimBindingTest, InputShapesWithSymbolsAndDtype) {
  Expected<InputShapeFlag> a = ParseInputShapeFlag("input_ids=batchx128:int32");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->input, "input_ids");
  EXPECT_EQ(a->symbols, (std::vector<std::string>{"batch", ""}));
  ASSERT_TRUE(a->dtype.has_value());
  EXPECT_EQ(*a->dtype, DType::kInt32);
  // A symbol containing 'x' needs ',' separators.
  Expected<InputShapeFlag> b = ParseInputShapeFlag("max_len,4");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->symbols, (std::vector<std::string>{"max_len", ""}));
  Expected<std::vector<InputShapeFlag>> r = ResolveInputShapes({a.value()}, {{"batch", 8}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()[0].dims, (std::vector<int64_t>{8, 128}));
  EXPECT_TRUE(r.value()[0].symbols.empty());
  r = ResolveInputShapes({a.value()}, {{"seq", 8}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'batch'"), std::string::npos) << r.status().message();
  // Binding an ONNX graph input with a user symbol bound by --dim.
  Graph g;
  AddInput(g, "x", {Dim::Symbol("N"), Dim::Known(128)});
  ASSERT_TRUE(BindDims(&g, {{"batch", 4}}, {{"x", {-1, 128}, {"batch", ""}}}).ok());
  EXPECT_EQ(ShapeToString(g.Find("x")->shape), "4x128");
}

TEST(DimBindingTest, CollectRejectsConflicts) {
  EXPECT_TRUE(CollectDims({{"b", 2}, {"b", 2}}).ok());
  Expected<DimBindings> c = CollectDims({{"b", 2}, {"b", 3}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("b"), std::string::npos);
}

TEST(DimBindingTest, InputShapeBindsTheSymbolsItReplaces) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Known(3), Dim::Symbol("h"), Dim::Symbol("h")});
  AddInput(g, "mask", {Dim::Symbol("batch"), Dim::Known(7)});
  ASSERT_TRUE(BindDims(&g, {}, {{"x", {8, 3, 32, 32}}}).ok());
  EXPECT_EQ(ShapeToString(g.Find("x")->shape), "8x3x32x32");
  EXPECT_EQ(ShapeToString(g.Find("mask")->shape), "8x7");
  EXPECT_TRUE(UnboundInputDims(g).empty());
}

TEST(DimBindingTest, ErrorsNameTheInputAndTheConflict) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Known(3)});
  AddInput(g, "y", {Dim::Symbol("batch")});
  // Two inputs: an unnamed --input-shape is ambiguous.
  Status s = BindDims(&g, {}, {{"", {1, 3}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("x, y"), std::string::npos);
  // Unknown input name.
  s = BindDims(&g, {}, {{"z", {1, 3}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'z'"), std::string::npos);
  // Rank mismatch.
  s = BindDims(&g, {}, {{"x", {1, 3, 4}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank"), std::string::npos);
  // --dim batch=2 contradicts an input shape that says batch is 4.
  s = BindDims(&g, {{"batch", 2}}, {{"x", {4, 3}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'batch' is bound to 2"), std::string::npos);
}

TEST(DimBindingTest, UnusedDimIsAWarningAndUnboundDimsAreListed) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Symbol("seq")});
  ASSERT_TRUE(BindDims(&g, {{"batch", 1}, {"colour", 3}}, {}).ok());
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("colour"), std::string::npos);
  EXPECT_EQ(UnboundInputDims(g), (std::vector<std::string>{"seq"}));
}

TEST(DimBindingTest, BindsInsideSubgraphs) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("n")});
  auto body = std::make_shared<Graph>();
  AddInput(*body, "inner", {Dim::Symbol("n"), Dim::Known(2)});
  Op& op = AddOp(g, "If", {"c"}, {"y"});
  op.attrs["then_branch"].kind = Attribute::Kind::kGraph;
  op.attrs["then_branch"].graph = body;
  ASSERT_TRUE(BindDims(&g, {{"n", 6}}, {}).ok());
  EXPECT_EQ(ShapeToString(body->Find("inner")->shape), "6x2");
}

}  // namespace
}  // namespace ftax
