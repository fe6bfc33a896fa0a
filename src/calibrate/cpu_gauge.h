// Bench rows brought to one CPU speed. On shared GPU hosts the CPU's speed changes over time,
// by about 1.5-1.8x within a minute and on every core alike, and every CPU-bound cost moves with
// it; the Python bench (scripts/bench_eager.py) reads a CPU gauge (scripts/cpu_gauge.py)
// around each chain it times, so a row timed while the host ran slow can be told from a slow
// op. NormalizeToCpuGauge takes the host's fast state as the reference (the 10th percentile
// of the rows' gauges) and scales each gauged row's times by reference / its gauge; rows
// without a gauge are left as they are. `ftax calibrate` records the reference in the
// profile (HostProfile::cpu_gauge_us), and `ftax validate` predicts a point measured at
// another gauge reading at that speed (predictor/cpu_speed.h).
//
//   CpuGaugeNormalization n = NormalizeToCpuGauge(&measurements);
//   if (n.rows) profile.cpu_gauge_us = n.reference_us;
#pragma once

#include "calibrate/measurements.h"

namespace ftax {

struct CpuGaugeNormalization {
  double reference_us = -1;  // the gauge the rows were brought to; < 0: no row had one
  int rows = 0;              // rows scaled
  double min_scale = 1, median_scale = 1, max_scale = 1;  // reference / row gauge
};

CpuGaugeNormalization NormalizeToCpuGauge(Measurements* m);

}  // namespace ftax
