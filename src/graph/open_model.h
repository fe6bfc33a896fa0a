// Opening a model, the one way every front end does it: a model file (ONNX or TorchScript) or
// an arch spec, with the user's --dim / --input-shape bindings.
//
// OpenModelSource turns it into a function from batch size to Graph for the predictor's
// sweeps (predict, compare, the Python module); the batch is the symbolic dim named by
// batch_dim (default "batch") when the model has one, else the leading dim of every graph
// input. OpenModelGraph gives the one Graph the bindings describe (inspect), with no batch
// imposed unless `batch` is set (validate: one measured row, one batch). Errors name the flag,
// file, node or field at fault.
//
//   ModelSourceOptions m;
//   m.path = "tests/data/onnx/bert_base.onnx";
//   m.dims = {"seq=128"};
//   Expected<ModelSource> src = OpenModelSource(m);
//   Expected<Graph> g = src->at_batch(8);
//
// A caller that opens the same files many times (validate predicts every measured row of a
// run) gives them a ModelFileCache, so that each TorchScript file is loaded once, and may give
// a TorchScript file's input shapes already parsed, in forward's order:
//
//   ModelFileCache files;
//   ModelSourceOptions row;
//   row.path = "data/models/bert-base.fp16.pt";
//   row.forward_inputs = {{"", {1, 128}, {}, DType::kInt64}, {"", {1, 128}, {}, DType::kInt64}};
//   row.batch = 8;
//   row.cache = &files;
//   Expected<Graph> g8 = OpenModelGraph(row);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/arch_spec.h"
#include "graph/dim_binding.h"
#include "graph/graph.h"

namespace ftax {

// The model at a batch size (predictor/predict.h declares the same alias).
using GraphAtBatch = std::function<Expected<Graph>(int64_t batch)>;

class TorchScriptModel;

// TorchScript files loaded by the opens that share the cache, by path (loading one takes far
// longer than walking it). ONNX files are read again by every open.
class ModelFileCache {
 public:
  Expected<std::shared_ptr<const TorchScriptModel>> TorchScript(const std::string& path);

 private:
  std::map<std::string, std::shared_ptr<const TorchScriptModel>> torchscript_;
};

struct ModelSourceOptions {
  std::string path;   // model file, or empty
  std::string arch;   // arch spec, or empty
  std::string flavor = "torch";  // arch flavor: torch | onnx
  std::vector<std::string> dims;          // NAME=VALUE
  std::vector<std::string> input_shapes;  // [NAME=]DIMS
  std::string batch_dim = "batch";
  std::string dtype = "fp32";  // an arch spec's element type (OpenModelGraph; sweeps set their own)
  bool strict = false;         // OpenModelGraph: an ONNX node shape inference cannot type is an error
  // A TorchScript file's input shapes (and dtypes), one per argument of forward in its order,
  // in place of input_shapes: a measured row's "inputs" (the file is read as TorchScript).
  std::optional<std::vector<InputShapeFlag>> forward_inputs;
  // OpenModelGraph: the batch to impose, as OpenModelSource's at_batch does; 0: none.
  int64_t batch = 0;
  // Where loaded files are kept between opens; null: every open loads its file.
  ModelFileCache* cache = nullptr;
  // Arch spec errors start with "--arch"; false where the spec came from elsewhere and the
  // caller says so (a measured row's "arch").
  bool arch_from_flag = true;
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
// imposed (an arch spec needs its batch among the dims) unless options.batch is set, in which
// case it is the graph OpenModelSource(options).at_batch(batch) gives, without that probe walk.
Expected<Graph> OpenModelGraph(const ModelSourceOptions& options);

// Multiplies the width keys (hidden, ffn, width) or the depth key (layers, or resnet blocks)
// of an arch spec by `factor`; errors for families without such a key.
Expected<std::string> ScaleArchSpec(const std::string& spec, const std::string& what, double factor);

}  // namespace ftax
