// End-to-end tests of `ftax predict --whatif`: the seq knob rebinds the sequence dim; every
// what-if row is labelled with each knob it changed and the profile it used; each base point
// is paired with its own what-if point (also when the what-if fixes the batch or framework).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::CliRun;

CliRun RunFtax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

double LatencyOf(const std::string& args) {
  CliRun r = RunFtax("predict " + args + " --samples 0 --format json");
  EXPECT_EQ(r.rc, 0) << r.err;
  if (r.rc != 0) return -1;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["predictions"].size(), 1u);
  return j["predictions"][0]["latency_ms"].get<double>();
}

// The what-if at seq=512 is what predicting the spec at seq=512 directly gives.
TEST(WhatIfCliTest, SeqRebindsTheSequenceDimOfAnArchSpec) {
  const std::string base = "--arch bert:layers=4 --profile h200 --framework cuda-graph --precision fp16 --batch 8";
  CliRun r = RunFtax("predict " + base + " --dim seq=128 --samples 0 --whatif seq=512 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 1u);
  const auto& w = j["pairs"][0]["whatif"];
  EXPECT_EQ(w["label"], "seq=512 on h200");
  EXPECT_EQ(w["changed"], nlohmann::json({{"seq", "512"}}));
  EXPECT_EQ(w["profile"], "h200");
  EXPECT_EQ(j["pairs"][0]["base"]["label"], "base on h200");
  EXPECT_DOUBLE_EQ(j["pairs"][0]["base"]["latency_ms"].get<double>(), LatencyOf(base + " --dim seq=128"));
  EXPECT_DOUBLE_EQ(w["latency_ms"].get<double>(), LatencyOf(base + " --dim seq=512"));
  // Four times the tokens at batch 8 is compute-bound work that grows.
  EXPECT_GT(w["compute_ms"].get<double>(), 1.5 * j["pairs"][0]["base"]["compute_ms"].get<double>());
}

TEST(WhatIfCliTest, SeqWithoutASequenceDimIsBadInput) {
  CliRun r = RunFtax("predict --arch resnet:depth=18 --profile h200 --batch 1 --whatif seq=256");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no sequence dim"), std::string::npos) << r.err;
  EXPECT_EQ(RunFtax("predict --arch bert --profile h200 --batch 1 --whatif seq=0").rc, 2);
  EXPECT_EQ(RunFtax("predict --arch bert --profile h200 --batch 1 --whatif seq=abc").rc, 2);
  r = RunFtax("predict --arch bert --profile h200 --batch 1 --whatif seq=64,seq=128");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("given twice"), std::string::npos) << r.err;
}

// The table labels every what-if row with all its knobs and the profile, here a changed one.
TEST(WhatIfCliTest, TableRowsNameEveryKnobAndTheProfile) {
  CliRun r = RunFtax("predict --arch bert:layers=2 --dim seq=64 --profile h200 --framework pytorch-eager "
                     "--batch 1,4 --samples 0 --whatif width=2,seq=256,profile=h100");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string label = "width=2,seq=256,profile=h100 on h100";
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("pytorch-eager", 0) != 0) continue;
    ++rows;
    EXPECT_NE(line.find(label), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 2) << r.out;
  EXPECT_NE(r.out.find("profile h100: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("base   = bert:layers=2 on h200"), std::string::npos) << r.out;
}

// batch=32 with two frameworks and two batches: every base point is paired with the what-if
// of the same framework at batch 32 (not with whatever point came next in the sweep).
TEST(WhatIfCliTest, FixedBatchPairsEachBasePointWithItsOwnWhatIf) {
  CliRun r = RunFtax("predict --arch bert:layers=2 --dim seq=64 --profile h200 --framework pytorch-eager,cuda-graph "
                     "--batch 1,8 --samples 0 --whatif batch=32 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 4u);
  for (const auto& p : j["pairs"]) {
    EXPECT_EQ(p["whatif"]["batch"], 32);
    EXPECT_EQ(p["whatif"]["framework"], p["base"]["framework"]);
    EXPECT_EQ(p["whatif"]["label"], "batch=32 on h200");
    EXPECT_NEAR(p["delta_ms"].get<double>(),
                p["whatif"]["latency_ms"].get<double>() - p["base"]["latency_ms"].get<double>(), 1e-9);
  }
  EXPECT_NE(j["pairs"][0]["whatif"]["latency_ms"], j["pairs"][2]["whatif"]["latency_ms"]);
  EXPECT_EQ(j["profiles"]["whatif"]["name"], "h200");
}

TEST(WhatIfCliTest, CsvHasBothSidesAndTheLabel) {
  CliRun r = RunFtax("predict --arch bert:layers=2 --dim seq=64 --profile h200 --framework pytorch-eager "
                     "--batch 1 --samples 0 --whatif framework=cuda-graph,seq=128 --format csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row, extra;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("base_label,base_framework,base_precision,base_batch,base_latency_ms,base_bound,"
                         "whatif_label,whatif_framework,",
                         0),
            0u)
      << header;
  EXPECT_NE(row.find(",pytorch-eager,"), std::string::npos) << row;
  EXPECT_NE(row.find("\"framework=cuda-graph,seq=128 on h200\",cuda-graph,"), std::string::npos) << row;
}

}  // namespace

