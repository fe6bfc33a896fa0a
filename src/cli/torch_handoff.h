// The light `ftax` and the full one: which command lines need LibTorch, and the hand-off.
//
// Where CMake finds LibTorch it builds two binaries from the same sources: `ftax`, with no
// LibTorch, CUDA or CUPTI linked (it starts in milliseconds: arch specs, ONNX files, profiles,
// fits), and `ftax-torch`, with them, in libexec/ftax/ beside the Python helpers
// (calibrate/helper_scripts.h). Before it parses anything else, the light binary asks
// NeedsLibTorch; when that says yes it replaces itself with ftax-torch and the same argv
// (execv), so standard input and output, the exit code and signals are the full binary's own.
//
// NeedsLibTorch parses argv with the real command line (the `setup` that main uses) and stops
// before any subcommand's callback runs, so it sees argv exactly as the run will, in every
// CLI11 spelling (--opt=value, options before or after positionals); subcommands therefore
// must not use CLI11's immediate callbacks. Yes when the subcommand is bench or validate (they
// run models on the GPU through LibTorch, CUDA and CUPTI; validate also reads TorchScript
// files named inside measurement files), or when any value given to any option or positional
// of the subcommand is a regular file that LooksLikeTorchScript (the model of inspect and
// predict, each model of compare; a zip file given for something else costs only LibTorch's
// start-up, since the full binary answers the same). A command line that fails to parse,
// --help and --version stay in the light binary, which answers them as the full one would.
//
//   const std::string command = NeedsLibTorch(argc, argv, SetUpApp);
//   if (!command.empty()) return HandOffToFullBinary(command, argv);   // returns on failure only
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace ftax::cli {

// The name of the full binary, looked up with FindHelperProgram.
constexpr const char* kFullBinaryName = "ftax-torch";

// The subcommand whose run needs LibTorch, or "" when none does (see above). `setup` declares
// the top-level options and the subcommands on a fresh App.
std::string NeedsLibTorch(int argc, const char* const* argv, const std::function<void(CLI::App&)>& setup);

// Runs the full binary with `argv` in place of this process. Returns only when it cannot:
// prints "ftax <command>: error: ..." naming the paths it looked at (or the exec error) and
// returns kExitBadInput. `exe` is the path of the running binary; empty: /proc/self/exe.
int HandOffToFullBinary(const std::string& command, char** argv, const std::string& exe = "");

}  // namespace ftax::cli
