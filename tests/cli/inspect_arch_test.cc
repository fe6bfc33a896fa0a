// `ftax inspect --arch`: exit codes and the numbers that must not depend on the generator's
// op-level details (those change as the generator evolves, so they are not golden files).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

struct Result {
  int rc;
  std::string out;
};

Result Inspect(const std::string& args, bool merge_stderr = false) {
  ::ftax::testing::CliRun r = ::ftax::testing::RunFtaxCli("inspect " + args);
  return {r.rc, merge_stderr ? r.out + r.err : r.out};
}

TEST(InspectArchTest, FlavorsGiveTheSameMacsAndTorchHasAtenOps) {
  Result onnx = Inspect("--arch bert:layers=2,hidden=128,heads=2,ffn=512 --dim seq=32 --format json");
  Result torch = Inspect(
      "--arch bert:layers=2,hidden=128,heads=2,ffn=512 --flavor torch --dim seq=32 --format json");
  ASSERT_EQ(onnx.rc, 0) << onnx.out;
  ASSERT_EQ(torch.rc, 0) << torch.out;
  auto a = nlohmann::json::parse(onnx.out);
  auto b = nlohmann::json::parse(torch.out);
  EXPECT_EQ(a["totals"]["macs"], b["totals"]["macs"]);
  EXPECT_GT(a["totals"]["macs"].get<double>(), 0);
  EXPECT_TRUE(a["warnings"].empty()) << a["warnings"];  // --dim seq is consumed by the spec
  bool has_aten = false;
  for (const auto& o : b["by_op_type"])
    has_aten |= o["op_type"].get<std::string>().rfind("aten::", 0) == 0;
  EXPECT_TRUE(has_aten);
  EXPECT_TRUE(b["unknown_op_types"].empty()) << b["unknown_op_types"];
}

TEST(InspectArchTest, BadSpecExitsTwoNamingTheKey) {
  Result r = Inspect("--arch bert:layers=0", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("layers"), std::string::npos) << r.out;
  Result both = Inspect("tests/data/onnx/tiny_mlp.onnx --arch bert", true);
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.out.find("not both"), std::string::npos) << both.out;
}

}  // namespace
