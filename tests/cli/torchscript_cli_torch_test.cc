// `ftax inspect` and `ftax predict` on TorchScript files: shapes from --input-shape with
// symbols bound by --dim, the batch sweep, clear errors and exit codes.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::RunFtaxCli;

const std::string kBert = "tests/data/torchscript/tiny_bert_base.pt";
const std::string kCnn = "tests/data/torchscript/tiny_cnn.v113.pt";

TEST(TorchScriptCli, InspectBindsSymbolsAndScalesWithBatch) {
  auto run = [](int batch) {
    return RunFtaxCli("inspect " + kBert + " --input-shape input_ids=batchx16 --input-shape attention_mask=batchx16 " +
                      "--dim batch=" + std::to_string(batch) + " --format json");
  };
  ::ftax::testing::CliRun one = run(1), four = run(4);
  ASSERT_EQ(one.rc, 0) << one.err;
  ASSERT_EQ(four.rc, 0) << four.err;
  auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(four.out);
  EXPECT_GT(a["totals"]["macs"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(b["totals"]["macs"].get<double>(), 4 * a["totals"]["macs"].get<double>());
  EXPECT_EQ(a["totals"]["params"], b["totals"]["params"]);
  EXPECT_TRUE(a["unknown_op_types"].empty()) << a["unknown_op_types"];
}

TEST(TorchScriptCli, InspectErrorsNameTheInput) {
  ::ftax::testing::CliRun r = RunFtaxCli("inspect " + kBert + " --input-shape input_ids=1x16");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("attention_mask"), std::string::npos) << r.err;
  r = RunFtaxCli("inspect " + kBert + " --input-shape input_ids=batchx16 --input-shape attention_mask=batchx16");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--dim batch="), std::string::npos) << r.err;
  r = RunFtaxCli("inspect " + kCnn);  // no shape at all
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--input-shape"), std::string::npos) << r.err;
}

TEST(TorchScriptCli, PredictSweepsTheLeadingDim) {
  ::ftax::testing::CliRun r = RunFtaxCli("predict " + kCnn +
                                         " --input-shape 1x3x32x32 --profile validation/h200/2026-11-22b/profile.json "
                                         "--framework pytorch-eager --batch 1,8 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("predictions")) << r.out.substr(0, 400);
  ASSERT_EQ(j["predictions"].size(), 2u);
  for (const auto& p : j["predictions"]) {
    EXPECT_GT(p["latency_ms"].get<double>(), 0);
    // Every op dispatches in eager mode: 10 aten ops in the tiny CNN.
    EXPECT_GE(p["dispatches"].get<int>(), 10) << p;
  }
}

}  // namespace
