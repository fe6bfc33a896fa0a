// The ONNX front end: reads a .onnx file into the Graph IR without reading weight bytes.
//
// The loader parses ONNX's own protobuf schema (libonnx), but first walks the wire format and
// drops the payload of large tensors (raw_data, float_data, ...) so that a 1 GB single-file
// model costs about the same as a structure-only one: only dims and dtypes of initializers are
// kept, plus the contents of small integer tensors that shape arithmetic needs. External-data
// initializers are never opened, so a model whose data file is missing still loads.
//
// What it keeps: opset imports, inputs/outputs/value_info shapes (concrete or symbolic dims),
// initializers (dims + dtype), Constant nodes, If/Loop/Scan bodies as subgraph attributes,
// model-local functions inlined at their call sites, node names and module scopes. Nodes are
// put in topological order; a cycle, a duplicated output name or an input nobody produces is
// an error naming the node and the tensor.
//
//   Expected<Graph> g = LoadOnnxFile("model.onnx");
//   if (!g.ok()) return g.status();   // "model.onnx: node 'MatMul_3' (MatMul): input ..."
//
// This header compiles without libonnx; in such a build the functions return kUnsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "graph/graph.h"

namespace ftax {

struct OnnxLoadOptions {
  // Integer tensors with at most this many elements keep their values (shape arithmetic).
  int64_t max_int_constant_elements = 64;
  // Tensor payloads larger than this are dropped while parsing (weights are never needed).
  int64_t max_kept_payload_bytes = 1024;
  // Nesting limits (subgraphs inside subgraphs, functions calling functions).
  int max_subgraph_depth = 32;
  int max_function_depth = 16;
  // false: ignore shapes declared in value_info and on graph outputs, keeping only the graph
  // inputs' shapes (used to test ftax's own shape inference against expected outputs).
  bool use_declared_shapes = true;

  Status Validate() const;
};

// Loads `path`. Errors name the file and, where it applies, the node, tensor or field.
Expected<Graph> LoadOnnxFile(const std::string& path, const OnnxLoadOptions& options = {});

// Loads a serialized ModelProto held in memory; `source` names it in messages.
Expected<Graph> LoadOnnxBuffer(const void* data, size_t size, const std::string& source,
                               const OnnxLoadOptions& options = {});

// True when this build has the ONNX front end (libonnx was found at configure time).
bool OnnxLoaderAvailable();

}  // namespace ftax
