#include "cli/gnuplot_runner.h"

#include <stdlib.h>

#include <cctype>
#include <cstdio>
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

// Lower-case extension of the last path component, with its dot ("" when there is none).
std::string Extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = name.substr(dot);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext;
}

constexpr const char* kNoGnuplot = "--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)";

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

Expected<PlotFormat> PlotFormatOf(const std::string& path) {
  const std::string ext = Extension(path);
  if (ext == ".svg") return PlotFormat::kSvg;
  if (ext == ".png") return PlotFormat::kPng;
  if (ext == ".pdf") return PlotFormat::kPdf;
  return InvalidInput("--plot '" + path + "': " +
                      (ext.empty() ? std::string("no extension") : "unknown extension '" + ext + "'") +
                      "; give a path ending in .svg, .png or .pdf");
}

const char* GnuplotTerminal(PlotFormat format) {
  switch (format) {
    case PlotFormat::kPng: return "pngcairo";
    case PlotFormat::kPdf: return "pdfcairo";
    case PlotFormat::kSvg: break;
  }
  return "svg";
}

Expected<bool> GnuplotHasTerminal(const std::string& terminal) {
  ProcessOptions po;
  po.capture_stdout = true;
  po.discard_stderr = true;
  po.timeout_s = 30;
  Expected<ProcessResult> r = RunProcess({"gnuplot", "-e", "set terminal " + terminal}, po);
  if (!r.ok()) {
    if (r.status().code() == ErrorCode::kNotFound) return Unsupported(kNoGnuplot);
    return r.status();
  }
  return r->exit_code == 0;
}

Status CheckPlotPath(const std::string& path) {
  Status s = CheckOutputPath("--plot", path);
  if (!s.ok()) return s;
  Expected<PlotFormat> format = PlotFormatOf(path);
  if (!format.ok()) return format.status();
  const char* terminal = GnuplotTerminal(format.value());
  Expected<bool> has = GnuplotHasTerminal(terminal);
  if (!has.ok()) return has.status();
  if (!has.value()) {
    const char* what = format.value() == PlotFormat::kPdf ? "a PDF" : format.value() == PlotFormat::kPng ? "a PNG" : "an SVG";
    return Unsupported("--plot '" + path + "': this gnuplot has no " + terminal + " terminal, so it cannot write " +
                       what + "; install a gnuplot built with cairo (apt-get install gnuplot-nox) or give a " +
                       (format.value() == PlotFormat::kSvg ? ".png or .pdf" : ".svg") + " path");
  }
  return Status::Ok();
}

Status RunGnuplot(const std::string& script_body, const std::string& data,
                  const std::string& output_path, PlotSize size) {
  Status s = CheckPlotPath(output_path);
  if (!s.ok()) return s;
  const PlotFormat format = PlotFormatOf(output_path).value();
  const char* picture = format == PlotFormat::kPng ? "plot.png" : format == PlotFormat::kPdf ? "plot.pdf" : "plot.svg";
  std::string terminal = std::string("set terminal ") + GnuplotTerminal(format) + " size ";
  if (format == PlotFormat::kPdf) {
    char inches[64];
    std::snprintf(inches, sizeof(inches), "%.2fin,%.2fin", size.width / 100.0, size.height / 100.0);
    terminal += inches;
  } else {
    terminal += std::to_string(size.width) + "," + std::to_string(size.height);
  }
  if (format == PlotFormat::kSvg) terminal += " dynamic";
  TempDir dir;
  if (!(s = dir.Create()).ok()) return s;
  const std::string script = terminal + "\nset output '" + picture + "'\n" + script_body + "\nunset output\n";
  if (!(s = WriteFileAtomic(dir.File(kGnuplotData), data)).ok()) return s;
  if (!(s = WriteFileAtomic(dir.File(kScript), script)).ok()) return s;
  ProcessOptions po;
  po.working_dir = dir.path();
  po.stdout_path = dir.File(kLog);
  po.stderr_to_stdout = true;
  po.timeout_s = 120;
  Expected<ProcessResult> r = RunProcess({"gnuplot", kScript}, po);
  if (!r.ok()) {
    if (r.status().code() == ErrorCode::kNotFound) return Unsupported(kNoGnuplot);
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
