#include "predictor/pipeline.h"

#include <algorithm>
#include <set>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>
#include <map>

namespace ftax {
namespace {

double ValueOr(const Param& p, double fallback) { return p.known() ? p.value : fallback; }
double SeOr0(const Param& p) { return std::isnan(p.std_error) ? 0.0 : p.std_error; }


// Parameters are positive and their errors are relative in nature (a rate known to ±30%),
// so draw from a log-normal with the same relative spread (capped at a factor e per sigma),
// which never produces the near-zero rates a clipped normal would.
double Draw(double v, double se, std::mt19937_64& rng) {
  if (!(se > 0) || !(v > 0)) return v;
  const double sigma = std::min(se / v, 1.0);
  std::normal_distribution<double> n(-0.5 * sigma * sigma, sigma);
  return v * std::exp(n(rng));
}

}  // namespace

size_t ProfileCache::Hash::operator()(const Key& k) const {
  size_t h = std::hash<const void*>()(k.params);
  for (uint64_t v : {uint64_t(k.cls), uint64_t(k.variant), uint64_t(k.m), uint64_t(k.n), uint64_t(k.k), uint64_t(k.batch),
                     uint64_t(std::hash<double>()(k.bytes))})
    h = (h ^ v) * 0x100000001b3ull;
  return h;
}

namespace {

ProfileCache::Value ComputeAnchor(const KernelWork& work, const KernelParams& params) {
  ProfileCache::Value v;
  v.factor = AnchorFactor(work, params);
  if (LibraryChoosesKernels(work.cls)) v.kernels = AnchorKernels(work, params);
  v.reach = ReachOf(work, params);
  return v;
}

}  // namespace

ClassParams ResolveClassParams(const HostProfile& profile, KernelClass cls, DType dtype) {
  ClassParams c;
  const std::string key = KernelKey(cls, dtype);
  const KernelParams* kp = profile.gpu.Find(cls, dtype);
  c.own = kp;
  std::string used = key;
  if (!kp && (dtype == DType::kBFloat16 || dtype == DType::kFloat16)) {
    DType other = dtype == DType::kBFloat16 ? DType::kFloat16 : DType::kBFloat16;
    kp = profile.gpu.Find(cls, other);
    used = KernelKey(cls, other);
    if (kp) c.notes.push_back("no " + key + " parameters in profile: used " + used);
  }
  // A memory-bound class moves bytes, which the kernel's work already counts in its own
  // element size: a profile benchmarked in half precision alone (`ftax bench --dtypes fp16`)
  // prices the few fp32 kernels of a half-precision model (batch norm's statistics, a mask)
  // with the half-precision bandwidth, and says so.
  if (!kp && dtype == DType::kFloat32 && !IsComputeClass(cls)) {
    for (DType other : {DType::kFloat16, DType::kBFloat16}) {
      kp = profile.gpu.Find(cls, other);
      if (!kp) continue;
      used = KernelKey(cls, other);
      c.notes.push_back("no " + key + " parameters in profile: used " + used + " (memory bound: priced by bytes)");
      break;
    }
  }
  if (!kp && cls == KernelClass::kDepthwise) {
    kp = profile.gpu.Find(KernelClass::kElementwise, dtype);
    if (kp) c.notes.push_back("no " + key + " parameters in profile: priced as elementwise");
  }
  if (!kp && cls == KernelClass::kGather) {
    kp = profile.gpu.Find(KernelClass::kCopy, dtype);
    if (kp) c.notes.push_back("no " + key + " parameters in profile: priced as copy");
  }
  if (!kp) {
    c.used_key = key;  // for the error message
    return c;
  }
  c.found = true;
  c.used = kp;
  c.used_key = used;
  c.theta.floor_us = kp->floor_us.value;
  c.theta.rate_tflops = ValueOr(kp->rate_tflops, 0);
  c.theta.bandwidth_gbps = kp->bandwidth_gbps.value;
  c.se.floor_us = SeOr0(kp->floor_us);
  c.se.rate_tflops = SeOr0(kp->rate_tflops);
  c.se.bandwidth_gbps = SeOr0(kp->bandwidth_gbps);
  if (!kp->trusted) {
    // median |log error| = 0.6745 sigma for a normal log error
    const double err = std::isfinite(kp->holdout_err_pct) ? kp->holdout_err_pct : kp->median_abs_err_pct;
    c.model_sigma = std::isfinite(err) ? std::log1p(err / 100.0) / 0.6745 : 0.0;
    char note[200];
    std::snprintf(note, sizeof(note),
                  "kernel class %s failed its calibration quality gates (held-out median error %.0f%%): "
                  "its kernel times carry that uncertainty in the interval",
                  used.c_str(), std::isfinite(err) ? err : 0.0);
    c.notes.push_back(note);
  }
  return c;
}

ProfileCache::ProfileCache() = default;
ProfileCache::~ProfileCache() = default;

bool ProfileCache::Serves(const HostProfile& profile) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!profile_) profile_ = &profile;
  return profile_ == &profile;
}

