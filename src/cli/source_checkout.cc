#include "cli/source_checkout.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace ftax::cli {
namespace {

// Runs a command and returns its first output line, or nullopt.
[[maybe_unused]] std::optional<std::string> FirstLineOf(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return std::nullopt;
  char buf[512];
  std::string out;
  if (fgets(buf, sizeof(buf), pipe.get())) out = buf;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

nlohmann::json FtaxCommit() {
#ifdef FTAX_SOURCE_DIR
  const std::string dir = FTAX_SOURCE_DIR;
  auto sha = FirstLineOf("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (!sha || sha->size() != 40) return nullptr;
  return *sha;
#else
  return nullptr;
#endif
}

nlohmann::json FtaxTreeDirty() {
#ifdef FTAX_SOURCE_DIR
  const std::string dir = FTAX_SOURCE_DIR;
  auto line = FirstLineOf("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
  if (!line) return nullptr;
  return !line->empty();
#else
  return nullptr;
#endif
}

}  // namespace ftax::cli
