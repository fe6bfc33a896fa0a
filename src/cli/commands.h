// The ftax command line: one CLI11 subcommand per job.
//
// Each subcommand lives in its own file `<name>_command.cc` with an options struct, a
// `Setup<Name>Command(CLI::App&)` that declares its options and a run function. Only the CLI
// prints; library code returns Status values that `ReportError` turns into a message and one
// of the exit codes below.
#pragma once

#include <CLI/CLI.hpp>

#include "common/status.h"

namespace ftax::cli {

// Documented exit codes (also in `ftax --help` and docs/cli.md).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;      // the job ran but failed (e.g. a measurement failed)
constexpr int kExitBadInput = 2;     // bad file, argument, spec or profile
constexpr int kExitUnsupported = 3;  // this build or host cannot do it (no CUDA, no LibTorch)
constexpr int kExitInternal = 4;     // a bug in ftax

// Prints "ftax <command>: error: <message>" (and `hint` if any) to stderr; returns the code.
int ReportError(const char* command, const Status& status, const std::string& hint = "");

void SetupInspectCommand(CLI::App& app);
void SetupPredictCommand(CLI::App& app);
void SetupCompareCommand(CLI::App& app);
void SetupBenchCommand(CLI::App& app);
void SetupCalibrateCommand(CLI::App& app);
void SetupValidateCommand(CLI::App& app);
void SetupProfilesCommand(CLI::App& app);

// Set by a subcommand's callback; main returns it.
int& ExitCode();

}  // namespace ftax::cli
