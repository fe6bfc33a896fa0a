// graph/open_model.h for TorchScript files: input shapes in forward's order (a measured row's
// "inputs"), a batch imposed on them, and the cache that loads each file once.
#include "graph/open_model.h"

#include <gtest/gtest.h>

#include "graph/graph_stats.h"
#include "graph/torchscript_loader.h"

namespace ftax {
namespace {

const std::string kBert = std::string(FTAX_TEST_DATA) + "/torchscript/tiny_bert_base.pt";  // input_ids, attention_mask

double Macs(const Graph& g) {
  Expected<GraphStats> st = ComputeStats(g);
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? st->totals.macs : -1;
}

ModelSourceOptions InForwardsOrder(int64_t batch, size_t inputs = 2) {
  ModelSourceOptions o;
  o.path = kBert;
  o.forward_inputs = std::vector<InputShapeFlag>(inputs, InputShapeFlag{"", {1, 16}, {}, DType::kInt64});
  o.batch = batch;
  return o;
}

TEST(OpenModelTorchScript, InputsInForwardsOrderAtABatch) {
  Expected<Graph> g = OpenModelGraph(InForwardsOrder(4));
  ASSERT_TRUE(g.ok()) << g.status().message();
  // The same as the named shapes at that batch, walked directly and through OpenModelSource.
  Expected<TorchScriptModel> m = TorchScriptModel::Load(kBert);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Expected<Graph> direct = m->Walk({{"input_ids", {4, 16}, {}, DType::kInt64}, {"attention_mask", {4, 16}, {}, DType::kInt64}});
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  EXPECT_EQ(g->ops.size(), direct->ops.size());
  EXPECT_DOUBLE_EQ(Macs(g.value()), Macs(direct.value()));
  ModelSourceOptions named;
  named.path = kBert;
  named.input_shapes = {"input_ids=1x16:int64", "attention_mask=1x16:int64"};
  Expected<ModelSource> src = OpenModelSource(named);
  ASSERT_TRUE(src.ok()) << src.status().message();
  EXPECT_TRUE(src->from_torchscript);
  Expected<Graph> at = src->at_batch(4);
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_DOUBLE_EQ(Macs(g.value()), Macs(at.value()));
  EXPECT_EQ(ShapeToString(g->Find(g->inputs[1])->shape), "4x16");
}

TEST(OpenModelTorchScript, ForwardsInputsMustAllBeGiven) {
  Expected<Graph> g = OpenModelGraph(InForwardsOrder(1, 1));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), kBert + ": 1 input shapes given in forward's order, forward takes 2");
  ModelSourceOptions both = InForwardsOrder(1);
  both.input_shapes = {"input_ids=1x16"};
  EXPECT_FALSE(OpenModelGraph(both).ok());
}

TEST(OpenModelTorchScript, TheCacheLoadsAFileOnce) {
  ModelFileCache files;
  Expected<std::shared_ptr<const TorchScriptModel>> a = files.TorchScript(kBert);
  ASSERT_TRUE(a.ok()) << a.status().message();
  Expected<std::shared_ptr<const TorchScriptModel>> b = files.TorchScript(kBert);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value().get(), b.value().get());
  ModelSourceOptions o = InForwardsOrder(2);
  o.cache = &files;
  Expected<Graph> cached = OpenModelGraph(o);
  ASSERT_TRUE(cached.ok()) << cached.status().message();
  o.cache = nullptr;
  Expected<Graph> fresh = OpenModelGraph(o);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_DOUBLE_EQ(Macs(cached.value()), Macs(fresh.value()));
  Expected<std::shared_ptr<const TorchScriptModel>> missing = files.TorchScript(kBert + ".absent");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace ftax
