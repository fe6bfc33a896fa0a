// Every option is checked before any side effect, and --format is checked the same way by
// every subcommand: a bad value exits 2 naming the option, and nothing is written.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../ftax_cli_run.h"

namespace ftax {
namespace {

using testing::RunFtaxCli;

const char kRun[] = "validation/h100/2026-11-25r";

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

TEST(OptionsCheckedFirst, ValidateRefineTypoWritesNothing) {
  const std::string out = ::testing::TempDir() + "/refined-typo.json";
  std::remove(out.c_str());
  auto r = RunFtaxCli(std::string("validate --measured ") + kRun + "/eager.json --profile " + kRun +
                      "/profile.json --refined-profile " + out + " --refine typo");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--refine"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out)) << "the refined profile was written before --refine was checked";
}

TEST(OptionsCheckedFirst, ValidatePriorWithoutRefinePriorWritesNothing) {
  const std::string out = ::testing::TempDir() + "/refined-prior.json";
  std::remove(out.c_str());
  auto r = RunFtaxCli(std::string("validate --measured ") + kRun + "/eager.json --profile " + kRun +
                      "/profile.json --refined-profile " + out + " --prior data/profiles/h100.json");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_FALSE(Exists(out));
}

TEST(OptionsCheckedFirst, EveryFormatOptionRefusesAnUnknownFormat) {
  for (const std::string cmd :
       {std::string("inspect --arch bert --dim seq=128"), std::string("profiles"),
        std::string("predict --arch bert --dim seq=128 --profile h100"),
        std::string("compare arch:bert arch:bert:layers=6 --dim seq=128 --profile h100"),
        std::string("validate --measured ") + kRun + "/eager.json --profile " + kRun + "/profile.json",
        std::string("calibrate tests/data/measurements/synthetic-h200like.measurements.json -o ") +
            ::testing::TempDir() + "/never-written.json"}) {
    auto r = RunFtaxCli(cmd + " --format yaml");
    EXPECT_EQ(r.rc, 2) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("--format"), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << cmd << " printed before refusing:\n" << r.out;
  }
  // Case is not significant.
  EXPECT_EQ(RunFtaxCli("profiles --format JSON").rc, 0);
}

}  // namespace
}  // namespace ftax
