#include "calibrate/op_mix.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ftax {

std::vector<std::string> ApplyOpMix(const Measurements& m, HostProfile* profile) {
  std::map<Framework, std::vector<const MixMeasurement*>> by_fw;
  for (const MixMeasurement& x : m.mixes)
    if (x.ratio > 0 && IsPythonEager(x.framework)) by_fw[x.framework].push_back(&x);
  std::vector<std::string> lines;
  for (auto& [fw, mixes] : by_fw) {
    auto it = profile->frameworks.find(FrameworkName(fw));
    if (it == profile->frameworks.end()) continue;
    std::vector<double> r;
    for (const MixMeasurement* x : mixes) r.push_back(x->ratio);
    std::sort(r.begin(), r.end());
    const double scale = r.size() % 2 ? r[r.size() / 2] : (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2;
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
                  mixes.size(), mixes.size() == 1 ? "" : "es", mixes.front()->n_ops);
    lines.push_back(buf);
  }
  return lines;
}

}  // namespace ftax
