// End-to-end tests of `ftax compare` with two or more models: side by side with the delta of
// each against the first, as a table, JSON and CSV; fewer than two models is bad input.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::CliRun;

CliRun RunFtax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

const char kThree[] = "compare arch:bert:layers=2 arch:bert:layers=4 arch:bert:layers=8,hidden=512,heads=8 "
                      "--dim seq=64 --profile h200 --framework pytorch-eager,cuda-graph --batch 1,8 --samples 0";

TEST(CompareCliTest, ThreeModelsWithDeltasAgainstTheFirst) {
  CliRun r = RunFtax(std::string(kThree) + " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["labels"], nlohmann::json({"A", "B", "C"}));
  ASSERT_EQ(j["models"].size(), 3u);
  EXPECT_EQ(j["models"][2]["model"], "arch:bert:layers=8,hidden=512,heads=8");
  EXPECT_EQ(j["profile"]["name"], "h200");
  ASSERT_EQ(j["rows"].size(), 2u * 2u);
  for (const auto& row : j["rows"]) {
    ASSERT_EQ(row["models"].size(), 3u);
    const double a = row["models"][0]["latency_ms"];
    EXPECT_EQ(row["models"][0]["delta_ms"].get<double>(), 0);
    for (int k = 1; k < 3; ++k) {
      const auto& m = row["models"][k];
      EXPECT_EQ(m["framework"], row["framework"]);
      EXPECT_EQ(m["batch"], row["batch"]);
      EXPECT_NEAR(m["delta_ms"].get<double>(), m["latency_ms"].get<double>() - a, 1e-9);
      EXPECT_NEAR(m["delta_pct"].get<double>(), 100 * (m["latency_ms"].get<double>() - a) / a, 1e-6);
    }
    // Deeper is slower in both regimes (the paper's depth finding).
    EXPECT_GT(row["models"][1]["delta_ms"].get<double>(), 0);
    EXPECT_GT(row["models"][2]["delta_ms"].get<double>(), row["models"][1]["delta_ms"].get<double>());
  }
}

TEST(CompareCliTest, TwoArchSpecsStillCompare) {
  CliRun r = RunFtax("compare arch:bert:layers=6 arch:bert:layers=12 --dim seq=128 "
                     "--profile validation/h200/2026-11-22b/profile.json --batch 1,8 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) EXPECT_GT(row["models"][1]["delta_ms"].get<double>(), 0);
}

TEST(CompareCliTest, TableNamesEveryModelAndItsDeltaColumns) {
  CliRun r = RunFtax(kThree);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("A = arch:bert:layers=2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("C = arch:bert:layers=8,hidden=512,heads=8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("C-A ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bound (A/B/C)"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line))
    if (line.rfind("pytorch-eager", 0) == 0 || line.rfind("cuda-graph", 0) == 0) ++rows;
  EXPECT_EQ(rows, 4) << r.out;
}

TEST(CompareCliTest, CsvHasOneRowPerModelAndPoint) {
  CliRun r = RunFtax(std::string(kThree) + " --format csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("label,model,framework,precision,batch,latency_ms,", 0), 0u) << line;
  EXPECT_NE(line.find(",delta_ms,delta_pct"), std::string::npos) << line;
  int rows = 0, first = 0;
  while (std::getline(lines, line)) {
    ++rows;
    if (line.rfind("A,", 0) == 0) {
      ++first;
      EXPECT_NE(line.find(",0.000000,0.000"), std::string::npos) << line;  // no delta to itself
    }
  }
  EXPECT_EQ(rows, 3 * 4);
  EXPECT_EQ(first, 4);
}

TEST(CompareCliTest, OptionsMayComeBeforeTheModels) {
  CliRun r = RunFtax("compare --dim seq=64 --framework cuda-graph arch:bert:layers=2 arch:bert:layers=4 "
                     "--profile h200 --batch 1 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"].size(), 1u);
}

TEST(CompareCliTest, FewerThanTwoModelsAndBadInputsExitTwo) {
  CliRun r = RunFtax("compare arch:bert --profile h200 --batch 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("two or more models"), std::string::npos) << r.err;
  r = RunFtax("compare arch:bert arch:bert:layers=2 arch:nope --profile h200 --batch 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("arch:nope"), std::string::npos) << r.err;
  EXPECT_EQ(RunFtax("compare arch:bert arch:bert:layers=2 --profile h200 --format xml").rc, 2);
  EXPECT_EQ(RunFtax("compare arch:bert arch:bert:layers=2").rc, 2);  // no profile
}

}  // namespace
