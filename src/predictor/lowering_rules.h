// The lowering table: one row per (domain, op type) saying what dispatch an op costs on the
// CPU and which kernel recipe prices its GPU work. Data, kept apart from the walker
// (lowering.cc) that applies it.
#pragma once

#include <string>
#include <utility>
#include <vector>

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
  // nn.MultiheadAttention's inference fast path (aten::_native_multi_head_attention): the
  // packed QKV projection GEMM, fused attention over the heads, the output projection GEMM.
  kNativeMha,
  // An op with a counting entry (op_cost.h) and no recipe of its own: one kernel priced from
  // its counted FLOPs and bytes (a GEMM-class kernel if it has MACs). Reported as such.
  kCounted,
};

struct LoweringRule {
  bool dispatch = true;  // costs a CPU dispatch in eager/TorchScript frameworks
  DispatchClass dispatch_class = DispatchClass::kKernel;
  KernelRecipe recipe = KernelRecipe::kElementwise;
  // ONNX MatMul/Add pairs: an Add of a rank-1 initializer to a MatMul output is folded into
  // the GEMM's bias epilogue.
  bool bias_foldable = false;
};

// Returns the rule for an op, or nullptr for an op type the table does not know. An in-place
// aten op ("silu_", "hardswish_", "dropout_") without a row of its own takes the rule of its
// out-of-place form: same dispatch, same kernel.
const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type);

// The key under which a profile may keep the measured dispatch cost of an op type
// (frameworks.<fw>.op_us; the bench's per-op chains): "conv" for aten::_convolution, conv2d
// and ONNX Conv, "linear" for linear and addmm, "matmul" for matmul, bmm and mm, an aten op's
// own name otherwise ("layer_norm", "relu" for relu_), and the empty string for an op of
// another domain or an ONNX op no PyTorch call is known for. The string lives as long as the
// program (work lists point at it).
const std::string& DispatchCostKey(const std::string& domain, const std::string& op_type);

// Every (domain, op type) the table has a row for ("aten" or "" for ONNX), for tests that
// check the table against the counting registry.
std::vector<std::pair<std::string, std::string>> LoweringTableKeys();

}  // namespace ftax
