#include "predictor/pipeline.h"

#include <gtest/gtest.h>

#include <random>

#include "predictor/kernel_cost.h"
#include "predictor/lowering_rules.h"
#include "synthetic_profile.h"

namespace ftax {
namespace {

// A random work list: n dispatches, each launching 0..2 kernels of random classes and sizes.
WorkList RandomWork(std::mt19937_64& rng, int n, double size_scale) {
  WorkList w;
  std::uniform_int_distribution<int> nk(0, 2), cls(0, kNumKernelClasses - 1), dc(0, 2);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  for (int i = 0; i < n; ++i) {
    DispatchWork d;
    d.cls = DispatchClass(dc(rng));
    d.first_kernel = int(w.kernels.size());
    d.num_kernels = nk(rng);
    for (int k = 0; k < d.num_kernels; ++k) {
      KernelWork kw;
      kw.cls = KernelClass(cls(rng));
      kw.dtype = DType::kFloat16;
      kw.bytes = u(rng) * size_scale;
      kw.flops = u(rng) * size_scale * 100;
      w.kernels.push_back(kw);
    }
    w.dispatches.push_back(d);
  }
  return w;
}

// Every dispatch's cost, and a launch for each kernel beyond a dispatch's first.
double SumCpu(const WorkList& w, const ResolvedParams& p) {
  double s = p.call_us;
  for (const auto& d : w.dispatches) {
    s += p.dispatch_us[int(d.cls)];
    int launched = 0;
    for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i)
      launched += i < int(p.kernel_nodes.size()) ? p.kernel_nodes[i] : 1;
    if (launched > 1) s += (launched - 1) * p.launch_us;
  }
  return s;
}

// Gives `key`'s class an anchor at `w` whose time is the model's own and whose benchmark
// call launched `kernels` kernels.
void AnchorAt(HostProfile* prof, const std::string& key, const KernelWork& w, int kernels) {
  KernelParams& kp = prof->gpu.kernels.at(key);
  kp.anchors = {AnchorOfWork(w, KernelTimeUs(w, kp, prof->gpu.num_sms), kernels)};
  PrepareAnchors(&prof->gpu);
}

TEST(PipelineTest, ReducesToMaxOfSumsAtBothExtremes) {
  std::mt19937_64 rng(7);
  HostProfile prof = testing::SyntheticProfile();
  for (int trial = 0; trial < 50; ++trial) {
    for (double scale : {1.0, 1e9}) {  // tiny kernels: CPU-bound; huge kernels: GPU-bound
      WorkList w = RandomWork(rng, 1 + trial * 3, scale);
      Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kLibtorchEager);
      ASSERT_TRUE(rp.ok()) << rp.status().message();
      Timing t = Simulate(w, rp.value());
      const double cpu = SumCpu(w, rp.value());
      const double bound = std::max(cpu, t.compute_us);
      EXPECT_GE(t.latency_us + 1e-9, bound);
      // Within the unavoidable pipeline fill: one dispatch plus gaps and the call cost.
      const double slack = rp->call_us + 20 + rp->kernel_gap_us * double(w.kernels.size()) +
                           (scale > 1 ? 0 : 3.0 * w.kernels.size());
      EXPECT_LE(t.latency_us, bound + slack) << "trial " << trial << " scale " << scale;
      if (scale > 1 && !w.kernels.empty()) EXPECT_GT(t.compute_us, cpu);  // really GPU-bound
    }
  }
}

TEST(PipelineTest, FrameworkTermIsTheCpuSum) {
  std::mt19937_64 rng(3);
  HostProfile prof = testing::SyntheticProfile();
  WorkList w = RandomWork(rng, 40, 1.0);
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(rp.ok());
  Timing t = Simulate(w, rp.value());
  EXPECT_NEAR(t.framework_us, SumCpu(w, rp.value()), 1e-6);
  EXPECT_EQ(t.dispatches, 40);
}

TEST(PipelineTest, CudaGraphPaysOneCallAndNodeGaps) {
  std::mt19937_64 rng(5);
  HostProfile prof = testing::SyntheticProfile();
  WorkList w = RandomWork(rng, 30, 1.0);
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kCudaGraph);
  ASSERT_TRUE(rp.ok());
  Timing t = Simulate(w, rp.value());
  EXPECT_NEAR(t.latency_us,
              rp->call_us + t.compute_us + (rp->node_gap_us + rp->replay_per_node_us) * w.kernels.size(),
              1e-6);
}

