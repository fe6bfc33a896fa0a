// `predict --plot` and `validate --plot` end to end: the extension picks SVG, PNG or PDF; an
// unknown one is refused before anything is written; a path with a quote and a space works
// (the binary is run from an argv here, no shell between).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../ftax_cli_run.h"
#include "common/process.h"

namespace {

namespace fs = std::filesystem;
using ::ftax::testing::SlurpFile;

const std::vector<std::string> kPredict = {
    "predict", "--arch", "bert:layers=12", "--dim", "seq=128", "--profile", "validation/h200/2026-11-22b/profile-refined.json",
    "--framework", "pytorch-eager,torchscript,cuda-graph,libtorch-eager", "--precision", "fp16,fp32", "--batch", "1:64"};
const std::vector<std::string> kValidate = {
    "validate", "--measured", "validation/h200/2026-11-22/torchscript-cudagraph.json",
    "--profile", "validation/h200/2026-11-22b/profile.json"};

struct PlotRun {
  int rc = -1;
  std::string out;  // stdout and stderr
};

PlotRun Ftax(std::vector<std::string> args, const std::string& plot) {
  args.insert(args.begin(), FTAX_BINARY);
  args.push_back("--plot");
  args.push_back(plot);
  ftax::ProcessOptions o;
  o.working_dir = FTAX_SOURCE_DIR;
  o.capture_stdout = true;
  o.stderr_to_stdout = true;
  o.timeout_s = 300;
  ftax::Expected<ftax::ProcessResult> r = ftax::RunProcess(args, o);
  if (!r.ok()) return {-1, r.status().message()};
  return {r->exit_code, r->output};
}

// `gnuplot -e "set terminal"` lists the terminals this gnuplot has.
bool GnuplotLists(const std::string& terminal) {
  ftax::ProcessOptions o;
  o.capture_stdout = true;
  o.stderr_to_stdout = true;
  o.timeout_s = 30;
  ftax::Expected<ftax::ProcessResult> r = ftax::RunProcess({"gnuplot", "-e", "set terminal"}, o);
  return r.ok() && r->output.find(" " + terminal + " ") != std::string::npos;
}

class PlotCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ftax plot XXXXXX";  // a space in the directory too
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(PlotCliTest, UnknownExtensionIsRefusedBeforeAnythingIsWritten) {
  for (const auto* args : {&kPredict, &kValidate}) {
    const std::string path = dir_ + "/plot.jpg";
    PlotRun r = Ftax(*args, path);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("'" + path + "'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(".svg, .png or .pdf"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(dir_ + "/plot.svg"));
    // Refused before the prediction: no table was printed.
    EXPECT_EQ(r.out.find("batch"), std::string::npos) << r.out;
  }
}

TEST_F(PlotCliTest, PathWithAQuoteAndASpaceIsWritten) {
  if (!GnuplotLists("svg")) GTEST_SKIP() << "gnuplot with the svg terminal is not installed";
  const std::string path = dir_ + "/it's a plot.svg";
  PlotRun r = Ftax(kPredict, path);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("plot: " + path), std::string::npos) << r.out;
  const std::string svg = SlurpFile(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  // The key lists each framework once.
  EXPECT_NE(svg.find("libtorch-eager"), std::string::npos);
  // Nothing else appeared beside it.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST_F(PlotCliTest, PdfIsAPdf) {
  if (!GnuplotLists("pdfcairo")) GTEST_SKIP() << "gnuplot has no pdfcairo terminal";
  const std::string predicted = dir_ + "/latency.pdf", validated = dir_ + "/it's validation.PDF";
  PlotRun r = Ftax(kPredict, predicted);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(SlurpFile(predicted).rfind("%PDF", 0), 0u);
  r = Ftax(kValidate, validated);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(SlurpFile(validated).rfind("%PDF", 0), 0u);
}

TEST_F(PlotCliTest, PngIsAPng) {
  if (!GnuplotLists("pngcairo")) GTEST_SKIP() << "gnuplot has no pngcairo terminal";
  const std::string path = dir_ + "/v.png";
  PlotRun r = Ftax(kValidate, path);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(SlurpFile(path).substr(0, 4), "\x89PNG");
}

TEST(PlotHelpTest, HelpNamesTheExtensions) {
  for (const char* cmd : {"predict --help", "validate --help"}) {
    ftax::testing::CliRun r = ftax::testing::RunFtaxCli(cmd);
    EXPECT_EQ(r.rc, 0) << cmd;
    EXPECT_NE(r.out.find(".svg, .png or .pdf"), std::string::npos) << cmd << "\n" << r.out;
  }
}

}  // namespace
