// Internal to the TorchScript front end (torchscript_loader_torch.cc): the values a walk
// carries (tensors by name in the Graph, ints, lists, modules) and ftax's own shape rules for
// aten ops, with LibTorch's meta kernels as fallback and cross-check.
//
//   ts::ShapeRules rules(&graph);
//   Expected<std::vector<ts::Val>> outs = rules.Infer(call);   // kUnsupported: no rule
//   if (!outs.ok()) outs = rules.RunMeta(node, call);
//
// The rules are a table (torchscript_shapes_torch.cc, `Rules()`) from op name to a small
// function, grouped by kind: element-wise and broadcast, matmul and linear, attention,
// convolution/pooling/resampling, reductions, views and reshapes, indexing/splitting/joining,
// creation. Infer looks the op up and calls its rule; an op without one is kUnsupported. A rule
// reads its arguments through a RuleCall (by schema name: Tensor("weight"), Int("dim", 0),
// Ints("stride", &v, n), DtypeArg(fallback), DimArg(...)), makes its outputs with One / New /
// WithIndices, and returns Bad("why") ("aten::OP: why") for what it cannot know. To add a rule:
// write the function beside its kind, as `Outputs Rule(RuleCall& c, const TensorInfo& self)`
// when it needs the first argument as a tensor of known shape (the table then checks that, with
// the usual error), or `Outputs Rule(RuleCall& c)` when not; add one `t.Add(Rule, {"op", ...})`
// line to the table (an op named twice throws at first use). ScalarOp's integer and float
// shape arithmetic is a table of the same kind (`ScalarRules()`). The loader's tests walk their
// fixture models with the rules' results cross-checked against LibTorch's meta kernels;
// tests/graph/torchscript_shapes_torch_test.cc calls rules directly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include "common/status.h"
#include "graph/graph.h"

namespace ftax::ts {

// A value of the TorchScript program during the walk.
struct Val {
  enum Kind { kUnknown, kNone, kTensor, kInt, kDouble, kBool, kStr, kList, kModule };
  Kind kind = kUnknown;
  std::string tensor;  // kTensor: the Graph tensor's name
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
  std::vector<Val> items;  // kList (lists, tuples, dict values)
  std::shared_ptr<torch::jit::Module> module;
  std::string path;  // kModule: attribute path from the top module ("encoder.layer.0")

  static Val None() { Val v; v.kind = kNone; return v; }
  static Val Tensor(std::string name) { Val v; v.kind = kTensor; v.tensor = std::move(name); return v; }
  static Val Int(int64_t x) { Val v; v.kind = kInt; v.i = x; return v; }
  static Val Double(double x) { Val v; v.kind = kDouble; v.d = x; return v; }
  static Val Bool(bool x) { Val v; v.kind = kBool; v.b = x; return v; }
  static Val Str(std::string x) { Val v; v.kind = kStr; v.s = std::move(x); return v; }
  static Val List(std::vector<Val> x) { Val v; v.kind = kList; v.items = std::move(x); return v; }
  static Val Module(const torch::jit::Module& m, std::string path) {
    Val v;
    v.kind = kModule;
    v.module = std::make_shared<torch::jit::Module>(m);
    v.path = std::move(path);
    return v;
  }
};

// One aten call: the op name without "aten::", its arguments by schema name.
struct Call {
  std::string op;
  std::string overload;
  std::vector<std::pair<std::string, Val>> args;
  size_t num_outputs = 1;
  std::vector<bool> output_is_list;

  const Val* Arg(const char* name) const {
    for (const auto& [n, v] : args)
      if (n == name) return &v;
    return nullptr;
  }
};

DType FromScalarType(c10::ScalarType t);
// The first non-empty line of a LibTorch message (they run to many lines of C++ frames).
std::string FirstLine(const std::string& text);
// The value of prim::device / prim::dtype / prim::Uninitialized ... (what the walk can know).
Val PrimScalar(const std::string& kind, const std::vector<Val>& in, const Graph& g);
// Records a non-tensor argument as an op attribute under its schema name.
void SetAttr(Op* op, const std::string& name, const Val& v);

class ShapeRules {
 public:
  explicit ShapeRules(Graph* g) : g_(g) {}

  // Output values of an aten op from ftax's rules; kUnsupported when there is no rule.
  Expected<std::vector<Val>> Infer(const Call& call);
  // Output values from running the node's operator on meta tensors (shapes, no data).
  Expected<std::vector<Val>> RunMeta(const torch::jit::Node* node, const Call& call);
  // "" when both lists hold tensors of equal shapes and dtypes, else what differs.
  std::string Compare(const std::vector<Val>& a, const std::vector<Val>& b) const;

  // Scalar ops (int shape arithmetic, size(), Int()); nullopt when the op works on tensors.
  Expected<std::optional<Val>> ScalarOp(const std::string& kind, const std::vector<Val>& in);
  Val NumToTensor(const Val& scalar);
  // A tensor held by the module (parameter, buffer or code constant), as an initializer;
  // buffers and constants are not counted as parameters.
  Val ConstantTensor(const at::Tensor& t, const std::string& name, bool is_parameter);

  // One call as its rule sees it: arguments by name, the first argument as a tensor, and the
  // graph its outputs go to (torchscript_shapes_torch.cc).
  class RuleCall;

 private:
  Val NewTensor(const std::vector<int64_t>& dims, DType dt,
                std::optional<std::vector<int64_t>> values = std::nullopt);
  const TensorInfo* T(const Val& v) const;

  Graph* g_;
  int next_ = 0;
  int next_const_ = 0;
};

}  // namespace ftax::ts
