// Drawing a plot with gnuplot, with nothing from the input files ever read as code.
//
// The caller writes a gnuplot script body and its data; RunGnuplot puts both into a private
// temporary directory (mkdtemp, mode 0700), runs gnuplot there without a shell (an argv, see
// common/process.h), and moves the picture to the requested path with an atomic write. The
// script names its data file kGnuplotData and never the user's path, so neither the path nor
// anything beside it (no PATH.dat, no PATH.gp) is read, overwritten or deleted; the temporary
// directory is removed afterwards, whatever happened.
//
// Every string from an input file (a GPU name, a model name, a framework) that goes into the
// script must pass through GnuplotString, which keeps a conservative set of characters and
// returns a single-quoted gnuplot string literal: no quote, backquote, @ or newline survives,
// so a label can neither end its string nor start a command, a macro or a shell substitution.
// Titles and keys are to be set `noenhanced` so that no label is read as markup either.
//
//   std::string body = "set title " + GnuplotString(title) + " noenhanced\n"
//                      "plot '" + std::string(kGnuplotData) + "' using 1:2 with lines\n";
//   Status s = RunGnuplot(body, data, "out.svg", {1000, 650});
#pragma once

#include <string>

#include "common/status.h"

namespace ftax::cli {

// The name of the data file as the script must refer to it.
inline constexpr const char* kGnuplotData = "data.dat";

struct PlotSize {
  int width = 1000;
  int height = 650;
};

// "'text'", with characters outside [A-Za-z0-9 _.,:;+=()/%-] replaced by '_' and at most 200
// characters kept.
std::string GnuplotString(const std::string& text);

// Runs `script_body` (after a terminal and output line chosen from the extension of
// `output_path`: .png gives pngcairo, anything else svg) on `data` and writes the picture to
// `output_path`. Unsupported (exit 3) when gnuplot is not installed; IoError when the picture
// cannot be written; Internal with gnuplot's first error lines when gnuplot fails.
Status RunGnuplot(const std::string& script_body, const std::string& data,
                  const std::string& output_path, PlotSize size);

}  // namespace ftax::cli
