// `predict --whatif seq=N` on an ONNX file with a symbolic input dim `seq` (bert_base.onnx:
// input_ids batch x seq): the what-if is what binding --dim seq=N directly gives. Also checks
// that --dim before the model file leaves the file to the positional argument.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::CliRun;

CliRun RunFtax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

const char kModel[] = "tests/data/onnx/bert_base.onnx";
const char kSweep[] = " --profile h200 --framework cuda-graph --precision fp16 --batch 4 --samples 0";

TEST(WhatIfOnnxCliTest, SeqRebindsTheModelsSymbolicSeqDim) {
  CliRun r = RunFtax(std::string("predict --dim seq=128 ") + kModel + kSweep + " --whatif seq=384 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 1u);
  EXPECT_EQ(j["pairs"][0]["whatif"]["label"], "seq=384 on h200");
  CliRun direct = RunFtax(std::string("predict ") + kModel + " --dim seq=384" + kSweep + " --format json");
  ASSERT_EQ(direct.rc, 0) << direct.err;
  auto k = nlohmann::json::parse(direct.out);
  EXPECT_DOUBLE_EQ(j["pairs"][0]["whatif"]["latency_ms"].get<double>(),
                   k["predictions"][0]["latency_ms"].get<double>());
  EXPECT_GT(j["pairs"][0]["whatif"]["compute_ms"].get<double>(),
            j["pairs"][0]["base"]["compute_ms"].get<double>());
}

TEST(WhatIfOnnxCliTest, ModelWithoutSeqDimIsBadInput) {
  CliRun r = RunFtax(std::string("predict tests/data/onnx/resnet18.onnx") + kSweep + " --whatif seq=256");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no sequence dim"), std::string::npos) << r.err;
}

}  // namespace
