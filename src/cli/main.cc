#include <iostream>

#include "cli/commands.h"
#include "cli/profile_names.h"
#ifdef FTAX_TORCH_HANDOFF
#include "cli/torch_handoff.h"
#endif

namespace {

void SetUpApp(CLI::App& app) {
  app.name("ftax");
  app.description(
      "ftax predicts the inference latency of a neural network on a GPU host and framework,\n"
      "split into framework overhead (CPU-side dispatch, the \"framework tax\") and GPU compute.\n\n"
      "Exit codes: 0 ok, 1 the job failed, 2 bad input, 3 unsupported by this build or host,\n"
      "4 internal error.");
  app.require_subcommand(1);
  app.set_version_flag("--version", "ftax 0.1.0");
  ftax::cli::SetupInspectCommand(app);
  ftax::cli::SetupPredictCommand(app);
  ftax::cli::SetupCompareCommand(app);
  ftax::cli::SetupBenchCommand(app);
  ftax::cli::SetupCalibrateCommand(app);
  ftax::cli::SetupValidateCommand(app);
  ftax::cli::SetupProfilesCommand(app);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef FTAX_TORCH_HANDOFF
  // The light binary (no LibTorch linked): a command line that needs LibTorch runs in the full
  // one, ftax-torch, in place of this process (cli/torch_handoff.h).
  const std::string needs_torch = ftax::cli::NeedsLibTorch(argc, argv, SetUpApp);
  if (!needs_torch.empty()) return ftax::cli::HandOffToFullBinary(needs_torch, argv);
#endif
  CLI::App app;
  SetUpApp(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : ftax::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ftax: internal error: " << e.what() << "\n";
    return ftax::cli::kExitInternal;
  }
  return ftax::cli::ExitCode();
}
