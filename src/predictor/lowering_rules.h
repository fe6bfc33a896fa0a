// The lowering table: one row per (domain, op type) saying what dispatch an op costs on the
// CPU and which kernel recipe prices its GPU work, and under which key a profile may keep the
// op's measured dispatch cost. Data, kept apart from the walker (lowering.cc) that applies it.
//
// The rows live in src/predictor/lowering_table.json (its "notes" say what each field means
// and how to add an op). CMake embeds that file's text in the library at build time, and it is
// parsed once, on the first lookup: the predictor opens no file. The lookups below are all a
// caller needs:
//
//   const LoweringRule* r = FindLoweringRule("aten", "relu_");   // relu's row: one kernel
//   const std::string& key = DispatchCostKey("aten", "conv2d");   // "conv"
//
// ParseLoweringTable checks a table's text (tests/predictor/lowering_table_test.cc runs it on
// the embedded one, so a bad row fails the build's tests, naming the row); should the embedded
// table fail to parse at run time anyway (a broken build), the first lookup aborts with that
// error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "predictor/framework.h"

namespace ftax {

// How an op's GPU work is computed from its shapes. The table names each recipe as
// KernelRecipeName says ("none", "linear", "gemm_onnx", ...).
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

// The recipe's name in the table ("elementwise", "native_mha", ...), and back.
const char* KernelRecipeName(KernelRecipe r);
std::optional<KernelRecipe> ParseKernelRecipe(const std::string& name);
std::vector<KernelRecipe> AllKernelRecipes();

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
// (frameworks.<fw>.op_us; the bench's per-op chains): the row's cost_key where it has one
// ("conv" for aten::_convolution, conv2d and ONNX Conv, "linear" for linear and addmm,
// "matmul" for matmul, bmm and mm). Otherwise an aten op's own name ("layer_norm"); an in-place
// op ("relu_", "addmm_") without a cost_key of its own takes its out-of-place form's ("relu",
// "linear"). The empty string for an ONNX op without a cost_key and for an op of another
// domain. The string lives as long as the program (work lists point at it).
const std::string& DispatchCostKey(const std::string& domain, const std::string& op_type);

// Every (domain, op type) the table has a row for ("aten" or "" for ONNX), sorted, for tests
// that check the table against the counting registry.
std::vector<std::pair<std::string, std::string>> LoweringTableKeys();

// One row of a lowering table, as parsed.
struct LoweringTableRow {
  std::string domain;  // "aten", or "" for the ONNX default domain
  std::string op_type;
  LoweringRule rule;
  std::string cost_key;  // empty: the default key (see DispatchCostKey)
};

// Parses a lowering table in the format of lowering_table.json: its rows in file order, or an
// InvalidInput error naming the first bad row by index and op ("rows[12] (aten::relu): unknown
// recipe \"elementwse\" ...") and saying what is wrong: not JSON, an unknown class or recipe,
// a duplicate (domain, op type), a missing, mistyped or unknown field, or a legend ("classes",
// "recipes") that does not list exactly the names the C++ knows.
Expected<std::vector<LoweringTableRow>> ParseLoweringTable(std::string_view json_text);

// The text of src/predictor/lowering_table.json as built into the library.
std::string_view EmbeddedLoweringTable();

}  // namespace ftax