ProfileCache::Value ProfileCache::Anchor(const HostProfile& profile, const Key& key, const KernelWork& work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(key);
    if (it != values_.end()) return it->second;
  }
  const Value v = ComputeAnchor(work, *key.params);
  std::lock_guard<std::mutex> lock(mu_);
  if (profile_ == &profile) values_.emplace(key, v);
  return v;
}

const ClassParams& ProfileCache::Class(const HostProfile& profile, KernelClass cls, DType dtype) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<ClassParams>& c = classes_[size_t(cls)][size_t(dtype)];
  if (!c) c = std::make_unique<ClassParams>(ResolveClassParams(profile, cls, dtype));
  return *c;
}

size_t ProfileCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_.size();
}

// A profile's relative per-op scales (FrameworkParams::op_scale), applied to the costs just
// resolved: each op type's cost and its further launches by its own scale, every other CPU
// cost (ops priced by class, their launches, the call, module calls) by "*".
static void ApplyOpScale(const std::map<std::string, double>& scale, Framework framework, ResolvedParams* rp) {
  auto rest_it = scale.find("*");
  const double rest = rest_it != scale.end() ? rest_it->second : 1.0;
  for (size_t i = 0; i < rp->op_us.size(); ++i) {
    auto it = scale.find(rp->op_keys[i]);
    const double s = it != scale.end() ? it->second : rest;
    rp->op_us[i] *= s;
    rp->op_se[i] *= s;
    rp->op_launch[i] *= s;
  }
  for (int c = 0; c < kNumDispatchClasses; ++c) {
    rp->dispatch_us[c] *= rest;
    rp->dispatch_se[c] *= rest;
  }
  rp->launch_us *= rest;
  rp->call_us *= rest;
  rp->call_se *= rest;
  rp->input_us *= rest;
  rp->input_se *= rest;
  rp->module_us *= rest;
  rp->module_se *= rest;
  auto x2 = [](double v) {
    char b[32];
    std::snprintf(b, sizeof(b), " x%.2f", v);
    return std::string(b);
  };
  // Op types of one scale together (a fit gives one scale to each group of ops).
  std::map<std::string, std::string> by_scale;
  for (const auto& [op, s] : scale)
    if (op != "*") by_scale[x2(s)] += (by_scale[x2(s)].empty() ? "" : ", ") + op;
  std::string note = std::string(FrameworkName(framework)) + ": op costs scaled as whole models ran them (";
  for (const auto& [x, ops] : by_scale) note += ops + x + "; ";
  note += "the rest" + x2(rest) + ")";
  rp->notes.push_back(note);
}

