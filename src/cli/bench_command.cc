// `ftax bench`: placeholder until the bench issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupBenchCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("bench", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
