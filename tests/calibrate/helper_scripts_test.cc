#include "calibrate/helper_scripts.h"

#include <gtest/gtest.h>

#include <string>

namespace ftax {
namespace {

// The build tree has the helpers in BUILD/libexec/ftax/ (CMakeLists.txt copies them), beside
// the ftax binary: found from the binary's path, not from the source tree.
TEST(HelperScripts, FoundBesideTheBinaryInTheBuildTree) {
  Expected<std::string> p = FindHelperScript("bench_eager.py", FTAX_BINARY);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value().find(FTAX_SOURCE_DIR "/scripts/"), std::string::npos) << p.value();
  EXPECT_NE(p.value().find("/libexec/ftax/bench_eager.py"), std::string::npos) << p.value();
  EXPECT_TRUE(FindHelperScript("spread.py", FTAX_BINARY).ok());
}

TEST(HelperScripts, MissingNamesBothPlaces) {
  Expected<std::string> p = FindHelperScript("bench_eager.py", "/nonexistent/bin/ftax");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(p.status().message().find("/nonexistent/bin/libexec/ftax/bench_eager.py"), std::string::npos);
  EXPECT_NE(p.status().message().find("/nonexistent/bin/../libexec/ftax/bench_eager.py"), std::string::npos);
}

}  // namespace
}  // namespace ftax
