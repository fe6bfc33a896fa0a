// Small helpers for building Graphs by hand in tests (no model file needed).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace ftax::testing {

inline Shape Dims(std::initializer_list<int64_t> d) {
  Shape s;
  for (int64_t v : d) s.push_back(Dim::Known(v));
  return s;
}

inline TensorInfo& AddTensor(Graph& g, const std::string& name, const Shape& shape,
                             DType dtype = DType::kFloat32, bool initializer = false) {
  TensorInfo& t = g.Tensor(name);
  t.dtype = dtype;
  t.has_shape = true;
  t.shape = shape;
  t.is_initializer = initializer;
  return t;
}

inline TensorInfo& AddInput(Graph& g, const std::string& name, const Shape& shape,
                            DType dtype = DType::kFloat32) {
  TensorInfo& t = AddTensor(g, name, shape, dtype);
  t.is_graph_input = true;
  g.inputs.push_back(name);
  return t;
}

inline TensorInfo& AddWeight(Graph& g, const std::string& name, const Shape& shape,
                             DType dtype = DType::kFloat32) {
  return AddTensor(g, name, shape, dtype, true);
}

inline TensorInfo& AddIntConst(Graph& g, const std::string& name, std::vector<int64_t> v,
                               bool scalar = false) {
  TensorInfo& t = AddTensor(g, name, scalar ? Shape{} : Dims({static_cast<int64_t>(v.size())}),
                            DType::kInt64, true);
  t.int_values = std::move(v);
  return t;
}

inline Op& AddOp(Graph& g, const std::string& type, std::vector<std::string> inputs,
                 std::vector<std::string> outputs, const std::string& domain = "") {
  Op op;
  op.type = type;
  op.domain = domain;
  op.name = type + "_" + std::to_string(g.ops.size());
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  for (const auto& o : op.outputs) g.Tensor(o);
  g.ops.push_back(std::move(op));
  return g.ops.back();
}

inline void SetInts(Op& op, const std::string& key, std::vector<int64_t> v) {
  op.attrs[key].kind = Attribute::Kind::kInts;
  op.attrs[key].ints = std::move(v);
}
inline void SetInt(Op& op, const std::string& key, int64_t v) {
  op.attrs[key].kind = Attribute::Kind::kInt;
  op.attrs[key].i = v;
}
inline void SetString(Op& op, const std::string& key, const std::string& v) {
  op.attrs[key].kind = Attribute::Kind::kString;
  op.attrs[key].s = v;
}

}  // namespace ftax::testing
