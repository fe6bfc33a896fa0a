// Binding symbolic dims: `--dim NAME=VALUE` and `--input-shape [NAME=]1x3x224x224`.
//
// ONNX files often leave dims symbolic ("batch", "sequence_length"). The CLI parses the user's
// flags with ParseDimFlag / ParseInputShapeFlag and BindDims then writes the values into
// every tensor of the graph and its subgraphs, before shape inference runs. An input shape
// also binds the symbols it replaces (x: batch x 3 x 224 x 224 given 8x3x224x224 binds
// batch=8), and a value that contradicts another binding is an error naming both.
//
//   Expected<DimFlag> d = ParseDimFlag("batch=8");
//   Status s = BindDims(&graph, {{"batch", 8}}, {});
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/graph.h"

namespace ftax {

// Named dim values (same type as arch_spec.h's DimBindings).
using DimBindings = std::map<std::string, int64_t>;

struct DimFlag {
  std::string name;
  int64_t value = 0;
};

struct InputShapeFlag {
  std::string input;  // empty: the model's only input
  std::vector<int64_t> dims;
  // Per dim: the name of a symbolic dim ("batch"), bound later by --dim or the sweep, or ""
  // for a concrete one. Empty when every dim is concrete. Symbolic dims hold -1 in `dims`.
  std::vector<std::string> symbols;
  // Element type given after ':' ("input_ids=8x128:int64"); used by front ends that store
  // no input types (TorchScript).
  std::optional<DType> dtype;
};

// "NAME=VALUE" with VALUE a positive integer.
Expected<DimFlag> ParseDimFlag(const std::string& text);
// "[NAME=]D1xD2x...[:DTYPE]" (',' also separates dims) with every D a positive integer or a
// symbol name (a name containing 'x' needs ',' separators: "max_len,128").
Expected<InputShapeFlag> ParseInputShapeFlag(const std::string& text);

// Replaces the symbolic dims of input-shape flags by their values in `dims`; a symbol with no
// value is an error naming it.
Expected<std::vector<InputShapeFlag>> ResolveInputShapes(const std::vector<InputShapeFlag>& flags,
                                                         const DimBindings& dims);

// Collects flags into bindings; the same name given twice with different values is an error.
Expected<DimBindings> CollectDims(const std::vector<DimFlag>& flags);

// Applies input shapes and dim values to the graph (and subgraphs). Names in `dims` that the
// graph never uses add a warning to graph->warnings.
Status BindDims(Graph* graph, const DimBindings& dims, const std::vector<InputShapeFlag>& inputs);

// Symbolic dims still present on the graph's inputs, sorted.
std::vector<std::string> UnboundInputDims(const Graph& graph);

}  // namespace ftax
