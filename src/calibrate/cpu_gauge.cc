#include "calibrate/cpu_gauge.h"

#include <algorithm>
#include <vector>

namespace ftax {
namespace {

// The p-th quantile (0..1) of sorted values, linearly interpolated.
double Quantile(const std::vector<double>& sorted, double p) {
  const double pos = p * double(sorted.size() - 1);
  const size_t i = size_t(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - double(i)) * (sorted[i + 1] - sorted[i]);
}

void Scale(Spread* s, double f) {
  s->median *= f;
  s->p10 *= f;
  s->p90 *= f;
}

// Brings the rows whose reading `gauge` gives (> 0) to the p10 of those readings.
GaugeScaling BringToFastState(Measurements* m, double DispatchMeasurement::*gauge) {
  GaugeScaling out;
  std::vector<double> gauges;
  for (const DispatchMeasurement& d : m->dispatch)
    if (d.*gauge > 0) gauges.push_back(d.*gauge);
  if (gauges.empty()) return out;
  std::sort(gauges.begin(), gauges.end());
  out.reference_us = Quantile(gauges, 0.1);
  std::vector<double> scales;
  for (DispatchMeasurement& d : m->dispatch) {
    if (!(d.*gauge > 0)) continue;
    const double f = out.reference_us / (d.*gauge);
    Scale(&d.call_us, f);
    if (d.issue_us) Scale(&*d.issue_us, f);
    d.*gauge = out.reference_us;
    scales.push_back(f);
  }
  std::sort(scales.begin(), scales.end());
  out.rows = int(scales.size());
  out.min_scale = scales.front();
  out.median_scale = Quantile(scales, 0.5);
  out.max_scale = scales.back();
  return out;
}

}  // namespace

CpuGaugeNormalization NormalizeToCpuGauge(Measurements* m) {
  CpuGaugeNormalization out;
  static_cast<GaugeScaling&>(out) = BringToFastState(m, &DispatchMeasurement::cpu_gauge_us);
  // A row the Python gauge brought is not scaled again by the probe (none carries both today).
  for (DispatchMeasurement& d : m->dispatch)
    if (d.cpu_gauge_us > 0) d.host_probe_us = -1;
  out.probe = BringToFastState(m, &DispatchMeasurement::host_probe_us);
  return out;
}

}  // namespace ftax
