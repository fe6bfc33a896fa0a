// Measurement in rounds: how `ftax validate` spreads the timing of many points over a whole
// run. On a shared host the CPU side can slow down for seconds to minutes, and a point timed
// in one stretch measures that stretch. With R rounds every point is visited R times, once
// per round, in a different shuffled order each round, and timed for 1/R of its budget on
// each visit; its samples are pooled. Every point then sees the same mix of host states, so
// the differences between points are the models' and not the clock's, and the pooled
// p10..p90 shows the spread over the run. One round visits the points in their given order,
// as a plain sweep does.
//
//   for (int r = 0; r < rounds; ++r)
//     for (size_t i : VisitOrder(points.size(), r, rounds, seed)) {
//       ... time points[i] ...; AddVisit(times, &points[i]);
//     }
//   writer.Set("rows", PooledRows(points));   // after each round
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace ftax {

// One measured point across the rounds: its row without the latency fields (model,
// framework, precision, batch, kernels, ...), and the samples of every visit so far.
struct RoundedPoint {
  nlohmann::json row;
  std::vector<double> host_ms, event_ms;   // every visit's samples, pooled
  std::vector<double> visit_medians_ms;    // one host-latency median per visit
  std::vector<double> visit_probe_us;      // the host probe timed just before each visit
  std::vector<int64_t> visit_order;        // each visit's place in the whole run (0, 1, ...)
  bool failed = false;                     // a visit threw: not visited again
};

// The order in which round `round` (0-based) of `rounds` visits `n` points: 0..n-1 when
// there is one round, else a shuffle that depends only on (seed, round).
std::vector<size_t> VisitOrder(size_t n, int round, int rounds, uint64_t seed);

// The repetitions one visit times: its budget over the time of one iteration, at least
// ceil(min_total / rounds) so that the pooled sample has `min_total` or more, at most `max`.
int RepsPerVisit(double visit_budget_s, double one_iter_s, int rounds, int min_total = 10,
                 int max = 50);

// Adds one visit's host and CUDA-event samples (same length) to `p`, and the host probe
// timed just before it (the bench's 64-op kernel chain, microseconds per op; negative: none).
// The probe tells how fast the host's CPU side was during the visit, so a visit slower than
// the point's others can be told apart from a slow host stretch, and, set beside the bench's
// own chain of 64, how the host compares with the one the profile was calibrated on. `order`
// is the visit's place among all visits of the run (negative: not recorded); with it
// validation/scripts/drift_over_time.py shows how the host's speed moved over the run.
void AddVisit(const std::vector<double>& host_ms, const std::vector<double>& event_ms,
              RoundedPoint* p, double probe_us = -1, int64_t order = -1);

// The measured row of `p` from its pooled samples: latency_ms and event_ms spreads,
// framework_ms_measured = pooled median latency - kernel_ms, host_probe_us (the median of
// the visits' probes, where they were timed), and with more than one visit
// "visit_medians_ms", "visit_probe_us" and "visit_order" (where recorded) and "samples_ms"
// (the pooled host samples). Null for a point without samples.
nlohmann::json PooledRow(const RoundedPoint& p);

// PooledRow of every point with samples, in the points' order.
nlohmann::json PooledRows(const std::vector<RoundedPoint>& points);

}  // namespace ftax
