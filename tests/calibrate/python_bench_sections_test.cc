#include "calibrate/python_bench_sections.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

using nlohmann::json;

// The same rows and sections as tests/scripts/bench_eager_sections_test.py asserts of
// bench_eager.py's section_of: the two sides must name a row's section alike.
TEST(PythonBenchSections, EachRowKindHasItsSection) {
  EXPECT_EQ(PythonSectionOf({{"framework", "pytorch-eager"}, {"mode", "inference"}, {"class", "kernel"}}),
            "modes:inference");
  EXPECT_EQ(PythonSectionOf({{"framework", "pytorch-eager-no-grad"}, {"mode", "no_grad"}}), "modes:no_grad");
  EXPECT_EQ(PythonSectionOf({{"framework", "pytorch-eager-no-grad"}}), "modes:no_grad");
  EXPECT_EQ(PythonSectionOf({{"framework", "pytorch-eager"}, {"mode", "inference"}, {"op", "conv"}}),
            "ops:pytorch-eager");
  EXPECT_EQ(PythonSectionOf({{"framework", "torchscript"}, {"mode", "no_grad"}, {"op", "linear"}}),
            "ops:torchscript");
  // An op mix ends its framework's per-op section: kept with it, resumed with it.
  EXPECT_EQ(PythonSectionOf({{"framework", "torchscript"}, {"mode", "no_grad"}, {"mix_of", {{"conv", 3}}}}),
            "ops:torchscript");
  EXPECT_EQ(PythonSectionOf({{"framework", "pytorch-eager"}, {"mode", "inference"}, {"mix_of", {{"conv", 3}}}}),
            "ops:pytorch-eager");
  EXPECT_EQ(PythonSectionOf({{"framework", "torch-compile"}, {"class", "kernel"}}), "compile:default");
  EXPECT_EQ(PythonSectionOf({{"framework", "torch-compile"}, {"op", "conv"}}), "compile:default");
  EXPECT_EQ(PythonSectionOf({{"framework", "torch-compile-reduce-overhead"}}), "compile:reduce-overhead");
}

TEST(PythonBenchSections, RowsOfTheCppBenchHaveNone) {
  EXPECT_EQ(PythonSectionOf({{"framework", "torchscript"}, {"class", "kernel"}}), "");
  EXPECT_EQ(PythonSectionOf({{"framework", "libtorch-eager"}}), "");
  EXPECT_EQ(PythonSectionOf({{"framework", "cuda-graph"}, {"chain", "resnet_block"}}), "");
  EXPECT_EQ(PythonSectionOf(json::array()), "");
  EXPECT_EQ(PythonSectionOf({{"framework", 3}}), "");
}

}  // namespace
}  // namespace ftax
