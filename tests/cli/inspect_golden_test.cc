// Golden tests of `ftax inspect`: each tests/golden/inspect/NAME.cmd is run with the built
// binary from the repository root and its stdout, stderr and exit code are compared with
// NAME.expected, which scripts/regen_golden.sh writes (never edited by hand). Error messages
// are part of the contract and are compared too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/onnx_loader.h"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = FTAX_SOURCE_DIR;
const fs::path kGolden = kRoot / "tests" / "golden" / "inspect";

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> Cases() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kGolden, ec))
    if (e.path().extension() == ".cmd") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `ftax inspect ARGS` from the repository root; returns the .expected-format text.
std::string RunInspect(const std::string& args) {
  fs::path tmp = fs::temp_directory_path() / ("ftax_golden_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::string cmd = "cd '" + kRoot.string() + "' && '" + FTAX_BINARY + "' inspect " + args +
                    " >'" + (tmp / "out").string() + "' 2>'" + (tmp / "err").string() + "'";
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::string text = "# ftax inspect " + args + "\n# exit: " + std::to_string(rc) +
                     "\n# stdout:\n" + Slurp(tmp / "out") + "# stderr:\n" + Slurp(tmp / "err");
  fs::remove_all(tmp);
  return text;
}

class InspectGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InspectGoldenTest, MatchesExpectedOutput) {
  if (!ftax::OnnxLoaderAvailable()) GTEST_SKIP() << "this build has no ONNX front end";
  const std::string name = GetParam();
  std::string args = Trim(Slurp(kGolden / (name + ".cmd")));
  fs::path expected_path = kGolden / (name + ".expected");
  ASSERT_TRUE(fs::exists(expected_path)) << "run scripts/regen_golden.sh";
  for (const char* model : {"resnet18", "resnet50", "bert_base"})
    if (args.find(std::string(model) + ".onnx") != std::string::npos &&
        !fs::exists(kRoot / "tests/data/onnx" / (std::string(model) + ".onnx")))
      GTEST_SKIP() << model << ".onnx fixture absent";
  std::string actual = RunInspect(args);
  EXPECT_EQ(Trim(actual), Trim(Slurp(expected_path)))
      << "golden mismatch for " << name << "; if the change is intended, run "
      << "scripts/regen_golden.sh and review the diff";
  // Never a crash: exit codes are 0, 2 or 3.
  EXPECT_EQ(actual.find("# exit: 1"), std::string::npos);
  EXPECT_EQ(actual.find("# exit: 13"), std::string::npos);
}

TEST(InspectGoldenTest, ErrorCasesExitTwoAndNameTheInput) {
  if (!ftax::OnnxLoaderAvailable()) GTEST_SKIP() << "this build has no ONNX front end";
  for (const std::string& name : Cases()) {
    if (name.rfind("err_", 0) != 0) continue;
    std::string expected = Slurp(kGolden / (name + ".expected"));
    EXPECT_NE(expected.find("# exit: 2\n"), std::string::npos) << name;
    size_t err = expected.find("# stderr:\n");
    ASSERT_NE(err, std::string::npos) << name;
    EXPECT_GT(expected.size(), err + 11) << name << ": an error must say something on stderr";
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, InspectGoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
