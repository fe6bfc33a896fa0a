// Host identity: what a measurement file and a profile record about the machine they came
// from (GPU name, SM count, clocks, memory, driver and CUDA versions, CPU model, LibTorch
// version, host name). Only the CUDA build can ask the GPU; CpuModel works everywhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.h"

namespace ftax {

std::string CpuModel();        // from /proc/cpuinfo, "" if unknown
std::string HostName();
nlohmann::json HostIdentity(int device);  // CUDA builds only (host_identity_cuda.cc)

}  // namespace ftax
