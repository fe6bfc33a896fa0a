#include "predictor/inductor_fusion.h"

#include <gtest/gtest.h>

#include "predictor/framework.h"
#include "predictor/lowering_rules.h"
#include "predictor/pipeline.h"
#include "synthetic_profile.h"

namespace ftax {
namespace {

// One dispatch with the given kernels appended to `w`.
void Add(WorkList* w, DispatchClass dc, std::vector<KernelWork> ks) {
  DispatchWork d;
  d.cls = dc;
  d.op_index = int(w->dispatches.size());
  d.first_kernel = int(w->kernels.size());
  d.num_kernels = int(ks.size());
  for (const KernelWork& k : ks) w->kernels.push_back(k);
  w->dispatches.push_back(d);
}

KernelWork K(KernelClass c, double bytes, double flops = 0) {
  KernelWork k;
  k.cls = c;
  k.dtype = DType::kFloat16;
  k.bytes = bytes;
  k.flops = flops;
  return k;
}

// A ResNet-like stretch as eager runs it: a convolution, a batch norm (two small statistics
// kernels and its transform), a ReLU, a view, a convolution whose bias is its own add, a
// residual add and a softmax (375 values in, 375 out: FLOPs five per output value, bytes in and
// out, as lowering prices it); then a GEMM with nothing after it.
WorkList Eager() {
  WorkList w;
  w.module_calls = 9;
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kConv, 3000, 1e6)});
  Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 10), K(KernelClass::kElementwise, 10),
                                   K(KernelClass::kNorm, 2000, 50)});
  Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 2000, 20)});
  Add(&w, DispatchClass::kView, {});
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kConv, 4000, 2e6), K(KernelClass::kElementwise, 2500)});
  Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 3000, 30)});
  Add(&w, DispatchClass::kKernel, {K(KernelClass::kReduction, 1500, 1875)});
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kGemm, 5000, 3e6)});
  return w;
}

// An inference batch norm becomes point-wise work in Inductor's kernel: a fused group whose
// heaviest member is one is priced as element-wise; a layer norm (a reduction over the
// features) keeps the group a norm kernel.
TEST(InductorFusionTest, AnInferenceBatchNormFusesAsPointwiseWork) {
  KernelWork bn = K(KernelClass::kNorm, 2000, 50);
  bn.variant = KernelVariant::kBatchNorm;
  KernelWork ln = K(KernelClass::kNorm, 2000, 50);
  ln.variant = KernelVariant::kLayerNorm;
  for (const auto& [norm, fused] : {std::pair{bn, KernelClass::kElementwise}, std::pair{ln, KernelClass::kNorm}}) {
    WorkList w;
    Add(&w, DispatchClass::kLibrary, {K(KernelClass::kConv, 3000, 1e6)});
    Add(&w, DispatchClass::kKernel, {norm});
    Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 2000, 20)});
    const WorkList out = FuseAsInductor(w);
    ASSERT_EQ(out.kernels.size(), 2u);
    EXPECT_EQ(out.kernels[1].cls, fused);
    EXPECT_DOUBLE_EQ(out.kernels[1].bytes, 2000);
  }
}

// A convolution's bias: eager ATen adds it with a broadcast kernel after cuDNN's; Inductor calls
// the convolution without it and adds it in the Triton kernel that follows, with the ReLU
// ("triton_poi_fused_convolution_relu" in CUPTI records of SqueezeNet 1.1, H100). A GEMM's
// side kernels stay inside its call.
TEST(InductorFusionTest, AConvolutionsBiasJoinsTheTritonKernelAfterIt) {
  KernelWork bias = K(KernelClass::kElementwise, 2500, 10);
  bias.variant = KernelVariant::kBroadcast;
  for (const char* op : {"conv2d", "linear"}) {
    SCOPED_TRACE(op);
    WorkList w;
    Add(&w, DispatchClass::kLibrary, {K(KernelClass::kConv, 4000, 2e6), bias});
    w.dispatches.back().cost_key = &DispatchCostKey("aten", op);
    Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 2000, 20)});
    const WorkList out = FuseAsInductor(w);
    ASSERT_EQ(out.dispatches.size(), 2u);
    const bool conv = std::string(op) == "conv2d";
    EXPECT_EQ(out.dispatches[0].num_kernels, conv ? 1 : 2);
    ASSERT_EQ(out.kernels.size(), conv ? 2u : 3u);
    // the bias and the ReLU: one kernel, as many bytes as the member that moves the most
    EXPECT_DOUBLE_EQ(out.kernels.back().bytes, conv ? 2500 : 2000);
    EXPECT_DOUBLE_EQ(out.kernels.back().flops, conv ? 30 : 20);
  }
}