// torch.compile's reduce-overhead: the wrapper's CPU time (call_us) overlaps the replay, so a
// small graph costs call_us and a large one its GPU time (kernels and one gap per node).
TEST(PipelineTest, ReduceOverheadIsTheLargerOfTheWrapperAndTheReplay) {
  HostProfile prof = testing::SyntheticProfile();
  prof.frameworks["torch-compile-reduce-overhead"].call_us = Param::Of(150, 5);
  prof.frameworks["torch-compile-reduce-overhead"].node_gap_us = Param::Of(2, 0.1);
  for (double scale : {1.0, 1e8}) {
    std::mt19937_64 rng(11);
    WorkList w = RandomWork(rng, 30, scale);
    Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kTorchCompileReduceOverhead);
    ASSERT_TRUE(rp.ok()) << rp.status().message();
    Timing t = Simulate(w, rp.value());
    const double gpu = t.compute_us + 2.0 * t.kernels;
    EXPECT_NEAR(t.latency_us, std::max(150.0, gpu), 1e-6);
    EXPECT_NEAR(t.framework_us, 150.0, 1e-9);
    if (scale == 1.0) EXPECT_DOUBLE_EQ(t.latency_us, 150.0);
    else EXPECT_GT(t.latency_us, 150.0);
  }
}

// A contiguous copy (cat of contiguous tensors) streams at the elementwise class's speed and
// is still counted as copy time; a graph captured from the eager module replays at the
// cuda-graph costs when the profile has none of its own.
TEST(PipelineTest, ContiguousCopyIsPricedAsElementwiseAndCountedAsCopy) {
  HostProfile prof = testing::SyntheticProfile();
  prof.gpu.kernels[KernelKey(KernelClass::kCopy, DType::kFloat16)].bandwidth_gbps = Param::Of(400, 10);
  prof.frameworks.erase(FrameworkName(Framework::kCudaGraphEager));
  WorkList w;
  DispatchWork d;
  d.cls = DispatchClass::kKernel;
  d.first_kernel = 0;
  d.num_kernels = 2;
  w.dispatches.push_back(d);
  for (KernelVariant v : {KernelVariant::kPlain, KernelVariant::kContiguous}) {
    KernelWork k;
    k.cls = KernelClass::kCopy;
    k.dtype = DType::kFloat16;
    k.variant = v;
    k.bytes = 8e6;
    w.kernels.push_back(k);
  }
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kCudaGraphEager);
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  Timing t = Simulate(w, rp.value());
  // 8 MB: 20 us at the copy class's 400 GB/s, 4 us at the elementwise 2000 GB/s, each + 3 us.
  EXPECT_NEAR(t.class_us[int(KernelClass::kCopy)], (3 + 20) + (3 + 4), 1e-6);
  EXPECT_NEAR(t.class_us[int(KernelClass::kElementwise)], 0, 1e-12);
  EXPECT_DOUBLE_EQ(rp->node_gap_us, prof.frameworks.at("cuda-graph").node_gap_us.value);
}

TEST(PipelineTest, ALibraryCallsExtraKernelsAreGraphNodes) {
  HostProfile prof = testing::SyntheticProfile();
  const KernelWork g = testing::GemmWork(128, 768, 768);
  KernelWork e;
  e.cls = KernelClass::kElementwise;
  e.dtype = DType::kFloat16;
  e.bytes = 1e5;
  WorkList w;
  w.kernels = {g, e};
  w.dispatches = {DispatchWork{DispatchClass::kLibrary, 0, 0, 1}, DispatchWork{DispatchClass::kKernel, 1, 1, 1}};
  Expected<ResolvedParams> before = ResolveParams(w, prof, Framework::kCudaGraph);
  ASSERT_TRUE(before.ok()) << before.status().message();
  const Timing t1 = Simulate(w, before.value());
  EXPECT_EQ(t1.kernels, 2);
  // The bench saw this GEMM run as three kernels (split-K and a reduction, say).
  AnchorAt(&prof, "gemm/fp16", g, 3);
  Expected<ResolvedParams> after = ResolveParams(w, prof, Framework::kCudaGraph);
  ASSERT_TRUE(after.ok());
  const Timing t2 = Simulate(w, after.value());
  EXPECT_EQ(t2.kernels, 4);
  // Same kernel time (the anchor is the model's own time), two more nodes to pay for.
  EXPECT_NEAR(t2.compute_us, t1.compute_us, 1e-6 * t1.compute_us);
  EXPECT_NEAR(t2.latency_us - t1.latency_us,
              2 * (after->node_gap_us + after->replay_per_node_us), 1e-6);
  // An element-wise (ATen) kernel's count is the lowering's, whatever its anchors say.
  AnchorAt(&prof, "elementwise/fp16", e, 5);
  Expected<ResolvedParams> third = ResolveParams(w, prof, Framework::kCudaGraph);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(Simulate(w, third.value()).kernels, 4);
}

