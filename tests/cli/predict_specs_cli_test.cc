// End-to-end tests of `ftax predict --specs FILE|-`: many arch specs predicted in one run, one
// row per spec, framework, precision and batch, in the table, JSON and CSV views; a bad line
// stops the run with exit code 2, naming its line, before anything is printed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::CliRun;

CliRun RunFtax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

// A spec list in a temporary file, removed when the test ends.
class SpecFile {
 public:
  explicit SpecFile(const std::string& text) {
    char name[] = "/tmp/ftax-specs-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~SpecFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Comment, blank line, blanks around a spec, a CRLF line end and a spec with commas.
const char kSpecs[] =
    "# candidates\n"
    "bert:layers=2\n"
    "\n"
    "  bert:layers=4,hidden=256,heads=4  \r\n"
    "#gpt:layers=2\n"
    "resnet:depth=18\n";

const char kSweep[] = "--profile h200 --dim seq=64 --framework pytorch-eager,cuda-graph --precision fp16 "
                      "--batch 1,8 --samples 0";

TEST(PredictSpecsCliTest, JsonHasOneRowPerSpecFrameworkPrecisionAndBatch) {
  SpecFile f(kSpecs);
  CliRun r = RunFtax("predict --specs " + f.path() + " " + kSweep + " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["predictions"].size(), 3u * 2u * 2u);
  ASSERT_EQ(j["specs"].size(), 3u);
  EXPECT_EQ(j["specs"][0]["line"], 2);
  EXPECT_EQ(j["specs"][0]["spec"], "bert:layers=2");
  EXPECT_EQ(j["specs"][1]["line"], 4);
  EXPECT_EQ(j["specs"][1]["spec"], "bert:layers=4,hidden=256,heads=4");
  EXPECT_EQ(j["specs"][2]["line"], 6);
  EXPECT_EQ(j["specs"][2]["spec"], "resnet:depth=18");
  EXPECT_EQ(j["profile"]["name"], "h200");
  EXPECT_EQ(j["crossovers"].size(), 3u * 2u);
  for (size_t i = 0; i < j["predictions"].size(); ++i) {
    const auto& p = j["predictions"][i];
    EXPECT_EQ(p["spec"], j["specs"][i / 4]["spec"]) << i;
    EXPECT_EQ(p["line"], j["specs"][i / 4]["line"]) << i;
  }
}

// Each row is what `predict --arch SPEC` alone predicts: the list reuses the --arch path.
TEST(PredictSpecsCliTest, EachRowMatchesThatSpecPredictedAlone) {
  SpecFile f(kSpecs);
  CliRun r = RunFtax("predict --specs " + f.path() + " " + kSweep + " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* spec : {"bert:layers=4,hidden=256,heads=4", "resnet:depth=18"}) {
    CliRun one = RunFtax(std::string("predict --arch ") + spec + " " + kSweep + " --format json");
    ASSERT_EQ(one.rc, 0) << one.err;
    auto k = nlohmann::json::parse(one.out);
    size_t matched = 0;
    for (const auto& p : j["predictions"]) {
      if (p["spec"] != spec) continue;
      const auto& q = k["predictions"][matched++];
      EXPECT_EQ(p["framework"], q["framework"]);
      EXPECT_EQ(p["batch"], q["batch"]);
      EXPECT_DOUBLE_EQ(p["latency_ms"].get<double>(), q["latency_ms"].get<double>()) << spec;
      EXPECT_EQ(p["kernels"], q["kernels"]);
    }
    EXPECT_EQ(matched, k["predictions"].size()) << spec;
  }
}

TEST(PredictSpecsCliTest, StandardInputAsCsv) {
  SpecFile f(kSpecs);
  CliRun r = RunFtax("predict --specs - " + std::string(kSweep) + " --format csv < " + f.path());
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("line,spec,framework,precision,batch,latency_ms,", 0), 0u) << line;
  int rows = 0, quoted = 0;
  while (std::getline(lines, line)) {
    ++rows;
    if (line.rfind("4,\"bert:layers=4,hidden=256,heads=4\",", 0) == 0) ++quoted;
  }
  EXPECT_EQ(rows, 12);
  EXPECT_EQ(quoted, 4);  // the spec with commas is one quoted cell
}

TEST(PredictSpecsCliTest, TableHasASpecColumn) {
  SpecFile f(kSpecs);
  CliRun r = RunFtax("predict --specs " + f.path() + " " + kSweep);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("profile h200:"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line))
    for (const char* spec : {"bert:layers=2 ", "bert:layers=4,hidden=256,heads=4 ", "resnet:depth=18 "})
      if (line.rfind(spec, 0) == 0 && line.find(" fp16 ") != std::string::npos) ++rows;
  EXPECT_EQ(rows, 12) << r.out;
}

TEST(PredictSpecsCliTest, BadLineIsNamedAndExitsTwoBeforeAnyOutput) {
  SpecFile f("bert:layers=2\n\n# fine so far\nbert:layerz=3\nresnet:depth=18\n");
  CliRun r = RunFtax("predict --specs " + f.path() + " --profile h200 --batch 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(f.path() + ":4: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("layerz"), std::string::npos) << r.err;
  // From standard input the line is named the same way.
  r = RunFtax("predict --specs - --profile h200 --batch 1 < " + f.path());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("<stdin>:4: "), std::string::npos) << r.err;
}

TEST(PredictSpecsCliTest, BinaryLineIsRefusedWithoutEchoingIt) {
  SpecFile f(std::string("bert:layers=2\nbert\x1b[31m:layers=2\n"));
  CliRun r = RunFtax("predict --specs " + f.path() + " --profile h200 --batch 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(":2: not an arch spec: byte 0x1b"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

TEST(PredictSpecsCliTest, EmptyListsMissingFilesAndConflictsExitTwo) {
  SpecFile only_comments("# nothing\n\n   \n");
  CliRun r = RunFtax("predict --specs " + only_comments.path() + " --profile h200");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no arch specs"), std::string::npos) << r.err;
  EXPECT_EQ(RunFtax("predict --specs /nonexistent/specs.txt --profile h200").rc, 2);
  EXPECT_EQ(RunFtax("predict --specs /tmp --profile h200").rc, 2);
  SpecFile f(kSpecs);
  r = RunFtax("predict --specs " + f.path() + " --arch bert --profile h200");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("give one of"), std::string::npos) << r.err;
  r = RunFtax("predict --specs " + f.path() + " --profile h200 --whatif seq=256");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--whatif takes one model"), std::string::npos) << r.err;
  // An option every line shares is named as such, not as a line's fault.
  r = RunFtax("predict --specs " + f.path() + " --profile h200 --dim seq=x");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--dim"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(f.path() + ":"), std::string::npos) << r.err;
}

}  // namespace
