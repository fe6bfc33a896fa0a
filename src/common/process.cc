#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace ftax {
namespace {

using Clock = std::chrono::steady_clock;

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void Reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct SpawnActions {
  posix_spawn_file_actions_t a;
  SpawnActions() { posix_spawn_file_actions_init(&a); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a); }
};

struct SpawnAttr {
  posix_spawnattr_t a;
  SpawnAttr() { posix_spawnattr_init(&a); }
  ~SpawnAttr() { posix_spawnattr_destroy(&a); }
};

}  // namespace

std::string DescribeExit(const ProcessResult& r) {
  if (r.timed_out) return "timed out and was killed";
  if (r.signal != 0) return "was killed by signal " + std::to_string(r.signal);
  return "exited with " + std::to_string(r.exit_code);
}

Expected<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty() || argv[0].empty()) return InvalidInput("no program to run");
  if (o.capture_stdout && !o.stdout_path.empty())
    return Internal("RunProcess: capture_stdout and stdout_path exclude each other");
  const std::string& prog = argv[0];

  SpawnActions actions;
  Fd null_fd, out_fd, pipe_r, pipe_w;
  null_fd.fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd.fd < 0) return Internal(std::string("cannot open /dev/null: ") + std::strerror(errno));
  if (!o.inherit_stdin) posix_spawn_file_actions_adddup2(&actions.a, null_fd.fd, STDIN_FILENO);
  int stdout_target = -1;
  if (!o.stdout_path.empty()) {
    out_fd.fd = ::open(o.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out_fd.fd < 0)
      return Internal("cannot open '" + o.stdout_path + "' for " + prog + "'s output: " +
                      std::strerror(errno));
    stdout_target = out_fd.fd;
  } else if (o.capture_stdout) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
    pipe_r.fd = p[0];
    pipe_w.fd = p[1];
    stdout_target = pipe_w.fd;
  }
  if (stdout_target >= 0) posix_spawn_file_actions_adddup2(&actions.a, stdout_target, STDOUT_FILENO);
  if (o.discard_stderr)
    posix_spawn_file_actions_adddup2(&actions.a, null_fd.fd, STDERR_FILENO);
  else if (o.stderr_to_stdout)
    posix_spawn_file_actions_adddup2(&actions.a, STDOUT_FILENO, STDERR_FILENO);
  if (!o.working_dir.empty())
    posix_spawn_file_actions_addchdir_np(&actions.a, o.working_dir.c_str());

  // The child starts with default signal handling and an empty signal mask, whatever the
  // parent ignores or blocks.
  SpawnAttr attr;
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr.a, &all);
  posix_spawnattr_setsigmask(&attr.a, &none);
  posix_spawnattr_setflags(&attr.a, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, prog.c_str(), &actions.a, &attr.a, args.data(), environ);
  pipe_w.Reset();  // the child holds the write end now
  if (err != 0) {
    if (err == ENOENT) return NotFound("'" + prog + "' was not found on PATH");
    return Internal("cannot run '" + prog + "': " + std::strerror(err));
  }

  ProcessResult r;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  auto past_deadline = [&] { return o.timeout_s > 0 && Clock::now() >= deadline; };
  if (pipe_r.fd >= 0) {
    char buf[4096];
    while (true) {
      if (past_deadline()) {
        ::kill(pid, SIGKILL);
        r.timed_out = true;
        break;
      }
      pollfd p{pipe_r.fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      const ssize_t n = ::read(pipe_r.fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      r.output.append(buf, static_cast<size_t>(n));
    }
  }
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, o.timeout_s > 0 ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return Internal("waitpid for '" + prog + "': " + std::strerror(errno));
    if (w == 0) {
      if (past_deadline() && !r.timed_out) {
        ::kill(pid, SIGKILL);
        r.timed_out = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace ftax
