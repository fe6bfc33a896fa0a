// Runs the built ftax binary for CLI tests: exit code, stdout and stderr, from the source
// directory (so relative paths such as validation/h200/2026-11-22b/profile.json work). Output goes to unique
// temporary files, so tests running in parallel processes never read each other's output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ftax::testing {

struct CliRun {
  int rc = -1;
  std::string out, err;
};

inline std::string SlurpFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `binary args` from the source directory; stdin is /dev/null unless args redirect it.
inline CliRun RunCli(const std::string& binary, const std::string& args) {
  char out_name[] = "/tmp/ftax-cli-out-XXXXXX";
  char err_name[] = "/tmp/ftax-cli-err-XXXXXX";
  const int out_fd = mkstemp(out_name), err_fd = mkstemp(err_name);
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0) close(err_fd);
  const std::string cmd = std::string("cd '") + FTAX_SOURCE_DIR + "' && '" + binary + "' " + args + " >" +
                          out_name + " 2>" + err_name +
                          (args.find('<') == std::string::npos ? " </dev/null" : "");
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = SlurpFile(out_name);
  r.err = SlurpFile(err_name);
  std::remove(out_name);
  std::remove(err_name);
  return r;
}

// Runs the built ftax binary (FTAX_BINARY).
inline CliRun RunFtaxCli(const std::string& args) { return RunCli(FTAX_BINARY, args); }

}  // namespace ftax::testing
