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

}  // namespace
}  // namespace ftax
