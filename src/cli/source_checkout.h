// The source checkout this ftax was built from, for provenance fields of written profiles.
//
// Read with git at run time from FTAX_SOURCE_DIR (set by CMake); null where ftax was not
// built from a git checkout or git is not installed.
#pragma once

#include <nlohmann/json.hpp>

namespace ftax::cli {

// `git rev-parse HEAD` of the checkout (40 hex digits), or null.
nlohmann::json FtaxCommit();
// Whether tracked files differ from that commit, or null.
nlohmann::json FtaxTreeDirty();

}  // namespace ftax::cli
