#include <algorithm>

#include "calibrate/kernel_tracer.h"

namespace ftax {

KernelSummary SummarizeKernels(const std::vector<KernelRecord>& records, int calls) {
  KernelSummary s;
  if (records.empty() || calls <= 0) return s;
  double total = 0;
  uint64_t lo = records.front().start_ns, hi = 0;
  for (const KernelRecord& r : records) {
    total += r.duration_us();
    lo = std::min(lo, r.start_ns);
    hi = std::max(hi, r.end_ns);
  }
  s.kernels_per_call = double(records.size()) / calls;
  s.kernel_us_per_call = total / calls;
  s.span_us_per_call = double(hi - lo) / 1e3 / calls;
  return s;
}

}  // namespace ftax
