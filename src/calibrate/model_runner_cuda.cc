#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "calibrate/kernel_tracer.h"
#include "calibrate/measurement_rounds.h"
#include "common/percentile.h"
#include "calibrate/model_runner.h"

namespace ftax {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

at::ScalarType ScalarOf(const std::string& d) {
  if (d == "int64" || d == "long") return at::kLong;
  if (d == "int32" || d == "int") return at::kInt;
  if (d == "float16" || d == "half" || d == "fp16") return at::kHalf;
  if (d == "bfloat16" || d == "bf16") return at::kBFloat16;
  if (d == "bool") return at::kBool;
  return at::kFloat;
}

// The inputs as rows record them, so that the comparison can walk the same file.
json InputsJson(const RunOptions& o) {
  json a = json::array();
  for (const ModelInput& mi : o.inputs) a.push_back({{"shape", mi.shape}, {"dtype", mi.dtype}});
  return a;
}

std::vector<c10::IValue> MakeInputs(const RunOptions& o, int64_t batch, const at::Device& dev) {
  std::vector<c10::IValue> in;
  bool first_int = true;
  for (const ModelInput& mi : o.inputs) {
    std::vector<int64_t> shape = mi.shape;
    if (!shape.empty()) shape[0] = batch;
    at::ScalarType t = ScalarOf(mi.dtype);
    at::TensorOptions opt = at::TensorOptions().device(dev).dtype(t);
    if (t == at::kLong || t == at::kInt) {
      // Token ids first (random), masks after (all ones), as the export script made them.
      in.emplace_back(first_int ? at::randint(0, 1000, shape, opt) : at::ones(shape, opt));
      first_int = false;
    } else {
      in.emplace_back(at::randn(shape, opt));
    }
  }
  return in;
}

struct Timed {
  std::vector<double> host_ms, event_ms;
};

// Times fn after `warmup` iterations: one untimed-for-the-sample iteration sizes the run
// (RepsPerVisit), then each repetition is timed on the host with a device synchronize and by
// CUDA events around it.
template <class F>
Timed TimeIters(F fn, double budget_s, int rounds, int warmup) {
  for (int i = 0; i < warmup; ++i) fn();
  cudaDeviceSynchronize();
  auto t0 = Clock::now();
  fn();
  cudaDeviceSynchronize();
  double one = std::chrono::duration<double>(Clock::now() - t0).count();
  int reps = RepsPerVisit(budget_s, one, rounds);
  Timed t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto stream = c10::cuda::getCurrentCUDAStream().stream();
  for (int i = 0; i < reps; ++i) {
    auto h0 = Clock::now();
    cudaEventRecord(a, stream);
    fn();
    cudaEventRecord(b, stream);
    cudaDeviceSynchronize();
    t.host_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - h0).count());
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.event_ms.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t;
}

// How fast the host's CPU side is right now: LibTorch's time per op of the bench's 64-op
// kernel chain (`x = x + 1` on an 8x8 CUDA tensor, each op one tiny kernel, so the host is
// the bound; `ftax bench`'s libtorch-eager "kernel" row of 64 ops times the same), the
// median of five chains (three, on loan o, let a blip of the host through now and then), in
// microseconds per op.
double HostProbeUs(const at::Tensor& x0) {
  std::vector<double> per_op;
  for (int rep = 0; rep < 5; ++rep) {
    cudaDeviceSynchronize();
    auto t0 = Clock::now();
    at::Tensor x = x0;
    for (int i = 0; i < 64; ++i) x = at::add(x, 1.0);
    cudaDeviceSynchronize();
    per_op.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 64);
  }
  return Percentile(per_op, 0.5);
}

// CUPTI kernels of `iters` iterations, each followed by a device synchronize: per kernel name
// its count and time per iteration; the totals; and the median GPU span of one iteration (first
// kernel start to last kernel end), whose excess over the kernel time is the GPU's idle time
// between kernels.
template <class F>
json KernelsOf(F fn, int iters, double* kernel_ms, double* per_iter, double* span_ms) {
  KernelTracer::Collect();
  std::vector<KernelRecord> rec;
  std::vector<double> spans;
  for (int i = 0; i < iters; ++i) {
    fn();
    cudaDeviceSynchronize();
    std::vector<KernelRecord> one = KernelTracer::Collect();
    spans.push_back(SummarizeKernels(one, 1).span_us_per_call / 1e3);
    rec.insert(rec.end(), one.begin(), one.end());
  }
  std::map<std::string, std::pair<double, double>> by_name;
  double total = 0;
  for (const auto& r : rec) {
    auto& e = by_name[r.name.substr(0, 160)];
    e.first += 1.0 / iters;
    e.second += r.duration_us() / iters;
    total += r.duration_us();
  }
  *kernel_ms = total / iters / 1e3;
  *per_iter = double(rec.size()) / iters;
  *span_ms = Percentile(spans, 0.5);
  json k = json::object();
  for (const auto& [n, v] : by_name) k[n] = {v.first, v.second};
  return k;
}

}  // namespace

