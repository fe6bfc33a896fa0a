// MACs of real architectures at batch 1 against published counts (within 1%).
//
// The fixtures are structure-only exports made by scripts/export_onnx_fixtures.py (random
// weights, external data dropped). Published references: torchvision model cards (GFLOPS
// there are multiply-accumulates) and, for BERT-base at sequence 128, 10.87 G in the linear
// layers + 0.30 G in the attention matmuls = 11.17 G.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"

namespace ftax {
namespace {

struct Reference {
  const char* file;
  double gmacs;
  const char* source;
};

const Reference kReferences[] = {
    {"resnet18.onnx", 1.814, "torchvision ResNet18_Weights card"},
    {"resnet50.onnx", 4.089, "torchvision ResNet50_Weights card"},
    {"resnet101.onnx", 7.801, "torchvision ResNet101_Weights card"},
    {"mobilenet_v2.onnx", 0.301, "torchvision MobileNet_V2_Weights card"},
    {"efficientnet_b0.onnx", 0.386, "torchvision EfficientNet_B0_Weights card"},
    {"vit_b_16.onnx", 17.56, "torchvision ViT_B_16_Weights card"},
    {"bert_base.onnx", 11.17, "BERT-base seq 128: 10.87 G linear + 0.30 G attention"},
};

class RealModelTest : public ::testing::TestWithParam<Reference> {};

TEST_P(RealModelTest, MacsWithinOnePercentOfPublished) {
  const Reference& r = GetParam();
  std::string path = std::string(FTAX_TEST_DATA) + "/onnx/" + r.file;
  if (!std::ifstream(path).good())
    GTEST_SKIP() << path << " is absent; run scripts/export_onnx_fixtures.py (needs torch)";
  Expected<Graph> g = LoadOnnxFile(path);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(PrepareGraph(&g.value(), {{"batch", 1}, {"seq", 128}}, {}).ok());
  Expected<GraphStats> st = ComputeStats(g.value());
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_TRUE(st->unbound_dims.empty());
  EXPECT_EQ(st->uncounted_ops, 0) << "every op counted";
  double gmacs = st->totals.macs / 1e9;
  std::cout << r.file << ": " << gmacs << " GMACs (published " << r.gmacs << ", " << r.source
            << ")\n";
  EXPECT_NEAR(gmacs, r.gmacs, 0.01 * r.gmacs);
  EXPECT_GE(st->totals.flops, 2 * st->totals.macs);
}

INSTANTIATE_TEST_SUITE_P(Published, RealModelTest, ::testing::ValuesIn(kReferences),
                         [](const ::testing::TestParamInfo<Reference>& i) {
                           std::string n = i.param.file;
                           return n.substr(0, n.find('.'));
                         });

TEST(RealModelTest, BatchScalesMacsLinearly) {
  std::string path = std::string(FTAX_TEST_DATA) + "/onnx/resnet18.onnx";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " is absent";
  double macs[2];
  int64_t batches[2] = {1, 8};
  for (int i = 0; i < 2; ++i) {
    Expected<Graph> g = LoadOnnxFile(path);
    ASSERT_TRUE(g.ok());
    ASSERT_TRUE(PrepareGraph(&g.value(), {{"batch", batches[i]}}, {}).ok());
    Expected<GraphStats> st = ComputeStats(g.value());
    ASSERT_TRUE(st.ok());
    macs[i] = st->totals.macs;
  }
  EXPECT_DOUBLE_EQ(macs[1], 8 * macs[0]);
}

}  // namespace
}  // namespace ftax