// A residual add and the layer norm after it: one Triton kernel, priced as a layer norm of the
// norm's rows and normalized size (its variant and shape kept), whichever member comes first.
TEST(InductorFusionTest, AFusedLayerNormKeepsItsShape) {
  KernelWork ln = K(KernelClass::kNorm, 2000, 50);
  ln.variant = KernelVariant::kLayerNorm;
  ln.m = 128;
  ln.n = 768;
  ln.k = 1;
  for (bool add_first : {true, false}) {
    SCOPED_TRACE(add_first ? "add, then the norm" : "the norm, then an add");
    WorkList w;
    Add(&w, DispatchClass::kLibrary, {K(KernelClass::kGemm, 5000, 3e6)});
    if (add_first) Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 3000, 30)});
    Add(&w, DispatchClass::kKernel, {ln});
    if (!add_first) Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 3000, 30)});
    const WorkList out = FuseAsInductor(w);
    ASSERT_EQ(out.kernels.size(), 2u);
    const KernelWork& f = out.kernels[1];
    EXPECT_EQ(f.cls, KernelClass::kNorm);
    EXPECT_EQ(f.variant, KernelVariant::kLayerNorm);
    EXPECT_EQ(f.m, 128);
    EXPECT_EQ(f.n, 768);
    EXPECT_DOUBLE_EQ(f.bytes, 3000);
    EXPECT_DOUBLE_EQ(f.flops, 80);
  }
}

// A squeeze-excitation block's squeeze: the batch norm and SiLU before a global average pool are
// one point-wise kernel and the pool another (its input is read again by the gate), where a
// softmax, whose output is as large as its input, fuses with the point-wise work before it.
TEST(InductorFusionTest, AReductionThatShrinksItsInputStartsAKernelOfItsOwn) {
  // lowering's reduction kernels: FLOPs five per output value, bytes input and output (fp16)
  KernelWork pool = K(KernelClass::kReduction, 2 * (64 * 56 * 56 + 64), 5 * 64);
  KernelWork softmax = K(KernelClass::kReduction, 2 * 2 * 12 * 128 * 128, 5 * 12 * 128 * 128);
  for (const auto& [reduction, kernels] : {std::pair{pool, 3u}, std::pair{softmax, 2u}}) {
    WorkList w;
    Add(&w, DispatchClass::kLibrary, {K(KernelClass::kConv, 3000, 1e6)});
    Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 2000, 20)});
    Add(&w, DispatchClass::kKernel, {reduction});
    const WorkList out = FuseAsInductor(w);
    EXPECT_EQ(out.kernels.size(), kernels);
    EXPECT_EQ(out.kernels.back().cls, KernelClass::kReduction);
  }
}

TEST(InductorFusionTest, RunsBetweenLibraryCallsBecomeOneKernelEach) {
  const WorkList out = FuseAsInductor(Eager());
  // conv, [bn + relu], conv (+ its bias add), [add + softmax], gemm; the view is gone.
  ASSERT_EQ(out.dispatches.size(), 5u);
  ASSERT_EQ(out.kernels.size(), 6u);
  EXPECT_EQ(out.module_calls, 9);  // the modules stay: Dynamo checks their guards every call
  EXPECT_EQ(out.dispatches[0].cls, DispatchClass::kLibrary);
  EXPECT_EQ(out.dispatches[1].cls, DispatchClass::kKernel);
  EXPECT_EQ(out.dispatches[2].cls, DispatchClass::kLibrary);
  EXPECT_EQ(out.dispatches[2].num_kernels, 2);  // a library call keeps the kernels it launches
  EXPECT_EQ(out.dispatches[3].cls, DispatchClass::kKernel);
  EXPECT_EQ(out.dispatches[4].cls, DispatchClass::kLibrary);
  // The fused batch norm + ReLU: a norm kernel moving the largest member's bytes, with every
  // member's FLOPs.
  const KernelWork& bn = out.kernels[size_t(out.dispatches[1].first_kernel)];
  EXPECT_EQ(bn.cls, KernelClass::kNorm);
  EXPECT_DOUBLE_EQ(bn.bytes, 2000);
  EXPECT_DOUBLE_EQ(bn.flops, 70);
  const KernelWork& tail = out.kernels[size_t(out.dispatches[3].first_kernel)];
  EXPECT_EQ(tail.cls, KernelClass::kReduction);
  EXPECT_DOUBLE_EQ(tail.bytes, 3000);
  EXPECT_DOUBLE_EQ(tail.flops, 1905);
  EXPECT_EQ(out.kernels[size_t(out.dispatches[4].first_kernel)].cls, KernelClass::kGemm);
  // Dispatch ranges stay consistent.
  int next = 0;
  for (const DispatchWork& d : out.dispatches) {
    EXPECT_EQ(d.first_kernel, next);
    next += d.num_kernels;
  }
  EXPECT_EQ(next, int(out.kernels.size()));
  ASSERT_FALSE(out.notes.empty());
  EXPECT_NE(out.notes.back().find("10 kernels become 6"), std::string::npos) << out.notes.back();
}

