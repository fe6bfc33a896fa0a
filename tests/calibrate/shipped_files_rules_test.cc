// The value rules of docs/profile-format.md ("Rules") hold for every file the repository
// ships: each profile, measurement file and measured row from real runs loads, and the rules
// refuse what they say they refuse.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "calibrate/measurements.h"
#include "calibrate/profile_file.h"
#include "calibrate/validation_report.h"
#include "predictor/host_profile.h"

namespace ftax {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kRoot = FTAX_SOURCE_DIR;

// Files under `dir` (and its sub-folders) whose names end with `suffix`.
std::vector<std::string> Files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot + "/" + dir)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(p);
  }
  return out;
}

// Files as above, with those kept xz-compressed (`suffix` + ".xz") unpacked into the test's
// temporary folder (by the xz tool), so that every file the repository ships is checked.
std::vector<std::string> FilesUnpacked(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out = Files(dir, suffix);
  int n = 0;
  for (const std::string& xz : Files(dir, suffix + ".xz")) {
    const std::string to = ::testing::TempDir() + "shipped-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" +
                           fs::path(xz).stem().string();
    const std::string cmd = "xz -dc '" + xz + "' > '" + to + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    out.push_back(to);
  }
  return out;
}

TEST(ShippedFilesRulesTest, EveryShippedProfileLoads) {
  auto files = Files("data/profiles", ".json");
  for (const std::string& f : FilesUnpacked("validation", "/profile.json")) files.push_back(f);
  for (const std::string& f : Files("validation", "profile-refined.json")) files.push_back(f);
  ASSERT_GE(files.size(), 10u);
  for (const std::string& f : files) {
    Expected<HostProfile> p = LoadHostProfile(f);
    EXPECT_TRUE(p.ok()) << p.status().message();
  }
}

// A shipped profile is what `--profile h200` gives a user: it prices the compute classes in
// every precision `ftax predict --precision` accepts, so its bench timed all three dtypes.
TEST(ShippedFilesRulesTest, EveryShippedProfilePricesEveryPrecision) {
  const auto files = Files("data/profiles", ".json");
  ASSERT_GE(files.size(), 2u);  // h100 and h200
  for (const std::string& f : files) {
    Expected<HostProfile> p = LoadHostProfile(f);
    ASSERT_TRUE(p.ok()) << p.status().message();
    for (const char* cls : {"gemm", "conv", "attention"})
      for (const char* dt : {"fp32", "fp16", "bf16"})
        EXPECT_TRUE(p->gpu.kernels.count(std::string(cls) + "/" + dt)) << f << ": no " << cls << "/" << dt;
  }
}

TEST(ShippedFilesRulesTest, EveryShippedMeasurementFileLoadsAndCanMakeAProfile) {
  const auto files = FilesUnpacked("validation", "bench.measurements.json");
  ASSERT_GE(files.size(), 30u);
  for (const std::string& f : files) {
    Expected<Measurements> m = LoadMeasurements(f);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_TRUE(CheckProfileInput(m.value()).ok()) << f;
  }
}

TEST(ShippedFilesRulesTest, EveryShippedMeasuredRowPassesTheRowRules) {
  std::vector<std::string> files;
  for (const char* kind : {"torchscript-cudagraph.json", "eager.json"})
    for (const std::string& f : FilesUnpacked("validation", kind)) files.push_back(f);
  ASSERT_GE(files.size(), 30u);
  size_t rows = 0;
  for (const std::string& f : files) {
    std::ifstream in(f);
    const json j = json::parse(in);
    for (size_t i = 0; i < j["rows"].size(); ++i, ++rows) {
      Status s = CheckMeasuredRow(j["rows"][i]);
      EXPECT_TRUE(s.ok()) << f << " rows[" << i << "]: " << s.message();
    }
  }
  EXPECT_GT(rows, 1000u);
}

