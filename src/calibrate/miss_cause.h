// Why a validated point missed: the measured latency and the prediction split the same way
// (kernel time + what is not kernel time, the framework's exposed overhead), so a miss is
// put on the part that differs more, down to the kernel class whose time differs most. A point
// measured in rounds whose visits spread wider than the tolerance, with one visit inside it,
// is put on the host's drift instead: the measurement itself did not hold still. A point
// measured slower than predicted while the process's own probe (the chain of small adds timed
// before it, scripts/validate_eager.py) ran at least 1.25x the bench's cost for the same chain
// is put on the process instead: "slow process". A point measured slower than predicted that
// launched over 15% more kernels than predicted (and at least 10 more), memsets aside, is put
// on them: "unpredicted kernels", work the priced graph does not hold (a branch on a tensor's
// value that the trace fixed, a graph break, a cache that grows) or kernels a library adds.
//
//   MissEvidence e; e.measured_ms = ...; e.predicted_ms = ...; ...
//   MissCause c = ExplainMiss(e);   // c.kind: "host drift", "unpredicted kernels", "slow process",
//                                   // "framework overhead", "kernel time"
#pragma once

#include <array>
#include <string>
#include <vector>

#include "predictor/framework.h"

namespace ftax {

struct MissEvidence {
  double tolerance_pct = 15;
  double measured_ms = 0, measured_kernel_ms = 0;
  double predicted_ms = 0, predicted_compute_ms = 0;  // predicted kernel time on the GPU
  std::array<double, kNumKernelClasses> measured_class_ms{}, predicted_class_ms{};
  std::vector<double> visit_medians_ms;  // one per visit when measured in rounds
  // The row's probe, µs per op of 64 small adds timed in its process before the point, and the
  // bench's cost for the same chain (Python eager's kernel-class dispatch); < 0: unknown.
  double host_probe_us = -1, bench_probe_us = -1;
  // GPU kernels a call launched, measured (CUPTI) and predicted; 0: unknown.
  double measured_kernels = 0, predicted_kernels = 0;
  // Of the measured ones, the memsets (the PyTorch profiler's records count them with the
  // kernels; a library's own, cuDNN's around a grouped convolution, are not in the priced graph).
  double measured_memsets = 0;
  // torch.compile's reduce-overhead: the wrapper's CPU time before the replay, measured (the
  // replay marked) and predicted; < 0: unknown. A miss on the framework's overhead says how
  // much of it lies there.
  double measured_before_replay_ms = -1, predicted_before_replay_ms = -1;
};

struct MissCause {
  std::string kind;    // "host drift", "unpredicted kernels", "slow process", "framework overhead" or
                       // "kernel time"
  std::string detail;  // one sentence with the numbers
  double kernel_delta_ms = 0;    // measured - predicted kernel time
  double overhead_delta_ms = 0;  // measured - predicted time that is not kernel time
};

MissCause ExplainMiss(const MissEvidence& e);

}  // namespace ftax