// A compiled model's library calls keep their op's cost key, so a profile that measured
// compiled chains of convolutions prices each at that cost; a fused Triton kernel has no op
// type and costs its class's dispatch. By hand: call 20 + conv 41 less the launch it skips (it
// launches 1 kernel, the chain 2 per convolution) + fused kernel 3 + conv 41 (its bias add
// covered) + fused 3 + GEMM 4.5.
TEST(InductorFusionTest, LibraryCallsArePricedByTheirOpTypesCompiledCost) {
  WorkList eager = Eager();
  for (int i : {0, 4}) eager.dispatches[size_t(i)].cost_key = &DispatchCostKey("aten", "_convolution");
  eager.dispatches[7].cost_key = &DispatchCostKey("aten", "mm");
  eager.dispatches[2].cost_key = &DispatchCostKey("aten", "relu");
  const WorkList out = FuseAsInductor(eager);
  ASSERT_EQ(out.dispatches.size(), 5u);
  ASSERT_NE(out.dispatches[0].cost_key, nullptr);
  EXPECT_EQ(*out.dispatches[0].cost_key, "conv");
  EXPECT_EQ(out.dispatches[1].cost_key, nullptr);  // bn + relu fused: no single op's cost
  HostProfile prof = testing::SyntheticProfile();
  FrameworkParams& tc = prof.frameworks.at("torch-compile");
  tc.op_us["conv"] = Param::Of(41, 1);
  tc.op_kernels["conv"] = 2;
  Expected<ResolvedParams> rp = ResolveParams(out, prof, Framework::kTorchCompile);
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  EXPECT_EQ(rp->dispatch_op, (std::vector<int>{0, -1, 0, -1, -1}));
  ResolvedParams p = rp.value();
  for (int& n : p.kernel_nodes) n = 1;
  ASSERT_GT(p.launch_us, 0);
  EXPECT_NEAR(Simulate(out, p).framework_us, 20 + (41 - p.launch_us) + 3 + 41 + 3 + 4.5, 1e-9);
}

// The default mode's call handles each tensor of model state its kernels read (input_us per
// graph input, beside call_us); reduce-overhead's replay and every other framework do not pay it.
TEST(InductorFusionTest, TheCompiledCallPaysForEachTensorOfModelStateItsKernelsRead) {
  WorkList eager = Eager();
  eager.graph_inputs = 40;
  const WorkList out = FuseAsInductor(eager);
  EXPECT_EQ(out.graph_inputs, 40);
  HostProfile prof = testing::SyntheticProfile();
  for (Framework f : {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead}) {
    SCOPED_TRACE(FrameworkName(f));
    const std::string name = FrameworkName(CostFramework(f));
    ASSERT_TRUE(prof.frameworks.count(name));
    HostProfile with = prof;
    with.frameworks.at(name).input_us = Param::Of(2.5, 0);
    Expected<ResolvedParams> a = ResolveParams(out, prof, f);
    Expected<ResolvedParams> b = ResolveParams(out, with, f);
    ASSERT_TRUE(a.ok() && b.ok());
    const Timing ta = Simulate(out, a.value()), tb = Simulate(out, b.value());
    const double extra = f == Framework::kTorchCompile ? 2.5 * 40 : 0.0;
    EXPECT_NEAR(tb.framework_us - ta.framework_us, extra, 1e-9);
    EXPECT_NEAR(tb.latency_us - ta.latency_us, extra, 1e-9);
  }
}

