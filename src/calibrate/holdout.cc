#include "calibrate/holdout.h"

#include <cmath>
#include <map>
#include <random>

namespace ftax {
namespace {

// Uniform integer in [0, n) by rejection, defined only in terms of mt19937_64's output.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % n;
}

}  // namespace

std::vector<bool> HoldoutMask(const std::vector<std::string>& group_of_row, double fraction,
                              uint64_t seed, int min_train) {
  std::vector<bool> held(group_of_row.size(), false);
  if (!(fraction > 0)) return held;
  std::map<std::string, std::vector<size_t>> rows_of_group;  // ordered: stable across runs
  for (size_t i = 0; i < group_of_row.size(); ++i) rows_of_group[group_of_row[i]].push_back(i);
  std::mt19937_64 rng(seed);
  for (auto& [group, rows] : rows_of_group) {
    const int n = int(rows.size());
    int n_held = int(std::lround(fraction * n));
    if (n - n_held < min_train) n_held = std::max(0, n - min_train);
    // Partial Fisher-Yates: the first n_held positions become a uniform random subset.
    for (int i = 0; i < n_held; ++i) {
      const size_t j = i + size_t(UniformBelow(rng, uint64_t(n - i)));
      std::swap(rows[i], rows[j]);
      held[rows[i]] = true;
    }
  }
  return held;
}

}  // namespace ftax
