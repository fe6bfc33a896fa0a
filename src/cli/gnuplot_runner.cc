#include "cli/gnuplot_runner.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/file_io.h"
#include "common/process.h"

namespace ftax::cli {
namespace {

constexpr const char* kScript = "plot.gp";
constexpr const char* kLog = "gnuplot.log";

bool SafeChar(unsigned char ch) {
  if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) return true;
  switch (ch) {
    case ' ': case '_': case '.': case ',': case ':': case ';': case '+': case '=': case '(':
    case ')': case '/': case '%': case '-':
      return true;
    default:
      return false;
  }
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A private directory, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  Status Create() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ftax-plot-XXXXXX";
    if (!::mkdtemp(tmpl.data()))
      return IoError("cannot create a temporary directory for the plot ('" + tmpl + "')");
    path_ = tmpl;
    return Status::Ok();
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const char* name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The first few lines of gnuplot's output, for an error message.
std::string Head(const std::string& text, size_t lines) {
  std::string out;
  size_t n = 0;
  for (char ch : text) {
    if (ch == '\n' && ++n >= lines) break;
    out += ch;
  }
  return out;
}

}  // namespace

std::string GnuplotString(const std::string& text) {
  std::string out = "'";
  size_t kept = 0;
  for (unsigned char ch : text) {
    if (kept++ >= 200) break;
    out += SafeChar(ch) ? static_cast<char>(ch) : '_';
  }
  return out + "'";
}

Status RunGnuplot(const std::string& script_body, const std::string& data,
                  const std::string& output_path, PlotSize size) {
  Status s = CheckOutputPath("--plot", output_path);
  if (!s.ok()) return s;
  const bool png = EndsWith(output_path, ".png");
  const char* picture = png ? "plot.png" : "plot.svg";
  TempDir dir;
  if (!(s = dir.Create()).ok()) return s;
  std::string script = std::string("set terminal ") + (png ? "pngcairo" : "svg") + " size " +
                       std::to_string(size.width) + "," + std::to_string(size.height) +
                       (png ? "" : " dynamic") + "\nset output '" + picture + "'\n" + script_body +
                       "\nunset output\n";
  if (!(s = WriteFileAtomic(dir.File(kGnuplotData), data)).ok()) return s;
  if (!(s = WriteFileAtomic(dir.File(kScript), script)).ok()) return s;
  ProcessOptions po;
  po.working_dir = dir.path();
  po.stdout_path = dir.File(kLog);
  po.stderr_to_stdout = true;
  po.timeout_s = 120;
  Expected<ProcessResult> r = RunProcess({"gnuplot", kScript}, po);
  if (!r.ok()) {
    if (r.status().code() == ErrorCode::kNotFound)
      return Unsupported("--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)");
    return r.status();
  }
  Expected<std::string> log = ReadRegularFile(dir.File(kLog), "gnuplot output");
  if (r->exit_code != 0)
    return Unsupported("gnuplot " + DescribeExit(r.value()) + " drawing '" + output_path + "'" +
                       (log.ok() && !log->empty() ? ":\n" + Head(log.value(), 8) : ""));
  Expected<std::string> bytes = ReadRegularFile(dir.File(picture), "gnuplot picture");
  if (!bytes.ok() || bytes->empty())
    return Unsupported("gnuplot wrote no picture for '" + output_path + "'" +
                       (log.ok() && !log->empty() ? ":\n" + Head(log.value(), 8) : ""));
  return WriteFileAtomic(output_path, bytes.value());
}

}  // namespace ftax::cli
