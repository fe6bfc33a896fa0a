#include "calibrate/cpu_gauge.h"

#include <algorithm>
#include <cstdio>
#include <string>
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
  out.typical_us = Quantile(gauges, 0.5);
  std::vector<double> scales;
  for (DispatchMeasurement& d : m->dispatch) {
    if (!(d.*gauge > 0)) continue;
    const double f = out.reference_us / (d.*gauge);
    Scale(&d.call_us, f);
    if (d.issue_us) Scale(&*d.issue_us, f);
    if (d.outside_us) Scale(&*d.outside_us, f);
    if (d.before_replay_us) Scale(&*d.before_replay_us, f);  // CPU time; the replay's GPU time is not
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

std::vector<std::string> SlowBenchWarnings(const HostProfile& bench, const std::vector<HostProfile>& others,
                                           double ratio) {
  std::vector<std::string> out;
  const std::string cpu = bench.host.is_object() ? bench.host.value("cpu", "") : "";
  if (cpu.empty()) return out;
  auto check = [&](double own, double HostProfile::*reading, const char* what) {
    if (!(own > 0)) return;
    std::vector<double> v;
    for (const HostProfile& o : others)
      if (o.host.is_object() && o.host.value("cpu", "") == cpu && o.*reading > 0) v.push_back(o.*reading);
    if (v.size() < 2) return;
    std::sort(v.begin(), v.end());
    const double median = Quantile(v, 0.5);
    if (!(own > ratio * median)) return;
    char b[512];
    std::snprintf(b, sizeof(b),
                  "the bench's %s read %.2f us in its fast state (the 10th percentile its rows were brought "
                  "to), %.2fx the median of %zu other hosts of the same CPU (%.2f us): the host may have run "
                  "slow throughout the bench, and its CPU-side costs be priced slow; rerun `ftax bench` when "
                  "the host is quiet",
                  what, own, own / median, v.size(), median);
    out.push_back(b);
  };
  check(bench.cpu_gauge_us, &HostProfile::cpu_gauge_us, "CPU gauge (Python eager)");
  check(bench.host_probe_us, &HostProfile::host_probe_us, "host probe (TorchScript, CUDA graphs)");
  return out;
}

}  // namespace ftax
