#include <iostream>

#include "cli/commands.h"

namespace ftax::cli {

int& ExitCode() {
  static int code = kExitOk;
  return code;
}

int ReportError(const char* command, const Status& status, const std::string& hint) {
  std::cerr << "ftax " << command << ": error: " << status.message() << "\n";
  if (!hint.empty()) std::cerr << "  hint: " << hint << "\n";
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kInvalidInput:
    case ErrorCode::kNotFound: return kExitBadInput;
    case ErrorCode::kUnsupported: return kExitUnsupported;
    case ErrorCode::kInternal: return kExitInternal;
    case ErrorCode::kIoError: return kExitFailure;
  }
  return kExitInternal;
}

}  // namespace ftax::cli
