// Order statistics of measured samples (linear interpolation between closest ranks), shared
// by every place that reports a median and a p10..p90 spread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ftax {

// q in [0, 1]; 0 for an empty sample.
inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

inline double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }

}  // namespace ftax
