// SYNTHETIC measurement files for the calibration tests: rows generated from KNOWN parameters
// through the predictor's own KernelTimeUs, with multiplicative log-normal noise, so a fit can
// be checked against the truth. Nothing here is a measurement of real hardware; every file
// made from it says so in host.synthetic and host.gpu.
//
//   SyntheticSpec spec = H200LikeSpec();
//   nlohmann::json j = MakeSyntheticMeasurements(spec);   // a valid measurement file
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predictor/kernel_cost.h"

namespace ftax::testing {

struct SyntheticKernelClass {
  KernelClass cls;
  DType dtype;
  KernelTheta theta;
  int tile_m = 128, tile_n = 128;
};

struct SyntheticFramework {
  Framework framework;
  double call_us = 0;
  double dispatch_us[kNumDispatchClasses] = {0, 0, 0};
  double module_us = 0;     // pytorch-eager rows get modules as well
  double kernel_us = 1.5;   // per-op GPU kernel time of the tiny ops
  double node_gap_us = 0;   // cuda-graph: GPU gap between nodes
  double replay_per_node_us = 0;  // cuda-graph: host launch cost per node
};

struct SyntheticSpec {
  std::string name = "synthetic";
  int num_sms = 132;
  double noise_sigma = 0.03;  // log-normal sigma of every time
  uint64_t seed = 7;
  std::vector<SyntheticKernelClass> classes;
  std::vector<SyntheticFramework> frameworks;
  double kernel_gap_us = -1;  // >= 0: add GPU-bound libtorch-eager rows with this gap
};

// Parameters in the range of an H200 (validation/h200/), for realism only; the tests check recovery.
inline SyntheticSpec H200LikeSpec() {
  SyntheticSpec s;
  s.name = "synthetic-h200like";
  s.classes = {
      {KernelClass::kGemm, DType::kFloat16, {4.0, 650.0, 4200.0}, 128, 128},
      {KernelClass::kGemm, DType::kFloat32, {5.0, 48.0, 4000.0}, 128, 64},
      {KernelClass::kElementwise, DType::kFloat16, {2.2, 0, 3600.0}},
      {KernelClass::kReduction, DType::kFloat16, {3.0, 0, 2800.0}},
  };
  SyntheticFramework eager{Framework::kLibtorchEager, 12.0, {0.8, 4.5, 7.0}, 0, 1.5, 0};
  SyntheticFramework python{Framework::kPytorchEager, 40.0, {3.0, 9.0, 14.0}, 6.0, 1.5, 0};
  SyntheticFramework graph{Framework::kCudaGraph, 9.0, {0, 0, 0}, 0, 1.5, 0.9};
  s.frameworks = {eager, python, graph};
  return s;
}

class SyntheticNoise {
 public:
  SyntheticNoise(uint64_t seed, double sigma) : rng_(seed), sigma_(sigma) {}
  // exp(sigma * z), z standard normal by Box-Muller on the raw engine output (the standard
  // leaves std::normal_distribution's algorithm open; this repeats across platforms).
  double Factor() {
    const double u1 = (double(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (double(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::exp(sigma_ * z);
  }
  uint64_t Next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
  double sigma_;
};

inline nlohmann::json Spread(double median) {
  return {{"median", median}, {"p10", median * 0.98}, {"p90", median * 1.03}};
}

// Work of the rows of one class: GEMM shapes (transformer and square-ish), elementwise and
// reduction sizes from 4 KiB to 400 MB.
inline std::vector<KernelWork> SyntheticWorks(const SyntheticKernelClass& c) {
  std::vector<KernelWork> works;
  const double size = DTypeSize(c.dtype);
  if (IsComputeClass(c.cls)) {
    const int64_t ms[] = {1, 8, 32, 100, 128, 200, 384, 512, 1000, 2048, 4096};
    // The last two are LM-head projections: at small m their bytes outweigh the (tile-padded)
    // FLOPs, so the memory term binds and the bandwidth is determined.
    const int64_t nks[][2] = {{768, 768},   {3072, 768},   {768, 3072},
                              {1024, 1024}, {4096, 4096}, {50304, 768}, {32000, 4096}};
    for (int64_t m : ms)
      for (const auto& nk : nks) {
        KernelWork w;
        w.cls = c.cls;
        w.dtype = c.dtype;
        w.m = m;
        w.n = nk[0];
        w.k = nk[1];
        w.batch = 1;
        w.flops = 2.0 * m * w.n * w.k;
        w.bytes = size * double(m * w.k + w.k * w.n + m * w.n);
        works.push_back(w);
      }
  } else {
    for (int e = 0; e <= 24; ++e) {
      const double numel = 1024.0 * std::pow(2.0, e * 0.7);
      KernelWork w;
      w.cls = c.cls;
      w.dtype = c.dtype;
      w.flops = numel;
      w.bytes = (c.cls == KernelClass::kReduction ? 2 : 3) * numel * size;
      works.push_back(w);
    }
  }
  return works;
}

inline std::string Label(const KernelWork& w) {
  std::string s = std::string(KernelClassName(w.cls)) + " " + DTypeName(w.dtype);
  if (w.m > 0)
    s += " " + std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k);
  else
    s += " " + std::to_string(int64_t(w.bytes)) + "B";
  return s;
}

inline nlohmann::json MakeSyntheticMeasurements(const SyntheticSpec& spec) {
  using json = nlohmann::json;
  SyntheticNoise noise(spec.seed, spec.noise_sigma);
  json j;
  j["schema_version"] = 1;
  j["kind"] = "ftax-measurements";
  j["host"] = {{"gpu", "SYNTHETIC (" + spec.name + ", generated by tests/calibrate)"},
               {"sm_count", spec.num_sms},
               {"synthetic", true}};
  json kernels = json::array();
  for (const SyntheticKernelClass& c : spec.classes) {
    std::vector<KernelWork> works = SyntheticWorks(c);
    for (size_t i = 0; i < works.size(); ++i) {
      const KernelWork& w = works[i];
      // Every fourth non-GEMM row is a call of two kernels (e.g. a two-pass reduction).
      const int kpc = (!IsComputeClass(c.cls) && i % 4 == 3) ? 2 : 1;
      KernelWork per = w;
      per.flops /= kpc;
      per.bytes /= kpc;
      const double t =
          kpc * KernelTimeUs(per, c.theta, c.tile_m, c.tile_n, spec.num_sms) * noise.Factor();
      json row = {{"class", KernelClassName(c.cls)}, {"dtype", DTypeName(c.dtype)},
                  {"label", Label(w)},               {"flops", w.flops},
                  {"bytes", w.bytes},                {"kernels_per_call", kpc},
                  {"kernel_us", Spread(t)}};
      if (w.m > 0) {
        row["m"] = w.m;
        row["n"] = w.n;
        row["k"] = w.k;
        row["batch"] = w.batch;
      }
      kernels.push_back(row);
    }
  }
  j["kernels"] = kernels;

  json dispatch = json::array();
  const int ns[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  for (const SyntheticFramework& f : spec.frameworks) {
    for (int c = 0; c < kNumDispatchClasses; ++c) {
      const DispatchClass cls = DispatchClass(c);
      if (f.framework == Framework::kCudaGraph && cls != DispatchClass::kKernel) continue;
      for (int n : ns) {
        // Python eager: half the chains run inside n/2 nn.Module calls, half without modules.
        for (int with_modules = 0; with_modules < (f.module_us > 0 ? 2 : 1); ++with_modules) {
          const int modules = with_modules ? std::max(1, n / 2) : 0;
          json row = {{"framework", FrameworkName(f.framework)},
                      {"class", DispatchClassName(cls)},
                      {"n_ops", n},
                      {"modules", modules}};
          const double k_op = cls == DispatchClass::kView ? 0 : f.kernel_us;
          double call = 0, span = 0;
          if (f.framework == Framework::kCudaGraph) {
            // As the predictor prices a replay: call + kernels + one gap per node.
            span = n * k_op + (n - 1) * f.node_gap_us;
            call = f.call_us + n * f.replay_per_node_us + n * k_op + n * f.node_gap_us;
          } else {
            const double d = f.dispatch_us[c];
            call = f.call_us + n * d + modules * f.module_us;
            span = k_op > 0 ? n * k_op + (n - 1) * std::max(d - k_op, 0.0) : 0;
          }
          row["call_us"] = Spread(call * noise.Factor());
          if (k_op > 0) {
            const double kernel = n * k_op * noise.Factor();
            row["gpu_kernel_us"] = kernel;
            row["gpu_span_us"] = std::max(kernel, span * noise.Factor());
          }
          dispatch.push_back(row);
        }
      }
    }
  }
  // GPU-bound libtorch-eager chains (kernels much longer than the dispatch cost), where the
  // GPU's own gap between kernels shows.
  if (spec.kernel_gap_us >= 0) {
    for (const SyntheticFramework& f : spec.frameworks) {
      if (f.framework != Framework::kLibtorchEager) continue;
      const double k_op = 40.0;  // µs per kernel, far above 4.5 µs dispatch
      for (int n : {4, 8, 16, 32, 64}) {
        const double kernel = n * k_op * noise.Factor();
        const double span = kernel + (n - 1) * spec.kernel_gap_us * noise.Factor();
        json row = {{"framework", "libtorch-eager"}, {"class", "kernel"},
                    {"n_ops", n},                    {"modules", 0},
                    {"call_us", Spread(f.call_us + f.dispatch_us[1] + span)},
                    {"gpu_kernel_us", kernel},       {"gpu_span_us", span}};
        dispatch.push_back(row);
      }
    }
  }
  j["dispatch"] = dispatch;
  j["failures"] = json::array();
  return j;
}

}  // namespace ftax::testing
