#include "graph/graph_stats.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "graph_fixtures.h"

namespace ftax {
namespace {

using testing::AddInput;
using testing::AddIntConst;
using testing::AddOp;
using testing::AddTensor;
using testing::AddWeight;
using testing::Dims;

GraphStats StatsOk(Graph& g, StatsOptions opt = {}) {
  Status s = PrepareGraph(&g, {}, {});
  EXPECT_TRUE(s.ok()) << s.message();
  Expected<GraphStats> st = ComputeStats(g, opt);
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? st.value() : GraphStats{};
}

// x[2,16] -> MatMul(w[16,16]) -> Relu -> MatMul(same w) -> Reshape(shape-only) -> Add(b[16])
Graph SharedWeightMlp() {
  Graph g;
  g.opset[""] = 17;
  AddInput(g, "x", Dims({2, 16}));
  AddWeight(g, "w", Dims({16, 16}));
  AddWeight(g, "b", Dims({16}));
  AddWeight(g, "unused", Dims({1000}));
  AddIntConst(g, "shape", {2, 16});
  AddOp(g, "MatMul", {"x", "w"}, {"h1"});
  AddOp(g, "Relu", {"h1"}, {"r"});
  AddOp(g, "MatMul", {"r", "w"}, {"h2"});
  AddOp(g, "Reshape", {"h2", "shape"}, {"h3"});
  AddOp(g, "Add", {"h3", "b"}, {"y"});
  g.outputs = {"y"};
  return g;
}

TEST(GraphStatsTest, TotalsOfASmallMlp) {
  Graph g = SharedWeightMlp();
  GraphStats st = StatsOk(g);
  // MACs: two 2x16x16 MatMuls = 2 * 512 = 1024. FLOPs: 2048 + Relu 32 + Add 32 = 2112.
  EXPECT_DOUBLE_EQ(st.totals.macs, 1024.0);
  EXPECT_DOUBLE_EQ(st.totals.flops, 2112.0);
  // Params: w once (256, shared by two MatMuls) + b 16; the unused initializer and the int64
  // shape constant are not parameters. Weight bytes: 272 * 4 + 16 (shape, int64) = 1104.
  EXPECT_EQ(st.totals.params, 272);
  EXPECT_DOUBLE_EQ(st.totals.weight_bytes, 1104.0);
  EXPECT_EQ(st.totals.ops, 5);
  EXPECT_EQ(st.totals.work_ops, 4);  // Reshape launches nothing
  EXPECT_EQ(st.totals.depth, 4);     // MatMul, Relu, MatMul, Add on one path
  // Activation bytes: per work op, non-initializer inputs + outputs (each 2x16 fp32 = 128 B):
  // MatMul 128+128, Relu 128+128, MatMul 128+128, Add 128+128 = 1024.
  EXPECT_DOUBLE_EQ(st.totals.activation_bytes, 1024.0);
  ASSERT_FALSE(st.by_op_type.empty());
  EXPECT_EQ(st.by_op_type[0].op_type, "MatMul");
  EXPECT_EQ(st.by_op_type[0].count, 2);
  EXPECT_DOUBLE_EQ(st.by_op_type[0].macs, 1024.0);
}

TEST(GraphStatsTest, DepthFollowsTheLongestPathNotTheOpCount) {
  // Two parallel branches of 3 and 1 work ops joined by an Add: depth 4, work ops 5.
  Graph g;
  AddInput(g, "x", Dims({8}));
  AddOp(g, "Relu", {"x"}, {"a1"});
  AddOp(g, "Sigmoid", {"a1"}, {"a2"});
  AddOp(g, "Tanh", {"a2"}, {"a3"});
  AddOp(g, "Neg", {"x"}, {"b1"});
  AddOp(g, "Add", {"a3", "b1"}, {"y"});
  GraphStats st = StatsOk(g);
  EXPECT_EQ(st.totals.work_ops, 5);
  EXPECT_EQ(st.totals.depth, 4);
}

TEST(GraphStatsTest, PerNodeRowsSumToTotals) {
  Graph g = SharedWeightMlp();
  StatsOptions opt;
  opt.per_node = true;
  GraphStats st = StatsOk(g, opt);
  ASSERT_EQ(st.nodes.size(), 5u);
  double macs = 0, flops = 0;
  for (const auto& n : st.nodes) {
    macs += n.macs;
    flops += n.flops;
  }
  EXPECT_DOUBLE_EQ(macs, st.totals.macs);
  EXPECT_DOUBLE_EQ(flops, st.totals.flops);
  EXPECT_EQ(st.nodes[0].output_shape, "2x16");
}

TEST(GraphStatsTest, UnknownOpsAreCountedAndListed) {
  Graph g;
  AddInput(g, "x", Dims({4}));
  AddOp(g, "MysteryOp", {"x"}, {"y"}, "com.example");
  AddOp(g, "MysteryOp", {"y"}, {"z"}, "com.example");
  GraphStats st = StatsOk(g);
  EXPECT_EQ(st.totals.ops, 2);
  EXPECT_EQ(st.uncounted_ops, 2);
  ASSERT_EQ(st.unknown_op_types.size(), 1u);
  EXPECT_EQ(st.unknown_op_types[0], "com.example::MysteryOp");
  bool warned = false;
  for (const auto& w : st.warnings) warned |= w.find("MysteryOp") != std::string::npos;
  EXPECT_TRUE(warned);
  StatsOptions strict;
  strict.strict = true;
  EXPECT_FALSE(ComputeStats(g, strict).ok());
}

TEST(GraphStatsTest, UnboundDimsAreReported) {
  Graph g;
  AddInput(g, "x", {Dim::Symbol("batch"), Dim::Known(16)});
  AddWeight(g, "w", Dims({16, 16}));
  AddOp(g, "MatMul", {"x", "w"}, {"y"});
  GraphStats st = StatsOk(g);
  EXPECT_EQ(st.unbound_dims, (std::vector<std::string>{"batch"}));
  EXPECT_DOUBLE_EQ(st.totals.macs, 0.0);
  EXPECT_EQ(st.uncounted_ops, 1);
  // Binding it makes the count exact: 3*16*16 = 768.
  Graph b = g;
  ASSERT_TRUE(PrepareGraph(&b, {{"batch", 3}}, {}).ok());
  Expected<GraphStats> sb = ComputeStats(b);
  ASSERT_TRUE(sb.ok());
  EXPECT_TRUE(sb->unbound_dims.empty());
  EXPECT_DOUBLE_EQ(sb->totals.macs, 768.0);
}

std::shared_ptr<Graph> MatMulBody(const std::string& in, const std::string& out, int n) {
  // n chained MatMuls of a 4x8 outer tensor by an 8x8 outer weight.
  auto b = std::make_shared<Graph>();
  std::string prev = in;
  for (int i = 0; i < n; ++i) {
    std::string o = i + 1 == n ? out : out + std::to_string(i);
    AddOp(*b, "MatMul", {prev, "lw"}, {o});
    prev = o;
  }
  b->outputs = {out};
  return b;
}

TEST(GraphStatsTest, IfCountsTheCostlierBranchUnlessTheConditionIsConstant) {
  auto build = [](bool constant_cond) {
    Graph g;
    g.opset[""] = 16;
    AddInput(g, "a", Dims({4, 8}));
    AddWeight(g, "lw", Dims({8, 8}));
    if (constant_cond) AddIntConst(g, "flag", {0}, true);
    else AddInput(g, "flag", {}, DType::kBool);
    Op& op = AddOp(g, "If", {"flag"}, {"out"});
    op.attrs["then_branch"].kind = Attribute::Kind::kGraph;
    op.attrs["then_branch"].graph = MatMulBody("a", "t", 2);  // 2 * 256 MACs
    op.attrs["else_branch"].kind = Attribute::Kind::kGraph;
    op.attrs["else_branch"].graph = MatMulBody("a", "e", 1);  // 256 MACs
    return g;
  };
  Graph dynamic = build(false);
  GraphStats st = StatsOk(dynamic);
  EXPECT_DOUBLE_EQ(st.totals.macs, 512.0);
  EXPECT_EQ(st.totals.depth, 2);
  EXPECT_EQ(st.totals.params, 64);  // lw is used only inside the branches, counted once
  Graph constant = build(true);     // flag = 0: the else branch
  GraphStats sc = StatsOk(constant);
  EXPECT_DOUBLE_EQ(sc.totals.macs, 256.0);
}

TEST(GraphStatsTest, ConstantLoopTripCountMultiplies) {
  Graph g;
  g.opset[""] = 16;
  AddIntConst(g, "trips", {3}, true);
  AddInput(g, "a", Dims({4, 8}));
  AddWeight(g, "lw", Dims({8, 8}));
  auto body = std::make_shared<Graph>();
  AddInput(*body, "i", {}, DType::kInt64);
  AddInput(*body, "c", {}, DType::kBool);
  body->inputs.push_back("acc");
  body->Tensor("acc");
  AddOp(*body, "Identity", {"c"}, {"c_out"});
  AddOp(*body, "MatMul", {"acc", "lw"}, {"acc_out"});
  body->outputs = {"c_out", "acc_out"};
  Op& loop = AddOp(g, "Loop", {"trips", "", "a"}, {"out"});
  loop.attrs["body"].kind = Attribute::Kind::kGraph;
  loop.attrs["body"].graph = body;
  GraphStats st = StatsOk(g);
  EXPECT_DOUBLE_EQ(st.totals.macs, 3 * 256.0);
  EXPECT_EQ(st.totals.ops, 1 + 3 * 2);
  EXPECT_EQ(st.totals.work_ops, 3);
  EXPECT_EQ(st.totals.depth, 3);
}

}  // namespace
}  // namespace ftax
