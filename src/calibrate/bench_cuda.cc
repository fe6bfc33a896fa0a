// RunBench on a CUDA host: LibTorch microbenchmarks. Kernel sweeps are timed from CUPTI
// records; dispatch chains by the host clock with CUPTI detached, their kernel records taken
// in a pass of their own.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "calibrate/bench.h"
#include "calibrate/helper_scripts.h"
#include "calibrate/host_identity.h"
#include "calibrate/host_probe.h"
#include "calibrate/kernel_tracer.h"
#include "calibrate/layer_shapes.h"
#include "calibrate/python_bench_sections.h"
#include "common/percentile.h"
#include "common/progress.h"
#include "common/process.h"
#include "calibrate/result_writer.h"
#include "calibrate/run_resume.h"
#include "graph/graph.h"

namespace ftax {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

at::ScalarType ToScalar(const std::string& d) {
  if (d == "fp16") return at::kHalf;
  if (d == "bf16") return at::kBFloat16;
  return at::kFloat;
}

int ElemSize(const std::string& d) { return d == "fp32" ? 4 : 2; }

struct KernelTiming {
  std::vector<double> per_call_us;  // the sum of each call's kernels
  std::vector<double> largest_us;   // the longest kernel of each call
  double kernels_per_call = 0;
  std::string first_kernel;    // the first kernel of the first call
  std::string largest_kernel;  // the longest kernel of the first call
};

// Runs `fn` warmup + reps times and returns per-call kernel time from CUPTI records: the time
// at least one of each call's kernels ran (BusyUs: their durations, an overlap counted once)
// and the longest of them, from the same records.
template <class F>
KernelTiming TimeKernels(F fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  KernelTracer::Collect();
  for (int i = 0; i < reps; ++i) fn();
  std::vector<KernelRecord> rec = KernelTracer::Collect();
  KernelTiming t;
  t.kernels_per_call = double(rec.size()) / reps;
  if (rec.empty()) return t;
  t.first_kernel = rec.front().name;
  const size_t per = rec.size() / size_t(reps);
  if (per > 0 && rec.size() % size_t(reps) == 0) {
    for (int r = 0; r < reps; ++r) {
      double top = 0;
      for (size_t i = 0; i < per; ++i) {
        const KernelRecord& k = rec[size_t(r) * per + i];
        const double d = k.duration_us();
        if (r == 0 && d > top) t.largest_kernel = k.name;
        top = std::max(top, d);
      }
      // The call's GPU time: its kernels' durations, an overlap counted once (BusyUs).
      t.per_call_us.push_back(BusyUs(std::vector<KernelRecord>(rec.begin() + long(size_t(r) * per),
                                                                rec.begin() + long(size_t(r + 1) * per))));
      t.largest_us.push_back(top);
    }
  } else {  // calls launched unequal numbers of kernels: only averages are known
    double sum = 0, top = 0;
    for (const auto& k : rec) {
      if (k.duration_us() > top) t.largest_kernel = k.name;
      sum += k.duration_us();
      top = std::max(top, k.duration_us());
    }
    t.per_call_us.assign(reps, sum / reps);
    t.largest_us.assign(reps, top);
  }
  return t;
}

// Host time of `fn` followed by a device synchronize, per call.
template <class F>
std::vector<double> TimeCalls(F fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) {
    fn();
    cudaDeviceSynchronize();
  }
  std::vector<double> us;
  us.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    fn();
    cudaDeviceSynchronize();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return us;
}

class Bench {
  int64_t l2_bytes_ = -1;  // L2 cache size, read on first use

 public:
  Bench(const BenchOptions& o, const LayerShapes& layers, const ProgressFn& p, ResultWriter* w)
      : opt_(o), layers_(layers), progress_(p), out_(w), dev_(at::kCUDA, o.device) {
    for (const char* list : {"kernels", "dispatch", "launches"})
      for (const std::string& k : RowKeys(w->doc(), list)) done_.insert(k);
  }

  // Counts the points a run will measure (rows of the file being resumed excluded) by walking
  // the sweeps with tensors on the meta device and timing nothing; then each finished point
  // advances a "[k of N] ..., 40 s left" line. `extra` points are measured outside this class
  // (the Python-eager chains, one point).
  void Plan(bool kernels, size_t extra) {
    planning_ = true;
    planned_ = 0;
    if (kernels) RunKernels();
    RunDispatch();
    planning_ = false;
    meter_ = std::make_unique<Progress>(planned_ + extra);
    last_line_ = Clock::now();
    progress_("measuring " + std::to_string(planned_ + extra) + " points");
  }
  // One point measured outside this class finished.
  void PointDone(const std::string& label) { Tick(label, /*force=*/true); }

  Status RunKernels() {
    for (const std::string& d : opt_.dtypes) {
      if (Want("gemm")) Gemms(d);
      if (Want("conv") || Want("depthwise")) Convs(d);
      if (Want("conv") || Want("depthwise") || Want("reduction") || Want("norm")) Layers(d);
      if (Want("attention") || Want("attention_masked")) Attention(d);
      if (Want("elementwise")) Elementwise(d);
      if (Want("reduction") || Want("norm")) Reductions(d);
      if (Want("norm")) BatchNorms(d);
      if (Want("copy")) Copies(d);
      if (Want("gather")) Gathers(d);
    }
    return Status::Ok();
  }

  Status RunDispatch() {
    Launches();
    for (Framework f : opt_.frameworks) {
      if (IsPythonEager(f) || IsTorchCompile(f)) continue;  // driven through python3, see RunBench
      DispatchChains(f);
      if (f == Framework::kCudaGraph) GraphGapChains();
    }
    return Status::Ok();
  }

 private:
  // Stage messages, silent while planning.
  void Say(const std::string& line) {
    if (!planning_) progress_(line);
  }

  // A point finished (measured or failed): a progress line every few seconds, and at stage ends.
  void Tick(const std::string& label, bool force = false) {
    if (planning_ || !meter_) return;
    const std::string line = meter_->Tick(label);
    const auto now = Clock::now();
    if (force || meter_->finished() == meter_->total() ||
        std::chrono::duration<double>(now - last_line_).count() >= 5.0) {
      progress_(line);
      last_line_ = now;
    }
  }

  // While planning, a point is counted instead of measured: true means "skip the work".
  bool Counted() {
    if (!planning_) return false;
    ++planned_;
    return true;
  }

  bool Want(const std::string& c) const {
    return opt_.classes.empty() ||
           std::find(opt_.classes.begin(), opt_.classes.end(), c) != opt_.classes.end();
  }
  int Reps() const { return opt_.quick ? 8 : 20; }

  // True when the file being resumed already holds this row (fields that identify it only).
  bool Done(const std::string& list, const json& id) const {
    return !done_.empty() && done_.count(RowKey(list, id)) > 0;
  }

  void Fail(const std::string& what, const std::string& err) {
    if (planning_) return;
    Say("  failed: " + what + ": " + err);
    out_->Append("failures", {{"what", what}, {"error", err.substr(0, 300)}});
    c10::cuda::CUDACachingAllocator::emptyCache();
  }

