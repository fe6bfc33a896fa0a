#include "cli/plot_script.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

namespace ftax::cli {
namespace {

// Okabe-Ito colours (told apart with the common colour-vision deficiencies), yellow left out
// because it fades on white; black is kept for the key's neutral samples.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#999933", "#882255"};
constexpr int kNumColours = sizeof(kPalette) / sizeof(kPalette[0]);
// gnuplot dash types: solid, dashed, dash-dot, dotted, dash-dot-dot.
constexpr int kDashTypes[] = {1, 2, 4, 3, 5};
constexpr int kNumDashTypes = sizeof(kDashTypes) / sizeof(kDashTypes[0]);
// Filled circle, square, triangle, diamond, down-triangle: the measured points per precision.
constexpr int kPointTypes[] = {7, 5, 9, 13, 11};
constexpr int kNumPointTypes = sizeof(kPointTypes) / sizeof(kPointTypes[0]);

constexpr const char* kKeyStyle = "vertical Left reverse noenhanced font ',9' samplen 3 spacing 1.15";

std::string Colour(size_t i) { return std::string("rgb '") + kPalette[i % kNumColours] + "'"; }
int Dash(size_t i) { return kDashTypes[i % kNumDashTypes]; }
int Marker(size_t i) { return kPointTypes[i % kNumPointTypes]; }

// fp32 first, then fp16 and bf16, then any other name in alphabetical order.
int PrecisionRank(const std::string& p) {
  if (p == "fp32") return 0;
  if (p == "fp16") return 1;
  if (p == "bf16") return 2;
  return 3;
}

// Each distinct name its index, in `less` order.
template <typename Less>
std::map<std::string, size_t> Indexes(std::vector<std::string> names, Less less) {
  std::sort(names.begin(), names.end(), less);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = i;
  return out;
}

bool PrecisionLess(const std::string& a, const std::string& b) {
  const int ra = PrecisionRank(a), rb = PrecisionRank(b);
  return ra != rb ? ra < rb : a < b;
}

// At most `n` characters, the end replaced by "..." when cut.
std::string Shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// A key entry with no sample: a group heading.
std::string Heading(const std::string& text) {
  return "NaN with lines lc rgb '#FFFFFF' title " + GnuplotString(text);
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// The key's entries for colours (frameworks) and dash types (precisions), headed.
void AddLegendEntries(const std::map<std::string, size_t>& frameworks,
                      const std::map<std::string, size_t>& precisions, bool precision_markers,
                      std::vector<std::string>* entries) {
  std::vector<std::pair<size_t, std::string>> fw, pr;
  for (const auto& [name, i] : frameworks) fw.push_back({i, name});
  for (const auto& [name, i] : precisions) pr.push_back({i, name});
  std::sort(fw.begin(), fw.end());
  std::sort(pr.begin(), pr.end());
  entries->push_back(Heading("framework (colour)"));
  for (const auto& [i, name] : fw)
    entries->push_back("NaN with lines lc " + Colour(i) + " lw 3 title " + GnuplotString(Shorten(name, 32)));
  entries->push_back(Heading(precision_markers ? "precision (dash, marker)" : "precision (dash)"));
  for (const auto& [i, name] : pr)
    entries->push_back("NaN with " + std::string(precision_markers ? "linespoints" : "lines") +
                       " lc rgb 'black' dt " + std::to_string(Dash(i)) + " lw 1.5" +
                       (precision_markers ? " pt " + std::to_string(Marker(i)) + " ps 0.7" : "") + " title " +
                       GnuplotString(Shorten(name, 32)));
}

}  // namespace

GnuplotJob PredictionPlotJob(const PredictionReport& r, const std::string& title) {
  // Series in the order the points come (framework, then precision), one data block each.
  std::vector<std::pair<Framework, DType>> order;
  std::map<std::pair<Framework, DType>, std::vector<const PredictionPoint*>> series;
  std::vector<std::string> fw_names, pr_names;
  for (const auto& p : r.points) {
    const auto key = std::make_pair(p.framework, p.precision);
    if (!series.count(key)) order.push_back(key);
    series[key].push_back(&p);
    fw_names.push_back(FrameworkName(p.framework));
    pr_names.push_back(DTypeName(p.precision));
  }
  std::map<std::string, size_t> fw_first;  // frameworks by first appearance
  for (const std::string& f : fw_names) fw_first.emplace(f, fw_first.size());
  const std::map<std::string, size_t> precisions = Indexes(pr_names, PrecisionLess);

  GnuplotJob job;
  job.size = PlotSize{1200, 650};
  std::ostringstream d;
  d.precision(9);
  for (const auto& key : order) {
    std::vector<const PredictionPoint*> pts = series[key];
    std::stable_sort(pts.begin(), pts.end(), [](auto* a, auto* b) { return a->batch < b->batch; });
    d << "# " << GnuplotString(std::string(FrameworkName(key.first)) + " " + DTypeName(key.second)) << "\n";
    for (const auto* p : pts)
      d << p->batch << " " << p->latency_ms << " " << p->interval_lo_ms << " " << p->interval_hi_ms << " "
        << p->framework_ms << " " << p->compute_ms << "\n";
    d << "\n\n";
  }
  job.data = d.str();

  std::ostringstream g;
  g << "set title " << GnuplotString(Shorten(title, 110)) << " noenhanced font ',11'\n";
  g << "set logscale xy 2\nset xlabel 'batch'\nset ylabel 'latency (ms)'\nset grid\n";
  g << "set key outside right top " << kKeyStyle << "\n";

  // Crossovers: a gray line at each batch; one label for crossovers at the same or nearby
  // batches (within a factor 1.3, a few pixels apart on the log axis), so labels never overlap.
  int64_t min_batch = r.points.empty() ? 1 : r.points.front().batch;
  for (const auto& p : r.points) min_batch = std::min(min_batch, p.batch);
  std::vector<std::pair<int64_t, std::string>> cross;
  for (const auto& c : r.crossovers)
    if (c.batch) cross.push_back({*c.batch, std::string(FrameworkName(c.framework)) + " " + DTypeName(c.precision)});
  std::stable_sort(cross.begin(), cross.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < cross.size();) {
    size_t j = i;
    std::vector<std::string> names;
    bool one_batch = true;
    while (j < cross.size() && double(cross[j].first) <= 1.3 * double(cross[i].first)) {
      one_batch = one_batch && cross[j].first == cross[i].first;
      ++j;
    }
    for (size_t k = i; k < j; ++k) {
      g << "set arrow from " << cross[k].first << ", graph 0 to " << cross[k].first
        << ", graph 1 nohead dt 4 lc rgb 'gray40'\n";
      names.push_back(one_batch ? cross[k].second : cross[k].second + " b" + std::to_string(cross[k].first));
    }
    // Left of its line, except at the smallest batch, where the left is the y axis's tic labels.
    const char* offset = cross[i].first <= min_batch ? "1.6" : "-0.8";
    g << "set label " << GnuplotString(Shorten("crossover: " + Join(names, ", "), 90)) << " at "
      << cross[i].first << ", graph 0.98 rotate by 90 right offset " << offset
      << ",0 font ',8' tc rgb 'gray30' noenhanced\n";
    i = j;
  }

  std::vector<std::string> curves;
  const std::string data = std::string("'") + kGnuplotData + "'";
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string idx = std::to_string(i);
    const std::string c = Colour(fw_first.at(FrameworkName(order[i].first)));
    const std::string dt = std::to_string(Dash(precisions.at(DTypeName(order[i].second))));
    const std::string style = " lc " + c + " dt " + dt;
    curves.push_back((i ? "''" : data) + " index " + idx + " using 1:2:3:4 with yerrorlines" + style +
                     " lw 2.5 pt 7 ps 0.6 notitle");
    curves.push_back("'' index " + idx + " using 1:5 with linespoints" + style + " lw 1 pt 4 ps 0.7 notitle");
    curves.push_back("'' index " + idx + " using 1:6 with linespoints" + style + " lw 1 pt 8 ps 0.7 notitle");
  }
  std::vector<std::string> key;
  AddLegendEntries(fw_first, precisions, false, &key);
  key.push_back(Heading("curve (marker)"));
  key.push_back("NaN with linespoints lc rgb 'black' lw 2.5 pt 7 ps 0.6 title 'latency, bars p10-p90'");
  key.push_back("NaN with linespoints lc rgb 'black' lw 1 pt 4 ps 0.7 title 'framework overhead (CPU)'");
  key.push_back("NaN with linespoints lc rgb 'black' lw 1 pt 8 ps 0.7 title 'compute (GPU kernels)'");
  if (!cross.empty()) key.push_back("NaN with lines lc rgb 'gray40' dt 4 title 'crossover batch'");
  // An empty report still draws (an empty frame with its key) rather than a gnuplot error.
  if (curves.empty()) curves.push_back("NaN notitle");
  curves.insert(curves.end(), key.begin(), key.end());
  g << "plot " << Join(curves, ", \\\n     ") << "\n";
  job.script = g.str();
  return job;
}

Expected<GnuplotJob> ValidationPlotJob(const ValidationReport& r) {
  // Panels by model, then precision; within each, one block per framework.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<const ValidationRow*>>> panels;
  std::vector<std::string> fw_names, pr_names;
  for (const ValidationRow& v : r.rows) {
    panels[{v.model, v.precision}][v.framework].push_back(&v);
    fw_names.push_back(v.framework);
    pr_names.push_back(v.precision);
  }
  if (panels.empty()) return InvalidInput("--plot: no rows to plot");
  if (panels.size() > 64)
    return InvalidInput("--plot: " + std::to_string(panels.size()) +
                        " panels (model x precision); at most 64 fit one picture");
  const std::map<std::string, size_t> frameworks = Indexes(fw_names, std::less<std::string>());
  const std::map<std::string, size_t> precisions = Indexes(pr_names, PrecisionLess);

  // Panels of kPanelW x kPanelH pixels in `cols` columns, the key in a column of its own to
  // their right.
  constexpr int kPanelW = 560, kPanelH = 380, kKeyW = 320;
  const int n = int(panels.size());
  const int cols = n > 1 ? 2 : 1, rows = (n + cols - 1) / cols;
  GnuplotJob job;
  job.size = PlotSize{kPanelW * cols + kKeyW, kPanelH * rows};
  const double pw = double(kPanelW) / job.size.width, ph = 1.0 / rows;

  std::ostringstream d, g;
  d.precision(9);
  g.precision(6);
  g << "set multiplot\nset logscale xy 2\nset grid\nset xlabel 'batch' font ',9'\n"
    << "set ylabel 'latency (ms)' font ',9'\nset tics font ',8'\nunset key\n";
  const std::string data = std::string("'") + kGnuplotData + "'";
  int block = 0, panel = 0;
  for (const auto& [where, fws] : panels) {
    const int row = panel / cols, col = panel % cols;
    ++panel;
    g << "set origin " << col * pw << "," << std::max(0.0, 1.0 - (row + 1) * ph) << "\nset size " << pw << "," << ph << "\n";
    g << "set title " << GnuplotString(Shorten(where.first, 70) + " " + Shorten(where.second, 12))
      << " font ',10' noenhanced\n";
    std::vector<std::string> curves;
    const size_t pi = precisions.at(where.second);
    for (const auto& [fw, pts] : fws) {
      std::vector<const ValidationRow*> sorted = pts;
      std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->batch < b->batch; });
      for (const ValidationRow* v : sorted)
        d << v->batch << " " << v->measured_ms << " " << v->measured_p10 << " " << v->measured_p90 << " "
          << v->predicted.latency_ms << " " << v->predicted.interval_lo_ms << " "
          << v->predicted.interval_hi_ms << "\n";
      d << "\n\n";
      const std::string idx = std::to_string(block++), c = Colour(frameworks.at(fw));
      curves.push_back((curves.empty() ? data : std::string("''")) + " index " + idx +
                       " using 1:6:7 with filledcurves lc " + c + " fs transparent solid 0.15 noborder notitle");
      curves.push_back("'' index " + idx + " using 1:5 with lines lc " + c + " dt " + std::to_string(Dash(pi)) +
                       " lw 2 notitle");
      curves.push_back("'' index " + idx + " using 1:2:3:4 with yerrorbars lc " + c + " pt " +
                       std::to_string(Marker(pi)) + " ps 0.7 notitle");
    }
    g << "plot " << Join(curves, ", \\\n     ") << "\n";
  }

  // The one key: a plot with no data in the column right of the panels.
  g << "set origin " << cols * pw << ",0\nset size " << 1.0 - cols * pw << ",1\n"
    << "unset title\nunset xlabel\nunset ylabel\nunset tics\nunset border\nunset grid\nunset logscale\n"
    << "set xrange [0:1]\nset yrange [0:1]\n"
    << "set key inside left top " << kKeyStyle << "\n";
  std::vector<std::string> key;
  AddLegendEntries(frameworks, precisions, true, &key);
  key.push_back(Heading("series"));
  key.push_back("NaN with points lc rgb 'black' pt 6 ps 0.8 title 'measured median, p10-p90 bars'");
  key.push_back("NaN with lines lc rgb 'black' lw 2 title 'predicted'");
  key.push_back("NaN with boxes lc rgb 'black' fs transparent solid 0.15 noborder title 'predicted interval'");
  g << "plot " << Join(key, ", \\\n     ") << "\nunset multiplot\n";
  job.data = d.str();
  job.script = g.str();
  return job;
}

}  // namespace ftax::cli
