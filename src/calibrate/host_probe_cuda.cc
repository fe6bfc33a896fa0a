#include "calibrate/host_probe.h"

#include <cuda_runtime.h>

#include <chrono>
#include <vector>

#include "common/percentile.h"

namespace ftax {

double HostProbeUs(const at::Tensor& x0) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> per_op;
  for (int rep = 0; rep < 5; ++rep) {
    cudaDeviceSynchronize();
    auto t0 = Clock::now();
    at::Tensor x = x0;
    for (int i = 0; i < 64; ++i) x = at::add(x, 1.0);
    cudaDeviceSynchronize();
    per_op.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 64);
  }
  // The median: three chains, on host run o, let a blip of the host through now and then.
  return Percentile(per_op, 0.5);
}

}  // namespace ftax
