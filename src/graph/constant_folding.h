// Constant folding of the small tensors that shape arithmetic computes at run time.
//
// Exporters write a model's shape computations as ops: `F.pad(x, (0, (7 - W % 7) % 7))` in a
// Swin block becomes Shape -> Gather -> Mod -> Sub -> Concat -> ConstantOfShape -> Reshape ->
// Slice (step -1) -> Transpose -> Reshape -> Cast -> Pad. Once the input dims are bound, every
// tensor on such a chain is a small constant; FoldConstant computes it from its inputs'
// contents so that Pad, Reshape, Expand, Slice and Resize downstream get concrete values (what
// onnx-tool does, and what ONNX 1.12's shape inference does not).
//
// It folds ONNX ops elementwise (numpy broadcasting) and by layout (Transpose, Slice with any
// step, Concat, Gather, Reshape and friends, Tile, Expand, reductions) over tensors of at most
// `max_elements` elements whose every input is itself a known constant. Integers stay exact;
// floating-point contents (Resize scales, `Cast(int -> float) -> Div -> Floor`) are carried as
// doubles. Anything else returns nothing: folding is an optimization of inference, never a
// source of errors.
//
//   // in shape inference, after an op's output shapes are known:
//   std::optional<FoldedValues> v = FoldConstant(op, inputs, outputs, opset, 64);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace ftax {

// Contents of one folded output: int_values for integer/bool dtypes, float_values otherwise.
struct FoldedValue {
  bool is_int = true;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

// Folds `op` given its inputs (nullptr for an omitted optional input) and its outputs (whose
// dtypes and concrete shapes are already inferred). Returns one entry per output, or nothing
// when any input is not a known constant, an output is larger than `max_elements`, or the op
// is not one the folder knows.
std::optional<std::vector<FoldedValue>> FoldConstant(const Op& op,
                                                     const std::vector<const TensorInfo*>& inputs,
                                                     const std::vector<const TensorInfo*>& outputs,
                                                     int64_t opset, int64_t max_elements);

}  // namespace ftax