namespace {

// cpu=F: every CPU-side cost F times. A framework-bound Python eager point's CPU time grows
// by F; a compute-bound CUDA graph barely moves; a factor that is no speed is bad input.
TEST(WhatIfCliTest, CpuScalesTheHostSideOfEveryFramework) {
  CliRun r = RunFtax("predict --arch bert:layers=4 --dim seq=128 --profile h200 --framework pytorch-eager,cuda-graph "
                     "--precision fp16 --batch 1 --samples 0 --whatif cpu=1.5 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 2u);
  for (const auto& pair : j["pairs"]) {
    const auto& b = pair["base"];
    const auto& w = pair["whatif"];
    EXPECT_EQ(w["changed"], nlohmann::json({{"cpu", "1.5"}}));
    EXPECT_DOUBLE_EQ(w["compute_ms"].get<double>(), b["compute_ms"].get<double>());
    if (b["framework"] == "pytorch-eager")
      EXPECT_NEAR(w["framework_ms"].get<double>(), 1.5 * b["framework_ms"].get<double>(),
                  1e-6 * b["framework_ms"].get<double>());
    else
      EXPECT_LT(w["latency_ms"].get<double>(), 1.1 * b["latency_ms"].get<double>());
  }
  for (const char* bad : {"cpu=0", "cpu=-1", "cpu=fast", "cpu=1000"})
    EXPECT_EQ(RunFtax(std::string("predict --arch bert --profile h200 --batch 1 --whatif ") + bad).rc, 2) << bad;
}

// cpu=typical: at the CPU speed the shipped profile's bench read in the median (h200's bench:
// gauge 3.5615 us over its fast state's 2.9459): a framework-bound Python eager point's CPU
// time grows by that ratio (within 0.5%: its kernels' launches, which the C++ bench times, move
// by the host probe's ratio). A profile that records no such reading is bad input, named.
TEST(WhatIfCliTest, CpuTypicalIsTheBenchsMedianReading) {
  CliRun r = RunFtax("predict --arch bert:layers=4 --dim seq=128 --profile h200 --framework pytorch-eager "
                     "--precision fp16 --batch 1 --samples 0 --whatif cpu=typical --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 1u);
  const auto& b = j["pairs"][0]["base"];
  const auto& w = j["pairs"][0]["whatif"];
  EXPECT_EQ(w["changed"], nlohmann::json({{"cpu", "typical"}}));
  // Every CPU-side cost moves by the bench's median gauge reading over its fast state.
  nlohmann::json p =
      nlohmann::json::parse(::ftax::testing::SlurpFile(std::string(FTAX_SOURCE_DIR) + "/data/profiles/h200.json"));
  const double slower = p.at("cpu_gauge_typical_us").get<double>() / p.at("cpu_gauge_us").get<double>();
  ASSERT_GT(slower, 1.0);
  EXPECT_NEAR(w["framework_ms"].get<double>(), slower * b["framework_ms"].get<double>(),
              5e-3 * b["framework_ms"].get<double>());
  const std::string old_profile =
      (std::filesystem::temp_directory_path() / ("ftax_whatif_" + std::to_string(::getpid()) + ".json")).string();
  p.erase("cpu_gauge_typical_us");
  p.erase("host_probe_typical_us");
  std::ofstream(old_profile) << p.dump();
  r = RunFtax("predict --arch bert --profile " + old_profile + " --batch 1 --whatif cpu=typical");
  std::filesystem::remove(old_profile);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("records no typical CPU speed"), std::string::npos) << r.err;
}

}  // namespace
