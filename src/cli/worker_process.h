// Running this ftax binary again as a child process, without a shell: the worker processes
// of `ftax validate` (calibrate/isolated_sweep.h).
//
//   Expected<std::string> dir = MakePrivateTempDir("ftax-validate");
//   int status = RunSelf({"validate", "--worker", req, "--worker-out", out});
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace ftax::cli {

// Runs this executable (/proc/self/exe) with `args` (argv[1..]), its stdout and stderr those
// of the caller, and waits. Returns 0, the child's exit code, or minus the signal that ended
// it; -1000 when it could not be started. With `timeout_s` > 0 a child still running after
// that long is killed (SIGKILL) and `timed_out_status` is returned.
int RunSelf(const std::vector<std::string>& args, double timeout_s = 0, int timed_out_status = -2000);

// A new directory only this user can enter, under $TMPDIR or /tmp; removed by
// RemoveTempDir with the files in it.
Expected<std::string> MakePrivateTempDir(const std::string& prefix);
void RemoveTempDir(const std::string& dir);

}  // namespace ftax::cli
