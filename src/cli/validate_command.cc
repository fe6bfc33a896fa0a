// `ftax validate`: placeholder until the validate issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupValidateCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("validate", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("validate", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
