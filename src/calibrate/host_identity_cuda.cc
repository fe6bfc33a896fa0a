#include <cuda_runtime.h>
#include <torch/version.h>

#include <thread>

#include "calibrate/host_identity.h"

namespace ftax {

nlohmann::json HostIdentity(int device) {
  nlohmann::json h;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) == cudaSuccess) {
    h["gpu"] = p.name;
    h["sm_count"] = p.multiProcessorCount;
    h["memory_bytes"] = double(p.totalGlobalMem);
    h["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    h["l2_bytes"] = p.l2CacheSize;
  }
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) == cudaSuccess) h["sm_clock_mhz"] = v / 1000;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    h["memory_clock_mhz"] = v / 1000;
  if (cudaDriverGetVersion(&v) == cudaSuccess) h["cuda_driver"] = v;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) h["cuda_runtime"] = v;
  h["torch"] = TORCH_VERSION;
  h["cpu"] = CpuModel();
  h["cpu_threads"] = std::thread::hardware_concurrency();
  h["hostname"] = HostName();
  return h;
}

}  // namespace ftax
