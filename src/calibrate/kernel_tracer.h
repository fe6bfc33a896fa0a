// CUPTI kernel records: the GPU's own account of which kernels ran and for how long.
//
// KernelTracer enables CUPTI's concurrent-kernel activity records for the process. Between
// Start() and Collect() every kernel launched on any stream (also from CUDA graph replays)
// is recorded with its name and device start/end timestamps. Host timers cannot see kernel
// durations behind asynchronous launches; these records can.
//
// CUPTI activity slows every launch (a CUDA graph replay of ResNet-18 at batch 1 by about a
// third on an H200), so nothing that times what a user sees may run while it is on: kernel
// records come from passes of their own, inside a KernelTracer::Scope, and Stop() detaches
// CUPTI from the process (cuptiFinalize) so that later timing runs as without a profiler.
//
//   { KernelTracer::Scope tracing;            // records on
//     run_model();  cudaDeviceSynchronize();
//     std::vector<KernelRecord> ks = KernelTracer::Collect(); }   // records off, CUPTI detached
//   time_model();                              // plain timing
//
// Built only with CUDA + CUPTI (kernel_tracer_cuda.cc); elsewhere Start() returns kUnsupported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace ftax {

struct KernelRecord {
  std::string name;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t stream = 0;
  double duration_us() const { return double(end_ns - start_ns) / 1e3; }
};

class KernelTracer {
 public:
  static Status Start();
  // Flushes CUPTI buffers and returns (and forgets) the records gathered so far.
  static std::vector<KernelRecord> Collect();
  // Flushes, disables kernel records and detaches CUPTI; a later Start() attaches it again.
  static void Stop();
  // True between Start() and Stop().
  static bool Active();

  // Kernel records on for the lifetime of the scope (Start in the constructor, Stop in the
  // destructor); status() says whether Start succeeded.
  class Scope {
   public:
    Scope() : status_(Start()) {}
    ~Scope() { Stop(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    const Status& status() const { return status_; }

   private:
    Status status_;
  };
};

// Summary of the records of `calls` identical calls: kernels per call, kernel time per call
// (sum of durations), span per call (first start to last end), and busy time per call (the
// time at least one kernel ran: the union of their intervals, each overlap counted once).
struct KernelSummary {
  double kernels_per_call = 0;
  double kernel_us_per_call = 0;
  double span_us_per_call = 0;
  double busy_us_per_call = 0;
};
KernelSummary SummarizeKernels(const std::vector<KernelRecord>& records, int calls);

// The time at least one of `records` ran (the union of their [start, end] intervals), in µs.
// Kernels of one stream run one after another and this is their summed durations; kernels
// that overlap (cuDNN's group-by-group kernels of a grouped convolution on Hopper: one
// 16-group layer of wav2vec2 summed 12.0 ms in an H200 bench while the whole model replayed
// in 3.1 ms) count once.
double BusyUs(std::vector<KernelRecord> records);

}  // namespace ftax
