#include "cli/torch_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "calibrate/helper_scripts.h"
#include "cli/commands.h"
#include "graph/torchscript_loader.h"

namespace ftax::cli {
namespace {

// The command line, parsed and checked, stopped before any command runs: CLI11 calls
// pre_callback (its hook for subclasses, "after parse, before callbacks") on the top-level app
// first thing after parsing, before any subcommand's callback.
class ParseOnly : public CLI::App {
 public:
  struct Parsed {};
  void pre_callback() override { throw Parsed{}; }
};

// Any value given to an option or positional of `app` or of a subcommand parsed under it.
bool GivesTorchScriptFile(const CLI::App* app) {
  for (const CLI::Option* opt : app->get_options())
    for (const std::string& value : opt->results())
      if (LooksLikeTorchScript(value)) return true;
  for (const CLI::App* sub : app->get_subcommands())
    if (GivesTorchScriptFile(sub)) return true;
  return false;
}

}  // namespace

std::string NeedsLibTorch(int argc, const char* const* argv, const std::function<void(CLI::App&)>& setup) {
  ParseOnly app;
  try {
    setup(app);
    app.parse(argc, argv);
    return "";  // not reached: pre_callback throws
  } catch (const ParseOnly::Parsed&) {
  } catch (...) {
    return "";  // --help, --version, a bad command line: the light binary answers them alike
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string& name = sub->get_name();
    if (name == "bench" || name == "validate" || GivesTorchScriptFile(sub)) return name;
  }
  return "";
}

int HandOffToFullBinary(const std::string& command, char** argv, const std::string& exe) {
  const std::string what = std::string("this needs LibTorch (") +
                           (command == "bench" || command == "validate" ? "`ftax " + command + "` runs on it" : "a TorchScript model") +
                           "), which the light ftax leaves to its full binary: ";
  Expected<std::string> full = FindHelperProgram(kFullBinaryName, exe);
  if (!full.ok())
    return ReportError(command.c_str(), Status(ErrorCode::kNotFound, what + full.status().message()),
                       "`cmake --build BUILD` builds both binaries, `cmake --install` puts " +
                           std::string(kFullBinaryName) + " into PREFIX/libexec/ftax");
  std::cout.flush();
  std::cerr.flush();
  ::execv(full.value().c_str(), argv);
  const int err = errno;
  return ReportError(command.c_str(),
                     InvalidInput(what + full.value() + " cannot be run: " + std::strerror(err)),
                     "rebuild or reinstall ftax");
}

}  // namespace ftax::cli
