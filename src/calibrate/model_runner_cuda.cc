#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "calibrate/host_probe.h"
#include "calibrate/kernel_tracer.h"
#include "calibrate/measurement_rounds.h"
#include "calibrate/result_writer.h"
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

// Repetitions of one visit at most; the visit's budget bounds them first.
constexpr int kMaxRepsPerVisit = 400;

struct Timed {
  std::vector<double> host_ms, event_ms;
};

// Times fn after `warmup` iterations: one untimed-for-the-sample iteration sizes the run
// (RepsPerVisit), then each repetition is timed on the host with a device synchronize and by
// CUDA events around it.
template <class F>
Timed TimeIters(F fn, double budget_s, int rounds, int warmup) {
  // Warm-up: `warmup` iterations and at least 50 ms of them, so that the GPU's clocks have
  // risen from idle before the first timed one (short graphs otherwise time a cold GPU).
  const auto w0 = Clock::now();
  for (int i = 0; i < warmup || (i < 2000 && Clock::now() - w0 < std::chrono::milliseconds(50)); ++i) {
    fn();
    cudaDeviceSynchronize();
  }
  auto t0 = Clock::now();
  fn();
  cudaDeviceSynchronize();
  double one = std::chrono::duration<double>(Clock::now() - t0).count();
  int reps = RepsPerVisit(budget_s, one, rounds, 10, kMaxRepsPerVisit);
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

// CUPTI kernels of `iters` iterations, in a traced pass after the timed ones, each followed by a device synchronize: per kernel name
// its count and time per iteration; the totals; and the median GPU span of one iteration (first
// kernel start to last kernel end), whose excess over the kernel time is the GPU's idle time
// between kernels.
// kernel_ms is the time at least one kernel ran (BusyUs: overlapping kernels counted once),
// sum_ms their summed durations.
template <class F>
json KernelsOf(F fn, int iters, double* kernel_ms, double* per_iter, double* span_ms, double* sum_ms) {
  KernelTracer::Scope tracing;  // CUPTI on for this pass only, detached at its end
  if (!tracing.status().ok()) throw std::runtime_error(tracing.status().message());
  KernelTracer::Collect();
  std::vector<KernelRecord> rec;
  std::vector<double> spans;
  double busy_us = 0;
  for (int i = 0; i < iters; ++i) {
    fn();
    cudaDeviceSynchronize();
    std::vector<KernelRecord> one = KernelTracer::Collect();
    const KernelSummary sum = SummarizeKernels(one, 1);
    spans.push_back(sum.span_us_per_call / 1e3);
    busy_us += sum.busy_us_per_call;
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
  *sum_ms = total / iters / 1e3;
  *kernel_ms = busy_us / iters / 1e3;
  *per_iter = double(rec.size()) / iters;
  *span_ms = Percentile(spans, 0.5);
  json k = json::object();
  for (const auto& [n, v] : by_name) k[n] = {v.first, v.second};
  return k;
}


// The op a failed CUDA-graph capture stopped at, from the TorchScript interpreter's message:
// its serialized-code traceback marks the failing call with "<--- HERE" under its line.
std::string BlockingOp(const std::string& what) {
  const size_t here = what.find("<--- HERE");
  if (here == std::string::npos) return "";
  const size_t marker_start = what.rfind('\n', here);
  if (marker_start == std::string::npos || marker_start == 0) return "";
  const size_t line_start = what.rfind('\n', marker_start - 1);
  std::string line = what.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                 marker_start - (line_start == std::string::npos ? 0 : line_start + 1));
  const size_t b = line.find_first_not_of(" \t");
  return b == std::string::npos ? "" : line.substr(b, 240);
}

void WriteLine(std::ofstream& out, const json& line) {
  out << line.dump() << "\n";
  out.flush();
}

}  // namespace

