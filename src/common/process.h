// Running another program without a shell.
//
// ftax runs a few helpers: gnuplot for --plot, the Python eager benchmark for `ftax bench`,
// git for the provenance of written profiles. None of them goes through /bin/sh: the program
// and its arguments are an argv vector handed to posix_spawnp, so no file name, label or
// option value is ever parsed as shell code. Standard input is /dev/null unless asked
// otherwise; output may go to a file, be captured, or be passed through.
//
//   ProcessOptions o;
//   o.working_dir = dir;           // the child runs there; the parent's directory is untouched
//   o.stdout_path = dir + "/log";  // stdout (and stderr with stderr_to_stdout) into a file
//   Expected<ProcessResult> r = RunProcess({"gnuplot", "plot.gp"}, o);
//   if (!r.ok()) ...               // could not start (NotFound when the program is not on PATH)
//   if (r->exit_code != 0) ...     // ran and failed
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace ftax {

struct ProcessOptions {
  std::string working_dir;       // empty: the parent's
  std::string stdout_path;       // empty: inherited (or captured); else truncated and written
  bool capture_stdout = false;   // collect stdout into ProcessResult::output (not with stdout_path)
  bool stderr_to_stdout = false; // stderr goes wherever stdout goes
  bool discard_stderr = false;   // stderr to /dev/null
  bool inherit_stdin = false;    // default: stdin is /dev/null
  double timeout_s = 0;          // > 0: the child is killed (SIGKILL) after this long
};

struct ProcessResult {
  int exit_code = -1;     // exit status; -1 when killed by a signal
  int signal = 0;         // the signal that ended the child, or 0
  bool timed_out = false;
  std::string output;     // captured stdout (capture_stdout)
};

// Runs argv[0] (looked up on PATH) with argv; waits for it. Errors: InvalidInput for an empty
// argv, NotFound when the program cannot be found, Internal when it cannot be started.
Expected<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   const ProcessOptions& options = {});

// "exited with 3", "killed by signal 9", "timed out after 60 s": for messages.
std::string DescribeExit(const ProcessResult& r);

}  // namespace ftax
