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
  s.busy_us_per_call = BusyUs(records) / calls;
  return s;
}

double BusyUs(std::vector<KernelRecord> records) {
  std::sort(records.begin(), records.end(),
            [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  uint64_t busy = 0, open_start = 0, open_end = 0;
  bool open = false;
  for (const KernelRecord& r : records) {
    if (r.end_ns <= r.start_ns) continue;
    if (open && r.start_ns <= open_end) {
      open_end = std::max(open_end, r.end_ns);
      continue;
    }
    if (open) busy += open_end - open_start;
    open_start = r.start_ns;
    open_end = r.end_ns;
    open = true;
  }
  if (open) busy += open_end - open_start;
  return double(busy) / 1e3;
}

}  // namespace ftax
