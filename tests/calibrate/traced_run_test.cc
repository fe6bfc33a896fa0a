// Metadata of traced runs: manifests and their errors, and the measured row a trace makes.
#include "calibrate/traced_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace ftax {
namespace {

using json = nlohmann::json;

const std::string kBert = "bert:layers=12,hidden=768,heads=12,ffn=3072";
const std::string kTraceB1 =
    std::string(FTAX_TEST_DATA) + "/traces/h200-bert-base-fp16-b1.trimmed.trace.json";

std::string TempDir() {
  char name[] = "/tmp/ftax_traced_run_XXXXXX";
  return mkdtemp(name);
}

TEST(TracedRunTest, FromJsonTakesDefaultsAndChecksEveryField) {
  Expected<TracedRun> r = TracedRunFromJson(
      json{{"path", "t.json"}, {"arch", kBert}, {"batch", 8}, {"seq", 128}, {"precision", "fp16"}},
      "m.json: traces[0]", "pytorch-eager");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->framework, "pytorch-eager");
  EXPECT_EQ(r->batch, 8);
  ASSERT_TRUE(r->seq.has_value());
  EXPECT_EQ(*r->seq, 128);
  EXPECT_TRUE(r->name.empty());

  struct Case {
    json j;
    std::string expect;
  } cases[] = {
      {{{"path", "t.json"}, {"batch", 8}, {"precision", "fp16"}}, "m.json: traces[0]: arch: missing"},
      {{{"path", "t.json"}, {"arch", kBert}, {"precision", "fp16"}}, "m.json: traces[0]: batch: missing"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", 0}, {"precision", "fp16"}},
       "m.json: traces[0]: batch: must be"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", "8"}, {"precision", "fp16"}},
       "m.json: traces[0]: batch: must be"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", 8}}, "m.json: traces[0]: precision: missing"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", 8}, {"precision", "int8"}},
       "precision: 'int8' is not"},
      {{{"arch", kBert}, {"batch", 8}, {"precision", "fp16"}}, "m.json: traces[0]: path: missing"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", 8}, {"precision", "fp16"}, {"bacth", 8}},
       "unknown key 'bacth'"},
      {{{"path", "t.json"}, {"arch", "bert:layers=x"}, {"batch", 8}, {"precision", "fp16"}},
       "m.json: traces[0]: arch: 'bert:layers=x'"},
      {{{"path", "t.json"}, {"arch", kBert}, {"batch", 8}, {"precision", "fp16"}, {"framework", "jax"}},
       "framework: unknown framework 'jax'"},
  };
  for (const Case& c : cases) {
    Expected<TracedRun> bad = TracedRunFromJson(c.j, "m.json: traces[0]", "pytorch-eager");
    ASSERT_FALSE(bad.ok()) << c.j.dump();
    EXPECT_NE(bad.status().message().find(c.expect), std::string::npos) << bad.status().message();
  }
}

TEST(TracedRunTest, ManifestPathsAreRelativeToTheManifest) {
  const std::string dir = TempDir();
  const std::string manifest = dir + "/traces.json";
  std::ofstream(manifest) << json{
      {"traces",
       {{{"path", "b1.json"}, {"arch", kBert}, {"batch", 1}, {"precision", "fp16"}},
        {{"path", "/abs/b8.json"},
         {"arch", kBert},
         {"batch", 8},
         {"precision", "fp16"},
         {"framework", "torchscript"},
         {"name",
          "bert-base"}}}}}.dump();
  Expected<std::vector<TracedRun>> runs = LoadTraceManifest(manifest, "pytorch-eager");
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(runs.value()[0].path, dir + "/b1.json");
  EXPECT_EQ(runs.value()[0].framework, "pytorch-eager");
  EXPECT_EQ(runs.value()[1].path, "/abs/b8.json");
  EXPECT_EQ(runs.value()[1].framework, "torchscript");

  std::ofstream(manifest) << R"([{"path": "b1.json", "arch": "bert", "batch": 1, "precision": "fp16"},
                                 {"path": "b2.json", "arch": "bert", "batch": -2, "precision": "fp16"}])";
  runs = LoadTraceManifest(manifest, "pytorch-eager");
  ASSERT_FALSE(runs.ok());
  EXPECT_NE(runs.status().message().find(manifest + "[1]: batch: must be an integer >= 1"), std::string::npos)
      << runs.status().message();

  std::ofstream(manifest) << "{\"traces\": 3}";
  runs = LoadTraceManifest(manifest, "pytorch-eager");
  ASSERT_FALSE(runs.ok());
  EXPECT_NE(runs.status().message().find("array 'traces'"), std::string::npos);
  std::filesystem::remove_all(dir);

  runs = LoadTraceManifest("/nonexistent/traces.json", "pytorch-eager");
  ASSERT_FALSE(runs.ok());
  EXPECT_EQ(runs.status().code(), ErrorCode::kNotFound);
}

// The trimmed real trace (tests/data/traces/README.md): 5 CPU steps of BERT-base fp16 at
// batch 1 on an H200, 179 kernels (incl. memsets) per step.
TEST(TracedRunTest, RowFromRealTraceCarriesMetadataAndDevice) {
  TracedRun run;
  run.path = kTraceB1;
  run.name = "bert-base";
  run.arch = kBert;
  run.framework = "pytorch-eager";
  run.precision = "fp16";
  run.batch = 1;
  run.seq = 128;
  ASSERT_TRUE(ValidateTracedRun(run, "test").ok());
  Expected<json> row = MeasuredRowFromTrace(run);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row.value()["model"], "bert-base");
  EXPECT_EQ(row.value()["arch"], kBert);
  EXPECT_EQ(row.value()["batch"], 1);
  EXPECT_EQ(row.value()["seq"], 128);
  EXPECT_EQ(row.value()["device"], "NVIDIA H200");
  EXPECT_EQ(row.value()["latency_ms"]["n"], 5);
  EXPECT_NEAR(row.value()["latency_ms"]["median"].get<double>(), 13.4455, 1e-3);
  EXPECT_DOUBLE_EQ(row.value()["kernels_per_iter"].get<double>(), 179.0);
  EXPECT_GT(row.value()["kernel_ms"].get<double>(), 0.4);
  EXPECT_LT(row.value()["kernel_ms"].get<double>(), 0.8);

  run.path = "/nonexistent/trace.json";
  row = MeasuredRowFromTrace(run);
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find("/nonexistent/trace.json"), std::string::npos);
}

}  // namespace
}  // namespace ftax
