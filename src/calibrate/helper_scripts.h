// The Python helpers that ftax runs (bench_eager.py times Python-eager dispatch for `ftax
// bench`), found beside the ftax binary rather than in the source tree.
//
// CMake copies them into BUILD/libexec/ftax/ and `cmake --install` into PREFIX/libexec/ftax/;
// FindHelperScript looks in EXE_DIR/libexec/ftax/ (a build tree) and then in
// EXE_DIR/../libexec/ftax/ (an installed ftax), where EXE_DIR is the directory of the running
// binary. NotFound names both places.
//
//   Expected<std::string> py = FindHelperScript("bench_eager.py");
#pragma once

#include <string>

#include "common/status.h"

namespace ftax {

// `exe` is the path of the running binary; empty: /proc/self/exe.
Expected<std::string> FindHelperScript(const std::string& name, const std::string& exe = "");

}  // namespace ftax
