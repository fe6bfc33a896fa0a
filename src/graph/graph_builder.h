// Internal helpers for the --arch generators (arch_*.cc): a GraphBuilder that appends ops
// and tensors with concrete shapes in the exporter's naming style, and ArchParams, the parsed
// spec a generator reads its keys from.
//
// Naming follows torch.onnx.export (torch >= 1.13): an op in module scope
// "/encoder/layer.0/attention/self" of type "Reshape" is named
// "/encoder/layer.0/attention/self/Reshape", the next one in the same scope "..._1".
// Activation tensors get short TorchScript-style value names ("%17", numbered in creation
// order; short strings keep the builder free of heap allocations for them). Weights are named
// by module path ("encoder.layer.0.attention.self.query.weight") and are initializers.
//
//   GraphBuilder b(&graph, DType::kFloat32, "");
//   b.Push("encoder"); b.Push("layer.0");
//   std::string y = b.Op1("MatMul", {x, w}, {batch, seq, 768});
//   b.Pop(); b.Pop();
//
// Names returned as `const std::string&` live in the graph's tensor map and stay valid while
// the builder runs; copy them into a std::string to keep them across further ops anyway.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "graph/arch_spec.h"
#include "graph/graph.h"

namespace ftax {
namespace arch {

// Concrete dims with inline storage (no heap allocation for the temporaries the generators
// pass around). At most kMax dims.
class Dims {
 public:
  static constexpr size_t kMax = 8;
  Dims() = default;
  Dims(std::initializer_list<int64_t> l) {
    for (int64_t v : l) push_back(v);
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t& operator[](size_t i) { return v_[i]; }
  int64_t operator[](size_t i) const { return v_[i]; }
  int64_t& back() { return v_[n_ - 1]; }
  int64_t back() const { return v_[n_ - 1]; }
  const int64_t* begin() const { return v_; }
  const int64_t* end() const { return v_ + n_; }
  void push_back(int64_t v) {
    if (n_ < kMax) v_[n_++] = v;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool operator==(const Dims& o) const {
    if (n_ != o.n_) return false;
    for (size_t i = 0; i < n_; ++i)
      if (v_[i] != o.v_[i]) return false;
    return true;
  }

 private:
  int64_t v_[kMax] = {};
  size_t n_ = 0;
};

using Inputs = std::initializer_list<std::string_view>;

class GraphBuilder {
 public:
  // Builds into `graph`, which must be empty or hold an earlier build of a GraphBuilder (only
  // the fields a build sets are reset): its op slots and the tensors whose names recur are
  // overwritten in place, so a search loop that builds into
  // the same Graph again and again allocates almost nothing. `domain` is given to every op
  // ("" for ONNX, "aten" for the torch flavor); `dtype` is the floating type of weights and
  // activations.
  GraphBuilder(Graph* graph, DType dtype, std::string domain);
  // Drops what the previous build left and was not reused.
  ~GraphBuilder() { Finish(); }
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  Graph& graph() { return *g_; }
  DType dtype() const { return dtype_; }
  const std::string& domain() const { return domain_; }
  bool torch() const { return torch_; }

  // Module scope: Push("encoder") enters "/encoder", Pop() leaves it. A scope must not be
  // entered twice (op names restart their "_N" count per entry); a module called twice gets
  // the exporter's second scope name ("relu_1").
  void Push(std::string_view component);
  void Pop();
  const std::string& scope() const { return scope_; }
  // The module path in weight style: "encoder.layer.0" for scope "/encoder/layer.0".
  const std::string& param_prefix() const { return param_prefix_; }

  // A graph input (not an initializer).
  const std::string& Input(std::string_view name, DType dt, const Dims& dims);
  // A weight of the builder's dtype, named `param_prefix() + "." + leaf`.
  const std::string& Weight(std::string_view leaf, const Dims& dims);
  // An initializer with an explicit full name and dtype (shared: a second call with the same
  // name returns the existing tensor).
  const std::string& Initializer(std::string_view name, DType dt, const Dims& dims);
  // A small int64 constant of rank 1 (Reshape shapes, axes), shared by value; keeps
  // int_values.
  const std::string& IntConst(const Dims& values);
  // An int64 scalar (Gather index), shared by value; keeps int_values.
  const std::string& IntScalar(int64_t value);
  // A scalar constant of the builder's dtype, shared by `key` (e.g. "sqrt_head_dim").
  const std::string& ScalarConst(const char* key);

  // Appends an op of `type` in the current scope with one output of `out` dims (dtype:
  // the builder's unless given). Returns the output tensor's name. An empty input marks an
  // omitted optional input.
  const std::string& Op1(const char* type, Inputs inputs, const Dims& out);
  const std::string& Op1(const char* type, Inputs inputs, const Dims& out, DType dt);
  // Appends an op with several outputs (the builder's dtype); returns their names.
  std::vector<std::string> OpN(const char* type, Inputs inputs, std::initializer_list<Dims> outs);
  // The op appended last, to set attributes on.
  Op& last() { return g_->ops[op_count_ - 1]; }

  void SetInt(const char* key, int64_t v);
  void SetFloat(const char* key, double v);
  void SetInts(const char* key, std::initializer_list<int64_t> v);
  void SetInts(const char* key, const std::vector<int64_t>& v);
  void SetInts(const char* key, const Dims& v);
  void SetString(const char* key, const char* v);

  void Output(const std::string& tensor) { g_->outputs.push_back(tensor); }
  // Gives the last op's (first) output the name `name` instead of its "%N" value name, as
  // the exporter's output_names do ("last_hidden_state"); call before anything reads it.
  const std::string& NameLastOutput(std::string_view name);

  // First error met (an element count that overflows int64); Ok otherwise.
  const Status& status() const { return status_; }

 private:
  Op& NewOp(const char* type, Inputs inputs);
  TensorInfo& NewTensor(const std::string& name, DType dt, const Dims& dims);
  Attribute& Attr(const char* key);
  void CloseOp();  // drops attributes a reused op slot kept from the previous build
  void Finish();
  void NextName();

  Graph* g_;
  DType dtype_;
  std::string domain_;
  bool torch_;
  std::string scope_;
  std::string param_prefix_;
  // One frame per pushed scope: where the strings were cut, and how many ops of each type
  // the scope holds so far (for the exporter's "_N" name suffixes).
  struct Frame {
    size_t scope_len = 0, prefix_len = 0;
    std::vector<std::pair<const char*, int>> counts;
  };
  std::vector<Frame> frames_;
  size_t depth_ = 0;  // frames_[0..depth_] are live; frames_[0] is the root scope
  int64_t next_value_ = 0;
  std::string name_buf_;  // scratch for composing names
  size_t op_count_ = 0;   // ops of this build; g_->ops beyond it are left from the last one
  std::vector<const char*> attrs_set_;  // attribute keys set on the open op
  size_t stale_left_ = 0;  // tensors of the previous build not reused yet
  std::vector<std::pair<Dims, const std::string*>> int_consts_;
  std::vector<std::pair<int64_t, const std::string*>> int_scalars_;
  std::vector<std::pair<const char*, const std::string*>> scalars_;
  bool finished_ = false;
  Status status_;
};

// Module-level building blocks shared by the families; each enters the module's scope
// `module` (empty: stay in the current one) and returns its output tensor. `x` has dims
// `xd`; the output dims are written to `*yd` where given.
//
// nn.Linear: kOnnx writes MatMul + Add (weight stored transposed, [in, out]) for inputs of
// rank >= 3 and Gemm (transB=1) for rank 2; kTorch writes linear(x, weight[out, in], bias).
std::string Linear(GraphBuilder& b, std::string_view module, const std::string& x,
                   const Dims& xd, int64_t out_features, bool bias = true);
// nn.LayerNorm over the last dim: LayerNormalization / layer_norm.
std::string LayerNorm(GraphBuilder& b, std::string_view module, const std::string& x,
                      const Dims& xd, double eps);
// Exact (erf) GELU: kOnnx (opset < 20) Div, Erf, Add, Mul, Mul; kTorch gelu.
std::string Gelu(GraphBuilder& b, std::string_view module, const std::string& x,
                 const Dims& xd);
// nn.Dropout at inference: kOnnx drops it (no node); kTorch keeps the dropout dispatch.
std::string Dropout(GraphBuilder& b, std::string_view module, const std::string& x,
                    const Dims& xd, double p);
// Conv2d (no bias) + BatchNorm2d as torchvision builds them. kOnnx: one Conv with the
// batch norm folded into its weight and a bias, in the conv module's scope. kTorch:
// conv2d(x, weight, no bias) in scope `conv`, batch_norm(x, weight, bias, running_mean,
// running_var) in scope `bn`. `xd` is [N, C, H, W]; the output dims go to `*yd`.
std::string ConvBn(GraphBuilder& b, std::string_view conv, std::string_view bn,
                   const std::string& x, const Dims& xd, int64_t out_channels, int64_t kernel,
                   int64_t stride, int64_t pad, int64_t groups, Dims* yd);
// A Conv2d with its own bias and no batch norm (ViT patch embedding).
std::string ConvBias(GraphBuilder& b, std::string_view module, const std::string& x,
                     const Dims& xd, int64_t out_channels, int64_t kernel, int64_t stride,
                     int64_t pad, Dims* yd);
// nn.ReLU (Relu / relu) and nn.ReLU6 (Clip(0, 6) / hardtanh) in scope `module`.
std::string Relu(GraphBuilder& b, std::string_view module, const std::string& x,
                 const Dims& xd,
                 bool inplace = false);
std::string Relu6(GraphBuilder& b, std::string_view module, const std::string& x,
                  const Dims& xd);
// Output size of a convolution or pooling window along one axis.
inline int64_t ConvOut(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  return (in + 2 * pad - kernel) / stride + 1;
}

// kTorch only: the 4-D boolean attention mask [B, 1, S, L] that transformers 5 builds from a
// 2-D padding mask `mask2d` [B, L] for SDPA (masking_utils, as a trace records it: 26 small
// int/bool ops, `ge` for a bidirectional mask, `le` for a causal one). Op sequence as traced
// (transformers 5.17, torch 2.11); the helper tensors' shapes follow the index broadcasting
// ([B,1,1,1], [1,1,1,1], [1,1,S,1], [1,1,1,L]).
std::string HfSdpaMask(GraphBuilder& b, const std::string& mask2d, int64_t B, int64_t S,
                       int64_t L, bool causal);

// ONNX Cast's `to` code for a dtype.
int64_t OnnxTypeCode(DType t);

// Scoped Push/Pop.
class ScopeGuard {
 public:
  ScopeGuard(GraphBuilder& b, std::string_view component) : b_(b) { b_.Push(component); }
  ~ScopeGuard() { b_.Pop(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  GraphBuilder& b_;
};

// A parsed spec: family, KEY=VALUE pairs in the order given, bound dims and options.
struct ArchParams {
  std::string spec;
  std::string family;
  std::vector<std::pair<std::string, std::string>> kv;
  int64_t batch = 1;
  int64_t seq = 128;
  ArchFlavor flavor = ArchFlavor::kOnnx;
  DType dtype = DType::kFloat32;

  const std::string* Find(const std::string& key) const;
};

// Reads integer key `key` (default `def` when absent) and checks 1 <= value <= max.
// Errors name the key and the value given.
Status GetInt(const ArchParams& p, const char* key, int64_t def, int64_t max, int64_t* out);
// 0 or 1.
Status GetBool(const ArchParams& p, const char* key, bool def, bool* out);
// A positive finite number (0 < value <= max).
Status GetFloat(const ArchParams& p, const char* key, double def, double max, double* out);
// Dash-separated positive integers ("2-2-2-2"), each <= max; empty `out` if absent.
Status GetIntList(const ArchParams& p, const char* key, int64_t max, std::vector<int64_t>* out);
// "key 'hidden' (768) must be divisible by key 'heads' (5)".
Status CheckDivisible(const char* key, int64_t value, const char* by_key, int64_t by);

// The generators; each fills `g` (already named and with source set).
Status BuildBert(const ArchParams& p, Graph* g);
Status BuildDistilbert(const ArchParams& p, Graph* g);
Status BuildGpt(const ArchParams& p, Graph* g);
Status BuildResnet(const ArchParams& p, Graph* g);
Status BuildMobilenet(const ArchParams& p, Graph* g);
Status BuildVit(const ArchParams& p, Graph* g);

}  // namespace arch
}  // namespace ftax
