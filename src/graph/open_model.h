// Opening a model, the one way every front end does it: a model file (ONNX or TorchScript) or
// an arch spec, with the user's --dim / --input-shape bindings.
//
// OpenModelSource turns it into a function from batch size to Graph for the predictor's
// sweeps (predict, compare, the Python module); the batch is the symbolic dim named by
// batch_dim (default "batch") when the model has one, else the leading dim of every graph
// input. OpenModelGraph gives the one Graph the bindings describe, with no batch imposed
// (inspect). Errors name the flag, file, node or field at fault.
//
//   ModelSourceOptions m;
//   m.path = "tests/data/onnx/bert_base.onnx";
//   m.dims = {"seq=128"};
//   Expected<ModelSource> src = OpenModelSource(m);
//   Expected<Graph> g = src->at_batch(8);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/arch_spec.h"
#include "graph/dim_binding.h"
#include "graph/graph.h"

namespace ftax {

// The model at a batch size (predictor/predict.h declares the same alias).
using GraphAtBatch = std::function<Expected<Graph>(int64_t batch)>;

struct ModelSourceOptions {
  std::string path;   // model file, or empty
  std::string arch;   // arch spec, or empty
  std::string flavor = "torch";  // arch flavor: torch | onnx
  std::vector<std::string> dims;          // NAME=VALUE
  std::vector<std::string> input_shapes;  // [NAME=]DIMS
  std::string batch_dim = "batch";
  std::string dtype = "fp32";  // an arch spec's element type (OpenModelGraph; sweeps set their own)
  bool strict = false;         // OpenModelGraph: an ONNX node shape inference cannot type is an error
};

struct ModelSource {
  GraphAtBatch at_batch;
  std::string description;  // file path or spec
  bool from_onnx = false;
  bool from_torchscript = false;
  // An arch spec that can be re-generated with other keys (what-if width/depth).
  std::string arch;
  DimBindings dims;
  ArchFlavor flavor = ArchFlavor::kTorch;
};

Expected<ModelSource> OpenModelSource(const ModelSourceOptions& options);

// The Graph `options` describe as given: the user's dims and input shapes bound, no batch
// imposed (an arch spec needs its batch among the dims).
Expected<Graph> OpenModelGraph(const ModelSourceOptions& options);

// Multiplies the width keys (hidden, ffn, width) or the depth key (layers, or resnet blocks)
// of an arch spec by `factor`; errors for families without such a key.
Expected<std::string> ScaleArchSpec(const std::string& spec, const std::string& what, double factor);

}  // namespace ftax
