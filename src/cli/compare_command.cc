// `ftax compare`: placeholder until the compare issue lands; it refuses to run.
#include "cli/commands.h"

namespace ftax::cli {

void SetupCompareCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("compare", "(not built yet)");
  cmd->callback([] { ExitCode() = ReportError("compare", Unsupported("not implemented yet")); });
}

}  // namespace ftax::cli
