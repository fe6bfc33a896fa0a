// The --format option, declared and checked one way by every subcommand.
//
// Each subcommand names the formats it can write ("table", "json", "csv"); a name outside
// them is refused while the command line is parsed, before anything is read or written, with
// CLI11's message and exit code 2 ("--format: yaml not in {table,json,csv}"). Names are
// matched without regard to case and stored lower-case.
//
//   AddFormatOption(cmd, &o->format, {"table", "json", "csv"});
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ftax::cli {

CLI::Option* AddFormatOption(CLI::App* cmd, std::string* format, const std::vector<std::string>& allowed);

}  // namespace ftax::cli
