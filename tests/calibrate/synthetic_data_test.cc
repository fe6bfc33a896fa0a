// Keeps tests/data/measurements/synthetic-*.json in step with the generator that made them
// (synthetic_measurements.h). Regenerate with
//   FTAX_REGENERATE_TEST_DATA=1 build/tests/calibrate_tests --gtest_filter='SyntheticData*'
// The files are SYNTHETIC: generated from known parameters, never measured on hardware.
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "calibrate/measurements.h"
#include "synthetic_measurements.h"

namespace ftax {
namespace {

using json = nlohmann::json;

// Structural equality with a relative tolerance on numbers (libm may differ in the last bits).
void ExpectJsonNear(const json& a, const json& b, const std::string& path) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_NEAR(x, y, 1e-9 * std::max(1.0, std::abs(y))) << path;
    return;
  }
  ASSERT_EQ(a.type(), b.type()) << path;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (const auto& [key, value] : b.items()) {
      ASSERT_TRUE(a.contains(key)) << path << "." << key;
      ExpectJsonNear(a.at(key), value, path + "." + key);
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (size_t i = 0; i < a.size(); ++i) ExpectJsonNear(a[i], b[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

TEST(SyntheticDataTest, H200LikeFileMatchesItsGenerator) {
  const std::string path =
      std::string(FTAX_TEST_DATA) + "/measurements/synthetic-h200like.measurements.json";
  testing::SyntheticSpec spec = testing::H200LikeSpec();
  spec.kernel_gap_us = 1.2;  // include GPU-bound eager chains so the gap is fitted too
  const json generated = testing::MakeSyntheticMeasurements(spec);
  if (std::getenv("FTAX_REGENERATE_TEST_DATA")) {
    std::ofstream(path) << generated.dump(1) << "\n";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (regenerate, see this file's header)";
  json on_disk;
  in >> on_disk;
  ExpectJsonNear(on_disk, generated, "$");
  Expected<Measurements> m = LoadMeasurements(path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->host["synthetic"], true);
  EXPECT_NE(m->host["gpu"].get<std::string>().find("SYNTHETIC"), std::string::npos);
}

}  // namespace
}  // namespace ftax
