// `ftax inspect`: placeholder until the inspect issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupInspectCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("inspect", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("inspect", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