TEST(PipelineTest, EachExtraLaunchCostsTheCpuWhatLibTorchPaysForOne) {
  HostProfile prof = testing::SyntheticProfile();
  const FrameworkParams& lt = prof.frameworks.at("libtorch-eager");
  const double launch = lt.dispatch_us[int(DispatchClass::kKernel)].value -
                        lt.dispatch_us[int(DispatchClass::kView)].value;
  ASSERT_GT(launch, 0);
  const KernelWork g = testing::GemmWork(128, 768, 768);
  WorkList w;
  w.kernels = {g};
  w.dispatches = {DispatchWork{DispatchClass::kLibrary, 0, 0, 1}};
  Expected<ResolvedParams> one = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_DOUBLE_EQ(one->launch_us, launch);  // LibTorch's, not TorchScript's own costs
  const Timing t1 = Simulate(w, one.value());
  EXPECT_DOUBLE_EQ(t1.launch_us, 0);
  // The bench saw this GEMM launch three kernels: two more launches on the CPU side.
  AnchorAt(&prof, "gemm/fp16", g, 3);
  Expected<ResolvedParams> three = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(three.ok());
  const Timing t3 = Simulate(w, three.value());
  EXPECT_NEAR(t3.framework_us - t1.framework_us, 2 * launch, 1e-9);
  EXPECT_NEAR(t3.launch_us, 2 * launch, 1e-9);
  // An op that launches two kernels of its own pays one launch more than its dispatch.
  KernelWork e;
  e.cls = KernelClass::kElementwise;
  e.dtype = DType::kFloat16;
  e.bytes = 1e5;
  WorkList two;
  two.kernels = {e, e};
  two.dispatches = {DispatchWork{DispatchClass::kKernel, 0, 0, 2}};
  Expected<ResolvedParams> rp = ResolveParams(two, prof, Framework::kPytorchEager);
  ASSERT_TRUE(rp.ok());
  EXPECT_NEAR(Simulate(two, rp.value()).framework_us,
              rp->call_us + rp->dispatch_us[int(DispatchClass::kKernel)] + launch, 1e-9);
  // Without libtorch-eager in the profile, the framework's own kernel - view stands in.
  prof.frameworks.erase("libtorch-eager");
  Expected<ResolvedParams> own = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(own.ok());
  EXPECT_DOUBLE_EQ(own->launch_us, std::max(0.0, own->dispatch_us[int(DispatchClass::kKernel)] -
                                                     own->dispatch_us[int(DispatchClass::kView)]));
}

// A dispatch that waits for the GPU (a copy of a CPU tensor to it) starts when the kernels
// queued before it are done: the CPU cannot run ahead of a long kernel there, so what it
// issues after waits as long as the kernel runs. By hand: one long kernel, then the copy and
// ten one-kernel dispatches; with the wait the latency is at least the kernel plus the eleven
// dispatches' CPU costs, without it the kernel plus the ten small kernels run back to back.
TEST(PipelineTest, AWaitForTheGpuSerializesTheCpuBehindQueuedKernels) {
  HostProfile prof = testing::SyntheticProfile();
  WorkList w;
  KernelWork big;
  big.cls = KernelClass::kElementwise;
  big.dtype = DType::kFloat16;
  big.bytes = 1.0;
  big.flops = 1.0;
  auto add = [&w](int kernels, bool waits) {
    DispatchWork d;
    d.cls = DispatchClass::kKernel;
    d.first_kernel = int(w.kernels.size()) - kernels;  // the kernels just pushed
    d.num_kernels = kernels;
    d.waits_for_gpu = waits;
    w.dispatches.push_back(d);
  };
  w.kernels.push_back(big);
  add(1, false);
  add(0, true);  // the copy
  for (int i = 0; i < 10; ++i) {
    w.kernels.push_back(big);
    add(1, false);
  }
  // The first kernel long: an elementwise kernel of many bytes (its time as the model prices it).
  const KernelParams& ew = prof.gpu.kernels.at(KernelKey(KernelClass::kElementwise, DType::kFloat16));
  w.kernels[0].bytes = 1e10;
  const double long_us = KernelTimeUs(w.kernels[0], ew, prof.gpu.num_sms);
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(rp.ok());
  const double cpu_after = 11 * rp->dispatch_us[int(DispatchClass::kKernel)];
  ASSERT_GT(long_us, 10 * cpu_after);
  const Timing waits = Simulate(w, rp.value());
  w.dispatches[1].waits_for_gpu = false;
  const Timing free = Simulate(w, rp.value());
  EXPECT_GT(waits.sync_wait_us, long_us - cpu_after);
  EXPECT_GE(waits.latency_us, long_us + cpu_after - 1e-6);
  // Without the wait the CPU's dispatches hide under the long kernel (which starts once its
  // own dispatch is done): the ten small kernels run back to back after it.
  const double small_us = KernelTimeUs(w.kernels[1], ew, prof.gpu.num_sms);
  EXPECT_LE(free.latency_us, rp->dispatch_us[int(DispatchClass::kKernel)] + long_us +
                                 10 * (small_us + rp->kernel_gap_us) + rp->call_us + 1e-6);
  EXPECT_EQ(free.sync_wait_us, 0);
}

