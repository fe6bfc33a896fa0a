// Drawing a plot with gnuplot, with nothing from the input files ever read as code.
//
// The caller writes a gnuplot script body and its data; RunGnuplot puts both into a private
// temporary directory (mkdtemp, mode 0700), runs gnuplot there without a shell (an argv, see
// common/process.h), and moves the picture to the requested path with an atomic write. The
// script names its data file kGnuplotData and never the user's path, so neither the path nor
// anything beside it (no PATH.dat, no PATH.gp) is read, overwritten or deleted; the temporary
// directory is removed afterwards, whatever happened. A path may hold any character (quotes,
// spaces): it never appears in the script.
//
// The picture's format follows the extension of the path: .svg (svg terminal), .png
// (pngcairo) or .pdf (pdfcairo), in any letter case; any other extension is refused, never
// written as SVG under the wrong name. CheckPlotPath makes the same checks, and asks gnuplot
// whether it has the terminal, before a command does any long work.
//
// Every string from an input file (a GPU name, a model name, a framework) that goes into the
// script must pass through GnuplotString, which keeps a conservative set of characters and
// returns a single-quoted gnuplot string literal: no quote, backquote, @ or newline survives,
// so a label can neither end its string nor start a command, a macro or a shell substitution.
// Titles and keys are to be set `noenhanced` so that no label is read as markup either.
//
//   Status s = CheckPlotPath(path);   // at the start of the command: exit early on a bad path
//   ...
//   std::string body = "set title " + GnuplotString(title) + " noenhanced\n"
//                      "plot '" + std::string(kGnuplotData) + "' using 1:2 with lines\n";
//   s = RunGnuplot(body, data, path, {1000, 650});
#pragma once

#include <string>

#include "common/status.h"

namespace ftax::cli {

// The name of the data file as the script must refer to it.
inline constexpr const char* kGnuplotData = "data.dat";

// Picture size in pixels; a PDF is drawn at 100 pixels to the inch.
struct PlotSize {
  int width = 1000;
  int height = 650;
};

enum class PlotFormat { kSvg, kPng, kPdf };

// What --help says about the paths --plot takes.
inline constexpr const char* kPlotExtensionsHelp = ".svg, .png or .pdf; needs gnuplot, .png and .pdf its cairo terminals";

// "'text'", with characters outside [A-Za-z0-9 _.,:;+=()/%-] replaced by '_' and at most 200
// characters kept.
std::string GnuplotString(const std::string& text);

// The format named by the extension of `path`; InvalidInput naming the path and listing
// .svg, .png and .pdf for any other extension (or none).
Expected<PlotFormat> PlotFormatOf(const std::string& path);

// The gnuplot terminal that draws `format`: "svg", "pngcairo" or "pdfcairo".
const char* GnuplotTerminal(PlotFormat format);

// Whether the installed gnuplot has `terminal` (it accepts `set terminal NAME`); Unsupported
// when gnuplot is not installed at all.
Expected<bool> GnuplotHasTerminal(const std::string& terminal);

// Everything that can be known about `path` before drawing: not a directory (InvalidInput),
// a known extension (InvalidInput), gnuplot installed and able to write that format
// (Unsupported, naming the path). Run it before long work so that a bad --plot costs nothing.
Status CheckPlotPath(const std::string& path);

// Runs `script_body` (after a terminal and output line chosen from the extension of
// `output_path`, see PlotFormatOf) on `data` and writes the picture to `output_path`. The
// errors of CheckPlotPath; IoError when the picture cannot be written; Unsupported with
// gnuplot's first error lines when gnuplot fails.
Status RunGnuplot(const std::string& script_body, const std::string& data,
                  const std::string& output_path, PlotSize size);

}  // namespace ftax::cli
