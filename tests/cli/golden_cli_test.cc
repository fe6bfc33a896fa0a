// Golden tests of the CLI: each tests/golden/SUBCOMMAND/NAME.cmd (inspect, predict, compare,
// calibrate, validate) is run as `ftax SUBCOMMAND ARGS` with the built binary from the
// repository root, and its stdout, stderr and exit code are compared with NAME.expected, which
// scripts/regen_golden.sh writes (never edited by hand). Error messages are part of the
// contract and are compared too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/onnx_loader.h"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = FTAX_SOURCE_DIR;
const fs::path kGolden = kRoot / "tests" / "golden";

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

// "SUBCOMMAND/NAME" for every case.
std::vector<std::string> Cases() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(kGolden, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& e : fs::directory_iterator(dir.path(), ec))
      if (e.path().extension() == ".cmd")
        out.push_back(dir.path().filename().string() + "/" + e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Subcommand(const std::string& c) { return c.substr(0, c.find('/')); }

// Runs `ftax SUBCOMMAND ARGS` from the repository root; returns the .expected-format text.
std::string RunCase(const std::string& sub, const std::string& args) {
  fs::path tmp = fs::temp_directory_path() / ("ftax_golden_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::string cmd = "cd '" + kRoot.string() + "' && '" + FTAX_BINARY + "' " + sub + " " + args +
                    " >'" + (tmp / "out").string() + "' 2>'" + (tmp / "err").string() + "'";
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::string text = "# ftax " + sub + " " + args + "\n# exit: " + std::to_string(rc) +
                     "\n# stdout:\n" + Slurp(tmp / "out") + "# stderr:\n" + Slurp(tmp / "err");
  fs::remove_all(tmp);
  // Paths under the checkout are compared relative to it, as regen_golden.sh writes them.
  const std::string prefix = kRoot.string() + "/";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
    text.erase(at, prefix.size());
  return text;
}

class GoldenCliTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCliTest, MatchesExpectedOutput) {
  const std::string name = GetParam();
  if (Subcommand(name) == "inspect" && !ftax::OnnxLoaderAvailable())
    GTEST_SKIP() << "this build has no ONNX front end";
  std::string args = Trim(Slurp(kGolden / (name + ".cmd")));
  fs::path expected_path = kGolden / (name + ".expected");
  ASSERT_TRUE(fs::exists(expected_path)) << "run scripts/regen_golden.sh";
  for (const char* model : {"resnet18", "resnet50", "bert_base"})
    if (args.find(std::string(model) + ".onnx") != std::string::npos &&
        !fs::exists(kRoot / "tests/data/onnx" / (std::string(model) + ".onnx")))
      GTEST_SKIP() << model << ".onnx fixture absent";
  std::string actual = RunCase(Subcommand(name), args);
  EXPECT_EQ(Trim(actual), Trim(Slurp(expected_path)))
      << "golden mismatch for " << name << "; if the change is intended, run "
      << "scripts/regen_golden.sh and review the diff";
  // Never a crash: exit codes are 0, 2 or 3.
  EXPECT_EQ(actual.find("# exit: 1"), std::string::npos);
  EXPECT_EQ(actual.find("# exit: 13"), std::string::npos);
}

TEST(GoldenCliTest, ErrorCasesExitTwoAndSaySomething) {
  for (const std::string& name : Cases()) {
    if (name.find("/err_") == std::string::npos) continue;
    std::string expected = Slurp(kGolden / (name + ".expected"));
    EXPECT_NE(expected.find("# exit: 2\n"), std::string::npos) << name;
    size_t err = expected.find("# stderr:\n");
    ASSERT_NE(err, std::string::npos) << name;
    EXPECT_GT(expected.size(), err + 11) << name << ": an error must say something on stderr";
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenCliTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           std::replace(n.begin(), n.end(), '/', '_');
                           return n;
                         });

}  // namespace