TEST(PipelineTest, MissingFrameworkIsAClearError) {
  HostProfile prof = testing::SyntheticProfile();
  prof.frameworks.erase("torchscript");
  WorkList w;
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_FALSE(rp.ok());
  EXPECT_NE(rp.status().message().find("torchscript"), std::string::npos);
}

TEST(PipelineTest, MissingKernelClassIsNamed) {
  HostProfile prof = testing::SyntheticProfile();
  prof.gpu.kernels.erase("gemm/fp32");
  WorkList w;
  KernelWork k;
  k.cls = KernelClass::kGemm;
  k.dtype = DType::kFloat32;
  w.kernels.push_back(k);
  w.dispatches.push_back({DispatchClass::kLibrary, 0, 0, 1});
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kLibtorchEager);
  ASSERT_FALSE(rp.ok());
  EXPECT_NE(rp.status().message().find("gemm/fp32"), std::string::npos);
}

// A profile benchmarked in half precision alone prices an fp32 memory-bound kernel (batch
// norm's statistics in a half-precision CNN) with the fp16 class, by its bytes, and says so; a
// compute-bound class has no such fallback.
TEST(PipelineTest, Fp32MemoryBoundKernelsFallBackToHalfPrecision) {
  HostProfile prof = testing::SyntheticProfile();
  prof.gpu.kernels.erase("elementwise/fp32");
  prof.gpu.kernels.erase("gemm/fp32");
  ClassParams c = ResolveClassParams(prof, KernelClass::kElementwise, DType::kFloat32);
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.used_key, "elementwise/fp16");
  EXPECT_EQ(c.own, nullptr);  // no range of its own to check against
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("no elementwise/fp32 parameters in profile: used elementwise/fp16"), std::string::npos);
  EXPECT_FALSE(ResolveClassParams(prof, KernelClass::kGemm, DType::kFloat32).found);
}

TEST(PipelineTest, SamplingKeepsParametersNonNegative) {
  HostProfile prof = testing::SyntheticProfile();
  prof.frameworks["libtorch-eager"].call_us = Param::Of(0.1, 100);  // huge uncertainty
  std::mt19937_64 rng(11);
  WorkList w = RandomWork(rng, 10, 1.0);
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kLibtorchEager);
  ASSERT_TRUE(rp.ok());
  for (int i = 0; i < 200; ++i) {
    ResolvedParams s = SampleParams(rp.value(), rng);
    EXPECT_GE(s.call_us, 0);
    EXPECT_GE(Simulate(w, s).latency_us, 0);
  }
}


// A convolution (one kernel), an in-place ReLU (one kernel) and a view, each dispatched from
// ATen with its op type's cost key.
WorkList ConvReluView() {
  WorkList w;
  auto add = [&](DispatchClass c, const std::string& type, int kernels) {
    DispatchWork d;
    d.cls = c;
    d.cost_key = &DispatchCostKey("aten", type);
    d.first_kernel = int(w.kernels.size());
    d.num_kernels = kernels;
    for (int k = 0; k < kernels; ++k) {
      KernelWork kw;
      kw.cls = KernelClass::kElementwise;
      kw.dtype = DType::kFloat16;
      kw.bytes = 1024;
      w.kernels.push_back(kw);
    }
    w.dispatches.push_back(d);
  };
  add(DispatchClass::kLibrary, "_convolution", 1);
  add(DispatchClass::kKernel, "relu_", 1);
  add(DispatchClass::kView, "view", 0);
  return w;
}

