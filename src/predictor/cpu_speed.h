// A profile at another CPU speed. A profile prices Python eager at the CPU speed its bench
// was brought to (HostProfile::cpu_gauge_us, the host's fast state); a host that runs slower
// at the moment (a gauge reading above it: shared hosts' CPUs slow by about 1.5-1.8x for seconds
// to minutes) pays every CPU-side cost of the framework in proportion. AtCpuSpeed returns the
// profile with the framework's CPU-side parameters (call, per-op and per-class dispatch,
// module calls, launches, and LibTorch's kernel and view dispatch where the profile prices
// launches from them) multiplied by `factor` (gauge now / the profile's gauge); GPU
// kernel costs are untouched. `ftax validate` predicts each Python eager point at the gauge
// read while it was measured.
//
//   HostProfile slow = AtCpuSpeed(profile, Framework::kPytorchEager, 4.9 / profile.cpu_gauge_us);
#pragma once

#include "predictor/host_profile.h"

namespace ftax {

HostProfile AtCpuSpeed(const HostProfile& profile, Framework framework, double factor);
// Every framework's CPU-side costs and the launch cost, once: the whole host's CPU `factor`
// times slower (`ftax predict --whatif cpu=F`).
HostProfile AtCpuSpeedForAll(const HostProfile& profile, double factor);

}  // namespace ftax
