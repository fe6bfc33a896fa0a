// RunProcess runs an argv without a shell: arguments reach the program byte for byte, shell
// syntax in them is only text, and failures to start are errors, not exit codes.
#include "common/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace ftax {
namespace {

TEST(ProcessTest, ArgumentsArePassedLiterallyWithoutAShell) {
  ProcessOptions o;
  o.capture_stdout = true;
  const std::string tricky = "a'b\"c $(touch /tmp/ftax-process-test-injected) `id` ; | & *";
  Expected<ProcessResult> r = RunProcess({"printf", "%s|%s", tricky, "two words"}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, tricky + "|two words");
  EXPECT_FALSE(std::filesystem::exists("/tmp/ftax-process-test-injected"));
}

TEST(ProcessTest, ExitCodesSignalsAndMissingPrograms) {
  Expected<ProcessResult> r = RunProcess({"false"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(RunProcess({"ftax-no-such-program-anywhere"}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(RunProcess({}).status().code(), ErrorCode::kInvalidInput);
  ProcessOptions o;
  o.timeout_s = 0.3;
  Expected<ProcessResult> slow = RunProcess({"sleep", "30"}, o);
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow->timed_out);
  EXPECT_NE(slow->signal, 0);
  EXPECT_EQ(DescribeExit(slow.value()), "timed out and was killed");
}

TEST(ProcessTest, RunsInTheGivenDirectoryWithOutputToAFile) {
  char tmpl[] = "/tmp/ftax-process-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ProcessOptions o;
  o.working_dir = dir;
  o.stdout_path = dir + "/out.txt";
  o.stderr_to_stdout = true;
  Expected<ProcessResult> r = RunProcess({"pwd"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(std::filesystem::file_size(dir + "/out.txt") >= dir.size());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ftax
