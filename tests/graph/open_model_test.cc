// graph/open_model.h for arch specs: OpenModelGraph with a batch gives the graph
// OpenModelSource's at_batch gives, and errors name the --arch flag only where the spec came
// from it. (TorchScript files: open_model_torch_test.cc.)
#include "graph/open_model.h"

#include <gtest/gtest.h>

#include "graph/graph_stats.h"

namespace ftax {
namespace {

double Macs(const Graph& g) {
  Expected<GraphStats> st = ComputeStats(g);
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? st->totals.macs : -1;
}

TEST(OpenModel, AnArchSpecAtABatchIsTheSourceAtThatBatch) {
  ModelSourceOptions o;
  o.arch = "bert:layers=2,hidden=128,heads=2,ffn=512";
  o.dims = {"seq=64"};
  Expected<ModelSource> src = OpenModelSource(o);
  ASSERT_TRUE(src.ok()) << src.status().message();
  o.batch = 8;
  Expected<Graph> g = OpenModelGraph(o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Expected<Graph> at = src->at_batch(8);
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_EQ(g->ops.size(), at->ops.size());
  EXPECT_DOUBLE_EQ(Macs(g.value()), Macs(at.value()));
  // The batch given replaces one among the dims.
  o.dims = {"seq=64", "batch=2"};
  Expected<Graph> g2 = OpenModelGraph(o);
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  EXPECT_DOUBLE_EQ(Macs(g2.value()), Macs(at.value()));
}

TEST(OpenModel, ArchErrorsNameTheFlagOnlyWhenTheSpecCameFromIt) {
  ModelSourceOptions o;
  o.arch = "bert:layers=zero";
  o.batch = 1;
  o.dims = {"seq=8"};
  Expected<Graph> g = OpenModelGraph(o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message().rfind("--arch 'bert:layers=zero': ", 0), 0u) << g.status().message();
  o.arch_from_flag = false;
  Expected<Graph> row = OpenModelGraph(o);
  ASSERT_FALSE(row.ok());
  EXPECT_EQ(row.status().message().find("--arch"), std::string::npos) << row.status().message();
  EXPECT_NE(g.status().message().find(row.status().message()), std::string::npos);
}

}  // namespace
}  // namespace ftax
