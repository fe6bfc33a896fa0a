// Hostile inputs and failing disks, end to end: every case of tests/hostile/cases.json (made by
// tests/hostile/make_cases.py) runs the built ftax in an empty working directory of its own and
// must end with the expected exit code and messages; never killed by a signal or the time
// limit, never creating the file an injected command would create, leaving exactly the files
// the case expects and every file it put there beforehand unchanged.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kRoot = FTAX_SOURCE_DIR;
const std::string kCases = kRoot + "/tests/hostile/cases";

const json& Manifest() {
  static const json* m = [] {
    std::ifstream in(kRoot + "/tests/hostile/cases.json");
    auto* j = new json(json::parse(in, nullptr, /*allow_exceptions=*/false));
    return j;
  }();
  return *m;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  if (Manifest().is_object())
    for (const json& c : Manifest()["cases"]) names.push_back(c["name"]);
  return names;
}

const json* FindCase(const std::string& name) {
  for (const json& c : Manifest()["cases"])
    if (c["name"] == name) return &c;
  return nullptr;
}

std::string Expand(std::string s, const std::string& work) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"{cases}", kCases}, {"{root}", kRoot}, {"{work}", work}})
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
      s.replace(at, key.size(), value);
  return s;
}

bool OnPath(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((d + "/" + prog).c_str(), X_OK) == 0) return true;
  return false;
}

struct Outcome {
  bool exited = false;
  int rc = -1;
  int signal = 0;
  std::string out, err;
};

// fork + execv of the ftax binary in `work`, with an optional file size limit (SIGXFSZ
// ignored, so a write past it fails with EFBIG like one on a full disk) and a time limit
// (SIGALRM ends it).
Outcome RunCase(const std::vector<std::string>& args, const std::string& work, long fsize_bytes, int timeout_s) {
  const std::string out_path = work + "/../stdout", err_path = work + "/../stderr";
  std::vector<std::string> argv = {FTAX_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string mark = work + "/INJECTED";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(work.c_str()) != 0) ::_exit(120);
    const int out = ::open(fsize_bytes > 0 ? "/dev/null" : out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) ::_exit(121);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::setenv("FTAX_INJECT_MARK", mark.c_str(), 1);
    if (fsize_bytes > 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {static_cast<rlim_t>(fsize_bytes), static_cast<rlim_t>(fsize_bytes)};
      ::setrlimit(RLIMIT_FSIZE, &rl);
    }
    ::alarm(static_cast<unsigned>(timeout_s));
    ::execv(cargv[0], cargv.data());
    ::_exit(122);
  }
  Outcome o;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return o;
  o.exited = WIFEXITED(status);
  o.rc = o.exited ? WEXITSTATUS(status) : -1;
  o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  o.out = ftax::testing::SlurpFile(out_path);
  o.err = ftax::testing::SlurpFile(err_path);
  return o;
}

class HostileCliTest : public ::testing::TestWithParam<std::string> {};

TEST(HostileCasesTest, ManifestLoadsAndEveryCaseFileExists) {
  ASSERT_TRUE(Manifest().is_object()) << "tests/hostile/cases.json is missing or not JSON";
  ASSERT_GE(Manifest()["cases"].size(), 50u);
  for (const json& c : Manifest()["cases"])
    for (const json& a : c["args"]) {
      const std::string arg = a.get<std::string>();
      if (arg.rfind("{cases}/", 0) == 0) EXPECT_TRUE(fs::exists(Expand(arg, ""))) << c["name"] << ": " << arg;
    }
}

TEST_P(HostileCliTest, ExitsAsExpectedWithoutHarm) {
  const json* c = FindCase(GetParam());
  ASSERT_NE(c, nullptr);
  for (const json& need : (*c)["needs"]) {
#ifndef FTAX_HAVE_CERES
    if (need == "ceres") GTEST_SKIP() << "built without Ceres";
#endif
    if (need == "gnuplot" && !OnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  }
  char tmpl[] = "/tmp/ftax-hostile-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string base = tmpl, work = base + "/work";
  ASSERT_TRUE(fs::create_directory(work));

  const json& setup = (*c)["setup"];
  std::set<std::string> expected;
  for (const json& f : (*c)["creates"]) expected.insert(f.get<std::string>());
  std::map<std::string, std::string> victims;
  if (setup.contains("victims"))
    for (const auto& [name, content] : setup["victims"].items()) {
      std::ofstream(work + "/" + name) << content.get<std::string>();
      victims[name] = content.get<std::string>();
      expected.insert(name);
    }
  if (setup.contains("copies"))
    for (const auto& [name, src] : setup["copies"].items()) {
      fs::copy_file(Expand(src.get<std::string>(), work), work + "/" + name);
      victims[name] = ftax::testing::SlurpFile(work + "/" + name);
      expected.insert(name);
    }
  if (setup.contains("dirs"))
    for (const json& d : setup["dirs"]) {
      fs::create_directory(work + "/" + d.get<std::string>());
      expected.insert(d.get<std::string>());
    }
  if (setup.contains("fifos"))
    for (const json& f : setup["fifos"]) {
      ASSERT_EQ(::mkfifo((work + "/" + f.get<std::string>()).c_str(), 0600), 0);
      expected.insert(f.get<std::string>());
    }

  std::vector<std::string> args;
  for (const json& a : (*c)["args"]) args.push_back(Expand(a.get<std::string>(), work));
  const Outcome o = RunCase(args, work, setup.value("fsize_bytes", 0L), (*c)["timeout_s"].get<int>());
  const std::string ctx = "stdout:\n" + o.out + "\nstderr:\n" + o.err;

  EXPECT_TRUE(o.exited) << "killed by signal " << o.signal
                        << (o.signal == SIGALRM ? " (time limit)" : "") << "\n" << ctx;
  EXPECT_EQ(o.rc, (*c)["rc"].get<int>()) << ctx;
  for (const json& s : (*c)["stderr"])
    EXPECT_NE(o.err.find(Expand(s.get<std::string>(), work)), std::string::npos) << "stderr lacks: " << s << "\n" << ctx;
  for (const json& s : (*c)["stdout"])
    EXPECT_NE(o.out.find(Expand(s.get<std::string>(), work)), std::string::npos) << "stdout lacks: " << s << "\n" << ctx;
  EXPECT_EQ(o.err.find("internal error"), std::string::npos) << ctx;
  // In a sanitizer build (docs: -fsanitize=address,undefined,float-cast-overflow) any report fails.
  EXPECT_EQ(o.err.find("Sanitizer"), std::string::npos) << ctx;
  EXPECT_EQ(o.err.find("runtime error:"), std::string::npos) << ctx;

  EXPECT_FALSE(fs::exists(work + "/INJECTED")) << "an injected command ran";
  EXPECT_FALSE(fs::exists(kRoot + "/INJECTED")) << "an injected command ran in the source tree";
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(work)) present.insert(e.path().filename().string());
  EXPECT_EQ(present, expected) << "files in the working directory differ from what the case expects\n" << ctx;
  for (const auto& [name, content] : victims)
    EXPECT_EQ(ftax::testing::SlurpFile(work + "/" + name), content) << name << " was changed";
  for (const std::string& f : expected)
    if (fs::is_regular_file(work + "/" + f) && !victims.count(f))
      EXPECT_GT(fs::file_size(work + "/" + f), 0u) << f << " is empty";
  std::error_code ec;
  fs::remove_all(base, ec);
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Cases, HostileCliTest, ::testing::ValuesIn(CaseNames()), CaseName);

}  // namespace
