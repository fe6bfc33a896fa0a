// A model's op mix priced into a profile. The bench times each op type in a chain of that op
// alone, a small working set run over and over; a model runs hundreds of different ops and
// layers, and on a shared host that costs the CPU more per op than the chains say (1.2-4.4x,
// median 1.28 for CNNs and 1.75 for the rest, on an H100 host of 2026-11-26 at one CPU speed).
// bench_eager.py's op mix measures it: layers of every op type called in a shuffled order, over
// the sum of the same calls' chain costs (MixMeasurement). ApplyOpMix scales a Python eager
// framework's per-op and per-class dispatch costs by the median of its mixes' ratios pooled
// with five other hosts' fast-state mixes (one pass varies between hosts of one CPU model as
// much as those do), and records the ratio as mix_scale; a framework the bench ran no mix for
// keeps its chain costs. A mix timed while the CPU gauge read over 1.4x the profile's fast
// state is left out, and a framework whose every mix was takes the other hosts' median (x1.75).
// TorchScript's mix (bench_eager.py's ts_mix_row, one traced module) carries no ratio:
// PriceTorchscriptMix prices the pass from the fitted costs (per op where the profile has
// them, else per class) and launches, as the predictor would, and the ratio is the pass's
// time, brought to the profile's CPU speed by its gauge, over that price. It is reported, not
// applied: TorchScript's models ran at their ops' chain costs where its mix came out ~1.5x.
//
//   std::vector<std::string> lines = ApplyOpMix(measurements, &profile);
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "predictor/host_profile.h"

namespace ftax {

struct TorchscriptMixPrice {
  double measured_us = -1;   // the pass at the profile's CPU speed, less the profile's call_us
  double ops_us = 0;         // its calls priced by op type (op_us) or else by class (dispatch_us)
  double launches_us = 0;    // its further kernels priced at gpu.launch_us
  double ratio = -1;         // measured / (ops + launches); < 0: cannot be priced
  double chain_speed = -1;   // the fitted kernel chain's cost per op over add_us (< 0: unknown)
};

// Needs the profile's torchscript costs fitted and the mix's pass and calls; else ratio < 0.
TorchscriptMixPrice PriceTorchscriptMix(const MixMeasurement& mix, const HostProfile& profile);

// One line per framework scaled ("pytorch-eager: op mix x1.34 (1 mix of 111 calls)").
std::vector<std::string> ApplyOpMix(const Measurements& m, HostProfile* profile);

}  // namespace ftax
