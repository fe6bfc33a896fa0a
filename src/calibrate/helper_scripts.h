// The files ftax runs from beside its binary rather than from the source tree: the Python
// helpers (bench_eager.py times Python-eager dispatch for `ftax bench`) and, in a build with
// LibTorch, the full binary ftax-torch that the light `ftax` hands TorchScript and GPU work to
// (cli/torch_handoff.h).
//
// CMake puts them into BUILD/libexec/ftax/ and `cmake --install` into PREFIX/libexec/ftax/.
// The lookup tries EXE_DIR/libexec/ftax/NAME (a build tree), EXE_DIR/../libexec/ftax/NAME (an
// installed ftax) and, when the running binary itself lives in a libexec/ftax folder (as
// ftax-torch does), EXE_DIR/NAME; EXE_DIR is the directory of the running binary. NotFound
// names every place it looked.
//
//   Expected<std::string> py = FindHelperScript("bench_eager.py");
//   Expected<std::string> full = FindHelperProgram("ftax-torch");
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace ftax {

// Where NAME may be, in the order they are tried. `exe` is the path of the running binary;
// empty: /proc/self/exe.
std::vector<std::string> HelperPaths(const std::string& name, const std::string& exe = "");

// The first of HelperPaths that can be read.
Expected<std::string> FindHelperScript(const std::string& name, const std::string& exe = "");

// The first of HelperPaths that is a regular file this process may execute.
Expected<std::string> FindHelperProgram(const std::string& name, const std::string& exe = "");

}  // namespace ftax
