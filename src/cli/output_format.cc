#include "cli/output_format.h"

#include <algorithm>
#include <cctype>

namespace ftax::cli {

CLI::Option* AddFormatOption(CLI::App* cmd, std::string* format, const std::vector<std::string>& allowed) {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return cmd->add_option("--format", *format, "output: " + list)
      ->transform([](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
      })
      ->check(CLI::IsMember(allowed))
      ->capture_default_str();
}

}  // namespace ftax::cli
