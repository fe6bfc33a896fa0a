#include "graph/graph.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

TEST(GraphTest, NumElementsOfConcreteShape) {
  Shape s = {Dim::Known(2), Dim::Known(3), Dim::Known(4)};
  ASSERT_TRUE(NumElements(s).has_value());
  EXPECT_EQ(*NumElements(s), 24);
}

TEST(GraphTest, NumElementsRefusesSymbolicAndOverflow) {
  EXPECT_FALSE(NumElements({Dim::Symbol("batch"), Dim::Known(3)}).has_value());
  Shape huge = {Dim::Known(int64_t{1} << 40), Dim::Known(int64_t{1} << 40)};
  EXPECT_FALSE(NumElements(huge).has_value());
}

TEST(GraphTest, ShapeToStringNamesSymbols) {
  EXPECT_EQ(ShapeToString({Dim::Symbol("batch"), Dim::Known(128), Dim{}}), "batchx128x?");
}

TEST(GraphTest, ParseDTypeAcceptsAliases) {
  EXPECT_EQ(ParseDType("half"), DType::kFloat16);
  EXPECT_EQ(ParseDType("BF16"), DType::kBFloat16);
  EXPECT_FALSE(ParseDType("fp13").has_value());
}

}  // namespace
}  // namespace ftax
