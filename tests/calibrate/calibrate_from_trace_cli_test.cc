// `ftax calibrate --from-trace`: refines a profile from profiler traces in every build (no
// Ceres needed); bad traces and missing metadata are exit 2 naming the file and field; too few
// framework-bound traces are exit 1; nothing is written on failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../ftax_cli_run.h"
#include "synthetic_trace.h"
#include "predictor/host_profile.h"
#include "calibrate/profile_file.h"

namespace ftax {
namespace {

using ::ftax::testing::CliRun;
using json = nlohmann::json;

const std::string kArch = "bert:layers=12,hidden=768,heads=12,ffn=3072";
const std::string kB1 = "tests/data/traces/h200-bert-base-fp16-b1.trimmed.trace.json";
const std::string kB32 = "tests/data/traces/h200-bert-base-fp16-b32.trimmed.trace.json";

CliRun Ftax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

std::string TempPath(const std::string& suffix) {
  char name[] = "/tmp/ftax_from_trace_XXXXXX";
  close(mkstemp(name));
  std::remove(name);
  return std::string(name) + suffix;
}

std::string Spec(const std::string& path, int batch, const std::string& more = "") {
  return "--from-trace '" + path + ";name=bert-base;arch=" + kArch + ";batch=" + std::to_string(batch) +
         ";seq=128;precision=fp16" + more + "'";
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

TEST(CalibrateFromTraceCliTest, RefinesPythonEagerCostsAndRecordsProvenance) {
  const std::string out = TempPath(".json");
  CliRun r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " --min-rows 2 " + Spec(kB1, 1) +
                  " " + Spec(kB32, 32));
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  // The table: one line per trace, before and after, then the scale and the overhead note.
  EXPECT_NE(r.out.find("h200-bert-base-fp16-b1.trimmed.trace.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pred_before_ms"), std::string::npos);
  EXPECT_NE(r.out.find("pred_after_ms"), std::string::npos);
  EXPECT_NE(r.out.find("refined pytorch-eager: dispatch_us and module_us x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(2 traces)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profiler overhead"), std::string::npos);

  Expected<HostProfile> before = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  Expected<HostProfile> after = LoadHostProfile(out);
  ASSERT_TRUE(before.ok() && after.ok()) << (after.ok() ? "" : after.status().message());
  const json& prov = after->provenance;
  ASSERT_EQ(prov["refinement"].size(), 1u);
  const double scale = prov["refinement"][0]["dispatch_scale"].get<double>();
  EXPECT_GT(scale, 1.0);
  EXPECT_GT(prov["refinement"][0]["stderr"].get<double>(), 0.0);
  EXPECT_EQ(prov["refinement"][0]["rows"], 2);
  EXPECT_EQ(prov["refined_with"], (json{kB1, kB32}));
  EXPECT_EQ(prov["refined_by"]["tool"], "ftax calibrate --from-trace");
  ASSERT_EQ(prov["refinement_inputs"].size(), 2u);
  EXPECT_EQ(prov["refinement_inputs"][1]["batch"], 32);
  EXPECT_EQ(prov["refinement_inputs"][1]["device"], "NVIDIA H200");
  EXPECT_DOUBLE_EQ(prov["refinement_options"]["profiler_overhead_factor"].get<double>(), 1.0);
  const auto& fb = before->frameworks.at("pytorch-eager");
  const auto& fa = after->frameworks.at("pytorch-eager");
  EXPECT_NEAR(fa.dispatch_us[1].value, fb.dispatch_us[1].value * scale, 1e-9);
  EXPECT_DOUBLE_EQ(fa.call_us.value, fb.call_us.value);
  std::remove(out.c_str());

  // With a profiler overhead factor the measured framework time, and so the scale, shrinks.
  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " --min-rows 2 --format json " +
           "--profiler-overhead-factor 2 " + Spec(kB1, 1) + " " + Spec(kB32, 32));
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["written"].get<bool>());
  EXPECT_LT(j["refinement"][0]["dispatch_scale"].get<double>(), scale / 2);
  EXPECT_NEAR(
      j["traces"][0]["measured_framework_ms"].get<double>(),
      (j["traces"][0]["traced_step_ms"].get<double>() - j["traces"][0]["predicted_gpu_tail_ms"].get<double>()) / 2,
      1e-6);
  std::remove(out.c_str());
}

