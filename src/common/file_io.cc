#include "common/file_io.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace ftax {
namespace {

std::string KindOf(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "not a regular file";
}

Status NotRegular(const std::string& what, const std::string& path, mode_t m) {
  if (S_ISDIR(m)) return InvalidInput(what + " '" + path + "' is a directory, not a file");
  return InvalidInput(what + " '" + path + "' is " + KindOf(m) + ", not a regular file");
}

Status OpenError(const std::string& what, const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR)
    return NotFound("cannot open " + what + " '" + path + "': no such file");
  return InvalidInput("cannot open " + what + " '" + path + "': " + std::strerror(err));
}

// Writes all of `data` to `fd`, retrying short writes and EINTR; errno is kept on failure.
bool WriteAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

Status WriteInPlace(const std::string& path, std::string_view contents) {
  // A device or FIFO: no rename possible. O_NONBLOCK so that a FIFO without a reader fails at
  // once instead of hanging; blocking writes after that.
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return IoError("cannot write '" + path + "': " + std::strerror(errno));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (!WriteAll(fd, contents)) {
    const int err = errno;
    ::close(fd);
    return IoError("write to '" + path + "' failed: " + std::strerror(err));
  }
  if (::close(fd) != 0) return IoError("write to '" + path + "' failed: " + std::strerror(errno));
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Status CheckRegularFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OpenError(what, path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(what, path, st.st_mode);
  return Status::Ok();
}

Expected<std::string> ReadRegularFile(const std::string& path, const std::string& what) {
  // Checked on the open descriptor, not only by name, so that a file swapped for a FIFO between
  // a check and the open cannot make the read hang.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return OpenError(what, path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t m = st.st_mode;
    ::close(fd);
    return NotRegular(what, path, m);
  }
  std::string out;
  if (st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return InvalidInput("cannot read " + what + " '" + path + "': " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status CheckOutputPath(const std::string& flag, const std::string& path) {
  struct stat st;
  if (path.empty()) return InvalidInput(flag + ": empty path");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return InvalidInput(flag + " '" + path + "' is a directory; give a file path");
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool SamePath(const std::string& a, const std::string& b) {
  if (SameFile(a, b)) return true;
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ea), ea);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

Status RefuseOutputOverInputs(const std::string& flag, const std::string& path,
                              const std::vector<std::string>& inputs) {
  Status s = CheckOutputPath(flag, path);
  if (!s.ok()) return s;
  for (const std::string& in : inputs)
    if (!in.empty() && SameFile(path, in))
      return InvalidInput(flag + " '" + path + "' is also an input ('" + in +
                          "'); writing it would replace what is read. Give another output path");
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path_in, std::string_view contents) {
  if (path_in.empty()) return InvalidInput("no output path given");
  std::string path = path_in;
  struct stat st;
  // A symlink is kept: the file it points to is replaced.
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
    }
  }
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return InvalidInput("output '" + path_in + "' is a directory; give a file path");
  if (exists && !S_ISREG(st.st_mode)) return WriteInPlace(path_in, contents);

  std::string tmp = DirName(path) + "/." + BaseName(path) + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return IoError("cannot write '" + path_in + "': cannot create a file in '" + DirName(path) +
                   "': " + std::strerror(errno));
  auto fail = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return IoError(what + " '" + path_in + "' failed: " + std::strerror(err));
  };
  mode_t mode;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) return fail("setting the mode of", errno);
  if (!WriteAll(fd, contents)) return fail("write to", errno);
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) return fail("flushing", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return IoError("write to '" + path_in + "' failed: " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return IoError("cannot replace '" + path_in + "': " + std::strerror(err));
  }
  // The rename itself reaches the disk with the directory.
  const int dfd = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace ftax
