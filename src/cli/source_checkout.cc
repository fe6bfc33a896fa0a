#include "cli/source_checkout.h"

#include <optional>
#include <string>
#include <vector>

#include "common/process.h"

namespace ftax::cli {
namespace {

// Runs git with `args` in the source checkout (no shell) and returns its first output line,
// or nullopt when git is missing or fails.
[[maybe_unused]] std::optional<std::string> GitFirstLine(const std::vector<std::string>& args) {
#ifdef FTAX_SOURCE_DIR
  std::vector<std::string> argv = {"git", "-C", FTAX_SOURCE_DIR};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions po;
  po.capture_stdout = true;
  po.discard_stderr = true;
  po.timeout_s = 30;
  Expected<ProcessResult> r = RunProcess(argv, po);
  if (!r.ok() || r->exit_code != 0) return std::nullopt;
  std::string out = r->output.substr(0, r->output.find('\n'));
  while (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
#else
  return std::nullopt;
#endif
}

}  // namespace

nlohmann::json FtaxCommit() {
#ifdef FTAX_SOURCE_DIR
  auto sha = GitFirstLine({"rev-parse", "HEAD"});
  if (!sha || sha->size() != 40) return nullptr;
  return *sha;
#else
  return nullptr;
#endif
}

nlohmann::json FtaxTreeDirty() {
#ifdef FTAX_SOURCE_DIR
  auto line = GitFirstLine({"status", "--porcelain", "--untracked-files=no"});
  if (!line) return nullptr;
  return !line->empty();
#else
  return nullptr;
#endif
}

}  // namespace ftax::cli
