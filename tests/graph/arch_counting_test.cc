// Counting on --arch graphs: both flavors (ONNX-style ops and aten ops) must give the same
// MACs, every op must have a counting entry, and the totals must match the published counts
// that the exported ONNX fixtures are checked against (real_models_onnx_test.cc).
#include <gtest/gtest.h>

#include "graph/arch_spec.h"
#include "graph/graph_stats.h"

namespace ftax {
namespace {

struct ArchCase {
  const char* spec;
  double gmacs;  // published, batch 1 (seq 128 for sequence models)
};

class ArchCountingTest : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ArchCountingTest, FlavorsAgreeAndMatchPublishedMacs) {
  const ArchCase& c = GetParam();
  double macs[2];
  ArchFlavor flavors[2] = {ArchFlavor::kOnnx, ArchFlavor::kTorch};
  for (int i = 0; i < 2; ++i) {
    Expected<Graph> g = BuildArchGraph(c.spec, {{"batch", 1}, {"seq", 128}}, flavors[i]);
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_TRUE(PrepareGraph(&g.value(), {}, {}).ok());
    Expected<GraphStats> st = ComputeStats(g.value());
    ASSERT_TRUE(st.ok()) << st.status().message();
    EXPECT_TRUE(st->unknown_op_types.empty()) << c.spec << ": " << st->unknown_op_types[0];
    EXPECT_EQ(st->uncounted_ops, 0) << c.spec;
    EXPECT_GT(st->totals.depth, 0);
    EXPECT_LE(st->totals.work_ops, st->totals.ops);
    macs[i] = st->totals.macs;
  }
  EXPECT_DOUBLE_EQ(macs[0], macs[1]) << c.spec;
  EXPECT_NEAR(macs[0] / 1e9, c.gmacs, 0.01 * c.gmacs) << c.spec;
}

INSTANTIATE_TEST_SUITE_P(Published, ArchCountingTest,
                         ::testing::Values(ArchCase{"resnet:depth=18", 1.814},
                                           ArchCase{"resnet:depth=50", 4.089},
                                           ArchCase{"resnet:depth=101", 7.801},
                                           ArchCase{"mobilenet", 0.301},
                                           ArchCase{"vit", 17.56},
                                           ArchCase{"bert", 11.17}));

TEST(ArchCountingTest, BatchAndSequenceScaleTheCount) {
  auto macs = [](int64_t batch, int64_t seq) {
    Expected<Graph> g = BuildArchGraph("bert:layers=2", {{"batch", batch}, {"seq", seq}},
                                       ArchFlavor::kTorch);
    EXPECT_TRUE(g.ok());
    Expected<GraphStats> st = ComputeStats(g.value());
    EXPECT_TRUE(st.ok());
    return st.ok() ? st->totals.macs : -1.0;
  };
  EXPECT_DOUBLE_EQ(macs(4, 64), 4 * macs(1, 64));
  // Linear layers scale with seq, attention with seq^2: doubling seq more than doubles MACs.
  EXPECT_GT(macs(1, 256), 2 * macs(1, 128));
}

}  // namespace
}  // namespace ftax