Status RunWorkerVisits(const WorkerRequest& req, const std::string& result_path, const ProgressFn& progress) {
  std::ofstream out(result_path, std::ios::app);
  if (!out) return NotFound("cannot write '" + result_path + "'");
  if (!torch::cuda::is_available()) {
    WriteLine(out, {{"load_error", "no CUDA device is visible to LibTorch"}});
    return Unsupported("no CUDA device is visible to LibTorch");
  }
  const RunOptions& o = req.model;
  std::optional<torch::jit::Module> loaded;
  try {
    loaded = torch::jit::load(o.model_path, at::Device(at::kCUDA, o.device));
  } catch (const std::exception& e) {
    const std::string msg = "cannot load TorchScript model '" + o.model_path + "': " + std::string(e.what()).substr(0, 400);
    WriteLine(out, {{"load_error", msg}});
    return InvalidInput(msg);
  }
  torch::jit::Module& module = *loaded;
  module.eval();
  torch::NoGradGuard no_grad;
  const at::Device dev(at::kCUDA, o.device);
  const at::Tensor probe = at::randn({8, 8}, at::TensorOptions().device(dev));
  const int rounds = std::max(1, req.rounds);
  const double budget = o.budget_s / rounds;
  for (size_t k = 0; k < req.visits.size(); ++k) {
    const VisitRequest& v = req.visits[k];
    json line = {{"visit", k}, {"point", v.point}};
    bool capturing = false;
    try {
      std::vector<c10::IValue> in = MakeInputs(o, v.batch, dev);
      if (req.probe) line["probe_us"] = HostProbeUs(probe);
      Timed t;
      double kernel_ms = 0, per_iter = 0, span_ms = 0, sum_ms = 0;
      json kernels;
      if (v.framework == Framework::kTorchscript) {
        auto fn = [&] { module.forward(in); };
        t = TimeIters(fn, budget, rounds, v.warmup);
        if (v.record_kernels) kernels = KernelsOf(fn, 3, &kernel_ms, &per_iter, &span_ms, &sum_ms);
      } else if (v.framework == Framework::kCudaGraph) {
        for (int i = 0; i < v.warmup; ++i) module.forward(in);  // profiling runs before capture
        cudaDeviceSynchronize();
        auto graph = std::make_unique<at::cuda::CUDAGraph>();
        auto stream = c10::cuda::getStreamFromPool();
        {
          c10::cuda::CUDAStreamGuard guard(stream);
          module.forward(in);  // warm up on the capture stream
          stream.synchronize();
          capturing = true;
          graph->capture_begin();
          module.forward(in);
          graph->capture_end();
          capturing = false;
        }
        cudaDeviceSynchronize();
        auto fn = [&] { graph->replay(); };
        t = TimeIters(fn, budget, rounds, v.warmup);
        if (v.record_kernels) kernels = KernelsOf(fn, 3, &kernel_ms, &per_iter, &span_ms, &sum_ms);
      } else {
        throw std::runtime_error("a TorchScript file can be run as torchscript or cuda-graph only");
      }
      line["host_ms"] = t.host_ms;
      line["event_ms"] = t.event_ms;
      if (v.record_kernels) {
        line["kernels_per_iter"] = per_iter;
        line["kernel_ms"] = kernel_ms;
        line["kernel_sum_ms"] = sum_ms;
        line["gpu_span_ms"] = span_ms;
        line["kernels"] = kernels;
      }
      WriteLine(out, line);
      const json lat = SpreadJson(t.host_ms);
      char msg[320];
      std::snprintf(msg, sizeof(msg), "%s %s b%lld: %.3f ms [%.3f, %.3f]%s", FrameworkName(v.framework),
                    o.model_name.c_str(), (long long)v.batch, lat["median"].get<double>(),
                    lat["p10"].get<double>(), lat["p90"].get<double>(),
                    v.record_kernels ? (" kernels " + std::to_string(std::lround(per_iter))).c_str() : "");
      progress(msg);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      line["error"] = (capturing ? "CUDA-graph capture failed: " : "") + what.substr(0, 300);
      line["error_detail"] = what.substr(0, 4000);
      const std::string op = capturing ? BlockingOp(what) : "";
      if (!op.empty()) line["blocking_op"] = op;
      WriteLine(out, line);
      progress("failed: " + std::string(FrameworkName(v.framework)) + " " + o.model_name + " b" +
               std::to_string(v.batch) + ": " + line["error"].get<std::string>().substr(0, 200) +
               (op.empty() ? "" : " (at: " + op + ")"));
      // The process's CUDA state may be unusable after a failure (a capture left open):
      // the launching process starts a fresh worker for the visits that remain.
      return Internal("visit failed");
    }
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
  return Status::Ok();
}

}  // namespace ftax
