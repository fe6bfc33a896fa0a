// `ftax calibrate` exit codes that hold in every build: without Ceres it refuses with 3; with
// Ceres, a bad measurement file is exit 2 and the message names the file and the field.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "../ftax_cli_run.h"

#include "calibrate/profile_fit.h"

namespace ftax {
namespace {

using ::ftax::testing::CliRun;

CliRun Ftax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

TEST(CalibrateCliTest, WithoutCeresExitsThreeElseNamesTheBadField) {
  const std::string bad = ::testing::TempDir() + "negative.measurements.json";
  std::ofstream(bad) << R"({"schema_version": 1, "kind": "ftax-measurements",
    "host": {"sm_count": 132, "synthetic": true},
    "kernels": [{"class": "copy", "dtype": "fp16", "flops": 0, "bytes": 1e6,
                 "kernel_us": {"median": -2}}]})";
  CliRun r = Ftax("calibrate " + bad + " -o " + ::testing::TempDir() + "never.json");
  if (!CalibrateAvailable()) {
    EXPECT_EQ(r.rc, 3);
    EXPECT_NE(r.err.find("without Ceres"), std::string::npos) << r.err;
    return;
  }
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find(bad + ": kernels[0].kernel_us.median: must be > 0"), std::string::npos)
      << r.err;
  std::ifstream never(::testing::TempDir() + "never.json");
  EXPECT_FALSE(never.good());
}

TEST(CalibrateCliTest, MissingFileIsBadInput) {
  CliRun r = Ftax("calibrate /nonexistent.measurements.json -o /tmp/x.json");
  EXPECT_EQ(r.rc, 2);
}

}  // namespace
}  // namespace ftax
