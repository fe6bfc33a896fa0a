// Parsing of the sweep arguments shared by predict, compare and validate:
//   --batch 1,2,4 or 1:128 (powers of two from 1 to 128, both included)
//   --framework pytorch-eager,torchscript      --precision fp16,fp32
//   --specs FILE: arch specs, one a line (ParseSpecLines)
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "graph/graph.h"
#include "predictor/framework.h"

namespace ftax::cli {

Expected<std::vector<int64_t>> ParseBatchList(const std::string& text);
// The framework names, comma-separated ("pytorch-eager, libtorch-eager, ..."), and one line per
// framework saying what it runs, for --help.
std::string FrameworkNames();
std::string FrameworkListHelp();
Expected<std::vector<Framework>> ParseFrameworkList(const std::vector<std::string>& names);
Expected<std::vector<DType>> ParsePrecisionList(const std::vector<std::string>& names);

// One arch spec of a spec list and the line it was on (1-based).
struct SpecLine {
  int line = 0;
  std::string spec;
};
// The specs of a spec list: one a line, surrounding blanks (and a CR of CRLF files) trimmed;
// blank lines and lines starting with '#' skipped. The specs themselves are not checked here
// (OpenModelSource does that, as for --arch).
std::vector<SpecLine> ParseSpecLines(const std::string& text);

}  // namespace ftax::cli