Expected<ResolvedParams> ResolveParams(const WorkList& work, const HostProfile& profile,
                                       Framework framework, ProfileCache* cache) {
  if (cache && !cache->Serves(profile)) cache = nullptr;
  ResolvedParams rp;
  rp.framework = framework;
  rp.num_sms = profile.gpu.num_sms;
  rp.kernel_gap_us = ValueOr(profile.gpu.kernel_gap_us, 0);
  rp.kernel_gap_se = SeOr0(profile.gpu.kernel_gap_us);
  const FrameworkParams* f = profile.FindFramework(framework);
  if (!f)
    return InvalidInput(std::string("profile has no parameters for framework '") +
                        FrameworkName(framework) + "' (calibrate it with `ftax bench --frameworks " +
                        FrameworkName(framework) + "`)");
  if (!f->call_us.known())
    return InvalidInput(std::string("profile: frameworks.") + FrameworkName(framework) +
                        ".call_us is null");
  rp.call_us = f->call_us.value;
  rp.call_se = SeOr0(f->call_us);
  // A bench with chains of real layers prices the modules outside the generated code as well
  // (module_us > 0); one without them leaves that cost out, and its prices come out short.
  const bool priced_outside = f->module_us.known() && f->module_us.value > 0;
  if (framework == Framework::kTorchCompile)
    rp.notes.push_back(
        priced_outside ?
        "torch-compile: the compiled call's CPU cost is priced from the bench's compiled chains, "
        "with what a call costs outside the generated code for each graph input and each module "
        "(chains of real layers); with such a bench, models never seen came within 15% on an H200 "
        "whose CPU held its speed (14 of 14 points) and mostly short on those whose CPU ran slow "
        "while the models ran (5 of 14 and 0 of 4 points; --whatif cpu=1.5 prices that state), "
        "and a process can pay up to 2-3 ms more outside the generated code for some models, a "
        "state of the process that no feature of the model predicts (docs/how-it-works.md, Limits)" :
        "torch-compile: the compiled call's CPU cost is priced from the bench's compiled chains of "
        "Triton kernels and library calls; whole models' compiled calls have mostly cost the CPU more "
        "than those chains (1.1-1.9x on a fast H200 host), so a framework-bound point of this mode "
        "is likely short; most of the difference is outside the generated code (0.2-0.9 ms a call "
        "on most calibration models, of which Dynamo's guard check is under 0.05 ms; a bench with "
        "chains of real layers prices part of it per module, this profile's did not), and a launch costs more in deeper models "
        "(docs/how-it-works.md, Limits)");
  if (framework == Framework::kTorchCompile && f->input_us.known()) {
    rp.input_us = f->input_us.value;
    rp.input_se = SeOr0(f->input_us);
    if (work.graph_inputs > 0) {
      char each[32];
      std::snprintf(each, sizeof(each), "%.2f", rp.input_us);
      rp.notes.push_back("torch-compile: " + std::to_string(work.graph_inputs) +
                         " tensors of model state that its kernels read are inputs of the compiled graph, " +
                         each + " us each a call");
    }
  }
  if (IsCudaGraph(framework)) {
    // The GPU's gap between a replayed graph's nodes is the driver's, whichever framework
    // recorded the graph: a framework whose bench rows carry no GPU records borrows cuda-graph's.
    const FrameworkParams* gap_from = f;
    if (!f->node_gap_us.known()) {
      const FrameworkParams* cg = profile.FindFramework(Framework::kCudaGraph);
      if (cg && cg->node_gap_us.known() && framework != Framework::kCudaGraph) {
        gap_from = cg;
        rp.notes.push_back(std::string("node_gap_us of ") + FrameworkName(framework) +
                           " from cuda-graph's");
      } else {
        return InvalidInput(std::string("profile: frameworks.") + FrameworkName(CostFramework(framework)) +
                            ".node_gap_us is null");
      }
    }
    rp.node_gap_us = gap_from->node_gap_us.value;
    rp.node_gap_se = SeOr0(gap_from->node_gap_us);
    rp.replay_per_node_us = ValueOr(f->replay_per_node_us, 0);
    rp.replay_se = SeOr0(f->replay_per_node_us);
    rp.call_before_replay = f->call_before_replay;
    if (framework == Framework::kTorchCompileReduceOverhead && f->call_before_replay && work.module_calls > 0) {
      // Dynamo checks the same guards ahead of either mode's call: a bench without
      // reduce-overhead chains of layers borrows the default mode's cost per module.
      const FrameworkParams* tc = profile.FindFramework(Framework::kTorchCompile);
      const Param* module = f->module_us.known() ? &f->module_us
                            : tc && tc->module_us.known() ? &tc->module_us : nullptr;
      if (module) {
        rp.module_us = module->value;
        rp.module_se = SeOr0(*module);
        char each[32];
        std::snprintf(each, sizeof(each), "%.2f", rp.module_us);
        rp.notes.push_back(std::string("torch-compile-reduce-overhead: Dynamo checks the guards of the model's ") +
                           std::to_string(work.module_calls) + " modules before the graph replays: " + each +
                           " us each" + (module == &f->module_us ? "" : ", as the default mode's bench priced a module"));
      } else {
        rp.notes.push_back("torch-compile-reduce-overhead: the profile prices no module's guards (module_us null "
                           "in both torch.compile modes): a call's CPU time before the replay is short by that");
      }
    }
  } else {
    for (int c = 0; c < kNumDispatchClasses; ++c) {
      const Param& d = f->dispatch_us[c];
      if (!d.known()) {
        // A class that was not measured falls back to the kernel class, said in notes.
        const Param& k = f->dispatch_us[int(DispatchClass::kKernel)];
        if (!k.known())
          return InvalidInput(std::string("profile: frameworks.") + FrameworkName(framework) +
                              ".dispatch_us.kernel is null");
        rp.dispatch_us[c] = k.value;
        rp.dispatch_se[c] = SeOr0(k);
        rp.notes.push_back(std::string("dispatch class '") + DispatchClassName(DispatchClass(c)) +
                           "' not calibrated for " + FrameworkName(framework) + ": priced as 'kernel'");
      } else {
        rp.dispatch_us[c] = d.value;
        rp.dispatch_se[c] = SeOr0(d);
      }
    }
    // A launch is the same driver call under every framework; LibTorch's C++ dispatcher
    // measures it with the least else around it (and no validation run refines it).
    double kernel = rp.dispatch_us[int(DispatchClass::kKernel)];
    double view = rp.dispatch_us[int(DispatchClass::kView)];
    const FrameworkParams* lt = profile.FindFramework(Framework::kLibtorchEager);
    if (lt && lt->dispatch_us[int(DispatchClass::kKernel)].known() &&
        lt->dispatch_us[int(DispatchClass::kView)].known()) {
      kernel = lt->dispatch_us[int(DispatchClass::kKernel)].value;
      view = lt->dispatch_us[int(DispatchClass::kView)].value;
    }
    rp.launch_us = std::max(0.0, kernel - view);
    if (profile.gpu.launch_us.known()) rp.launch_us = profile.gpu.launch_us.value;
    if (!f->op_us.empty()) {
      // Ops whose type the bench measured cost that; the rest their class's chain cost.
      std::map<const std::string*, int> index;
      std::map<std::string, int> by_class;
      int priced = 0;
      rp.dispatch_op.reserve(work.dispatches.size());
      for (const DispatchWork& d : work.dispatches) {
        int idx = -1;
        if (d.cost_key) {
          auto it = index.find(d.cost_key);
          if (it != index.end()) {
            idx = it->second;
          } else {
            auto op = f->op_us.find(*d.cost_key);
            if (op != f->op_us.end() && op->second.known()) {
              idx = int(rp.op_us.size());
              rp.op_us.push_back(op->second.value);
              rp.op_se.push_back(SeOr0(op->second));
              rp.op_keys.push_back(*d.cost_key);
              auto nk = f->op_kernels.find(*d.cost_key);
              rp.op_kernels.push_back(nk != f->op_kernels.end() ? nk->second : 1.0);
              auto nl = f->op_launch_us.find(*d.cost_key);
              rp.op_launch.push_back(nl != f->op_launch_us.end() && nl->second.known() ? nl->second.value
                                                                                       : rp.launch_us);
            }
            index.emplace(d.cost_key, idx);
          }
        }
        if (idx >= 0) {
          ++priced;
        } else if (d.cls != DispatchClass::kView) {
          by_class[d.cost_key && !d.cost_key->empty() ? *d.cost_key : std::string("other")]++;
        }
        rp.dispatch_op.push_back(idx);
      }
      std::string note = std::to_string(priced) + " of " + std::to_string(work.dispatches.size()) +
                         " dispatches priced by their op type's measured cost";
      if (!by_class.empty()) {
        std::vector<std::pair<int, std::string>> top;
        for (const auto& [k, n] : by_class) top.emplace_back(-n, k);
        std::sort(top.begin(), top.end());
        note += "; by their class's: ";
        for (size_t i = 0; i < top.size() && i < 4; ++i)
          note += (i ? ", " : "") + top[i].second + " (" + std::to_string(-top[i].first) + ")";
        if (top.size() > 4) note += ", ...";
      }
      rp.notes.push_back(note);
    }
    if (IsPythonEager(framework)) {
      rp.module_us = ValueOr(f->module_us, 0);
      rp.module_se = SeOr0(f->module_us);
      if (!f->module_us.known() && work.module_calls > 0)
        rp.notes.push_back("profile has no module_us: nn.Module call cost not counted");
    }
    // A bench without chains of layers (or, before them, of nested modules) prices no module.
    if (framework == Framework::kTorchCompile && work.module_calls > 0 && f->module_us.known()) {
      rp.module_us = f->module_us.value;
      rp.module_se = SeOr0(f->module_us);
      char each[32];
      std::snprintf(each, sizeof(each), "%.2f", rp.module_us);
      rp.notes.push_back("torch-compile: Dynamo checks the guards of the model's " + std::to_string(work.module_calls) +
                         " modules and gathers their tensors every call, outside the generated code: " + each +
                         " us each as the bench priced a module");
    }
    if (!f->op_scale.empty() && !rp.op_us.empty()) ApplyOpScale(f->op_scale, framework, &rp);
  }
  // Per (class, dtype): index into rp.thetas (-1: not resolved yet) and the profile entry
  // whose measured range applies. Arrays, not string maps: this runs once per prediction.
  constexpr int kDTypes = int(DType::kComplex64) + 1;
  std::array<std::array<int, kDTypes>, kNumKernelClasses> slot;
  std::array<std::array<const KernelParams*, kDTypes>, kNumKernelClasses> own{}, used_params{};
  for (auto& row : slot) row.fill(-1);
  std::map<std::string, int> out_of_range;  // kernels beyond KernelFacts::extrapolated_beyond
  const double beyond = profile.kernel_facts.extrapolated_beyond;
  std::set<std::pair<std::string, std::pair<KernelVariant, AnchorReach>>> uncovered;
  rp.theta_index.reserve(work.kernels.size());
  rp.anchor_factor.reserve(work.kernels.size());
  rp.kernel_nodes.reserve(work.kernels.size());
  using AnchorKey = ProfileCache::Key;
  // Kernel works already priced by this call. A model repeats its layers, so a kernel's work
  // is usually the last one found or the one after it: those are tried first.
  std::vector<std::pair<AnchorKey, ProfileCache::Value>> seen;
  size_t next_seen = 0;
  constexpr size_t kMaxClasses = size_t(kNumKernelClasses) * kDTypes;
  rp.thetas.reserve(kMaxClasses);
  rp.theta_se.reserve(kMaxClasses);
  rp.theta_model_sigma.reserve(kMaxClasses);
  rp.tiles.reserve(kMaxClasses);
  rp.theta_keys.reserve(kMaxClasses);
  for (const KernelWork& k : work.kernels) {
    // A contiguous copy is priced with the elementwise class's parameters (work_list.h).
    const bool contiguous = k.cls == KernelClass::kCopy && k.variant == KernelVariant::kContiguous;
    const KernelClass pc = contiguous ? KernelClass::kElementwise : k.cls;
    int& idx = slot[int(pc)][int(k.dtype)];
    if (idx < 0) {
      ClassParams uncached;
      const ClassParams& c = cache ? cache->Class(profile, pc, k.dtype)
                                   : (uncached = ResolveClassParams(profile, pc, k.dtype));
      own[int(pc)][int(k.dtype)] = c.own;
      if (!c.found) {
        rp.notes.insert(rp.notes.end(), c.notes.begin(), c.notes.end());
        return InvalidInput("profile has no parameters for kernel class " + c.used_key);
      }
      const KernelParams* kp = c.used;
      idx = int(rp.thetas.size());
      rp.thetas.push_back(c.theta);
      rp.theta_se.push_back(c.se);
      rp.notes.insert(rp.notes.end(), c.notes.begin(), c.notes.end());
      rp.theta_model_sigma.push_back(c.model_sigma);
      rp.tiles.emplace_back(kp->tile_m, kp->tile_n);
      rp.theta_keys.push_back(c.used_key);
      used_params[int(pc)][int(k.dtype)] = kp;
    }
    const KernelParams* up = used_params[int(pc)][int(k.dtype)];
    double factor = 1.0;
    int nodes = 1;
    if (up && !up->anchors.empty() && !contiguous) {
      // A model repeats its layers: the same kernel work recurs, so its factor is computed once.
      const AnchorKey key{up, k.cls, k.variant, k.m, k.n, k.k, k.batch, k.bytes};
      // The last one found (q, k and v projections share a key), the one after it, then all.
      size_t found = seen.size();
      const size_t last = next_seen > 0 ? next_seen - 1 : 0;
      if (!seen.empty() && seen[last].first == key) {
        found = last;
      } else if (next_seen < seen.size() && seen[next_seen].first == key) {
        found = next_seen;
      } else {
        for (size_t j = 0; j < seen.size(); ++j)
          if (seen[j].first == key) {
            found = j;
            break;
          }
      }
      ProfileCache::Value v;
      if (found < seen.size()) {
        v = seen[found].second;
        next_seen = found + 1;
      } else {
        v = cache ? cache->Anchor(profile, key, k) : ComputeAnchor(k, *up);
        seen.emplace_back(key, v);
        next_seen = seen.size();
      }
      factor = v.factor;
      nodes = v.kernels;
      if (k.variant != KernelVariant::kPlain &&
          (v.reach == AnchorReach::kFar || v.reach == AnchorReach::kVariantUnmeasured))
        uncovered.insert({KernelKey(pc, k.dtype), {k.variant, v.reach}});
    }
    rp.anchor_factor.push_back(factor);
    rp.kernel_nodes.push_back(nodes);
    // Range check against what the profile measured for this very class and dtype.
    const KernelParams* kp = own[int(pc)][int(k.dtype)];
    if (kp && kp->max_bytes > 0 &&
        (k.bytes > kp->max_bytes * beyond || (kp->max_flops > 0 && k.flops > kp->max_flops * beyond)))
      out_of_range[KernelKey(pc, k.dtype)]++;
    rp.theta_index.push_back(idx);
  }
  for (const auto& [key, n] : out_of_range)
    rp.notes.push_back(std::to_string(n) + " " + key +
                       " kernels are larger than anything the profile measured (extrapolated)");
  // Kernels of a variant (grouped, patchify, large-kernel, pool, ...) outside what the profile
  // measured for their kind (a grouped convolution of other channels per group than any
  // benchmarked layer): priced all the same, and said so.
  for (const auto& [key, what] : uncovered) {
    const std::string variant = KernelVariantName(what.first);
    if (what.second == AnchorReach::kVariantUnmeasured)
      rp.notes.push_back(key + " " + variant + " kernels: the profile keeps no measured " + variant +
                         " point (priced from the class's plain points and curve)");
    else
      rp.notes.push_back(key + " " + variant +
                         " kernels lie over an octave from every measured point of their kind (priced by the class's curve)");
  }
  return rp;
}