  // Inference batch norm at ResNet-50's shapes (channels and sizes after each convolution)
  // for 1, 8, 32 and 128 images. ATen runs it as one cuDNN kernel in fp32 and as its own transform
  // kernel after two small ones over the channel statistics in half precision; the lowering
  // counts those two apart, so a row times the transform kernel alone (the largest of the
  // call) and says so ("main_kernel_only"); all kernels' time is kept beside it.
  void BatchNorms(const std::string& d) {
    Say("batch norm " + d);
    const std::vector<std::pair<int64_t, int64_t>> shapes = {
        {64, 112}, {64, 56}, {256, 56}, {128, 56}, {128, 28}, {512, 28},
        {256, 28}, {256, 14}, {1024, 14}, {512, 14}, {512, 7}, {2048, 7}};
    const double es = ElemSize(d);
    for (int64_t n : {1, 8, 32, 128}) {
      for (auto [c, hw] : shapes) {
        const std::string label = "batch_norm n" + std::to_string(n) + " " + std::to_string(c) +
                                  "x" + std::to_string(hw) + "x" + std::to_string(hw);
        if (Done("kernels", {{"class", "norm"}, {"dtype", d}, {"variant", "batch_norm"}, {"label", label}}))
          continue;
        if (Counted()) continue;
        try {
          at::Tensor x = at::randn({n, c, hw, hw}, Opts(d));
          at::Tensor g = at::ones({c}, Opts(d)), b = at::zeros({c}, Opts(d));
          at::Tensor rm = at::zeros({c}, Opts(d)), rv = at::ones({c}, Opts(d));
          auto fn = [&] { at::batch_norm(x, g, b, rm, rv, false, 0.1, 1e-5, true); };
          KernelTiming t = TimeKernels(fn, 3, Reps());
          if (t.per_call_us.empty()) {
            Fail(label, "no kernel records (is CUPTI working?)");
            continue;
          }
          const double numel = double(n * c * hw * hw);
          json row = {{"class", "norm"}, {"dtype", d}, {"label", label}, {"variant", "batch_norm"},
                      {"flops", 5.0 * numel}, {"bytes", (2.0 * numel + 4.0 * double(c)) * es},
                      {"kernels_per_call", 1}, {"main_kernel_only", true},
                      {"kernels_launched", std::lround(t.kernels_per_call)},
                      {"kernel_us", SpreadJson(t.largest_us)},
                      {"all_kernels_us", SpreadJson(t.per_call_us)},
                      {"kernel_name", t.largest_kernel.substr(0, 120)}};
          out_->Append("kernels", row);
          ++rows_;
        } catch (const std::exception& e) {
          Fail(label, e.what());
        }
        Tick(label);
      }
    }
  }

  // Measures `fn` and appends one kernel row with the given work description.
  template <class F>
  void KernelRow(const std::string& cls, const std::string& dtype, const std::string& label,
                 json work, F fn) {
    if (Done("kernels", {{"class", cls}, {"dtype", dtype}, {"variant", work.value("variant", json(nullptr))},
                         {"label", label}}))
      return;
    if (Counted()) return;
    try {
      KernelTiming t = TimeKernels(fn, 3, Reps());
      if (t.kernels_per_call <= 0) {
        Fail(label, "no kernel records (is CUPTI working?)");
        Tick(label);
        return;
      }
      json row = work;
      row["class"] = cls;
      row["dtype"] = dtype;
      row["label"] = label;
      row["kernels_per_call"] = std::lround(t.kernels_per_call);
      row["kernel_us"] = SpreadJson(t.per_call_us);
      row["kernel_name"] = t.first_kernel.substr(0, 120);
      out_->Append("kernels", row);
      ++rows_;
    } catch (const std::exception& e) {
      Fail(label, e.what());
    }
    Tick(label);
  }

  // Where sweep tensors live: the GPU, or the meta device (sizes only) while planning.
  at::Device Dev() const { return planning_ ? at::Device(at::kMeta) : dev_; }
  at::TensorOptions Opts(const std::string& d) const {
    return at::TensorOptions().device(Dev()).dtype(ToScalar(d));
  }

  // fp32 GEMMs above this many multiply-adds are skipped (about 5 ms each on Hopper).
  static constexpr int64_t kMaxFp32Macs = int64_t(1) << 38;

  // Random tensors of one shape, enough copies (`count`, or as many as needed) that cycling
  // through them overflows twice the GPU's L2 cache, at most 64.
  std::vector<at::Tensor> ColdCopies(at::IntArrayRef shape, const std::string& d, size_t count = 0) {
    if (count == 0) {
      if (l2_bytes_ < 0) {
        cudaDeviceProp prop{};
        l2_bytes_ = cudaGetDeviceProperties(&prop, opt_.device) == cudaSuccess ? prop.l2CacheSize : 0;
      }
      double each = double(ElemSize(d));
      for (int64_t s : shape) each *= double(s);
      count = size_t(std::clamp(std::ceil(2.0 * double(l2_bytes_) / each), 1.0, 64.0));
    }
    std::vector<at::Tensor> out;
    for (size_t i = 0; i < count; ++i) out.push_back(at::randn(shape, Opts(d)));
    return out;
  }

