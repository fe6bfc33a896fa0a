// Frameworks whose framework tax ftax models, and kernel/dispatch classes.
//
// A framework decides what the CPU does per op (Python eager: Python + dispatcher per ATen
// call and per nn.Module call; LibTorch eager: the C++ dispatcher; TorchScript: the
// interpreter per graph node; CUDA graph: one graph launch for the whole model). Kernel
// classes group GPU kernels that share a cost curve; dispatch classes group CPU-side calls
// that share a cost. Names here are the ones used in profiles, measurements and the CLI.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ftax {

// A CUDA graph comes from two sources: kCudaGraph is captured from the TorchScript module (its
// profiling executor's fused element-wise kernels, TorchScript's decompositions), and
// kCudaGraphEager from the eager module (torch.cuda.graph around model(x): the kernels Python
// eager launches, the paper's "PyTorch + CUDA Graphs"). Both replay alike and share the
// profile's cuda-graph costs.
// Python eager comes in the two modes inference code runs under, each with its own dispatch
// costs: kPytorchEager is `torch.inference_mode()` (what PyTorch tells users to use for
// inference), kPytorchEagerNoGrad is `torch.no_grad()` (autograd's version counters and view
// tracking stay on, so each call costs a little more).
// torch.compile comes in the two modes PyTorch 2 users call: kTorchCompile is
// `torch.compile(model)` (Inductor fuses point-wise and reduction ops into Triton kernels, GEMMs,
// convolutions and attention stay library calls, and a Python wrapper launches each kernel),
// kTorchCompileReduceOverhead is `torch.compile(model, mode="reduce-overhead")` (the same
// kernels recorded once into a CUDA graph and replayed). Each has its own costs in a profile.
enum class Framework {
  kPytorchEager,
  kLibtorchEager,
  kTorchscript,
  kCudaGraph,
  kPytorchEagerNoGrad,
  kCudaGraphEager,
  kTorchCompile,
  kTorchCompileReduceOverhead,
};

const char* FrameworkName(Framework f);  // "pytorch-eager", "libtorch-eager", ...
// One sentence a PyTorch user recognises, for --help and reports.
const char* FrameworkDescription(Framework f);
// Python eager in either mode: per-op Python + dispatcher costs and nn.Module calls.
bool IsPythonEager(Framework f);
// A replayed CUDA graph, from any source (reduce-overhead torch.compile included).
bool IsCudaGraph(Framework f);
// torch.compile in either mode: Inductor's fused kernels.
bool IsTorchCompile(Framework f);
// The framework whose costs a profile keeps for `f` (cuda-graph for cuda-graph-eager; `f`
// itself otherwise).
Framework CostFramework(Framework f);
// The frameworks whose costs a profile keeps (and `ftax bench` measures): all but those that
// share another's.
std::vector<Framework> CostFrameworks();
std::optional<Framework> ParseFramework(const std::string& name);
std::vector<Framework> AllFrameworks();

// GPU kernel classes.
enum class KernelClass {
  kGemm,         // cuBLAS matrix products (incl. batched and bias epilogues)
  kConv,         // cuDNN convolutions (dense and grouped with many channels per group)
  kDepthwise,    // depthwise convolutions: memory bound
  kAttention,    // fused scaled-dot-product attention kernels without a mask
  kElementwise,  // pointwise arithmetic and activations
  kReduction,    // softmax, reductions, pooling
  kCopy,         // layout copies (contiguous after transpose, cat, slicing copies)
  kGather,       // embedding lookups, index_select
  kNorm,         // layer norm and batch norm (slower per byte than softmax on Hopper)
  kAttentionMasked,  // fused attention with an additive mask (a different, slower kernel)
};
constexpr int kNumKernelClasses = 10;
const char* KernelClassName(KernelClass c);
std::optional<KernelClass> ParseKernelClass(const std::string& name);
std::vector<KernelClass> AllKernelClasses();
// True for classes priced by arithmetic rate as well as bytes (gemm, conv, attention).
bool IsComputeClass(KernelClass c);

// CPU-side dispatch classes.
enum class DispatchClass {
  kView,     // metadata only (view, transpose, dropout in eval): no kernel
  kKernel,   // one op that launches a simple kernel
  kLibrary,  // a cuBLAS/cuDNN/attention call
};
constexpr int kNumDispatchClasses = 3;
const char* DispatchClassName(DispatchClass c);
std::optional<DispatchClass> ParseDispatchClass(const std::string& name);

}  // namespace ftax
