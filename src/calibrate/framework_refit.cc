#include "calibrate/framework_refit.h"
#include "common/percentile.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "graph/arch_spec.h"
#include "predictor/predict.h"

namespace ftax {
Expected<HostProfile> RefineFrameworkCosts(const HostProfile& profile, const nlohmann::json& measured,
                                           const RefitOptions& opt, RefitReport* report) {
  if (!measured.is_object() || !measured.contains("rows") || !measured["rows"].is_array())
    return InvalidInput("measurements: expected an object with an array 'rows'");
  std::map<std::string, std::vector<double>> ratios;
  for (const auto& m : measured["rows"]) {
    const std::string model = m.value("model", "");
    if (opt.exclude_models.count(model)) continue;
    const std::string fw_name = m.value("framework", "");
    auto fw = ParseFramework(fw_name);
    if (!fw || *fw == Framework::kCudaGraph) continue;
    auto dt = ParseDType(m.value("precision", ""));
    const std::string arch = m.value("arch", "");
    if (!dt || arch.empty() || !m.contains("latency_ms")) continue;
    const double lat = m["latency_ms"].value("median", 0.0);
    const double kern = m.value("kernel_ms", 0.0);
    const double fw_ms = lat - kern;
    if (!(fw_ms > kern)) continue;  // framework-bound rows only
    DimBindings dims = {{"batch", m.value("batch", int64_t(1))}};
    if (m.contains("seq") && m["seq"].is_number_integer()) dims["seq"] = m["seq"].get<int64_t>();
    Expected<Graph> g = BuildArchGraph(arch, dims, ArchFlavor::kTorch);
    if (!g.ok()) continue;
    Expected<PredictionPoint> p = PredictPoint(g.value(), profile, *fw, *dt, 0, 1, nullptr);
    if (!p.ok()) continue;
    const FrameworkParams* fp = profile.FindFramework(*fw);
    const double call_ms = fp && fp->call_us.known() ? fp->call_us.value / 1e3 : 0;
    const double pred = p->framework_ms - call_ms;
    if (pred <= 0) continue;
    ratios[fw_name].push_back((fw_ms - call_ms) / pred);
  }
  HostProfile out = profile;
  for (const auto& [name, r] : ratios) {
    if (int(r.size()) < opt.min_rows) continue;
    const double s = Median(r);
    std::vector<double> dev;
    for (double x : r) dev.push_back(std::fabs(x - s));
    const double se = 1.4826 * Median(dev) / std::sqrt(double(r.size()));
    FrameworkParams& f = out.frameworks[name];
    auto scale = [&](Param& p) {
      if (!p.known()) return;
      const double v = p.value;
      const double pse = std::isnan(p.std_error) ? 0 : p.std_error;
      p.value = v * s;
      p.std_error = std::sqrt(pse * pse * s * s + v * v * se * se);
    };
    for (Param& d : f.dispatch_us) scale(d);
    scale(f.module_us);
    if (report) report->frameworks.push_back({name, int(r.size()), s, se});
  }
  return out;
}

}  // namespace ftax
