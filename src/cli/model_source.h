// Where the CLI's model comes from: a model file (ONNX or TorchScript) or an --arch spec, with the user's
// --dim / --input-shape bindings, turned into a function from batch size to Graph for the
// predictor's sweeps. The batch is the symbolic dim named by --batch-dim (default "batch")
// when the model has one, else the leading dim of every graph input.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "graph/arch_spec.h"
#include "predictor/predict.h"

namespace ftax::cli {

struct ModelSourceOptions {
  std::string path;   // model file, or empty
  std::string arch;   // arch spec, or empty
  std::string flavor = "torch";  // arch flavor: torch | onnx
  std::vector<std::string> dims;          // NAME=VALUE
  std::vector<std::string> input_shapes;  // [NAME=]DIMS
  std::string batch_dim = "batch";
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

// Multiplies the width keys (hidden, ffn, width) or the depth key (layers, or resnet blocks)
// of an arch spec by `factor`; errors for families without such a key.
Expected<std::string> ScaleArchSpec(const std::string& spec, const std::string& what, double factor);

}  // namespace ftax::cli
