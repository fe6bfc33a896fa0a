#include "calibrate/profile_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/json_file.h"

namespace ftax {
namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ProfileFileTest, MissingFileIsNotFound) {
  Expected<HostProfile> p = LoadHostProfile("/nonexistent/profile.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kNotFound);
}

TEST(ProfileFileTest, BadJsonNamesTheFile) {
  const std::string path = TempFile("bad-profile.json", "{\"schema_version\": ");
  Expected<HostProfile> p = LoadHostProfile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(p.status().message().find("profile '" + path + "' is not valid JSON"), std::string::npos)
      << p.status().message();
}

TEST(ProfileFileTest, WrongContentNamesTheFile) {
  const std::string path = TempFile("wrong-profile.json", "{\"schema_version\": 999}");
  Expected<HostProfile> p = LoadHostProfile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(path), std::string::npos) << p.status().message();
}

TEST(ProfileFileTest, ShippedProfileLoads) {
  Expected<HostProfile> p = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/data/profiles/h100.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_GT(p->gpu.num_sms, 0);
}

TEST(JsonFileTest, ReadsADocumentAndRefusesADirectory) {
  Expected<nlohmann::json> j = ReadJsonFile(TempFile("doc.json", "{\"a\": [1, 2]}"), "document");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j.value()["a"].size(), 2u);
  Expected<nlohmann::json> d = ReadJsonFile(::testing::TempDir(), "document");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), ErrorCode::kInvalidInput);
}

}  // namespace
}  // namespace ftax