  void Gemms(const std::string& d) {
    Say("gemm " + d);
    const int es = ElemSize(d);
    std::vector<std::array<int64_t, 3>> shapes;  // m, n, k
    std::vector<int64_t> sq = opt_.quick ? std::vector<int64_t>{128, 1024, 4096}
                                         : std::vector<int64_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192};
    for (int64_t s : sq) shapes.push_back({s, s, s});
    std::vector<int64_t> tokens = opt_.quick ? std::vector<int64_t>{128, 2048, 16384}
                                             : std::vector<int64_t>{16, 128, 512, 1024, 2048, 4096, 8192, 16384};
    std::vector<std::pair<int64_t, int64_t>> nk = {{768, 768},   {3072, 768},  {768, 3072},
                                                   {1536, 1536}, {6144, 1536}, {1536, 6144},
                                                   {2304, 768},  {1000, 2048}, {1024, 1024}, {4096, 1024}};
    if (opt_.quick) nk.resize(3);
    for (int64_t m : tokens)
      for (auto [n, k] : nk) shapes.push_back({m, n, k});
    // The same products with the weight stored [k, n] (x @ W, as Hugging Face's Conv1D and
    // TorchScript's decomposed addmm run them): cuBLAS picks other kernels for this layout.
    // Weights rotate through copies that overflow the L2 cache, as a model's layers do (each
    // reads its own weights from memory, while its input was just written by the layer before).
    for (int64_t m : tokens) {
      for (auto [n, k] : nk) {
        if (d == "fp32" && m * n * k > kMaxFp32Macs) continue;
        const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        json work = {{"m", m}, {"n", n}, {"k", k}, {"batch", 1}, {"flops", 2.0 * m * n * k},
                     {"bytes", double(m * k + n * k + m * n) * es}, {"variant", "nn"}};
        try {
          at::Tensor x = at::randn({m, k}, Opts(d));
          std::vector<at::Tensor> w = ColdCopies({k, n}, d), b = ColdCopies({n}, d, w.size());
          size_t i = 0;
          KernelRow("gemm", d, "mm " + shape, work, [&] { at::mm(x, w[i++ % w.size()]); });
          json wb = work;
          wb["variant"] = "nn_bias";
          wb["bytes"] = double(m * k + n * k + m * n + n) * es;
          KernelRow("gemm", d, "addmm " + shape, wb, [&] {
            const size_t j = i++ % w.size();
            at::addmm(b[j], x, w[j]);
          });
        } catch (const std::exception& e) {
          Fail("mm " + shape, e.what());
        }
      }
    }
    for (auto [m, n, k] : shapes) {
      if (d == "fp32" && m * n * k > kMaxFp32Macs) continue;  // keep the fp32 sweep short
      json work = {{"m", m}, {"n", n}, {"k", k}, {"batch", 1},
                   {"flops", 2.0 * m * n * k},
                   {"bytes", double(m * k + n * k + m * n + n) * es}};
      std::string label = "linear " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      try {
        at::Tensor x = at::randn({m, k}, Opts(d));
        std::vector<at::Tensor> ws = ColdCopies({n, k}, d), bs = ColdCopies({n}, d, ws.size());
        size_t i = 0;
        KernelRow("gemm", d, label, work, [&] {
          const size_t j = i++ % ws.size();
          at::linear(x, ws[j], bs[j]);
        });
      } catch (const std::exception& e) {
        Fail(label, e.what());
      }
    }
    // Batched products as attention without fused SDPA produces them.
    std::vector<std::array<int64_t, 4>> bmm = {{12, 128, 128, 64}, {12, 128, 64, 128}, {96, 128, 128, 64},
                                               {96, 128, 64, 128}, {768, 128, 128, 64}, {768, 128, 64, 128},
                                               {1536, 128, 128, 64}, {48, 512, 512, 64}};
    if (opt_.quick) bmm.resize(4);
    for (auto [b, m, n, k] : bmm) {
      json work = {{"m", m}, {"n", n}, {"k", k}, {"batch", b}, {"flops", 2.0 * b * m * n * k},
                   {"bytes", double(b * (m * k + k * n + m * n)) * es}};
      std::string label = "bmm " + std::to_string(b) + "x" + std::to_string(m) + "x" +
                          std::to_string(n) + "x" + std::to_string(k);
      try {
        at::Tensor x = at::randn({b, m, k}, Opts(d)), y = at::randn({b, k, n}, Opts(d));
        KernelRow("gemm", d, label, work, [&] { at::bmm(x, y); });
      } catch (const std::exception& e) {
        Fail(label, e.what());
      }
    }
  }

  void Convs(const std::string& d) {
    Say("conv " + d);
    const int es = ElemSize(d);
    struct C { int64_t cin, cout, hw, k, stride, groups; };
    std::vector<C> cs = {{3, 64, 224, 7, 2, 1},    {64, 64, 56, 3, 1, 1},    {64, 256, 56, 1, 1, 1},
                         {256, 64, 56, 1, 1, 1},   {128, 128, 28, 3, 1, 1},  {256, 128, 56, 1, 1, 1},
                         {128, 128, 56, 3, 2, 1},  {512, 128, 28, 1, 1, 1},  {256, 256, 14, 3, 1, 1},
                         {1024, 256, 14, 1, 1, 1}, {512, 512, 7, 3, 1, 1},   {2048, 512, 7, 1, 1, 1},
                         {256, 512, 28, 1, 2, 1},  {32, 32, 112, 3, 1, 32},  {96, 96, 112, 3, 2, 96},
                         {144, 144, 56, 3, 1, 144}, {192, 192, 28, 3, 1, 192}, {384, 384, 14, 3, 1, 384},
                         {960, 960, 7, 3, 1, 960}, {32, 16, 112, 1, 1, 1},   {144, 24, 56, 1, 1, 1}};
    std::vector<int64_t> batches = opt_.quick ? std::vector<int64_t>{1, 32} : std::vector<int64_t>{1, 8, 32, 128};
    for (int64_t nb : batches) {
      for (const C& c : cs) {
        const int64_t pad = c.k / 2;
        const int64_t ho = (c.hw + 2 * pad - c.k) / c.stride + 1;
        const bool dw = c.groups > 1 && c.groups == c.cin;
        const int64_t m = nb * ho * ho, n = c.cout / c.groups, k = c.cin / c.groups * c.k * c.k;
        double bytes = double(nb * c.cin * c.hw * c.hw + c.cout * (c.cin / c.groups) * c.k * c.k +
                              nb * c.cout * ho * ho) * es;
        json work = {{"flops", 2.0 * m * n * k * c.groups}, {"bytes", bytes}};
        if (!dw) work.update({{"m", m}, {"n", n}, {"k", k}, {"batch", c.groups}});
        else work.update({{"m", 0}, {"n", 0}, {"k", 0}, {"batch", 1}});
        if (!dw && c.k == 1) work["variant"] = ho * ho > 1 && ho % 2 == 1 ? "pointwise_odd" : "pointwise";
        // An odd-position 1x1 convolution is one GEMM per image (lowering.cc).
        if (!dw && c.k == 1 && ho * ho > 1 && ho % 2 == 1) work.update({{"m", ho * ho}, {"batch", nb}});
        std::string label = "conv n" + std::to_string(nb) + " " + std::to_string(c.cin) + "->" +
                            std::to_string(c.cout) + " " + std::to_string(c.hw) + "px k" +
                            std::to_string(c.k) + " s" + std::to_string(c.stride) + " g" +
                            std::to_string(c.groups);
        if (!Want(dw ? "depthwise" : "conv")) continue;
        try {
          at::Tensor x = at::randn({nb, c.cin, c.hw, c.hw}, Opts(d));
          at::Tensor w = at::randn({c.cout, c.cin / c.groups, c.k, c.k}, Opts(d));
          KernelRow(dw ? "depthwise" : "conv", d, label, work, [&] {
            at::conv2d(x, w, {}, {c.stride, c.stride}, {pad, pad}, {1, 1}, c.groups);
          });
        } catch (const std::exception& e) {
          Fail(label, e.what());
        }
      }
    }
  }

  // The layers of the layer-shapes file at its batches (the smallest and largest only with
  // --quick), each timed as the model runs it: weights rotating through copies that overflow
  // the L2 cache, no bias (ATen adds a convolution's bias in a kernel of its own).
  void Layers(const std::string& d) {
    if (layers_.layers.empty() && layers_.layer_norms.empty()) return;
    Say("layers " + d + " (" + std::to_string(layers_.layers.size()) + " shapes and " +
        std::to_string(layers_.layer_norms.size()) + " layer norms of " + layers_.path + ")");
    std::vector<int64_t> batches = layers_.batches;
    if (opt_.quick && batches.size() > 2) batches = {batches.front(), batches.back()};
    for (int64_t nb : batches) {
      for (const LayerShape& l : layers_.layers) {
        if (!l.batches.empty() && std::find(l.batches.begin(), l.batches.end(), nb) == l.batches.end()) continue;
        const LayerWork lw = LayerKernelWork(l, nb, ElemSize(d));
        if (!Want(lw.cls)) continue;
        try {
          std::vector<int64_t> xs = {nb, l.cin};
          xs.insert(xs.end(), l.spatial.begin(), l.spatial.end());
          at::Tensor x = at::randn(xs, Opts(d));
          // A channels-last input, as a model hands it over; the weights stay as a module keeps
          // them (contiguous), so cuDNN's copy of a dense weight to NHWC is timed too, unless
          // the row asks for channels-last weights (torch.compile's layout, its copies apart).
          if (l.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
          const bool two_d = l.spatial.size() == 2;
          if (l.op == "conv") {
            std::vector<int64_t> ws = {l.cout, l.cin / l.groups};
            ws.insert(ws.end(), l.kernel.begin(), l.kernel.end());
            std::vector<at::Tensor> w = ColdCopies(ws, d);
            if (l.weights_channels_last)
              for (at::Tensor& wi : w) wi = wi.contiguous(at::MemoryFormat::ChannelsLast);
            size_t i = 0;
            KernelRow(lw.cls, d, lw.label, lw.work, [&] {
              const at::Tensor& wi = w[i++ % w.size()];
              if (two_d) at::conv2d(x, wi, {}, l.stride, l.pad, l.dilation, l.groups);
              else at::conv1d(x, wi, {}, l.stride, l.pad, l.dilation, l.groups);
            });
          } else if (l.op == "max_pool") {
            KernelRow(lw.cls, d, lw.label, lw.work, [&] {
              if (two_d) at::max_pool2d(x, l.kernel, l.stride, l.pad, l.dilation, l.ceil_mode);
              else at::max_pool1d(x, l.kernel, l.stride, l.pad, l.dilation, l.ceil_mode);
            });
          } else {
            KernelRow(lw.cls, d, lw.label, lw.work, [&] {
              if (two_d) at::avg_pool2d(x, l.kernel, l.stride, l.pad, l.ceil_mode);
              else at::avg_pool1d(x, l.kernel, l.stride, l.pad, l.ceil_mode);
            });
          }
        } catch (const std::exception& e) {
          Fail(lw.label, e.what());
        }
      }
      for (const NormShape& l : layers_.layer_norms) {
        const LayerWork lw = NormKernelWork(l, nb, ElemSize(d));
        if (!Want(lw.cls)) continue;
        try {
          at::Tensor x = at::randn({nb, l.positions, l.hidden}, Opts(d));
          at::Tensor w = at::ones({l.hidden}, Opts(d)), b = at::zeros({l.hidden}, Opts(d));
          KernelRow(lw.cls, d, lw.label, lw.work, [&] { at::layer_norm(x, {l.hidden}, w, b); });
        } catch (const std::exception& e) {
          Fail(lw.label, e.what());
        }
      }
    }
  }

  void Attention(const std::string& d) {
    Say("attention " + d);
    const int es = ElemSize(d);
    std::vector<std::array<int64_t, 4>> cfg = {{1, 12, 128, 64},  {8, 12, 128, 64},  {32, 12, 128, 64},
                                               {128, 12, 128, 64}, {1, 16, 128, 96}, {8, 24, 128, 64},
                                               {32, 24, 128, 64},  {128, 24, 128, 64}, {4, 12, 512, 64},
                                               {16, 16, 512, 64}};
    if (opt_.quick) cfg.resize(4);
    for (auto [b, h, s, dh] : cfg) {
      for (bool masked : {true, false}) {
        double bytes = double(4 * b * h * s * dh) * es + (masked ? double(b * s * s) * es : 0.0);
        json work = {{"m", s}, {"n", 1}, {"k", int64_t(double(s * dh) / 64.0 + 0.5)}, {"batch", b * h},
                     {"flops", 4.0 * b * h * s * s * dh}, {"bytes", bytes}, {"masked", masked}};
        std::string label = "sdpa b" + std::to_string(b) + " h" + std::to_string(h) + " s" +
                            std::to_string(s) + " d" + std::to_string(dh) + (masked ? " mask" : "");
        try {
          at::Tensor q = at::randn({b, h, s, dh}, Opts(d)), k = at::randn({b, h, s, dh}, Opts(d)),
                     v = at::randn({b, h, s, dh}, Opts(d));
          std::optional<at::Tensor> mask;
          if (masked) mask = at::zeros({b, 1, s, s}, Opts(d));
          KernelRow(masked ? "attention_masked" : "attention", d, label, work,
                    [&] { at::scaled_dot_product_attention(q, k, v, mask); });
        } catch (const std::exception& e) {
          Fail(label, e.what());
        }
      }
    }
  }

  std::vector<int64_t> Sizes() const {
    if (opt_.quick) return {1 << 12, 1 << 18, 1 << 24};
    return {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26};
  }

  void Elementwise(const std::string& d) {
    Say("elementwise " + d);
    const int es = ElemSize(d);
    for (int64_t n : Sizes()) {
      try {
        at::Tensor a = at::randn({n}, Opts(d)), b = at::randn({n}, Opts(d));
        KernelRow("elementwise", d, "add " + std::to_string(n),
                  {{"flops", double(n)}, {"bytes", 3.0 * n * es}}, [&] { at::add(a, b); });
        KernelRow("elementwise", d, "gelu " + std::to_string(n),
                  {{"flops", double(n)}, {"bytes", 2.0 * n * es}}, [&] { at::gelu(a); });
      } catch (const std::exception& e) {
        Fail("elementwise " + std::to_string(n), e.what());
      }
    }
    // A bias row broadcast over a matrix (TorchScript's decomposed addmm): TensorIterator
    // cannot vectorize a broadcast operand and runs the strided elementwise kernel.
    for (int64_t n : Sizes()) {
      const int64_t cols = 768, rows = std::max<int64_t>(1, n / cols);
      try {
        at::Tensor a = at::randn({rows, cols}, Opts(d)), b = at::randn({cols}, Opts(d));
        KernelRow("elementwise", d, "broadcast add " + std::to_string(rows) + "x768",
                  {{"flops", double(rows * cols)}, {"bytes", double(2 * rows * cols + cols) * es},
                   {"variant", "broadcast"}},
                  [&] { at::add(b, a); });
      } catch (const std::exception& e) {
        Fail("broadcast add " + std::to_string(n), e.what());
      }
    }
    // A transposed operand added to a contiguous one (Whisper's residual stream, transposed
    // since its convolution): the strided elementwise kernel reads one of them uncoalesced.
    for (int64_t n : Sizes()) {
      const int64_t cols = 512, rows = std::max<int64_t>(2, n / cols);
      try {
        at::Tensor a = at::randn({rows, cols}, Opts(d)), b = at::randn({cols, rows}, Opts(d)).t();
        KernelRow("elementwise", d, "strided add " + std::to_string(rows) + "x512",
                  {{"flops", double(rows * cols)}, {"bytes", 3.0 * double(rows * cols) * es},
                   {"variant", "strided"}},
                  [&] { at::add(a, b); });
      } catch (const std::exception& e) {
        Fail("strided add " + std::to_string(n), e.what());
      }
    }
  }

  void Reductions(const std::string& d) {
    Say("reduction " + d);
    const int es = ElemSize(d);
    for (int64_t n : Sizes()) {
      const int64_t hidden = 768, rows = std::max<int64_t>(1, n / hidden);
      try {
        at::Tensor x = at::randn({rows, hidden}, Opts(d));
        at::Tensor w = at::ones({hidden}, Opts(d)), b = at::zeros({hidden}, Opts(d));
        KernelRow("norm", d, "layer_norm " + std::to_string(rows) + "x768",
                  {{"flops", 5.0 * rows * hidden}, {"bytes", double(2 * rows * hidden + 2 * hidden) * es},
                   {"m", rows}, {"n", hidden}, {"k", 1}, {"batch", 1}, {"variant", "layer_norm"}},
                  [&] { at::layer_norm(x, {hidden}, w, b); });
        // Batch norm in inference mode over NCHW activations (ResNet-style channels).
        const int64_t ch = 64, hw = std::max<int64_t>(1, int64_t(std::sqrt(double(n) / ch)));
        at::Tensor xb = at::randn({1, ch, hw, hw}, Opts(d));
        at::Tensor g = at::ones({ch}, Opts(d)), be = at::zeros({ch}, Opts(d));
        at::Tensor rm = at::zeros({ch}, Opts(d)), rv = at::ones({ch}, Opts(d));
        KernelRow("norm", d, "batch_norm 64x" + std::to_string(hw) + "x" + std::to_string(hw),
                  {{"flops", 5.0 * ch * hw * hw}, {"bytes", double(2 * ch * hw * hw + 4 * ch) * es}},
                  [&] { at::batch_norm(xb, g, be, rm, rv, false, 0.1, 1e-5, true); });
        const int64_t cols = 128, srows = std::max<int64_t>(1, n / cols);
        at::Tensor s = at::randn({srows, cols}, Opts(d));
        KernelRow("reduction", d, "softmax " + std::to_string(srows) + "x128",
                  {{"flops", 5.0 * srows * cols}, {"bytes", 2.0 * srows * cols * es}},
                  [&] { at::softmax(s, -1); });
      } catch (const std::exception& e) {
        Fail("reduction " + std::to_string(n), e.what());
      }
    }
  }

  void Copies(const std::string& d) {
    Say("copy " + d);
    const int es = ElemSize(d);
    for (int64_t n : Sizes()) {
      const int64_t cols = 64, rows = std::max<int64_t>(1, n / cols);
      try {
        at::Tensor x = at::randn({rows, cols}, Opts(d)).t();
        KernelRow("copy", d, "contiguous " + std::to_string(n),
                  {{"flops", 0.0}, {"bytes", 2.0 * rows * cols * es}}, [&] { x.contiguous(); });
      } catch (const std::exception& e) {
        Fail("copy " + std::to_string(n), e.what());
      }
    }
    // Copies of permuted tensors as models make them (the permute variant, shaped by the
    // contiguous runs they move): a transpose of a 512-wide matrix (runs of one element, as
    // Whisper's transposed residual stream), and a head split's transpose(1, 2) of
    // [tokens, 12 heads, run] for runs of 32, 64, 256 and 1024 elements (Swin's and BERT's
    // head dims, a Swin window's rows of 7 x 96 to 7 x 768 channels).
    for (int64_t n : Sizes()) {
      for (int64_t run : {int64_t(1), int64_t(32), int64_t(64), int64_t(256), int64_t(1024)}) {
        // At least two rows (tokens) to move, or the transpose is contiguous and copies nothing.
        const int64_t rows = run == 1 ? n / 512 : n / (12 * run);
        if (rows < 2) continue;
        try {
          at::Tensor x, src;
          if (run == 1) {
            x = at::randn({rows, int64_t(512)}, Opts(d));
            src = x.t();
          } else {
            x = at::randn({rows, int64_t(12), run}, Opts(d));
            src = x.transpose(0, 1);
          }
          const int64_t elems = x.numel();
          KernelRow("copy", d, "permute r" + std::to_string(run) + " " + std::to_string(elems),
                    {{"flops", 0.0}, {"bytes", 2.0 * double(elems) * es}, {"m", elems / run}, {"n", run},
                     {"k", 1}, {"batch", 1}, {"variant", "permute"}},
                    [&] { src.contiguous(); });
        } catch (const std::exception& e) {
          Fail("copy permute " + std::to_string(n), e.what());
        }
      }
    }
  }

  void Gathers(const std::string& d) {
    Say("gather " + d);
    const int es = ElemSize(d);
    at::Tensor table = at::randn({30522, 768}, Opts(d));
    for (int64_t n : {int64_t(16), int64_t(128), int64_t(1024), int64_t(8192), int64_t(16384)}) {
      try {
        at::Tensor idx = at::randint(0, 30522, {n}, at::TensorOptions().device(Dev()).dtype(at::kLong));
        KernelRow("gather", d, "embedding " + std::to_string(n),
                  {{"flops", 0.0}, {"bytes", 2.0 * n * 768 * es + 8.0 * n}},
                  [&] { at::embedding(table, idx); });
      } catch (const std::exception& e) {
        Fail("gather " + std::to_string(n), e.what());
      }
    }
  }

  // ---- CPU side: chains of tiny ops ----

  static std::string ScriptSource(DispatchClass c, int n) {
    std::ostringstream s;
    s << "def forward(x, w):\n";
    for (int i = 0; i < n; ++i) {
      switch (c) {
        case DispatchClass::kKernel: s << "    x = x + 1.0\n"; break;
        case DispatchClass::kView: s << "    x = x.transpose(0, 1)\n"; break;
        case DispatchClass::kLibrary: s << "    x = torch.mm(x, w)\n"; break;
      }
    }
    s << "    return x\n";
    return s.str();
  }

  void ChainOnce(DispatchClass c, int n, at::Tensor& x, const at::Tensor& w) {
    for (int i = 0; i < n; ++i) {
      switch (c) {
        case DispatchClass::kKernel: x = at::add(x, 1.0); break;
        case DispatchClass::kView: x = x.transpose(0, 1); break;
        case DispatchClass::kLibrary: x = at::mm(x, w); break;
      }
    }
  }

  void DispatchRow(Framework f, DispatchClass c, int n, const std::vector<double>& call_us,
                   double kernel_us, double span_us, double probe_us) {
    json row = {{"framework", FrameworkName(f)}, {"class", DispatchClassName(c)}, {"n_ops", n},
                {"modules", 0}, {"call_us", SpreadJson(call_us)},
                {"gpu_kernel_us", kernel_us >= 0 ? json(kernel_us) : json(nullptr)},
                {"gpu_span_us", span_us >= 0 ? json(span_us) : json(nullptr)}};
    if (probe_us > 0) row["host_probe_us"] = probe_us;
    out_->Append("dispatch", row);
  }

  // TimeCalls with the host probe (calibrate/host_probe.h) read just before and just after,
  // averaged into *probe_us: the CPU's speed while the chain ran.
  template <class F>
  std::vector<double> ProbedCalls(F fn, int reps, double* probe_us) {
    const at::Tensor x = at::randn({8, 8}, at::TensorOptions().device(dev_));
    const double before = HostProbeUs(x);
    std::vector<double> calls = TimeCalls(fn, 5, reps);
    *probe_us = (before + HostProbeUs(x)) / 2;
    return calls;
  }

  // GPU kernel count, kernel time and span of one call: medians over per-call CUPTI records.
  template <class F>
  KernelSummary GpuSummaryOfCall(F fn) {
    KernelTracer::Scope tracing;  // after the call's timing, never during it
    if (!tracing.status().ok()) return KernelSummary{-1, -1, -1};
    fn();
    KernelTracer::Collect();
    std::vector<double> count, kern, span;
    for (int r = 0; r < 5; ++r) {
      fn();
      KernelSummary s = SummarizeKernels(KernelTracer::Collect(), 1);
      count.push_back(s.kernels_per_call);
      kern.push_back(s.kernel_us_per_call);
      span.push_back(s.span_us_per_call);
    }
    KernelSummary m;
    m.kernels_per_call = Percentile(count, 0.5);
    m.kernel_us_per_call = Percentile(kern, 0.5);
    m.span_us_per_call = Percentile(span, 0.5);
    return m;
  }

  template <class F>
  std::pair<double, double> GpuOfCall(F fn) {
    const KernelSummary s = GpuSummaryOfCall(fn);
    return {s.kernel_us_per_call, s.span_us_per_call};
  }

  void DispatchChains(Framework f) {
    Say(std::string("dispatch chains: ") + FrameworkName(f));
    std::vector<int> ns = opt_.quick ? std::vector<int>{1, 64, 256} : std::vector<int>{1, 16, 64, 128, 256, 512};
    const int reps = opt_.quick ? 30 : 100;
    at::TensorOptions o = at::TensorOptions().device(dev_).dtype(at::kFloat);
    std::vector<DispatchClass> classes = {DispatchClass::kKernel, DispatchClass::kView, DispatchClass::kLibrary};
    if (f == Framework::kCudaGraph) classes = {DispatchClass::kKernel};
    for (DispatchClass c : classes) {
      for (int n : ns) {
        std::string what = std::string(FrameworkName(f)) + " " + DispatchClassName(c) + " x" + std::to_string(n);
        if (Done("dispatch", {{"framework", FrameworkName(f)}, {"class", DispatchClassName(c)}, {"n_ops", n},
                              {"modules", 0}}))
          continue;
        if (Counted()) continue;
        try {
          at::Tensor w = at::randn({8, 8}, o);
          at::Tensor x0 = at::randn({8, 8}, o);
          double probe = -1;
          if (f == Framework::kLibtorchEager) {
            auto fn = [&] {
              at::Tensor x = x0;
              ChainOnce(c, n, x, w);
            };
            auto calls = ProbedCalls(fn, reps, &probe);
            auto [k, s] = GpuOfCall([&] { fn(); cudaDeviceSynchronize(); });
            DispatchRow(f, c, n, calls, k, s, probe);
          } else if (f == Framework::kTorchscript) {
            auto cu = torch::jit::compile(ScriptSource(c, n));
            torch::jit::Function& fwd = cu->get_function("forward");
            std::vector<c10::IValue> in = {x0, w};
            auto fn = [&] { fwd(in); };
            auto calls = ProbedCalls(fn, reps, &probe);
            auto [k, s] = GpuOfCall([&] { fn(); cudaDeviceSynchronize(); });
            DispatchRow(f, c, n, calls, k, s, probe);
          } else if (f == Framework::kCudaGraph) {
            at::Tensor x = x0.clone();
            at::cuda::CUDAGraph graph;
            auto stream = c10::cuda::getStreamFromPool();
            {
              c10::cuda::CUDAStreamGuard guard(stream);
              at::Tensor y = x;
              ChainOnce(c, n, y, w);  // warm up on the side stream
              stream.synchronize();
              graph.capture_begin();
              at::Tensor z = x;
              ChainOnce(c, n, z, w);
              graph.capture_end();
            }
            cudaDeviceSynchronize();
            auto fn = [&] { graph.replay(); };
            auto calls = ProbedCalls(fn, reps, &probe);
            auto [k, s] = GpuOfCall([&] { fn(); cudaDeviceSynchronize(); });
            DispatchRow(f, c, n, calls, k, s, probe);
          }
        } catch (const std::exception& e) {
          Fail(what, e.what());
        }
        Tick(what);
      }
    }
    if (f == Framework::kLibtorchEager) GapChains();
  }

  // The GPU's own gap between kernels queued back to back (gpu.kernel_gap_us): libtorch-eager
  // chains of adds over a tensor of 8M fp32 elements (32 MB read and written per kernel, tens
  // of microseconds), so that each kernel outlasts its dispatch and the CPU runs ahead. The
  // slope of the call time less the kernels' summed time (CUPTI records, a pass apart from the
  // timing) over n is the gap (calibrate's FitGapFromCalls; the profiled pass's span is the
  // profiler's pace). Eager models whose kernels outlast their dispatches (Whisper's encoder at
  // batch 8) run this much longer than their kernels' sum; a CUDA graph's nodes are closer.
  void GapChains() {
    const int64_t elements = int64_t(4096) * 2048;
    for (int n : {16, 64}) {
      const std::string what = "libtorch-eager kernel gap x" + std::to_string(n);
      if (Done("dispatch", {{"framework", FrameworkName(Framework::kLibtorchEager)}, {"class", "kernel"},
                            {"n_ops", n}, {"modules", 0}, {"elements", elements}}))
        continue;
      if (Counted()) continue;
      try {
        const at::Tensor x0 = at::randn({4096, 2048}, at::TensorOptions().device(dev_).dtype(at::kFloat));
        const at::Tensor w;  // unused by kernel-class chains
        auto fn = [&] {
          at::Tensor x = x0;
          ChainOnce(DispatchClass::kKernel, n, x, w);
        };
        const std::vector<double> calls = TimeCalls(fn, 3, opt_.quick ? 10 : 30);
        auto [k, sp] = GpuOfCall([&] { fn(); cudaDeviceSynchronize(); });
        json row = {{"framework", FrameworkName(Framework::kLibtorchEager)}, {"class", "kernel"}, {"n_ops", n},
                    {"modules", 0}, {"elements", elements}, {"call_us", SpreadJson(calls)},
                    {"gpu_kernel_us", k >= 0 ? json(k) : json(nullptr)},
                    {"gpu_span_us", sp >= 0 ? json(sp) : json(nullptr)}};
        out_->Append("dispatch", row);
      } catch (const std::exception& e) {
        Fail(what, e.what());
      }
      Tick(what);
    }
  }

  // Empty kernels launched back to back through the driver, timed until the launches return
  // (unsynchronized): what one launch costs the CPU with no framework around it, the cost of
  // an op's second and further kernels. The kernel is PTX the driver compiles for this GPU.
  void Launches() {
    static const char* kEmptyKernelPtx =
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry ftax_empty()\n{\n\tret;\n}\n";
    const std::vector<int> ns = opt_.quick ? std::vector<int>{1, 64} : std::vector<int>{1, 16, 64, 256};
    const int reps = opt_.quick ? 30 : 100;
    CUfunction fn = nullptr;
    Say("kernel launches");
    for (int n : ns) {
      const std::string what = "empty kernel launches x" + std::to_string(n);
      if (Done("launches", {{"n", n}})) continue;
      if (Counted()) continue;
      if (!fn) {
        cudaFree(nullptr);  // the runtime's context, current on this thread
        CUmodule mod = nullptr;
        const char* err = nullptr;
        CUresult r = cuModuleLoadData(&mod, kEmptyKernelPtx);
        if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&fn, mod, "ftax_empty");
        if (r != CUDA_SUCCESS) {
          cuGetErrorString(r, &err);
          Fail(what, std::string("loading an empty PTX kernel: ") + (err ? err : "unknown CUDA driver error"));
          fn = nullptr;
          Tick(what);
          continue;
        }
      }
      CUstream stream = c10::cuda::getCurrentCUDAStream(opt_.device).stream();
      std::vector<double> issue;
      bool ok = true;
      for (int r = 0; r < reps + 5 && ok; ++r) {
        cudaDeviceSynchronize();
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i)
          ok = ok && cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr) == CUDA_SUCCESS;
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (r >= 5) issue.push_back(us);  // the first few warm the path up
      }
      cudaDeviceSynchronize();
      if (!ok) {
        Fail(what, "cuLaunchKernel failed");
      } else {
        out_->Append("launches", {{"n", n}, {"issue_us", SpreadJson(issue)}});
      }
      Tick(what);
    }
  }

  // One block of a model-like chain: a transformer MLP step (GEMM, GELU, residual add, layer
  // norm) or a ResNet step (3x3 convolution, batch norm, ReLU) on NCHW input, so that the
  // graph holds the kernels, and the library's extra kernels (layout transposes, split-K
  // reductions), that models' graphs hold.
  static void GraphBlock(const std::string& chain, at::Tensor& x, const std::vector<at::Tensor>& p) {
    if (chain == "transformer") {
      at::Tensor y = at::gelu(at::mm(x, p[0]));
      x = at::layer_norm(at::add(y, x), {x.size(1)}, p[1], p[2]);
    } else {
      at::Tensor y = at::conv2d(x, p[0], {}, 1, 1);
      y = at::batch_norm(y, p[1], p[2], p[3], p[4], /*training=*/false, 0.1, 1e-5, true);
      x = at::relu(y);
    }
  }

  // CUDA-graph replays of chains of model-sized kernels: unlike the chains of tiny adds, the
  // GPU bounds these, so host time per replay less the kernels' own time is the gap that each
  // node of a model's graph costs. Rows carry the chain's name and its CUPTI kernel count.
  void GraphGapChains() {
    Say("dispatch chains: cuda-graph, model-sized kernels");
    const std::vector<int> blocks = opt_.quick ? std::vector<int>{4, 16} : std::vector<int>{4, 16, 48};
    const int reps = opt_.quick ? 20 : 50;
    for (const std::string chain : {"transformer", "resnet"}) {
      for (const std::string& dt : opt_.dtypes) {
        at::TensorOptions o = at::TensorOptions().device(Dev()).dtype(ToScalar(dt));
        std::vector<at::Tensor> p;
        at::Tensor x0;
        if (chain == "transformer") {
          x0 = at::randn({256, 1024}, o);
          p = {at::randn({1024, 1024}, o) * 0.03, at::ones({1024}, o), at::zeros({1024}, o)};
        } else {
          x0 = at::randn({8, 64, 56, 56}, o);
          p = {at::randn({64, 64, 3, 3}, o) * 0.05, at::ones({64}, o), at::zeros({64}, o),
               at::zeros({64}, o), at::ones({64}, o)};
        }
        for (int n : blocks) {
          const std::string what = "cuda-graph " + chain + " " + dt + " x" + std::to_string(n);
          if (Done("dispatch", {{"framework", "cuda-graph"}, {"class", "kernel"}, {"chain", chain},
                                {"dtype", dt}, {"n_ops", n}, {"modules", 0}}))
            continue;
          if (Counted()) continue;
          try {
            at::cuda::CUDAGraph graph;
            auto stream = c10::cuda::getStreamFromPool();
            {
              c10::cuda::CUDAStreamGuard guard(stream);
              at::Tensor y = x0;
              for (int i = 0; i < n; ++i) GraphBlock(chain, y, p);  // warm up on the side stream
              stream.synchronize();
              graph.capture_begin();
              at::Tensor z = x0;
              for (int i = 0; i < n; ++i) GraphBlock(chain, z, p);
              graph.capture_end();
            }
            cudaDeviceSynchronize();
            auto fn = [&] { graph.replay(); };
            auto calls = TimeCalls(fn, 5, reps);
            KernelSummary g = GpuSummaryOfCall([&] { fn(); cudaDeviceSynchronize(); });
            json row = {{"framework", "cuda-graph"}, {"class", "kernel"}, {"chain", chain},
                        {"dtype", dt}, {"n_ops", n}, {"nodes", g.kernels_per_call},
                        {"modules", 0}, {"call_us", SpreadJson(calls)},
                        {"gpu_kernel_us", g.kernel_us_per_call >= 0 ? json(g.kernel_us_per_call) : json(nullptr)},
                        {"gpu_span_us", g.span_us_per_call >= 0 ? json(g.span_us_per_call) : json(nullptr)}};
            out_->Append("dispatch", row);
          } catch (const std::exception& e) {
            Fail(what, e.what());
          }
          Tick(what);
        }
      }
    }
  }

  const BenchOptions& opt_;
  const LayerShapes& layers_;
  const ProgressFn& progress_;
  ResultWriter* out_;
  at::Device dev_;
  int rows_ = 0;
  std::set<std::string> done_;  // rows of the file being resumed
  bool planning_ = false;       // counting points, measuring nothing
  size_t planned_ = 0;
  std::unique_ptr<Progress> meter_;
  Clock::time_point last_line_;
};


}  // namespace

