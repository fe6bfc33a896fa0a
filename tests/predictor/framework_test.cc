#include "predictor/framework.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ftax {
namespace {

TEST(FrameworkTest, EveryNameParsesBack) {
  for (Framework f : AllFrameworks()) {
    auto p = ParseFramework(FrameworkName(f));
    ASSERT_TRUE(p.has_value()) << FrameworkName(f);
    EXPECT_EQ(*p, f);
  }
  EXPECT_FALSE(ParseFramework("tensorflow").has_value());
}

// A graph captured from the eager module is a graph (one launch per replay) that shares the
// cuda-graph costs, so a profile keeps, and the bench measures, one set for both.
TEST(FrameworkTest, AGraphFromEagerCodeSharesTheGraphCosts) {
  EXPECT_TRUE(IsCudaGraph(Framework::kCudaGraphEager));
  EXPECT_TRUE(IsCudaGraph(Framework::kCudaGraph));
  EXPECT_FALSE(IsCudaGraph(Framework::kTorchscript));
  EXPECT_EQ(CostFramework(Framework::kCudaGraphEager), Framework::kCudaGraph);
  EXPECT_EQ(CostFramework(Framework::kPytorchEagerNoGrad), Framework::kPytorchEagerNoGrad);
  const std::vector<Framework> cost = CostFrameworks();
  EXPECT_EQ(cost.size(), AllFrameworks().size() - 1);
  EXPECT_EQ(std::count(cost.begin(), cost.end(), Framework::kCudaGraphEager), 0);
  EXPECT_EQ(std::count(cost.begin(), cost.end(), Framework::kCudaGraph), 1);
}

}  // namespace
}  // namespace ftax