ResolvedParams SampleParams(const ResolvedParams& p, std::mt19937_64& rng) {
  ResolvedParams s = p;
  s.call_us = Draw(p.call_us, p.call_se, rng);
  s.input_us = Draw(p.input_us, p.input_se, rng);
  s.module_us = Draw(p.module_us, p.module_se, rng);
  s.node_gap_us = Draw(p.node_gap_us, p.node_gap_se, rng);
  s.replay_per_node_us = Draw(p.replay_per_node_us, p.replay_se, rng);
  s.kernel_gap_us = Draw(p.kernel_gap_us, p.kernel_gap_se, rng);
  for (int c = 0; c < kNumDispatchClasses; ++c)
    s.dispatch_us[c] = Draw(p.dispatch_us[c], p.dispatch_se[c], rng);
  for (size_t i = 0; i < p.op_us.size(); ++i) s.op_us[i] = Draw(p.op_us[i], p.op_se[i], rng);
  for (size_t i = 0; i < p.thetas.size(); ++i) {
    s.thetas[i].floor_us = Draw(p.thetas[i].floor_us, p.theta_se[i].floor_us, rng);
    if (p.thetas[i].rate_tflops > 0)
      s.thetas[i].rate_tflops =
          std::max(1e-6, Draw(p.thetas[i].rate_tflops, p.theta_se[i].rate_tflops, rng));
    s.thetas[i].bandwidth_gbps =
        std::max(1e-6, Draw(p.thetas[i].bandwidth_gbps, p.theta_se[i].bandwidth_gbps, rng));
    const double sigma = i < p.theta_model_sigma.size() ? p.theta_model_sigma[i] : 0.0;
    if (sigma > 0) {  // the class's model error: every time of the class scales alike
      const double f = std::exp(std::normal_distribution<double>(0.0, sigma)(rng));
      s.thetas[i].floor_us *= f;
      if (s.thetas[i].rate_tflops > 0) s.thetas[i].rate_tflops /= f;
      s.thetas[i].bandwidth_gbps /= f;
    }
  }
  return s;
}

