// `ftax validate --refined-profile P --refine-models M...`: the refined profile's provenance
// names the models the refinement learned from, the ones asked for that have measured rows,
// and the command says which asked-for models had none.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace ftax {
namespace {

using testing::RunFtaxCli;

const char kRun[] = "validation/h100/2026-11-25r";

TEST(ValidateRefineCli, ProvenanceNamesTheModelsLearnedFrom) {
  const std::string out = ::testing::TempDir() + "/refined-on.json";
  std::remove(out.c_str());
  auto r = RunFtaxCli(std::string("validate --measured ") + kRun + "/eager.json --profile " + kRun +
                      "/profile.json --refined-profile " + out +
                      " --refine-models convnext_small no-such-model deit_small --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("--refine-models without measured rows (not learned from): no-such-model"),
            std::string::npos)
      << r.err;
  std::ifstream in(out);
  ASSERT_TRUE(in.good()) << out;
  nlohmann::json p = nlohmann::json::parse(in);
  const nlohmann::json& used = p["provenance"]["refined_on_models"];
  ASSERT_TRUE(used.is_array()) << p["provenance"].dump();
  EXPECT_EQ(used, nlohmann::json::array({"convnext_small", "deit_small"}));
}

// A framework priced per op type gets relative op scales from its CPU-bound rows: written to
// the refined profile (frameworks.torchscript.op_scale, one scale per group's op types and "*"
// for the rest) and to its provenance, and said on stderr. Rows of arch specs whose measured
// latency is their prediction with the convolutions' group at 0.5x and every other CPU cost at
// 2x: the fit, pulled toward one common scale, must put the first group's scale well below the
// rest's (0.25 of it in the rows; 0.53 after the pull).
TEST(ValidateRefineCli, OpScalesAreFittedForAFrameworkPricedPerOpType) {
  const std::string dir = ::testing::TempDir();
  std::ifstream pin(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-26aw/profile-refined.json");
  ASSERT_TRUE(pin.good());
  nlohmann::json prof = nlohmann::json::parse(pin);
  for (auto& [name, f] : prof["frameworks"].items()) f.erase("op_scale");
  for (auto it = prof["provenance"].begin(); it != prof["provenance"].end();)
    it = it.key().rfind("refine", 0) == 0 || it.key() == "previous_refinements" ? prof["provenance"].erase(it) : ++it;
  const std::string profile = dir + "/op-scale-profile.json";
  std::ofstream(profile) << prof.dump();
  // Each row's measured latency from ftax's own split of its CPU time (predict's JSON).
  nlohmann::json rows = nlohmann::json::array();
  for (const char* arch : {"resnet:depth=18", "resnet:depth=34", "resnet:depth=50", "resnet:depth=101",
                           "resnet:depth=152", "bert:layers=4,hidden=256,heads=4,ffn=1024",
                           "bert:layers=12,hidden=768,heads=12,ffn=3072"}) {
    for (int batch : {1, 2}) {
      auto p = RunFtaxCli(std::string("predict --arch ") + arch + " --framework torchscript --profile " + profile +
                          " --batch " + std::to_string(batch) + " --samples 0 --format json" +
                          (std::string(arch).rfind("bert", 0) == 0 ? " --dim seq=128" : ""));
      ASSERT_EQ(p.rc, 0) << p.err;
      const nlohmann::json pred = nlohmann::json::parse(p.out)["predictions"][0];
      double conv_group = 0;
      for (const char* op : {"conv", "batch_norm", "relu", "max_pool2d", "adaptive_avg_pool2d"})
        if (pred["framework_ms_by_op"].contains(op)) conv_group += pred["framework_ms_by_op"][op]["ms"].get<double>();
      const double fw = pred["framework_ms"].get<double>();
      const double lat = 0.5 * conv_group + 2.0 * (fw - conv_group) + (pred["latency_ms"].get<double>() - fw);
      nlohmann::json row = {{"model", std::string("m") + std::to_string(rows.size())}, {"arch", arch},
                            {"framework", "torchscript"}, {"precision", "fp16"}, {"batch", batch},
                            {"latency_ms", {{"median", lat}, {"p10", lat}, {"p90", lat}}},
                            {"kernel_ms", pred["compute_ms"]}};
      if (std::string(arch).rfind("bert", 0) == 0) row["seq"] = 128;
      rows.push_back(row);
    }
  }
  const std::string measured = dir + "/op-scale-rows.json";
  std::ofstream(measured) << nlohmann::json{{"rows", rows}}.dump();
  const std::string out = dir + "/op-scale-refined.json";
  std::remove(out.c_str());
  auto r = RunFtaxCli("validate --measured " + measured + " --profile " + profile + " --refined-profile " + out +
                      " --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("refined torchscript: op scales from 14 CPU-bound rows"), std::string::npos) << r.err;
  std::ifstream in(out);
  ASSERT_TRUE(in.good()) << out;
  const nlohmann::json refined = nlohmann::json::parse(in);
  const nlohmann::json& scale = refined["frameworks"]["torchscript"]["op_scale"];
  ASSERT_TRUE(scale.is_object()) << refined["frameworks"]["torchscript"].dump();
  EXPECT_EQ(scale["conv"], scale["batch_norm"]);
  EXPECT_LT(scale["conv"].get<double>(), 0.6 * scale["*"].get<double>());
  EXPECT_EQ(refined["provenance"]["refinement_op_scale"]["torchscript"]["rows"], 14);
}

}  // namespace
}  // namespace ftax
