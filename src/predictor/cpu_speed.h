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

#include "common/status.h"
#include "predictor/host_profile.h"

namespace ftax {

HostProfile AtCpuSpeed(const HostProfile& profile, Framework framework, double factor);
// Every framework's CPU-side costs and the launch cost, once: the whole host's CPU `factor`
// times slower (`ftax predict --whatif cpu=F`).
HostProfile AtCpuSpeedForAll(const HostProfile& profile, double factor);

// Whether a framework's CPU speed is read by the Python gauge (Python eager and torch.compile's
// wrapper) rather than by the host probe (the C++-timed TorchScript, LibTorch, CUDA graphs).
bool ReadsCpuGauge(Framework f);

// The profile at its bench's typical CPU speed (`--whatif cpu=typical`): each framework's
// CPU-side costs times its reading's median over its fast state (cpu_gauge_typical_us /
// cpu_gauge_us for the frameworks ReadsCpuGauge names, host_probe_typical_us /
// host_probe_us for the others), and the launch cost, which the C++ bench times, by the
// probe's. Stored host runs' Python eager rows of unseen models ran near that reading
// (validation/scripts/gauge_reference.py). An error names the readings a profile lacks.
Expected<HostProfile> AtTypicalCpuSpeed(const HostProfile& profile);

}  // namespace ftax