// The GPU kernels a dispatch launches: its kernels, each as many as its anchors say.
static int KernelsLaunched(const DispatchWork& d, const ResolvedParams& p) {
  int n = 0;
  for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i)
    n += i < int(p.kernel_nodes.size()) ? p.kernel_nodes[i] : 1;
  return n;
}

// GPU time of each kernel of the work list (the anchors' correction applied).
static std::vector<double> KernelTimes(const WorkList& work, const ResolvedParams& p) {
  std::vector<double> kt(work.kernels.size());
  for (size_t i = 0; i < work.kernels.size(); ++i) {
    const int ti = p.theta_index[i];
    kt[i] = KernelTimeUs(work.kernels[i], p.thetas[ti], p.tiles[ti].first, p.tiles[ti].second,
                         p.num_sms) *
            (i < p.anchor_factor.size() ? p.anchor_factor[i] : 1.0);
  }
  return kt;
}

Timing Simulate(const WorkList& work, const ResolvedParams& p) {
  Timing t;
  t.dispatches = int(work.dispatches.size());
  std::vector<double> kt = KernelTimes(work, p);
  for (size_t i = 0; i < work.kernels.size(); ++i) {
    t.compute_us += kt[i];
    t.class_us[int(work.kernels[i].cls)] += kt[i];
    const int nodes = i < p.kernel_nodes.size() ? p.kernel_nodes[i] : 1;
    t.kernels += nodes;
    // A library call's extra kernels run back to back on the GPU, a gap apart.
    if (!IsCudaGraph(p.framework)) kt[i] += (nodes - 1) * p.kernel_gap_us;
  }
  if (p.framework == Framework::kTorchCompileReduceOverhead && !p.call_before_replay) {
    // The older reading: the wrapper's bookkeeping (call_us) runs while the graph replays.
    const double n = double(t.kernels);
    const double gaps = p.node_gap_us * n;
    const double gpu = p.replay_per_node_us * n + t.compute_us + gaps;
    t.framework_us = p.call_us;
    t.gpu_idle_us = gaps + std::max(0.0, p.call_us - gpu);
    t.latency_us = std::max(p.call_us, gpu);
    return t;
  }
  if (p.framework == Framework::kTorchCompileReduceOverhead) {
    // The compiled wrapper's work (Dynamo's guards on every module, the graph tree's checks and
    // copies of its inputs) runs on the CPU before the replay starts; the GPU is idle until then.
    const double n = double(t.kernels);
    const double gaps = p.node_gap_us * n;
    const double before = p.call_us + p.module_us * work.module_calls;
    t.framework_us = before + p.replay_per_node_us * n + gaps;
    t.gpu_idle_us = t.framework_us;
    t.latency_us = t.framework_us + t.compute_us;
    return t;
  }
  if (IsCudaGraph(p.framework)) {
    const double n = double(t.kernels);
    const double gaps = p.node_gap_us * n;
    const double launch = p.call_us + p.replay_per_node_us * n;
    t.framework_us = launch + gaps;
    t.gpu_idle_us = gaps;
    t.latency_us = launch + t.compute_us + gaps;
    return t;
  }
  // Python eager calls its modules between its ops; torch.compile checks their guards before
  // the compiled call starts (below, with the call).
  const bool guards = p.framework == Framework::kTorchCompile;
  const double module_share = work.dispatches.empty() || guards
                                  ? 0
                                  : p.module_us * work.module_calls / double(work.dispatches.size());
  double cpu = 0, gpu = 0, idle = 0;
  double launch_total = 0;  // CPU time of launches beyond the ones dispatch costs cover
  const bool by_op = p.dispatch_op.size() == work.dispatches.size();
  for (size_t di = 0; di < work.dispatches.size(); ++di) {
    const DispatchWork& d = work.dispatches[di];
    const int op = by_op ? p.dispatch_op[di] : -1;
    if (d.waits_for_gpu && gpu > cpu) {  // the CPU waits for the GPU's queued kernels
      t.sync_wait_us += gpu - cpu;
      cpu = gpu;
    }
    cpu += (op >= 0 ? p.op_us[size_t(op)] : p.dispatch_us[int(d.cls)]) + module_share;
    // The dispatch cost covers its first launch (an op's measured cost: the launches its op
    // made in the bench); every further one costs the CPU again, before this kernel (an op's
    // second kernel) or after it (a library's extra ones).
    const double covered = op >= 0 ? p.op_kernels[size_t(op)] : 1.0;
    const double launch = op >= 0 ? p.op_launch[size_t(op)] : p.launch_us;
    // An op that launches fewer kernels here than in its bench chain (a 1x1 convolution,
    // where the chain's 3x3 one added layout transposes) does not pay the launches it skips.
    if (op >= 0) cpu -= std::max(0.0, covered - std::max(1, KernelsLaunched(d, p))) * launch;
    double launched = 0;
    for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i) {
      if (i > d.first_kernel && launched + 1 > covered + 1e-9) {
        cpu += launch;
        launch_total += launch;
      }
      launched += 1;
      const double ready = gpu > 0 ? gpu + p.kernel_gap_us : 0;
      const double start = std::max(cpu, ready);
      if (gpu > 0) idle += start - gpu;
      gpu = start + kt[i];
      const int nodes = i < int(p.kernel_nodes.size()) ? p.kernel_nodes[i] : 1;
      int extra = 0;
      for (int e = 1; e < nodes; ++e, launched += 1)
        if (launched + 1 > covered + 1e-9) ++extra;
      cpu += extra * launch;
      launch_total += extra * launch;
    }
  }
  if (work.dispatches.empty() && !guards) cpu += p.module_us * work.module_calls;
  // The compiled call handles each tensor of model state its kernels read (guards, argument
  // checks) and each module's guards once per call, as it handles the call itself.
  const double call = p.call_us + p.input_us * work.graph_inputs + (guards ? p.module_us * work.module_calls : 0);
  t.framework_us = cpu + call;
  t.launch_us = launch_total;
  t.gpu_idle_us = idle;
  t.latency_us = std::max(cpu, gpu) + call;
  return t;
}

