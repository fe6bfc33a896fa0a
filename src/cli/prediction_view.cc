#include "cli/prediction_view.h"

#include <map>
#include <sstream>

#include "cli/gnuplot_runner.h"
#include "cli/text_table.h"

namespace ftax::cli {
namespace {

using json = nlohmann::json;

std::string Label(Framework f, DType d) { return std::string(FrameworkName(f)) + " " + DTypeName(d); }

json PointJson(const PredictionPoint& p) {
  json cls = json::object();
  for (int c = 0; c < kNumKernelClasses; ++c)
    if (p.class_ms[c] > 0) cls[KernelClassName(KernelClass(c))] = p.class_ms[c];
  return {{"batch", p.batch}, {"framework", FrameworkName(p.framework)},
          {"precision", DTypeName(p.precision)}, {"latency_ms", p.latency_ms},
          {"framework_ms", p.framework_ms}, {"compute_ms", p.compute_ms}, {"bound", p.bound},
          {"gpu_util", p.gpu_util}, {"interval_ms", {p.interval_lo_ms, p.interval_hi_ms}},
          {"dispatches", p.dispatches}, {"kernels", p.kernels}, {"module_calls", p.module_calls},
          {"compute_ms_by_class", cls}};
}

}  // namespace

json PredictionToJson(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom) {
  json j;
  j["predictions"] = json::array();
  for (const auto& p : r.points) j["predictions"].push_back(PointJson(p));
  j["crossovers"] = json::array();
  for (const auto& c : r.crossovers)
    j["crossovers"].push_back({{"framework", FrameworkName(c.framework)},
                               {"precision", DTypeName(c.precision)},
                               {"crossover_batch", c.batch ? json(*c.batch) : json(nullptr)},
                               {"searched_to", c.searched_to}});
  j["width_headroom"] = json::array();
  for (const auto& h : headroom)
    j["width_headroom"].push_back({{"framework", FrameworkName(h.framework)},
                                   {"precision", DTypeName(h.precision)}, {"batch", h.batch},
                                   {"factor", h.factor}, {"tolerance_pct", h.tolerance_pct}});
  j["notes"] = r.notes;
  j["unpriced_ops"] = r.unpriced_ops;
  j["generic_priced_ops"] = r.generic_ops;
  return j;
}

std::string UnpricedWarning(const PredictionReport& r) {
  if (r.unpriced_ops.empty()) return "";
  std::string list;
  int n = 0;
  for (const auto& [type, count] : r.unpriced_ops) {
    list += (list.empty() ? "" : ", ") + type + " (" + std::to_string(count) + ")";
    n += count;
  }
  return "warning: " + std::to_string(n) + " ops of types ftax does not know were priced as one "
         "elementwise kernel each (a guess): " + list + "\n";
}

std::string PredictionTable(const PredictionReport& r, const std::vector<WidthHeadroom>& headroom) {
  TextTable t({"framework", "prec", "batch", "latency_ms", "p10..p90_ms", "framework_ms", "compute_ms",
               "bound", "gpu_util", "kernels", "dispatches"});
  for (const auto& p : r.points)
    t.AddRow({FrameworkName(p.framework), DTypeName(p.precision), std::to_string(p.batch),
              Fixed(p.latency_ms, 3), Fixed(p.interval_lo_ms, 3) + ".." + Fixed(p.interval_hi_ms, 3),
              Fixed(p.framework_ms, 3), Fixed(p.compute_ms, 3), p.bound,
              Fixed(100 * p.gpu_util, 0) + "%", std::to_string(p.kernels), std::to_string(p.dispatches)});
  std::ostringstream out;
  out << UnpricedWarning(r);
  out << t.Render();
  if (!r.crossovers.empty()) {
    out << "\n";
    for (const auto& c : r.crossovers)
      out << "crossover " << Label(c.framework, c.precision) << ": "
          << (c.batch ? "compute-bound from batch " + std::to_string(*c.batch)
                      : "framework-bound up to batch " + std::to_string(c.searched_to))
          << "\n";
  }
  for (const auto& h : headroom)
    out << "width headroom " << Label(h.framework, h.precision) << " at batch " << h.batch << ": "
        << Fixed(h.factor, 2) << "x wider within +" << Fixed(h.tolerance_pct, 0) << "% latency\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  return out.str();
}

std::string PredictionCsv(const PredictionReport& r) {
  TextTable t({"framework", "precision", "batch", "latency_ms", "interval_lo_ms", "interval_hi_ms",
               "framework_ms", "compute_ms", "bound", "gpu_util", "kernels", "dispatches"});
  for (const auto& p : r.points)
    t.AddRow({FrameworkName(p.framework), DTypeName(p.precision), std::to_string(p.batch),
              Fixed(p.latency_ms, 6), Fixed(p.interval_lo_ms, 6), Fixed(p.interval_hi_ms, 6),
              Fixed(p.framework_ms, 6), Fixed(p.compute_ms, 6), p.bound, Fixed(p.gpu_util, 4),
              std::to_string(p.kernels), std::to_string(p.dispatches)});
  return t.RenderCsv();
}

std::string PairedTable(const PredictionReport& a, const PredictionReport& b, const std::string& la,
                        const std::string& lb) {
  TextTable t({"batch", la + " config", la + " ms", lb + " config", lb + " ms", "delta_ms", "delta_%",
               "bound (" + la + "/" + lb + ")"});
  const size_t n = std::min(a.points.size(), b.points.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& p = a.points[i];
    const auto& q = b.points[i];
    double d = q.latency_ms - p.latency_ms;
    t.AddRow({std::to_string(p.batch), Label(p.framework, p.precision), Fixed(p.latency_ms, 3),
              Label(q.framework, q.precision), Fixed(q.latency_ms, 3), Fixed(d, 3),
              Fixed(p.latency_ms > 0 ? 100 * d / p.latency_ms : 0, 1), p.bound + "/" + q.bound});
  }
  std::ostringstream out;
  out << UnpricedWarning(a) << UnpricedWarning(b);
  out << t.Render();
  for (const auto& n2 : a.notes) out << "note (" << la << "): " << n2 << "\n";
  for (const auto& n2 : b.notes) out << "note (" << lb << "): " << n2 << "\n";
  return out.str();
}

json PairedJson(const PredictionReport& a, const PredictionReport& b, const std::string& la,
                const std::string& lb) {
  json j;
  j["labels"] = {la, lb};
  j["pairs"] = json::array();
  const size_t n = std::min(a.points.size(), b.points.size());
  for (size_t i = 0; i < n; ++i)
    j["pairs"].push_back({{la, PointJson(a.points[i])}, {lb, PointJson(b.points[i])},
                          {"delta_ms", b.points[i].latency_ms - a.points[i].latency_ms}});
  j[la] = PredictionToJson(a, {});
  j[lb] = PredictionToJson(b, {});
  return j;
}

Status PlotPrediction(const PredictionReport& r, const std::string& title, const std::string& path) {
  std::map<std::string, std::vector<const PredictionPoint*>> series;
  for (const auto& p : r.points) series[Label(p.framework, p.precision)].push_back(&p);
  std::ostringstream d;
  d.precision(9);
  for (const auto& [name, pts] : series) {
    d << "# " << GnuplotString(name) << "\n";
    for (const auto* p : pts)
      d << p->batch << " " << p->latency_ms << " " << p->interval_lo_ms << " " << p->interval_hi_ms
        << " " << p->framework_ms << " " << p->compute_ms << "\n";
    d << "\n\n";
  }
  std::ostringstream g;
  g << "set title " << GnuplotString(title) << " noenhanced\n";
  g << "set logscale xy 2\nset xlabel 'batch'\nset ylabel 'ms'\nset key outside right noenhanced\n";
  g << "set grid\n";
  int i = 0;
  std::string plot = "plot ";
  const std::string data = std::string("'") + kGnuplotData + "'";
  for (const auto& [name, pts] : series) {
    std::string idx = std::to_string(i);
    std::string color = std::to_string(i % 8 + 1);
    if (i) plot += ", ";
    plot += data + " index " + idx + " using 1:2:3:4 with yerrorlines lc " + color + " lw 2 title " +
            GnuplotString(name + " latency") + ", ";
    plot += "'' index " + idx + " using 1:5 with lines dt 2 lc " + color + " title " +
            GnuplotString(name + " framework") + ", ";
    plot += "'' index " + idx + " using 1:6 with lines dt 3 lc " + color + " title " +
            GnuplotString(name + " compute");
    ++i;
  }
  int arrow = 1;
  for (const auto& c : r.crossovers)
    if (c.batch)
      g << "set arrow " << arrow++ << " from " << *c.batch << ", graph 0 to " << *c.batch
        << ", graph 1 nohead dt 4 lc rgb 'gray'\n"
        << "set label " << arrow << " " << GnuplotString("crossover " + Label(c.framework, c.precision))
        << " at " << *c.batch << ", graph 0.95 rotate by 90 right font ',8' noenhanced\n";
  g << plot << "\n";
  return RunGnuplot(g.str(), d.str(), path, PlotSize{1000, 650});
}

}  // namespace ftax::cli
