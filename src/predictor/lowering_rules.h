// The lowering table: one row per (domain, op type) saying what dispatch an op costs on the
// CPU and which kernel recipe prices its GPU work. Data, kept apart from the walker
// (lowering.cc) that applies it.
#pragma once

#include <string>

#include "predictor/framework.h"

namespace ftax {

// How an op's GPU work is computed from its shapes.
enum class KernelRecipe {
  kNone,         // no kernel (views, shape arithmetic, dropout in eval)
  kLinear,       // x[..., in] @ W^T (+ bias): one GEMM with bias epilogue
  kMatMul,       // batched matrix product with broadcast
  kGemmOnnx,     // ONNX Gemm with transA/transB
  kConv,         // convolution (dense, grouped or depthwise)
  kAttention,    // fused scaled-dot-product attention
  kReduction,    // softmax, pooling, reductions: reads inputs, writes outputs
  kNorm,         // layer norm, batch norm: reads inputs, writes outputs
  kElementwise,  // pointwise: reads inputs, writes outputs
  kCopy,         // layout copy: reads and writes the output's bytes
  kGather,       // embedding lookup
};

struct LoweringRule {
  bool dispatch = true;  // costs a CPU dispatch in eager/TorchScript frameworks
  DispatchClass dispatch_class = DispatchClass::kKernel;
  KernelRecipe recipe = KernelRecipe::kElementwise;
  // ONNX MatMul/Add pairs: an Add of a rank-1 initializer to a MatMul output is folded into
  // the GEMM's bias epilogue.
  bool bias_foldable = false;
};

// Returns the rule for an op, or nullptr for an op type the table does not know.
const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type);

}  // namespace ftax
