#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "calibrate/kernel_tracer.h"

namespace ftax {
namespace {

constexpr size_t kBufferSize = 8 << 20;
constexpr size_t kAlign = 8;

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}
std::vector<KernelRecord>& Records() {
  static std::vector<KernelRecord> r;
  return r;
}
bool& Enabled() {
  static bool on = false;
  return on;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, kBufferSize) != 0) p = nullptr;
  *buffer = static_cast<uint8_t*>(p);
  *size = p ? kBufferSize : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::vector<KernelRecord> got;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      KernelRecord r;
      r.name = k->name ? k->name : "";
      r.start_ns = k->start;
      r.end_ns = k->end;
      r.stream = k->streamId;
      got.push_back(std::move(r));
    }
  }
  free(buffer);
  std::lock_guard<std::mutex> lock(Mu());
  auto& all = Records();
  all.insert(all.end(), got.begin(), got.end());
}

}  // namespace

Status KernelTracer::Start() {
  if (Enabled()) return Status::Ok();
  CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    return Unsupported(std::string("CUPTI: cannot register activity callbacks: ") + (msg ? msg : "?"));
  }
  r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    return Unsupported(std::string("CUPTI: cannot enable kernel records: ") + (msg ? msg : "?"));
  }
  Enabled() = true;
  return Status::Ok();
}

std::vector<KernelRecord> KernelTracer::Collect() {
  cudaDeviceSynchronize();
  if (Enabled()) cuptiActivityFlushAll(1);  // any CUPTI call would attach it again
  std::lock_guard<std::mutex> lock(Mu());
  std::vector<KernelRecord> out;
  out.swap(Records());
  std::sort(out.begin(), out.end(),
            [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  return out;
}

void KernelTracer::Stop() {
  if (!Enabled()) return;
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  // Detach CUPTI entirely (its callbacks stay in the launch path otherwise); the records
  // gathered so far stay in Records() for a later Collect().
  cuptiFinalize();
  Enabled() = false;
}

bool KernelTracer::Active() { return Enabled(); }

}  // namespace ftax