// Dynamo checks the guards of every module of a compiled model before the default mode's call
// runs: module_us per module, once per call, with the call, said in a note. Reduce-overhead
// keeps its own costs, and a profile without module_us prices no module.
TEST(InductorFusionTest, TheDefaultModePaysForEachModulesGuardsOncePerCall) {
  const WorkList out = FuseAsInductor(Eager());  // 9 module calls
  HostProfile prof = testing::SyntheticProfile();
  for (Framework f : {Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead}) {
    SCOPED_TRACE(FrameworkName(f));
    const std::string name = FrameworkName(CostFramework(f));
    HostProfile without = prof, with = prof;
    without.frameworks.at(name).module_us = Param{};
    with.frameworks.at(name).module_us = Param::Of(3.0, 0);
    Expected<ResolvedParams> a = ResolveParams(out, without, f);
    Expected<ResolvedParams> b = ResolveParams(out, with, f);
    ASSERT_TRUE(a.ok() && b.ok());
    const Timing ta = Simulate(out, a.value()), tb = Simulate(out, b.value());
    const double extra = f == Framework::kTorchCompile ? 3.0 * 9 : 0.0;
    EXPECT_NEAR(tb.framework_us - ta.framework_us, extra, 1e-9);
    EXPECT_NEAR(tb.latency_us - ta.latency_us, extra, 1e-9);
    auto says = [](const ResolvedParams& rp, const std::string& what) {
      for (const auto& n : rp.notes)
        if (n.find(what) != std::string::npos) return true;
      return false;
    };
    const bool compiled = f == Framework::kTorchCompile;
    EXPECT_FALSE(says(a.value(), "guards of the model's"));
    EXPECT_EQ(says(b.value(), "guards of the model's 9 modules and gathers their tensors every call, outside the generated code: 3.00 us each"),
              compiled);
  }
}

// Reduce-overhead as its replays were marked (call_before_replay): the wrapper's CPU work, call_us
// and module_us per module, comes before the replay, so it adds to the GPU's time; a profile
// without a reduce-overhead module cost borrows the default mode's. A profile of the older
// reading takes max(call_us, the replay).
TEST(InductorFusionTest, ReduceOverheadPaysTheWrappersWorkBeforeItsReplay) {
  const WorkList out = FuseAsInductor(Eager());  // 9 module calls
  HostProfile prof = testing::SyntheticProfile();
  FrameworkParams& ro = prof.frameworks.at(FrameworkName(Framework::kTorchCompileReduceOverhead));
  ro.call_us = Param::Of(70.0, 0);
  ro.node_gap_us = Param::Of(0.5, 0);
  ro.replay_per_node_us = Param::Of(0.0, 0);
  Expected<ResolvedParams> older = ResolveParams(out, prof, Framework::kTorchCompileReduceOverhead);
  ASSERT_TRUE(older.ok()) << older.status().message();
  const Timing to = Simulate(out, older.value());
  const double replay = to.compute_us + 0.5 * to.kernels;
  EXPECT_NEAR(to.latency_us, std::max(70.0, replay), 1e-9);

  ro.call_before_replay = true;
  ro.module_us = Param::Of(0.8, 0);
  Expected<ResolvedParams> marked = ResolveParams(out, prof, Framework::kTorchCompileReduceOverhead);
  ASSERT_TRUE(marked.ok());
  const Timing tm = Simulate(out, marked.value());
  EXPECT_NEAR(tm.latency_us, 70.0 + 0.8 * 9 + replay, 1e-9);
  EXPECT_NEAR(tm.framework_us, 70.0 + 0.8 * 9 + 0.5 * tm.kernels, 1e-9);
  EXPECT_NEAR(tm.compute_us, to.compute_us, 1e-9);

  ro.module_us = Param{};  // borrowed from the default mode, and said so
  prof.frameworks.at(FrameworkName(Framework::kTorchCompile)).module_us = Param::Of(1.1, 0);
  Expected<ResolvedParams> borrowed = ResolveParams(out, prof, Framework::kTorchCompileReduceOverhead);
  ASSERT_TRUE(borrowed.ok());
  EXPECT_NEAR(Simulate(out, borrowed.value()).latency_us, 70.0 + 1.1 * 9 + replay, 1e-9);
  bool said = false;
  for (const auto& n : borrowed->notes)
    said = said || n.find("9 modules before the graph replays: 1.10 us each, as the default mode's bench priced a module") !=
                       std::string::npos;
  EXPECT_TRUE(said);
}

TEST(InductorFusionTest, AModelOfLibraryCallsAloneIsUnchanged) {
  WorkList w;
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kGemm, 100)});
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kAttention, 100)});
  const WorkList out = FuseAsInductor(w);
  EXPECT_EQ(out.dispatches.size(), 2u);
  EXPECT_EQ(out.kernels.size(), 2u);
}

