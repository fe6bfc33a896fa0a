#include "calibrate/measured_framework.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

using nlohmann::json;

TEST(MeasuredFrameworkTest, GraphsCapturedFromEagerCodeAreTheirOwnFramework) {
  EXPECT_EQ(MeasuredFramework(json{{"framework", "cuda-graph"}, {"captured_from", "eager"}}), "cuda-graph-eager");
  EXPECT_EQ(MeasuredFramework(json{{"framework", "cuda-graph"}, {"captured_from", "torchscript"}}), "cuda-graph");
  EXPECT_EQ(MeasuredFramework(json{{"framework", "cuda-graph"}}), "cuda-graph");
  EXPECT_EQ(MeasuredFramework(json{{"framework", "pytorch-eager"}, {"captured_from", "eager"}}), "pytorch-eager");
  EXPECT_EQ(MeasuredFramework(json{{"framework", 3}}), "");
  EXPECT_EQ(MeasuredFramework(json::array()), "");
}

}  // namespace
}  // namespace ftax
