// Seeded, stratified holdout split for the calibration fits.
//
// Each group (e.g. the rows of one kernel class and dtype) gives up round(fraction * n) of its
// rows, chosen uniformly at random with a 64-bit Mersenne Twister seeded by `seed`, so a split
// repeats exactly on every platform (no std::shuffle or std::uniform_int_distribution, whose
// algorithms the standard leaves open). Groups too small to keep `min_train` rows for fitting
// hold nothing out.
//
//   std::vector<bool> held = HoldoutMask(group_of_row, 0.2, /*seed=*/1, /*min_train=*/4);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ftax {

// group_of_row[i] names row i's group; the result marks held-out rows.
std::vector<bool> HoldoutMask(const std::vector<std::string>& group_of_row, double fraction,
                              uint64_t seed, int min_train);

}  // namespace ftax
