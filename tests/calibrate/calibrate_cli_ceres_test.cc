// `ftax calibrate` end to end on SYNTHETIC measurement files: the profile is written and loads,
// the summary renders as text and JSON, and a poorly fitting class is written as not trusted, and predictions that use it
// widen their interval and name it.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "../ftax_cli_run.h"

#include "predictor/host_profile.h"
#include "calibrate/profile_file.h"
#include "synthetic_measurements.h"

namespace ftax {
namespace {

using json = nlohmann::json;

using ::ftax::testing::CliRun;

CliRun Ftax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

const std::string kSynthetic =
    std::string(FTAX_TEST_DATA) + "/measurements/synthetic-h200like.measurements.json";

TEST(CalibrateCliCeresTest, WritesAProfileThatLoads) {
  const std::string profile = ::testing::TempDir() + "synthetic.profile.json";
  std::remove(profile.c_str());
  CliRun r = Ftax("calibrate " + kSynthetic + " -o " + profile + " --seed 3 --verbose");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* col : {"class", "floor_us", "rate_TFLOP/s", "bandwidth_GB/s", "R²(log)",
                          "holdout err%", "gemm", "elementwise", "libtorch-eager", "cuda-graph"})
    EXPECT_NE(r.out.find(col), std::string::npos) << col << "\n" << r.out;
  EXPECT_NE(r.out.find("128x64"), std::string::npos) << "gemm/fp32 tile not reported\n" << r.out;
  EXPECT_NE(r.err.find("Ceres Solver Report"), std::string::npos) << "--verbose logs BriefReport";

  Expected<HostProfile> p = LoadHostProfile(profile);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->synthetic);
  EXPECT_EQ(p->gpu.num_sms, 132);
  EXPECT_EQ(p->gpu.kernels.size(), 4u);
  EXPECT_EQ(p->frameworks.size(), 3u);
  EXPECT_TRUE(p->gpu.kernel_gap_us.known());
  EXPECT_NEAR(p->gpu.Find(KernelClass::kGemm, DType::kFloat16)->rate_tflops.value, 650, 650 * 0.05);
  EXPECT_EQ(p->provenance["measurements"][0], kSynthetic);
  EXPECT_EQ(p->provenance["seed"], 3);
  EXPECT_TRUE(p->provenance["date"].is_string());
  EXPECT_TRUE(p->provenance.contains("ftax_commit"));  // a 40-hex sha, or null outside git
  if (!p->provenance["ftax_commit"].is_null())
    EXPECT_EQ(p->provenance["ftax_commit"].get<std::string>().size(), 40u);
  EXPECT_NE(p->host["gpu"].get<std::string>().find("SYNTHETIC"), std::string::npos);
}

TEST(CalibrateCliCeresTest, JsonSummary) {
  const std::string profile = ::testing::TempDir() + "synthetic-json.profile.json";
  CliRun r = Ftax("calibrate " + kSynthetic + " -o " + profile + " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json s = json::parse(r.out);
  EXPECT_EQ(s["written"], true);
  EXPECT_EQ(s["kernels"].size(), 4u);
  EXPECT_TRUE(s["kernels"][0]["holdout"]["median_abs_err_pct"].is_number());
  EXPECT_TRUE(s["quality_failures"].empty());
  EXPECT_EQ(s["options"]["loss"], "huber");
}

// A framework under its R² gate is warned about with what a prediction does with it: its costs
// are used as fitted (unlike a kernel class, whose error widens the interval).
TEST(CalibrateCliCeresTest, AFrameworkUnderItsGateIsWarnedAboutAsUsedAsFitted) {
  const std::string profile = ::testing::TempDir() + "strict.profile.json";
  CliRun r = Ftax("calibrate " + kSynthetic + " -o " + profile + " --min-framework-r2 0.99999");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find(": R² of call time "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(its costs are used as fitted, their standard errors in the predictions' interval)"),
            std::string::npos)
      << r.err;
  std::remove(profile.c_str());
}

TEST(CalibrateCliCeresTest, WritesAPoorFitAsNotTrustedAndWidensItsIntervals) {
  // Scramble the gemm/fp16 times among its rows: the class cannot fit.
  std::ifstream in(kSynthetic);
  json j;
  in >> j;
  std::vector<json*> rows;
  for (json& r : j["kernels"])
    if (r["class"] == "gemm" && r["dtype"] == "fp16") rows.push_back(&r);
  std::vector<json> times;
  for (json* r : rows) times.push_back((*r)["kernel_us"]);
  for (size_t i = 0; i < rows.size(); ++i) (*rows[i])["kernel_us"] = times[(i * 11 + 5) % rows.size()];
  const std::string bad = ::testing::TempDir() + "synthetic-scrambled.measurements.json";
  std::ofstream(bad) << j.dump();
  const std::string profile = ::testing::TempDir() + "scrambled.profile.json";
  std::remove(profile.c_str());

  CliRun r = Ftax("calibrate " + bad + " -o " + profile);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("not trusted, gemm/fp16"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("elementwise/fp16"), std::string::npos) << "only the bad class is named";
  Expected<HostProfile> p = LoadHostProfile(profile);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->fit["quality_failures"].empty());
  EXPECT_FALSE(p->gpu.kernels.at("gemm/fp16").trusted);
  EXPECT_TRUE(p->gpu.kernels.at("elementwise/fp16").trusted);
  EXPECT_GT(p->gpu.kernels.at("gemm/fp16").holdout_err_pct, 25.0);

  // A prediction that leans on the untrusted class names it, and its interval is wider than
  // with the class trusted (same fit, the flag alone changed).
  const std::string spec = "predict " + std::string(FTAX_TEST_DATA) + "/onnx/tiny_mlp.onnx --batch 4096 "
                           "--framework cuda-graph --precision fp16 --format json --profile ";
  CliRun pr = Ftax(spec + profile);
  ASSERT_EQ(pr.rc, 0) << pr.err;
  EXPECT_NE(pr.out.find("gemm/fp16 failed its calibration quality gates"), std::string::npos) << pr.out;
  json trusted_profile;
  std::ifstream(profile) >> trusted_profile;
  trusted_profile["gpu"]["kernels"]["gemm/fp16"]["trusted"] = true;
  const std::string trusted_path = ::testing::TempDir() + "scrambled-trusted.profile.json";
  std::ofstream(trusted_path) << trusted_profile.dump();
  CliRun tr = Ftax(spec + trusted_path);
  ASSERT_EQ(tr.rc, 0) << tr.err;
  auto width = [](const std::string& out) {
    json j = json::parse(out);
    const json& iv = j["predictions"][0]["interval_ms"];
    return iv[1].get<double>() - iv[0].get<double>();
  };
  EXPECT_GT(width(pr.out), 1.5 * width(tr.out));

  // Markdown summary marks the failing class.
  r = Ftax("calibrate " + bad + " -o " + profile + " --format markdown");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("| **gemm/fp16** |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| elementwise/fp16 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| cuda-graph |"), std::string::npos) << r.out;

  // The thresholds are options.
  r = Ftax("calibrate " + bad + " -o " + profile + " --min-r2 -1000 --max-holdout-err 1e6");
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(CalibrateCliCeresTest, BadOptionsAreBadInput) {
  CliRun r = Ftax("calibrate " + kSynthetic + " -o /tmp/x.json --loss l2");
  EXPECT_EQ(r.rc, 2);
  r = Ftax("calibrate " + kSynthetic + " -o /tmp/x.json --holdout 1.5");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("holdout fraction"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ftax
