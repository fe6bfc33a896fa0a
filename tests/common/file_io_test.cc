// WriteFileAtomic, ReadRegularFile and the output checks, on real files in a temporary
// directory: contents and modes kept, nothing left behind on failure, FIFOs refused at once.
#include "common/file_io.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ftax {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ftax-file-io-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string Slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  size_t Entries() const { return std::distance(fs::directory_iterator(dir_), fs::directory_iterator()); }
  std::string dir_;
};

TEST_F(FileIoTest, WritesReplacesAndKeepsTheMode) {
  ASSERT_TRUE(WriteFileAtomic(Path("a.json"), "first\n").ok());
  EXPECT_EQ(Slurp(Path("a.json")), "first\n");
  ASSERT_EQ(::chmod(Path("a.json").c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomic(Path("a.json"), "second\n").ok());
  EXPECT_EQ(Slurp(Path("a.json")), "second\n");
  struct stat st;
  ASSERT_EQ(::stat(Path("a.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(Entries(), 1u);  // no temporary file left
}

TEST_F(FileIoTest, ASymlinkStaysAndItsTargetIsReplaced) {
  ASSERT_TRUE(WriteFileAtomic(Path("target"), "old").ok());
  fs::create_symlink(Path("target"), Path("link"));
  ASSERT_TRUE(WriteFileAtomic(Path("link"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(Path("link")));
  EXPECT_EQ(Slurp(Path("target")), "new");
}

TEST_F(FileIoTest, AFailedWriteKeepsTheOldFileAndLeavesNothing) {
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "precious").ok());
  const pid_t pid = ::fork();
  if (pid == 0) {  // a file size limit makes the write fail like a full disk
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {1024, 1024};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    Status s = WriteFileAtomic(Path("victim"), std::string(100000, 'x'));
    ::_exit(s.ok() ? 0 : (s.code() == ErrorCode::kIoError && s.message().find("victim") != std::string::npos ? 7 : 1));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(Slurp(Path("victim")), "precious");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(FileIoTest, DevicesAreWrittenInPlaceWithErrorsReported) {
  Status s = WriteFileAtomic("/dev/full", "x");
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("/dev/full"), std::string::npos) << s.message();
  EXPECT_TRUE(WriteFileAtomic("/dev/null", "x").ok());
}

TEST_F(FileIoTest, DirectoriesAndMissingParentsAreRefused) {
  fs::create_directory(Path("d"));
  EXPECT_EQ(WriteFileAtomic(Path("d"), "x").code(), ErrorCode::kInvalidInput);
  EXPECT_EQ(CheckOutputPath("-o", Path("d")).code(), ErrorCode::kInvalidInput);
  Status s = WriteFileAtomic(Path("no/such/dir/f"), "x");
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
  EXPECT_NE(s.message().find("no/such/dir/f"), std::string::npos);
}

TEST_F(FileIoTest, ReadsRegularFilesAndRefusesTheRest) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "abc").ok());
  Expected<std::string> r = ReadRegularFile(Path("f"), "profile");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "abc");
  EXPECT_EQ(ReadRegularFile(Path("missing"), "profile").status().code(), ErrorCode::kNotFound);
  fs::create_directory(Path("d"));
  Expected<std::string> d = ReadRegularFile(Path("d"), "profile");
  EXPECT_EQ(d.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(d.status().message().find("is a directory"), std::string::npos);
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  Expected<std::string> f = ReadRegularFile(Path("fifo"), "profile");  // returns, never waits
  EXPECT_EQ(f.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(f.status().message().find("is a FIFO"), std::string::npos);
  EXPECT_EQ(CheckRegularFile("/dev/zero", "model").code(), ErrorCode::kInvalidInput);
}

TEST_F(FileIoTest, OutputsOverInputsAreRefusedByIdentity) {
  ASSERT_TRUE(WriteFileAtomic(Path("m.json"), "{}").ok());
  fs::create_hard_link(Path("m.json"), Path("alias.json"));
  EXPECT_TRUE(SameFile(Path("m.json"), Path("alias.json")));
  EXPECT_EQ(RefuseOutputOverInputs("-o", Path("alias.json"), {Path("m.json")}).code(),
            ErrorCode::kInvalidInput);
  EXPECT_TRUE(RefuseOutputOverInputs("-o", Path("new.json"), {Path("m.json")}).ok());
  EXPECT_TRUE(SamePath(dir_ + "/./new.json", Path("new.json")));
  EXPECT_FALSE(SamePath(Path("a.json"), Path("b.json")));
}

}  // namespace
}  // namespace ftax