Status RunBench(const BenchOptions& opt, const ProgressFn& progress) {
  if (opt.output.empty()) return InvalidInput("an output file is required (-o FILE)");
  if (!torch::cuda::is_available()) return Unsupported("no CUDA device is visible to LibTorch");
  if (opt.device < 0 || opt.device >= int(torch::cuda::device_count()))
    return InvalidInput("--device " + std::to_string(opt.device) + " does not exist (" +
                        std::to_string(torch::cuda::device_count()) + " visible)");
  for (const auto& d : opt.dtypes)
    if (d != "fp32" && d != "fp16" && d != "bf16")
      return InvalidInput("unknown dtype '" + d + "' (fp32, fp16, bf16)");
  // The layer shapes are read before anything is measured: a bad file stops the run at once.
  LayerShapes layers;
  if (opt.layer_shapes != "none") {
    std::string path = opt.layer_shapes;
    if (path.empty()) {  // shipped beside the binary (calibrate/helper_scripts.h)
      Expected<std::string> found = FindHelperScript("layer-shapes.json");
      if (!found.ok())
        return Status(found.status().code(), found.status().message() +
                                                 " (or pass --layer-shapes FILE, or none to skip the layer rows)");
      path = found.value();
    }
    Expected<LayerShapes> read = ReadLayerShapes(path);
    if (!read.ok()) return read.status();
    layers = std::move(read.value());
  }
  cudaSetDevice(opt.device);
  json header = {{"schema_version", 1}, {"kind", "ftax-measurements"},
                 {"host", HostIdentity(opt.device)}, {"quick", opt.quick},
                 {"started", UtcNow()}, {"kernels", json::array()}, {"dispatch", json::array()},
                 {"launches", json::array()},
                 {"failures", json::array()},
                 {"notes", {"TorchScript chains ran with the TensorExpr fuser off, so each op is one node",
                            "kernel_us is the sum of CUPTI kernel durations of one call",
                            "call_us is host time with no profiler attached; gpu_kernel_us and gpu_span_us "
                            "come from a separate traced pass"}},
                 {"host_timing", "no-profiler"}};
  if (opt.resume) {
    Expected<json> old = ReadRunToResume(opt.output, "ftax-measurements");
    if (!old.ok()) return old.status();
    if (!old->is_null()) {
      const json& prev = old.value();
      const std::string gpu = header["host"].value("gpu", ""), was = prev["host"].value("gpu", "");
      if (gpu != was)
        return InvalidInput("--resume: '" + opt.output + "' was measured on " + was + ", this host has " + gpu);
      json resumed = prev.value("resumed", json::array());
      resumed.push_back(UtcNow());
      header = prev;
      header["resumed"] = resumed;
      header["failures"] = json::array();  // what failed before is tried again
      progress("resuming: " + std::to_string(header["kernels"].size()) + " kernel rows and " +
               std::to_string(header["dispatch"].size()) + " dispatch rows kept");
    }
  }
  ResultWriter out(opt.output, header);
  Status s = out.Set("started", header.value("started", UtcNow()));
  if (!s.ok()) return s;
  torch::NoGradGuard no_grad;
  torch::jit::setTensorExprFuserEnabled(false);
  // Python eager modes, per-op chains and torch.compile modes: chains run from Python by
  // bench_eager.py, one section each. A resumed file keeps the sections it has rows of.
  std::set<std::string> sections_kept;
  for (const json& row : out.doc()["dispatch"]) {
    const std::string section = PythonSectionOf(row);
    if (!section.empty()) sections_kept.insert(section);
  }
  std::string modes, compile_modes, op_frameworks;
  std::set<std::string> sections_asked;
  auto ask = [&](std::string* list, const std::string& section, const std::string& name) {
    if (sections_kept.count(section)) return;
    *list += std::string(list->empty() ? "" : ",") + name;
    sections_asked.insert(section);
  };
  for (Framework f : opt.frameworks) {
    if (f == Framework::kPytorchEager || f == Framework::kPytorchEagerNoGrad || f == Framework::kTorchscript)
      ask(&op_frameworks, std::string("ops:") + FrameworkName(f), FrameworkName(f));
    if (f == Framework::kPytorchEager) ask(&modes, "modes:inference", "inference");
    if (f == Framework::kPytorchEagerNoGrad) ask(&modes, "modes:no_grad", "no_grad");
    if (f == Framework::kTorchCompile) ask(&compile_modes, "compile:default", "default");
    if (f == Framework::kTorchCompileReduceOverhead) ask(&compile_modes, "compile:reduce-overhead", "reduce-overhead");
  }
  const bool want_eager = !sections_asked.empty();
  if (!layers.layers.empty() || !layers.layer_norms.empty()) out.Set("layer_shapes", layers.path);
  Bench bench(opt, layers, progress, &out);
  bench.Plan(opt.kernels, want_eager ? 1 : 0);
  auto t0 = Clock::now();
  if (opt.kernels) {  // kernel times are CUPTI's records: tracing stays on for the sweeps
    KernelTracer::Scope tracing;
    if (!tracing.status().ok()) return tracing.status();
    s = bench.RunKernels();
    if (!s.ok()) return s;
  }
  s = bench.RunDispatch();
  if (!s.ok()) return s;
  torch::jit::setTensorExprFuserEnabled(true);
  if (want_eager) {
    std::string script = opt.eager_script;
    if (script.empty()) {  // installed beside the binary (calibrate/helper_scripts.h)
      Expected<std::string> found = FindHelperScript("bench_eager.py");
      if (!found.ok()) return found.status();
      script = found.value();
    }
    // bench_eager.py rewrites `part` after each section; an interrupted bench leaves it, and a
    // resumed one lets bench_eager.py keep its finished sections.
    std::string part = opt.output + ".eager.json";
    if (!opt.resume) std::remove(part.c_str());
    std::vector<std::string> argv = {opt.python, script, "--device", std::to_string(opt.device)};
    if (opt.quick) argv.push_back("--quick");
    argv.insert(argv.end(), {"--modes", modes, "--ops", op_frameworks, "--compile", compile_modes});
    argv.insert(argv.end(), {"--out", part});
    if (opt.resume) argv.push_back("--resume");
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    progress("pytorch-eager: " + cmd);
    ProcessOptions po;
    po.inherit_stdin = true;
    Expected<ProcessResult> ran = RunProcess(argv, po);  // an argv, no shell
    int rc = ran.ok() ? ran->exit_code : -1;  // -1: could not start, or killed by a signal
    // The sections it finished are kept whatever its exit: a section cut short wrote no rows.
    int kept = 0;
    std::ifstream in(part);
    if (in) {
      try {
        json eager;
        in >> eager;
        for (auto& row : eager.value("dispatch", json::array()))
          if (sections_asked.count(PythonSectionOf(row))) {
            out.Append("dispatch", row);
            ++kept;
          }
        if (eager.contains("python")) {
          json host = out.doc()["host"];
          host["python"] = eager["python"];
          out.Set("host", host);
        }
      } catch (const std::exception& e) {
        out.Append("failures", {{"what", "pytorch-eager"}, {"error", part + ": " + e.what()}});
      }
    }
    if (rc != 0)
      out.Append("failures", {{"what", "pytorch-eager"},
                              {"error", "'" + cmd + "' exited with " + std::to_string(rc) + "; " +
                                            std::to_string(kept) + " rows of the sections it finished kept"}});
    in.close();
    std::remove(part.c_str());
    bench.PointDone("Python dispatch chains (eager, per-op, torch.compile)");
  }
  out.Set("finished", UtcNow());
  out.Set("wall_s", std::chrono::duration<double>(Clock::now() - t0).count());
  return Status::Ok();
}

}  // namespace ftax
