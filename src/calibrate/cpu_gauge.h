// Bench rows brought to one CPU speed. On shared GPU hosts the CPU's speed changes over time,
// by about 1.5-1.8x within a minute and on every core alike, and every CPU-bound cost moves with
// it; the Python bench (scripts/bench_eager.py) reads a CPU gauge (scripts/cpu_gauge.py)
// around each chain it times, so a row timed while the host ran slow can be told from a slow
// op. NormalizeToCpuGauge takes the host's fast state as the reference (the 10th percentile
// of the rows' gauges) and scales each gauged row's times by reference / its gauge; the C++
// bench's chains read the host probe instead (calibrate/host_probe.h) and are brought to the
// p10 of their probes the same way; rows with neither are left as they are. `ftax calibrate`
// records the references in the profile (HostProfile::cpu_gauge_us and host_probe_us), and
// `ftax validate` predicts a point measured at another reading at that speed
// (predictor/cpu_speed.h).
//
//   CpuGaugeNormalization n = NormalizeToCpuGauge(&measurements);
//   if (n.rows) profile.cpu_gauge_us = n.reference_us;
//   if (n.probe.rows) profile.host_probe_us = n.probe.reference_us;
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "predictor/host_profile.h"

namespace ftax {

struct GaugeScaling {
  double reference_us = -1;  // the reading the rows were brought to; < 0: no row had one
  double typical_us = -1;    // the rows' median reading: the host's typical speed
  int rows = 0;              // rows scaled
  double min_scale = 1, median_scale = 1, max_scale = 1;  // reference / row reading
};

// The Python rows by the CPU gauge (cpu_gauge_us), and the C++ bench's chains by the host
// probe (host_probe_us, calibrate/host_probe.h), each to the p10 of its own readings.
struct CpuGaugeNormalization : GaugeScaling {
  GaugeScaling probe;
};

CpuGaugeNormalization NormalizeToCpuGauge(Measurements* m);

// Whether a bench ran while its host was slow throughout: its fast state (the reference its
// rows were brought to) against the fast states recorded by other hosts' profiles of the same
// CPU model (HostProfile::host "cpu"). One warning line per reading (the Python gauge, the
// host probe) whose reference is more than `ratio` times the median of at least two such
// profiles' (H200 host run ay: gauge 3.48 us against 2.89 and 2.91, probe 8.11 against 6.16
// and 5.91); nothing where fewer profiles recorded one. A warning, not a correction: the same
// CPU model may still run at another speed on another host.
std::vector<std::string> SlowBenchWarnings(const HostProfile& bench, const std::vector<HostProfile>& others,
                                           double ratio = 1.15);

}  // namespace ftax