// A dispatch whose op type the profile measured costs that op's cost, with the launches its
// bench chain made included; an op type without a measured cost costs its class's.
TEST(PipelineTest, MeasuredOpTypesArePricedByTheirOwnCost) {
  HostProfile prof = testing::SyntheticProfile();
  FrameworkParams& ts = prof.frameworks.at("torchscript");
  ts.op_us["conv"] = Param::Of(30, 1);
  ts.op_kernels["conv"] = 2;
  const WorkList w = ConvReluView();
  Expected<ResolvedParams> rp = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  ASSERT_EQ(rp->dispatch_op.size(), 3u);
  EXPECT_EQ(rp->dispatch_op[0], 0);
  EXPECT_EQ(rp->dispatch_op[1], -1);
  EXPECT_EQ(rp->dispatch_op[2], -1);
  bool noted = false;
  for (const std::string& n : rp->notes)
    noted = noted || n == "1 of 3 dispatches priced by their op type's measured cost; by their class's: relu (1)";
  EXPECT_TRUE(noted);
  ResolvedParams p = rp.value();
  ASSERT_GT(p.launch_us, 0);
  const double base = p.call_us + 30 + p.dispatch_us[int(DispatchClass::kKernel)] +
                      p.dispatch_us[int(DispatchClass::kView)];
  // The convolution launches 1 kernel where its bench chain launched 2: one launch saved.
  EXPECT_NEAR(Simulate(w, p).framework_us, base - p.launch_us, 1e-9);
  p.kernel_nodes[0] = 2;
  EXPECT_NEAR(Simulate(w, p).framework_us, base, 1e-9);
  // 3 kernels where its bench chain launched 2: one launch more.
  p.kernel_nodes[0] = 3;
  EXPECT_NEAR(Simulate(w, p).framework_us, base + p.launch_us, 1e-9);
  // Without per-op costs the same work is priced by class, launches beyond the first included.
  ts.op_us.clear();
  Expected<ResolvedParams> by_class = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(by_class.ok());
  EXPECT_TRUE(by_class->dispatch_op.empty());
  EXPECT_NEAR(Simulate(w, by_class.value()).framework_us, SumCpu(w, by_class.value()), 1e-9);
}

// Relative op scales (FrameworkParams::op_scale) scale an op type's measured cost by its own
// scale and every other CPU cost (ops priced by class, the call) by the rest's. By hand: conv
// 30 us x0.5, the rest x2.
TEST(PipelineTest, RelativeOpScalesScaleEachOpTypeAndTheRest) {
  HostProfile prof = testing::SyntheticProfile();
  FrameworkParams& ts = prof.frameworks.at("torchscript");
  ts.op_us["conv"] = Param::Of(30, 1);
  ts.op_kernels["conv"] = 1;
  const WorkList w = ConvReluView();
  Expected<ResolvedParams> plain = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const double call = plain->call_us, kernel = plain->dispatch_us[int(DispatchClass::kKernel)],
               view = plain->dispatch_us[int(DispatchClass::kView)];
  EXPECT_NEAR(Simulate(w, plain.value()).framework_us, call + 30 + kernel + view, 1e-9);
  ts.op_scale = {{"conv", 0.5}, {"*", 2.0}};
  Expected<ResolvedParams> scaled = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(scaled.ok());
  EXPECT_NEAR(Simulate(w, scaled.value()).framework_us, 2 * call + 15 + 2 * kernel + 2 * view, 1e-9);
  EXPECT_NEAR(OpFrameworkUs(w, scaled.value()).at("conv").first, 15, 1e-9);
  bool noted = false;
  for (const std::string& n : scaled->notes)
    noted = noted || n == "torchscript: op costs scaled as whole models ran them (conv x0.50; the rest x2.00)";
  EXPECT_TRUE(noted);
  // A framework priced by class alone has no op types to scale: the scales do nothing.
  ts.op_us.clear();
  Expected<ResolvedParams> by_class = ResolveParams(w, prof, Framework::kTorchscript);
  ASSERT_TRUE(by_class.ok());
  EXPECT_NEAR(by_class->call_us, call, 1e-12);
}

