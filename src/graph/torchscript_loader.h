// The TorchScript front end: reads a `torch.jit.trace` / `torch.jit.script` file (.pt) into the
// Graph IR through LibTorch.
//
// A TorchScript file records what PyTorch eager dispatches, one aten op per call, which is what
// the framework-overhead model needs. It carries no input shapes, so the caller gives them
// (`--input-shape NAME=DIMS`, inputs named as `forward`'s arguments). The loader then walks
// `forward` itself: method calls on submodules are followed (the module path becomes the op's
// scope, "/encoder/layer.0/attention/self", which tells how many nn.Module calls a Python
// eager run makes), parameters are resolved through the module tree (their dims and dtypes
// become initializers; their bytes are never copied), and every tensor gets its shape from
// ftax's own rules for the aten ops models contain (views, matmul family, convolution,
// pooling, reductions, indexing, factories, integer shape arithmetic). For an aten op without
// a rule, the op itself is run on LibTorch's "meta" device (shapes only, no data) and
// `Graph::warnings` says so. prim::If with a constant condition takes its branch; other Ifs
// count the costlier one (warned); prim::Loop with a constant trip count is unrolled.
//
// Ops come out as domain "aten", type without the "aten::" prefix ("linear", "conv2d",
// "scaled_dot_product_attention"), with tensor arguments as inputs in schema order ("" for a
// None tensor) and the other arguments as attributes under their schema names ("stride",
// "groups", "training"), the same convention the torch-flavored --arch generators use.
//
//   Expected<TorchScriptModel> m = TorchScriptModel::Load("bert.pt");
//   Expected<Graph> g = m->Walk({{"input_ids", {8, 128}}, {"attention_mask", {8, 128}}});
//
// Works with the LibTorch of the PyTorch 2.11 wheel and with Debian's libtorch 1.13; files
// traced by either load in both. Without LibTorch the functions return kUnsupported.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/dim_binding.h"
#include "graph/graph.h"

namespace ftax {

bool TorchScriptLoaderAvailable();

// True when the file starts like a TorchScript archive (a zip file) rather than ONNX.
bool LooksLikeTorchScript(const std::string& path);

struct TorchScriptWalkOptions {
  // Unroll limit for prim::Loop (iterations in all); beyond it the walk fails.
  int max_loop_iterations = 4096;
  // Check every op's output shape against LibTorch's meta kernels too (slow; tests).
  bool cross_check_with_meta = false;
};

class TorchScriptModel {
 public:
  static Expected<TorchScriptModel> Load(const std::string& path);

  // Names of forward's tensor arguments, in order (self excluded).
  const std::vector<std::string>& input_names() const;
  const std::string& path() const;

  // Builds the Graph for the given input shapes. Each input needs a shape; a single-input
  // model takes an unnamed one. Input dtypes: the flag's dtype when given, else int64 for
  // inputs named like ids, masks, positions or indices, else the dtype of the model's first
  // floating-point parameter.
  Expected<Graph> Walk(const std::vector<InputShapeFlag>& inputs,
                       const TorchScriptWalkOptions& options = {}) const;

  // Ops whose shapes came from meta execution rather than ftax's rules, and ops whose rule
  // disagreed with the meta kernel in a cross-checked walk, are listed in Graph::warnings.

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace ftax
