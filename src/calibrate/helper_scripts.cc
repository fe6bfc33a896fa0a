#include "calibrate/helper_scripts.h"

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

}  // namespace

Expected<std::string> FindHelperScript(const std::string& name, const std::string& exe) {
  const std::string self = exe.empty() ? SelfExe() : exe;
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  const std::string build_tree = dir + "/libexec/ftax/" + name;
  const std::string installed = dir + "/../libexec/ftax/" + name;
  for (const std::string& p : {build_tree, installed})
    if (std::ifstream(p).good()) return p;
  return Status(ErrorCode::kNotFound, name + " was not found beside the ftax binary (" + build_tree + " or " +
                                          installed + "); rebuild or reinstall ftax");
}

}  // namespace ftax