// A kernel beyond its class's measured range by more than the profile's kernel facts allow
// is noted as extrapolated. By hand: a GEMM of 1.2x the largest bytes measured is within the
// default margin of 1.5x, and beyond a margin of 1.1x.
TEST(PipelineTest, ExtrapolationNoteFollowsTheKernelFactsMargin) {
  HostProfile prof = testing::SyntheticProfile();
  KernelParams& gemm = prof.gpu.kernels.at("gemm/fp16");
  KernelWork k = testing::GemmWork(1024, 1024, 1024);
  gemm.max_bytes = k.bytes / 1.2;
  gemm.max_flops = k.flops / 1.2;
  WorkList w;
  w.kernels.push_back(k);
  DispatchWork d;
  d.cls = DispatchClass::kLibrary;
  d.num_kernels = 1;
  w.dispatches.push_back(d);
  auto extrapolated = [&](const HostProfile& p) {
    Expected<ResolvedParams> rp = ResolveParams(w, p, Framework::kTorchscript);
    EXPECT_TRUE(rp.ok()) << rp.status().message();
    for (const std::string& n : rp->notes)
      if (n == "1 gemm/fp16 kernels are larger than anything the profile measured (extrapolated)") return true;
    return false;
  };
  EXPECT_FALSE(extrapolated(prof));
  prof.kernel_facts.extrapolated_beyond = 1.1;
  EXPECT_TRUE(extrapolated(prof));
  prof.kernel_facts.extrapolated_beyond = 1.25;
  EXPECT_FALSE(extrapolated(prof));
}

}  // namespace
// The launches an op makes beyond (or short of) its bench chain's cost what the profile says a
// launch costs: the op's own launch cost where its chains of several geometries gave one, else
// the host's timed launch (gpu.launch_us), else libtorch-eager's kernel less view dispatch. By
// hand: conv measured 40 us at 4 kernels; a 1x1 conv of 1 kernel saves 3 launches.
TEST(PipelineTest, LaunchesBeyondOrShortOfTheBenchCostTheProfilesLaunch) {
  HostProfile prof = testing::SyntheticProfile();
  FrameworkParams& eager = prof.frameworks.at("pytorch-eager");
  eager.op_us["conv"] = Param::Of(40, 1);
  eager.op_kernels["conv"] = 4;
  WorkList w;
  DispatchWork d;
  d.cls = DispatchClass::kLibrary;
  d.cost_key = &DispatchCostKey("aten", "_convolution");
  d.first_kernel = 0;
  d.num_kernels = 1;
  KernelWork kw;
  kw.cls = KernelClass::kElementwise;
  kw.dtype = DType::kFloat16;
  kw.bytes = 1024;
  w.kernels = {kw};
  w.dispatches = {d};
  auto cpu = [&](const HostProfile& p) {
    Expected<ResolvedParams> rp = ResolveParams(w, p, Framework::kPytorchEager);
    EXPECT_TRUE(rp.ok()) << rp.status().message();
    return Simulate(w, rp.value()).framework_us - rp->call_us - rp->module_us * w.module_calls;
  };
  const FrameworkParams& lt = prof.frameworks.at("libtorch-eager");
  const double kernel_less_view =
      lt.dispatch_us[int(DispatchClass::kKernel)].value - lt.dispatch_us[int(DispatchClass::kView)].value;
  EXPECT_NEAR(cpu(prof), 40 - 3 * kernel_less_view, 1e-9);
  prof.gpu.launch_us = Param::Of(2.5, 0.1);
  EXPECT_NEAR(cpu(prof), 40 - 3 * 2.5, 1e-9);
  eager.op_launch_us["conv"] = Param::Of(6, 0.5);
  EXPECT_NEAR(cpu(prof), 40 - 3 * 6, 1e-9);
  // Two launches more than the chain (6 kernels) cost the op's launch twice.
  w.kernels = {kw, kw, kw, kw, kw, kw};
  w.dispatches[0].num_kernels = 6;
  EXPECT_NEAR(cpu(prof), 40 + 2 * 6, 1e-9);
  // A profile without the field reads and writes as before; with it, it round-trips.
  Expected<HostProfile> back = HostProfileFromJson(HostProfileToJson(prof));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->gpu.launch_us.value, 2.5);
  EXPECT_DOUBLE_EQ(back->frameworks.at("pytorch-eager").op_launch_us.at("conv").value, 6);
}

}  // namespace ftax