// (Relative paths in a manifest: TracedRunTest.ManifestPathsAreRelativeToTheManifest.)
TEST(CalibrateFromTraceCliTest, ManifestListsTracesAndAnotherGpuIsNoted) {
  const std::string manifest = TempPath(".traces.json");
  const std::string data = std::string(FTAX_SOURCE_DIR) + "/";
  std::ofstream(manifest) << json{{"traces",
                                   {{{"path", data + kB1},
                                     {"name", "bert-base"},
                                     {"arch", kArch},
                                     {"batch", 1},
                                     {"seq", 128},
                                     {"precision", "fp16"}},
                                    {{"path", data + kB32},
                                     {"name", "bert-base"},
                                     {"arch", kArch},
                                     {"batch", 32},
                                     {"seq", 128},
                                     {"precision", "fp16"},
                                     {"framework", "pytorch-eager"}}}}}
                                 .dump();
  const std::string out = TempPath(".json");
  CliRun r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out +
                  " --min-rows 2 --trace-manifest " + manifest);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Exists(out));
  EXPECT_EQ(r.out.find("was recorded on"), std::string::npos) << r.out;
  // H200 traces against the H100 profile: refined, with a note.
  r = Ftax("calibrate --profile validation/h100/2026-11-22/profile.json -o " + out + " --min-rows 2 --trace-manifest " +
           manifest);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("was recorded on NVIDIA H200, the profile describes NVIDIA H100"), std::string::npos)
      << r.out;
  std::remove(out.c_str());
  std::remove(manifest.c_str());
}

TEST(CalibrateFromTraceCliTest, TooFewFrameworkBoundTracesRefusesToWrite) {
  const std::string out = TempPath(".json");
  // Default --min-rows 3 with two traces.
  CliRun r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " " + Spec(kB1, 1) + " " +
                  Spec(kB32, 32));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("refusing to write"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pytorch-eager: 2 usable (framework-bound) traces of 2, --min-rows is 3"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(Exists(out));

  // A GPU-bound run is reported as such and not used.
  const std::string gpu_bound = TempPath(".trace.json");
  ::ftax::testing::WriteGpuBoundTrace(gpu_bound);
  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " --min-rows 2 " + Spec(kB1, 1) + " " +
           Spec(gpu_bound, 256));
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("not used: " + gpu_bound + ": not framework-bound"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 usable (framework-bound) trace of 2"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out));
  // ... while the usable ones still refine when there are enough.
  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " --min-rows 2 " + Spec(kB1, 1) + " " +
           Spec(kB32, 32) + " " + Spec(gpu_bound, 256));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("(2 traces)"), std::string::npos) << r.out;
  EXPECT_TRUE(Exists(out));
  std::remove(out.c_str());
  std::remove(gpu_bound.c_str());
}

TEST(CalibrateFromTraceCliTest, BadTraceFileIsBadInputNamingIt) {
  const std::string out = TempPath(".json");
  const std::string bad = TempPath(".trace.json");
  std::ofstream(bad) << "{\"traceEvents\": [";  // truncated
  CliRun r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " " + Spec(bad, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("trace '" + bad + "' is not valid JSON"), std::string::npos) << r.err;

  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]})";
  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " " + Spec(bad, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("trace '" + bad + "': no 'ProfilerStep#N' spans"), std::string::npos) << r.err;

  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " " + Spec("/nonexistent/t.json", 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("cannot open trace '/nonexistent/t.json'"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out));
  std::remove(bad.c_str());
}

TEST(CalibrateFromTraceCliTest, MissingMetadataIsBadInputNamingTheField) {
  const std::string out = TempPath(".json");
  struct Case {
    std::string trace_arg, expect;
  } cases[] = {
      {"--from-trace " + kB1, "--from-trace '" + kB1 + "': arch: missing"},
      {"--from-trace '" + kB1 + ";arch=" + kArch + ";precision=fp16'",
       "--from-trace '" + kB1 + "': batch: missing"},
      {"--from-trace '" + kB1 + ";arch=" + kArch + ";batch=1'",
       "--from-trace '" + kB1 + "': precision: missing"},
      {"--from-trace '" + kB1 + ";arch=" + kArch + ";batch=one;precision=fp16'",
       "batch: must be an integer >= 1"},
      {"--from-trace '" + kB1 + ";arch=" + kArch + ";batch=1;precision=fp16;btach=2'", "unknown key 'btach'"},
      {"--from-trace '" + kB1 + ";arch=" + kArch + ";batch=1;precision=fp16;cuda'",
       "'cuda' is not KEY=VALUE"},
      {Spec(kB1, 1, ";framework=cuda-graph"), "only pytorch-eager and torchscript"},
  };
  for (const Case& c : cases) {
    CliRun r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " " + c.trace_arg);
    EXPECT_EQ(r.rc, 2) << c.trace_arg << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.trace_arg << "\n" << r.err;
  }
  // Options: --profile is needed; fit options and measurement files do not mix with traces.
  CliRun r = Ftax("calibrate -o " + out + " " + Spec(kB1, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("needs --profile"), std::string::npos) << r.err;
  r = Ftax("calibrate --profile validation/h200/2026-11-22b/profile.json -o " + out + " --force " + Spec(kB1, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--force applies to fits"), std::string::npos) << r.err;
  r = Ftax(
      "calibrate tests/data/measurements/synthetic-h200like.measurements.json --profile "
      "validation/h200/2026-11-22b/profile.json -o " +
      out + " " + Spec(kB1, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
  r = Ftax("calibrate --profile /nonexistent/profile.json -o " + out + " " + Spec(kB1, 1));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("/nonexistent/profile.json"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out));
}

}  // namespace
}  // namespace ftax