std::map<std::string, std::pair<double, int>> OpFrameworkUs(const WorkList& work, const ResolvedParams& p) {
  std::map<std::string, std::pair<double, int>> out;
  if (p.dispatch_op.size() != work.dispatches.size()) return out;
  for (size_t di = 0; di < work.dispatches.size(); ++di) {
    const int op = p.dispatch_op[di];
    const DispatchWork& d = work.dispatches[di];
    if (op < 0 || !d.cost_key) continue;
    const int nodes = KernelsLaunched(d, p);
    const double extra = std::max(0.0, std::ceil(nodes - p.op_kernels[size_t(op)] - 1e-9));
    const double skipped = std::max(0.0, p.op_kernels[size_t(op)] - std::max(1, nodes));
    auto& [us, count] = out[*d.cost_key];
    us += p.op_us[size_t(op)] + (extra - skipped) * p.op_launch[size_t(op)];
    count += 1;
  }
  return out;
}

std::map<int, std::pair<double, int>> KernelUsByOp(const WorkList& work, const ResolvedParams& p) {
  std::map<int, std::pair<double, int>> out;
  const std::vector<double> kt = KernelTimes(work, p);
  for (size_t i = 0; i < work.kernels.size(); ++i) {
    auto& [us, count] = out[work.kernels[i].op_index];
    us += kt[i];
    count += i < p.kernel_nodes.size() ? p.kernel_nodes[i] : 1;
  }
  return out;
}

std::vector<KernelGroup> KernelGroups(const WorkList& work, const ResolvedParams& p,
                                      const std::vector<std::string>& op_types) {
  const std::vector<double> kt = KernelTimes(work, p);
  std::map<std::tuple<std::string, int, int, int, int64_t, int64_t, int64_t, int64_t, double, double>, KernelGroup> groups;
  for (size_t i = 0; i < work.kernels.size(); ++i) {
    const KernelWork& k = work.kernels[i];
    const bool known = k.op_index >= 0 && size_t(k.op_index) < op_types.size();
    const std::string type = known ? op_types[size_t(k.op_index)] : "(framework)";
    KernelGroup& g = groups[{type, int(k.cls), int(k.variant), int(k.dtype), k.m, k.n, k.k, k.batch, k.flops, k.bytes}];
    if (g.count == 0) {
      g.op_type = type;
      g.shape = k;
    }
    g.count += 1;
    g.launched += i < p.kernel_nodes.size() ? p.kernel_nodes[i] : 1;
    g.us_total += kt[i];
  }
  std::vector<KernelGroup> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) {
    g.us_each = g.us_total / g.count;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelGroup& a, const KernelGroup& b) { return a.us_total > b.us_total; });
  return out;
}

}  // namespace ftax