TEST(ShippedFilesRulesTest, RowRulesRefuseWhatTheDocsSay) {
  const json ok = {{"framework", "cuda-graph"}, {"precision", "fp16"}, {"batch", 1},
                   {"latency_ms", {{"median", 1.0}, {"p10", 0.9}, {"p90", 1.2}}}};
  EXPECT_TRUE(CheckMeasuredRow(ok).ok());
  auto with = [&](const json::json_pointer& at, const json& v) {
    json r = ok;
    r[at] = v;
    return CheckMeasuredRow(r);
  };
  EXPECT_FALSE(with("/latency_ms/median"_json_pointer, 0.0).ok());
  EXPECT_FALSE(with("/latency_ms/median"_json_pointer, -1.0).ok());
  EXPECT_FALSE(with("/latency_ms/median"_json_pointer, 2e9).ok());
  EXPECT_FALSE(with("/latency_ms/p10"_json_pointer, 1.1).ok());
  EXPECT_FALSE(with("/batch"_json_pointer, 0).ok());
  EXPECT_FALSE(with("/batch"_json_pointer, 1.5).ok());
  EXPECT_FALSE(with("/seq"_json_pointer, -1).ok());
  EXPECT_FALSE(with("/kernel_ms"_json_pointer, -0.1).ok());
  EXPECT_FALSE(with("/gpu_span_ms"_json_pointer, "x").ok());
  EXPECT_FALSE(with("/visit_medians_ms"_json_pointer, json::array({1.0, 0.0})).ok());
  EXPECT_TRUE(with("/visit_medians_ms"_json_pointer, json::array({1.0, nullptr})).ok());
  EXPECT_FALSE(with("/kernels"_json_pointer, json{{"k", json::array({1, -5})}}).ok());
  EXPECT_FALSE(with("/framework"_json_pointer, 3).ok());
  EXPECT_TRUE(with("/seq"_json_pointer, nullptr).ok());
}

TEST(ShippedFilesRulesTest, ProfileRulesRefuseWhatTheDocsSay) {
  Expected<HostProfile> base = LoadHostProfile(kRoot + "/data/profiles/h200.json");
  ASSERT_TRUE(base.ok());
  const json ok = HostProfileToJson(base.value());
  auto with = [&](const std::string& at, const json& v) {
    json p = ok;
    p[json::json_pointer(at)] = v;
    return HostProfileFromJson(p).status();
  };
  EXPECT_TRUE(HostProfileFromJson(ok).ok());
  const std::string gemm = "/gpu/kernels/gemm~1fp16";
  EXPECT_NE(with(gemm + "/floor_us/value", 1e308).message().find("out of range"), std::string::npos);
  EXPECT_FALSE(with(gemm + "/floor_us/value", -1.0).ok());
  EXPECT_FALSE(with(gemm + "/rate_tflops/value", 1e-9).ok());
  EXPECT_FALSE(with(gemm + "/rate_tflops/value", 2e6).ok());
  EXPECT_FALSE(with(gemm + "/bandwidth_gbps/value", 2e7).ok());
  EXPECT_FALSE(with(gemm + "/tile_m", 0).ok());
  EXPECT_FALSE(with(gemm + "/tile_n", 1e30).ok());
  EXPECT_FALSE(with(gemm + "/points", -1).ok());
  EXPECT_FALSE(with(gemm + "/range/max_bytes", -1.0).ok());
  EXPECT_NE(with("/gpu/kernel_gap_us/value", -0.1).message().find("gpu.kernel_gap_us"), std::string::npos);
  EXPECT_FALSE(with("/gpu/kernel_gap_us/value", 2e6).ok());
  EXPECT_TRUE(with("/gpu/kernel_gap_us/value", 0.0).ok());
  EXPECT_FALSE(with("/gpu/num_sms", 0).ok());
  EXPECT_FALSE(with("/gpu/num_sms", 200000).ok());
  EXPECT_FALSE(with("/frameworks/cuda-graph/node_gap_us/value", -0.5).ok());
  EXPECT_FALSE(with("/frameworks/pytorch-eager/dispatch_us/kernel/value", 1e7).ok());
  EXPECT_FALSE(with("/frameworks/pytorch-eager/call_us/stderr", -1.0).ok());
  EXPECT_FALSE(with("/host/gpu", 7).ok());
  EXPECT_TRUE(with("/host/gpu", nullptr).ok());
}

}  // namespace
}  // namespace ftax
