// The Graph IR: what every front end (ONNX file, TorchScript file, --arch spec) produces
// and what counting, lowering and prediction read.
//
// A Graph is a list of ops in topological order plus a table of tensors. Ops keep their
// type and domain as the front end named them (ONNX op types such as "MatMul", or aten names
// such as "aten::linear" mapped to ONNX-like types by the TorchScript loader), their
// attributes, the exporter's node name and module scope, and any subgraphs (If/Loop/Scan
// bodies). Tensors carry a dtype and a shape whose dims are either concrete or symbolic
// (named, bound later with --dim). Initializers are known by dtype and dims only: ftax never
// reads weight bytes, except small integer constants that shape arithmetic needs
// (`int_values`).
//
//   Graph g = ...;                         // from a loader or an arch generator
//   for (const Op& op : g.ops) { const TensorInfo* t = g.Find(op.outputs[0]); ... }
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ftax {

enum class DType {
  kUnknown,
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kFloat8,
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUInt8,
  kBool,
  kString,
  kComplex64,
};

// Size of one element in bytes (0 for unknown/string).
int DTypeSize(DType t);
// Short name: "fp32", "fp16", "bf16", "int64", ...
const char* DTypeName(DType t);
// Parses the short names above and the long ones ("float16", "half", "float").
std::optional<DType> ParseDType(const std::string& name);

// One dimension: concrete (value >= 0) or symbolic (symbol non-empty, value < 0), or
// entirely unknown (neither).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  static Dim Known(int64_t v) { return Dim{v, {}}; }
  static Dim Symbol(std::string s) { return Dim{-1, std::move(s)}; }
  bool known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
};

using Shape = std::vector<Dim>;

// Product of all dims, or nullopt if any is not concrete or the product overflows int64.
std::optional<int64_t> NumElements(const Shape& s);
// "1x3x224x224", with symbols by name ("batchx128") and '?' for unknown dims.
std::string ShapeToString(const Shape& s);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUnknown;
  bool has_shape = false;  // false: rank unknown
  Shape shape;
  bool is_initializer = false;
  bool is_graph_input = false;
  // An initializer that is state, not a learned parameter (BatchNorm running statistics in a
  // TorchScript module): counted in weight bytes, not in params.
  bool is_buffer = false;
  // Concrete integer contents, kept only for small int constants (shape arithmetic).
  std::optional<std::vector<int64_t>> int_values;
  // A copy of a tensor of an enclosing graph, visible inside an If/Loop/Scan body; its
  // initializer bytes belong to the enclosing graph and are not counted again.
  bool outer_scope = false;
  // Concrete contents of small floating-point constants (Resize/Upsample scales).
  std::optional<std::vector<double>> float_values;
  // The model parameter an exporter folded this initializer from (the dynamo exporter's
  // optimizer writes a Linear's transposed weight as "val_67", folded from
  // "encoder.layer.0.attention.self.query.weight"); empty when not recorded.
  std::string folded_from;
};

struct Graph;

struct Attribute {
  enum class Kind { kNone, kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::shared_ptr<TensorInfo> tensor;  // dims/dtype (and small int contents) of a tensor attr
  std::shared_ptr<Graph> graph;        // a subgraph attribute (If branches, Loop/Scan body)
};

struct Op {
  std::string type;    // "MatMul", "Conv", ...
  std::string domain;  // "" for the default ONNX domain
  std::string name;    // the exporter's node name
  std::string scope;   // module path, e.g. "/encoder/layer.0/attention/self"
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attrs;
  // How many times the op runs per inference (a Loop body with a known trip count > 1).
  double repeat = 1.0;

  const Attribute* FindAttr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? nullptr : &it->second;
  }
  int64_t IntAttr(const std::string& key, int64_t fallback) const {
    const Attribute* a = FindAttr(key);
    return a && a->kind == Attribute::Kind::kInt ? a->i : fallback;
  }
  double FloatAttr(const std::string& key, double fallback) const {
    const Attribute* a = FindAttr(key);
    return a && a->kind == Attribute::Kind::kFloat ? a->f : fallback;
  }
  std::string StringAttr(const std::string& key, const std::string& fallback) const {
    const Attribute* a = FindAttr(key);
    return a && a->kind == Attribute::Kind::kString ? a->s : fallback;
  }
  std::vector<int64_t> IntsAttr(const std::string& key) const {
    const Attribute* a = FindAttr(key);
    return a && a->kind == Attribute::Kind::kInts ? a->ints : std::vector<int64_t>{};
  }
};

struct Graph {
  std::string name;
  std::string source;  // file path or arch spec it came from
  std::map<std::string, int64_t> opset;  // domain -> version
  std::vector<Op> ops;                   // topological order
  std::unordered_map<std::string, TensorInfo> tensors;
  std::vector<std::string> inputs;   // graph inputs that are not initializers
  std::vector<std::string> outputs;
  std::vector<std::string> warnings;  // non-fatal findings of the front end

  const TensorInfo* Find(const std::string& name) const {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
  }
  TensorInfo& Tensor(const std::string& name) {
    TensorInfo& t = tensors[name];
    if (t.name.empty()) t.name = name;
    return t;
  }
};

}  // namespace ftax
