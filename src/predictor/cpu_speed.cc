#include "predictor/cpu_speed.h"

namespace ftax {
namespace {

void Scale(Param* p, double f) {
  if (p->known()) p->value *= f;
  if (!std::isnan(p->std_error)) p->std_error *= f;
}

// The host-side costs of one framework (a replayed graph's launch work included; the GPU's
// gap between graph nodes is not the CPU's).
void ScaleFramework(FrameworkParams* f, double factor) {
  Scale(&f->call_us, factor);
  for (Param& d : f->dispatch_us) Scale(&d, factor);
  Scale(&f->module_us, factor);
  Scale(&f->replay_per_node_us, factor);
  Scale(&f->input_us, factor);
  for (auto& [key, v] : f->op_us) Scale(&v, factor);
  for (auto& [key, v] : f->op_launch_us) Scale(&v, factor);
}

}  // namespace

HostProfile AtCpuSpeed(const HostProfile& profile, Framework framework, double factor) {
  HostProfile p = profile;
  auto it = p.frameworks.find(FrameworkName(CostFramework(framework)));
  if (it == p.frameworks.end() || !(factor > 0) || factor == 1) return p;
  ScaleFramework(&it->second, factor);
  Scale(&p.gpu.launch_us, factor);
  // Without a timed launch the pipeline prices a kernel launch from LibTorch's chains (kernel
  // less view dispatch): those move with the CPU too.
  if (!p.gpu.launch_us.known() && framework != Framework::kLibtorchEager) {
    auto lt = p.frameworks.find(FrameworkName(Framework::kLibtorchEager));
    if (lt != p.frameworks.end())
      for (DispatchClass c : {DispatchClass::kKernel, DispatchClass::kView}) Scale(&lt->second.dispatch_us[int(c)], factor);
  }
  if (p.cpu_gauge_us > 0) p.cpu_gauge_us *= factor;
  return p;
}

bool ReadsCpuGauge(Framework f) { return IsPythonEager(f) || IsTorchCompile(f); }

Expected<HostProfile> AtTypicalCpuSpeed(const HostProfile& profile) {
  const bool gauge = profile.cpu_gauge_us > 0 && profile.cpu_gauge_typical_us > 0;
  const bool probe = profile.host_probe_us > 0 && profile.host_probe_typical_us > 0;
  if (!gauge && !probe)
    return InvalidInput(
        "--whatif cpu=typical: the profile records no typical CPU speed (cpu_gauge_typical_us, "
        "host_probe_typical_us: calibrate writes them since 2026-11-28); give a factor instead, e.g. cpu=1.14");
  HostProfile p = profile;
  for (auto& [name, f] : p.frameworks) {
    const std::optional<Framework> fw = ParseFramework(name);
    if (!fw) continue;
    const bool python = ReadsCpuGauge(*fw);
    if (python ? !gauge : !probe) continue;  // no reading of its own: left at the fast state
    ScaleFramework(&f, python ? profile.cpu_gauge_typical_us / profile.cpu_gauge_us
                              : profile.host_probe_typical_us / profile.host_probe_us);
  }
  if (probe) Scale(&p.gpu.launch_us, profile.host_probe_typical_us / profile.host_probe_us);
  if (gauge) p.cpu_gauge_us = profile.cpu_gauge_typical_us;
  if (probe) p.host_probe_us = profile.host_probe_typical_us;
  return p;
}

HostProfile AtCpuSpeedForAll(const HostProfile& profile, double factor) {
  HostProfile p = profile;
  if (!(factor > 0) || factor == 1) return p;
  for (auto& [name, f] : p.frameworks) ScaleFramework(&f, factor);
  Scale(&p.gpu.launch_us, factor);
  if (p.cpu_gauge_us > 0) p.cpu_gauge_us *= factor;
  return p;
}

}  // namespace ftax
