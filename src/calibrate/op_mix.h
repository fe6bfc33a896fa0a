// A model's op mix priced into a profile. The bench times each op type in a chain of that op
// alone, a small working set run over and over; a model runs hundreds of different ops and
// layers, and on a shared host that costs the CPU more per op than the chains say (1.2-4.4x,
// median 1.28 for CNNs and 1.75 for the rest, on an H100 host of 2026-11-26 at one CPU speed).
// bench_eager.py's op mix measures it: layers of every op type called in a shuffled order, over
// the sum of the same calls' chain costs (MixMeasurement). ApplyOpMix scales a Python eager
// framework's per-op and per-class dispatch costs by the median of its mixes' ratios and
// records the ratio as mix_scale; a framework the bench ran no mix for keeps its chain costs.
//
//   std::vector<std::string> lines = ApplyOpMix(measurements, &profile);
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.h"
#include "predictor/host_profile.h"

namespace ftax {

// One line per framework scaled ("pytorch-eager: op mix x1.34 (1 mix of 111 calls)").
std::vector<std::string> ApplyOpMix(const Measurements& m, HostProfile* profile);

}  // namespace ftax
