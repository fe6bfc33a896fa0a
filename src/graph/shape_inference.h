// ftax's own shape inference: fills in tensor shapes the front end did not declare.
//
// The walk follows the ops in topological order; one registry entry per op type computes the
// output dtype and shape from the inputs and attributes (Conv, Gemm, MatMul with broadcasting,
// Reshape with 0/-1, Slice, Gather, Concat, Resize, pooling, reductions, ...). Small integer
// tensors are folded as they go (Shape -> Gather -> Concat -> Reshape), so a Reshape whose
// target shape is computed at run time still gets a concrete shape once dims are bound.
// Symbolic dims propagate by name (a MatMul of batch x 768 by 768 x 3072 gives batch x 3072).
//
// Declared shapes win: an output whose shape is already concrete keeps it, so on a graph
// with every shape concrete (arch specs, fully annotated files) the walk changes nothing but
// constant contents. Except where a declared dim is 1 and the inputs, bound to a larger batch,
// give more: a dim the exporter specialized to the batch of 1 it traced; the inferred shape is
// used and a warning names the node. An op ftax cannot infer leaves its outputs as they are and adds a
// warning naming the node; `strict` turns that into an error.
//
//   Status s = InferShapes(&graph, {});    // after BindDims(); warnings land in graph.warnings
#pragma once

#include "common/status.h"
#include "graph/graph.h"

namespace ftax {

struct ShapeInferenceOptions {
  // Fail on the first op whose output shape cannot be inferred (default: warn and go on).
  bool strict = false;
  // Int constants up to this many elements are folded (Shape, Gather, Concat, Range, ...):
  // enough for a range over a sequence's positions, from which exporters take offsets.
  int64_t max_folded_elements = 1024;
};

// Infers shapes in `graph` and its If/Loop/Scan bodies, in place. Also resolves Loop trip
// counts and Scan lengths that are constant, multiplying the body ops' `repeat`.
Status InferShapes(Graph* graph, const ShapeInferenceOptions& options = {});

// True if ftax has an inference entry for this (domain, op type).
bool HasShapeInference(const std::string& domain, const std::string& op_type);

// Broadcasts two shapes by numpy rules; symbolic dims match by name. Error on a mismatch.
Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b);

}  // namespace ftax