Status MeasureModels(const std::vector<RunOptions>& models, const RoundOptions& ro,
                     const ProgressFn& progress, ResultWriter* out) {
  if (!torch::cuda::is_available()) return Unsupported("no CUDA device is visible to LibTorch");
  if (models.empty()) return InvalidInput("no model to measure");
  const int rounds = std::max(1, ro.rounds);
  std::vector<torch::jit::Module> modules;
  for (const RunOptions& o : models) {
    try {
      modules.push_back(torch::jit::load(o.model_path, at::Device(at::kCUDA, o.device)));
    } catch (const std::exception& e) {
      return InvalidInput("cannot load TorchScript model '" + o.model_path + "': " +
                          std::string(e.what()).substr(0, 400));
    }
    modules.back().eval();
  }
  Status s = KernelTracer::Start();
  if (!s.ok()) return s;
  torch::NoGradGuard no_grad;
  const at::Tensor probe = at::randn({8, 8}, at::TensorOptions().device(at::kCUDA, models[0].device));

  struct Where {
    size_t model;
    Framework framework;
    int64_t batch;
  };
  std::vector<Where> where;
  std::vector<RoundedPoint> points;
  for (size_t m = 0; m < models.size(); ++m) {
    const RunOptions& o = models[m];
    for (Framework f : o.frameworks) {
      if (f != Framework::kTorchscript && f != Framework::kCudaGraph) {
        out->Append("failures", {{"model", o.model_name}, {"framework", FrameworkName(f)},
                                 {"error", "a TorchScript file can be run as torchscript or cuda-graph only"}});
        continue;
      }
      for (int64_t b : o.batches) {
        RoundedPoint p;
        p.row = {{"model", o.model_name}, {"arch", o.arch}, {"framework", FrameworkName(f)},
                 {"precision", o.precision}, {"batch", b},
                 {"seq", o.seq > 0 ? json(o.seq) : json(nullptr)}, {"source", o.model_path},
                 {"inputs", InputsJson(o)}};
        if (rounds > 1) p.row["rounds"] = rounds;
        points.push_back(std::move(p));
        where.push_back({m, f, b});
      }
    }
  }

  int64_t visits = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i : VisitOrder(points.size(), r, rounds, ro.seed)) {
      RoundedPoint& p = points[i];
      if (p.failed) continue;
      const RunOptions& o = models[where[i].model];
      torch::jit::Module& module = modules[where[i].model];
      const Framework f = where[i].framework;
      const int64_t b = where[i].batch;
      const bool first = p.visit_medians_ms.empty();
      const int warmup = first ? 5 : 2;
      const double budget = o.budget_s / rounds;
      try {
        at::Device dev(at::kCUDA, o.device);
        std::vector<c10::IValue> in = MakeInputs(o, b, dev);
        const double probe_us = rounds > 1 ? HostProbeUs(probe) : -1;
        Timed t;
        double kernel_ms = 0, per_iter = 0, span_ms = 0;
        json kernels;
        if (f == Framework::kTorchscript) {
          auto fn = [&] { module.forward(in); };
          t = TimeIters(fn, budget, rounds, warmup);
          if (first) kernels = KernelsOf(fn, 3, &kernel_ms, &per_iter, &span_ms);
        } else {
          for (int k = 0; k < warmup; ++k) module.forward(in);  // profiling runs before capture
          cudaDeviceSynchronize();
          auto graph = std::make_unique<at::cuda::CUDAGraph>();
          auto stream = c10::cuda::getStreamFromPool();
          {
            c10::cuda::CUDAStreamGuard guard(stream);
            module.forward(in);
            stream.synchronize();
            graph->capture_begin();
            module.forward(in);
            graph->capture_end();
          }
          cudaDeviceSynchronize();
          auto fn = [&] { graph->replay(); };
          t = TimeIters(fn, budget, rounds, warmup);
          if (first) kernels = KernelsOf(fn, 3, &kernel_ms, &per_iter, &span_ms);
          graph.reset();
        }
        if (first) {  // kernels are recorded once per point, on its first visit
          p.row["kernels_per_iter"] = per_iter;
          p.row["kernel_ms"] = kernel_ms;
          p.row["gpu_span_ms"] = span_ms;
          p.row["kernels"] = kernels;
        }
        AddVisit(t.host_ms, t.event_ms, &p, probe_us, rounds > 1 ? visits++ : -1);
        const json lat = SpreadJson(t.host_ms);
        const std::string round_tag =
            rounds > 1 ? "round " + std::to_string(r + 1) + "/" + std::to_string(rounds) + " " : "";
        char line[320];
        std::snprintf(line, sizeof(line), "%s%s %s b%lld: %.3f ms [%.3f, %.3f] kernels %.0f kernel %.3f ms",
                      round_tag.c_str(), FrameworkName(f), o.model_name.c_str(), (long long)b, lat["median"].get<double>(),
                      lat["p10"].get<double>(), lat["p90"].get<double>(),
                      p.row["kernels_per_iter"].get<double>(), p.row["kernel_ms"].get<double>());
        progress(line);
      } catch (const std::exception& e) {
        p.failed = true;
        json row = p.row;
        row["error"] = std::string(e.what()).substr(0, 300);
        out->Append("failures", row);
        progress(std::string("failed: ") + FrameworkName(f) + " " + o.model_name + " b" +
                 std::to_string(b) + ": " + std::string(e.what()).substr(0, 200));
      }
      c10::cuda::CUDACachingAllocator::emptyCache();
      if (rounds == 1) out->Set("rows", PooledRows(points));
    }
    if (rounds > 1) {
      out->Set("rows", PooledRows(points));
      progress("round " + std::to_string(r + 1) + "/" + std::to_string(rounds) + " written");
    }
  }
  return Status::Ok();
}

}  // namespace ftax
