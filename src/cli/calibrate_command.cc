// `ftax calibrate`: placeholder until the calibrate issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupCalibrateCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("calibrate", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("calibrate", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