// nn.MultiheadAttention's fast path is one eager dispatch (QKV GEMM, attention with its
// statistics memset, output GEMM). Compiled, it is five wrapper calls and three copies: the
// QKV GEMM (a linear), q, k and v each copied by a Triton kernel of its own (half the
// attention's bytes each: the tensor read and written), the attention call with its memset,
// the output GEMM (a linear). Element-wise work after it still fuses as before.
TEST(InductorFusionTest, AMultiHeadAttentionRunsAsItsPartsUnderTorchCompile) {
  WorkList w;
  Add(&w, DispatchClass::kLibrary, {K(KernelClass::kGemm, 300, 3e6), K(KernelClass::kAttention, 400, 1e6),
                                    K(KernelClass::kElementwise, 8), K(KernelClass::kGemm, 100, 1e6)});
  w.dispatches[0].cost_key = &DispatchCostKey("aten", "_native_multi_head_attention");
  ASSERT_EQ(*w.dispatches[0].cost_key, "multi_head_attention");
  Add(&w, DispatchClass::kKernel, {K(KernelClass::kElementwise, 50)});
  const WorkList out = FuseAsInductor(w);
  ASSERT_EQ(out.dispatches.size(), 7u);
  ASSERT_EQ(out.kernels.size(), 8u);
  const std::vector<DispatchClass> classes = {DispatchClass::kLibrary, DispatchClass::kKernel, DispatchClass::kKernel,
                                              DispatchClass::kKernel, DispatchClass::kLibrary, DispatchClass::kLibrary,
                                              DispatchClass::kKernel};
  const std::vector<int> kernels = {1, 1, 1, 1, 2, 1, 1};
  for (size_t i = 0; i < classes.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(out.dispatches[i].cls, classes[i]);
    EXPECT_EQ(out.dispatches[i].num_kernels, kernels[i]);
  }
  EXPECT_EQ(*out.dispatches[0].cost_key, "linear");
  EXPECT_EQ(*out.dispatches[4].cost_key, "scaled_dot_product_attention");
  EXPECT_EQ(*out.dispatches[5].cost_key, "linear");
  for (int i : {1, 2, 3}) {
    const KernelWork& copy = out.kernels[size_t(out.dispatches[size_t(i)].first_kernel)];
    EXPECT_EQ(copy.cls, KernelClass::kCopy);
    EXPECT_EQ(copy.variant, KernelVariant::kContiguous);
    EXPECT_DOUBLE_EQ(copy.bytes, 200);
  }
  EXPECT_EQ(out.kernels[size_t(out.dispatches[4].first_kernel) + 1].cls, KernelClass::kElementwise);
  EXPECT_DOUBLE_EQ(out.kernels.back().bytes, 50);
  bool noted = false;
  for (const std::string& n : out.notes) noted = noted || n.find("1 nn.MultiheadAttention calls") != std::string::npos;
  EXPECT_TRUE(noted);

  // A side kernel ahead of the attention's first library call is never dropped: it is a
  // Triton kernel of its own.
  WorkList lead;
  Add(&lead, DispatchClass::kLibrary, {K(KernelClass::kElementwise, 8), K(KernelClass::kGemm, 300, 3e6)});
  lead.dispatches[0].cost_key = w.dispatches[0].cost_key;
  const WorkList split = FuseAsInductor(lead);
  ASSERT_EQ(split.dispatches.size(), 2u);
  EXPECT_EQ(split.dispatches[0].cls, DispatchClass::kKernel);
  EXPECT_EQ(split.dispatches[1].cls, DispatchClass::kLibrary);
  EXPECT_EQ(split.kernels.size(), 2u);
}

TEST(InductorFusionTest, FrameworksOfTorchCompile) {
  EXPECT_TRUE(IsTorchCompile(Framework::kTorchCompile));
  EXPECT_TRUE(IsTorchCompile(Framework::kTorchCompileReduceOverhead));
  EXPECT_FALSE(IsTorchCompile(Framework::kCudaGraphEager));
  EXPECT_TRUE(IsCudaGraph(Framework::kTorchCompileReduceOverhead));
  EXPECT_FALSE(IsCudaGraph(Framework::kTorchCompile));
  EXPECT_EQ(ParseFramework("reduce-overhead"), Framework::kTorchCompileReduceOverhead);
  EXPECT_EQ(ParseFramework("inductor"), Framework::kTorchCompile);
}

}  // namespace
}  // namespace ftax
