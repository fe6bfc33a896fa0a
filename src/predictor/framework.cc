#include "predictor/framework.h"

namespace ftax {

const char* FrameworkName(Framework f) {
  switch (f) {
    case Framework::kPytorchEager: return "pytorch-eager";
    case Framework::kLibtorchEager: return "libtorch-eager";
    case Framework::kTorchscript: return "torchscript";
    case Framework::kCudaGraph: return "cuda-graph";
    case Framework::kPytorchEagerNoGrad: return "pytorch-eager-no-grad";
    case Framework::kCudaGraphEager: return "cuda-graph-eager";
    case Framework::kTorchCompile: return "torch-compile";
    case Framework::kTorchCompileReduceOverhead: return "torch-compile-reduce-overhead";
  }
  return "?";
}

const char* FrameworkDescription(Framework f) {
  switch (f) {
    case Framework::kPytorchEager: return "model(x) from Python under torch.inference_mode()";
    case Framework::kPytorchEagerNoGrad: return "model(x) from Python under torch.no_grad()";
    case Framework::kLibtorchEager: return "the same ATen calls made from C++ (LibTorch), no Python";
    case Framework::kTorchscript: return "a torch.jit.trace'd module run by the TorchScript interpreter";
    case Framework::kCudaGraph:
      return "the TorchScript module captured once with torch.cuda.graph and replayed (g.replay())";
    case Framework::kCudaGraphEager:
      return "the eager module captured once with torch.cuda.graph and replayed (g.replay())";
    case Framework::kTorchCompile:
      return "torch.compile(model) called from Python: Inductor's fused Triton kernels and library calls";
    case Framework::kTorchCompileReduceOverhead:
      return "torch.compile(model, mode=\"reduce-overhead\"): the compiled kernels replayed as a CUDA graph";
  }
  return "?";
}

bool IsPythonEager(Framework f) {
  return f == Framework::kPytorchEager || f == Framework::kPytorchEagerNoGrad;
}

bool IsCudaGraph(Framework f) {
  return f == Framework::kCudaGraph || f == Framework::kCudaGraphEager ||
         f == Framework::kTorchCompileReduceOverhead;
}

bool IsTorchCompile(Framework f) {
  return f == Framework::kTorchCompile || f == Framework::kTorchCompileReduceOverhead;
}

Framework CostFramework(Framework f) {
  return f == Framework::kCudaGraphEager ? Framework::kCudaGraph : f;
}

std::vector<Framework> CostFrameworks() {
  std::vector<Framework> out;
  for (Framework f : AllFrameworks())
    if (CostFramework(f) == f) out.push_back(f);
  return out;
}

std::optional<Framework> ParseFramework(const std::string& name) {
  for (Framework f : AllFrameworks())
    if (name == FrameworkName(f)) return f;
  if (name == "pytorch" || name == "eager" || name == "pytorch-eager-inference")
    return Framework::kPytorchEager;
  if (name == "no-grad" || name == "eager-no-grad") return Framework::kPytorchEagerNoGrad;
  if (name == "libtorch") return Framework::kLibtorchEager;
  if (name == "jit" || name == "ts") return Framework::kTorchscript;
  if (name == "cudagraph" || name == "cuda-graphs") return Framework::kCudaGraph;
  if (name == "compile" || name == "inductor" || name == "torch-compile-default")
    return Framework::kTorchCompile;
  if (name == "reduce-overhead" || name == "compile-reduce-overhead")
    return Framework::kTorchCompileReduceOverhead;
  return std::nullopt;
}

std::vector<Framework> AllFrameworks() {
  return {Framework::kPytorchEager, Framework::kLibtorchEager, Framework::kTorchscript,
          Framework::kCudaGraph, Framework::kPytorchEagerNoGrad, Framework::kCudaGraphEager,
          Framework::kTorchCompile, Framework::kTorchCompileReduceOverhead};
}

const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kConv: return "conv";
    case KernelClass::kDepthwise: return "depthwise";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kCopy: return "copy";
    case KernelClass::kGather: return "gather";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kAttentionMasked: return "attention_masked";
  }
  return "?";
}

std::vector<KernelClass> AllKernelClasses() {
  return {KernelClass::kGemm,        KernelClass::kConv,      KernelClass::kDepthwise,
          KernelClass::kAttention,   KernelClass::kElementwise, KernelClass::kReduction,
          KernelClass::kCopy,        KernelClass::kGather,      KernelClass::kNorm,
          KernelClass::kAttentionMasked};
}

std::optional<KernelClass> ParseKernelClass(const std::string& name) {
  for (KernelClass c : AllKernelClasses())
    if (name == KernelClassName(c)) return c;
  return std::nullopt;
}

bool IsComputeClass(KernelClass c) {
  return c == KernelClass::kGemm || c == KernelClass::kConv || c == KernelClass::kAttention ||
         c == KernelClass::kAttentionMasked;
}

const char* DispatchClassName(DispatchClass c) {
  switch (c) {
    case DispatchClass::kView: return "view";
    case DispatchClass::kKernel: return "kernel";
    case DispatchClass::kLibrary: return "library";
  }
  return "?";
}

std::optional<DispatchClass> ParseDispatchClass(const std::string& name) {
  for (DispatchClass c : {DispatchClass::kView, DispatchClass::kKernel, DispatchClass::kLibrary})
    if (name == DispatchClassName(c)) return c;
  return std::nullopt;
}

}  // namespace ftax
