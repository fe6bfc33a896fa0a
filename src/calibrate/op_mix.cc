#include "calibrate/op_mix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace ftax {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

TorchscriptMixPrice PriceTorchscriptMix(const MixMeasurement& x, const HostProfile& profile) {
  TorchscriptMixPrice out;
  const FrameworkParams* f = profile.FindFramework(Framework::kTorchscript);
  if (!f || !(x.issue_us > 0)) return out;
  int calls = 0;
  for (int c = 0; c < kNumDispatchClasses; ++c) {
    if (x.classes[c] == 0) continue;
    if (!f->dispatch_us[c].known()) return out;
    out.classes_us += x.classes[c] * f->dispatch_us[c].value;
    calls += x.classes[c];
  }
  if (calls == 0) return out;
  // An op's further kernels cost a launch each (as the predictor prices them, pipeline.cc);
  // a view launches none.
  const int launching = calls - x.classes[int(DispatchClass::kView)];
  if (x.kernels > launching && profile.gpu.launch_us.known())
    out.launches_us = (x.kernels - launching) * profile.gpu.launch_us.value;
  // The pass at the profile's CPU speed, less the one call's own cost.
  double measured = x.issue_us;
  if (x.cpu_gauge_us > 0 && profile.cpu_gauge_us > 0) measured *= profile.cpu_gauge_us / x.cpu_gauge_us;
  if (f->call_us.known()) measured -= f->call_us.value;
  out.measured_us = measured;
  const double priced = out.classes_us + out.launches_us;
  if (priced > 0 && measured > 0) out.ratio = measured / priced;
  // The chains the class costs came from, against the same chain timed beside the pass.
  const Param& add = f->dispatch_us[int(DispatchClass::kKernel)];
  if (x.add_us > 0 && add.known() && add.value > 0) out.chain_speed = add.value / x.add_us;
  return out;
}

std::vector<std::string> ApplyOpMix(const Measurements& m, HostProfile* profile) {
  std::map<Framework, std::vector<double>> ratios;
  std::map<Framework, int> calls;
  std::vector<std::string> lines;
  for (const MixMeasurement& x : m.mixes) {
    double r = x.ratio;
    if (x.framework == Framework::kTorchscript) {
      const TorchscriptMixPrice p = PriceTorchscriptMix(x, *profile);
      r = p.ratio;
      char buf[240];
      if (r > 0) {
        std::snprintf(buf, sizeof(buf),
                      "torchscript: a pass of %d calls took %.0f us at the profile's CPU speed; the class "
                      "costs price it at %.0f us (%.0f of them further launches); the chains they came from "
                      "ran x%.2f as slow as the same chain timed beside the pass",
                      x.n_ops, p.measured_us, p.classes_us + p.launches_us, p.launches_us,
                      p.chain_speed > 0 ? p.chain_speed : std::nan(""));
        lines.push_back(buf);
      }
    }
    if (r > 0 && (IsPythonEager(x.framework) || x.framework == Framework::kTorchscript)) {
      ratios[x.framework].push_back(r);
      calls[x.framework] = x.n_ops;
    }
  }
  for (auto& [fw, r] : ratios) {
    auto it = profile->frameworks.find(FrameworkName(fw));
    if (it == profile->frameworks.end()) continue;
    const double scale = Median(r);
    FrameworkParams& f = it->second;
    for (Param& d : f.dispatch_us) {
      if (d.known()) d.value *= scale;
      if (!std::isnan(d.std_error)) d.std_error *= scale;
    }
    for (auto& [key, q] : f.op_us) {
      if (q.known()) q.value *= scale;
      if (!std::isnan(q.std_error)) q.std_error *= scale;
    }
    f.mix_scale = scale;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s: op mix x%.2f (%zu mix%s of %d calls)", FrameworkName(fw), scale,
                  r.size(), r.size() == 1 ? "" : "es", calls[fw]);
    lines.push_back(buf);
  }
  return lines;
}

}  // namespace ftax
