// `ftax predict`: placeholder until the predict issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupPredictCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("predict", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("predict", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
