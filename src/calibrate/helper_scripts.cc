#include "calibrate/helper_scripts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>

namespace ftax {
namespace {

std::string SelfExe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string Places(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i)
    out += (i == 0 ? "" : i + 1 == paths.size() ? " or " : ", ") + paths[i];
  return out;
}

}  // namespace

std::vector<std::string> HelperPaths(const std::string& name, const std::string& exe) {
  const std::string self = exe.empty() ? SelfExe() : exe;
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  std::vector<std::string> paths = {dir + "/libexec/ftax/" + name, dir + "/../libexec/ftax/" + name};
  if (EndsWith(dir, "/libexec/ftax") || dir == "libexec/ftax") paths.push_back(dir + "/" + name);
  return paths;
}

Expected<std::string> FindHelperScript(const std::string& name, const std::string& exe) {
  const std::vector<std::string> paths = HelperPaths(name, exe);
  for (const std::string& p : paths)
    if (std::ifstream(p).good()) return p;
  return Status(ErrorCode::kNotFound, name + " was not found beside the ftax binary (" + Places(paths) +
                                          "); rebuild or reinstall ftax");
}

Expected<std::string> FindHelperProgram(const std::string& name, const std::string& exe) {
  const std::vector<std::string> paths = HelperPaths(name, exe);
  for (const std::string& p : paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return Status(ErrorCode::kNotFound, name + " was not found beside the ftax binary (" + Places(paths) +
                                          "); rebuild or reinstall ftax");
}

}  // namespace ftax
