// Hand-made graphs for predictor tests: a tensor of given dims and dtype (an initializer
// where `init`), and an op of a domain and type reading and writing tensors by name.
//
//   Graph g;
//   g.tensors["x"] = testing::T("x", {1, 768}, DType::kFloat16);
//   g.ops.push_back(testing::MakeOp("aten", "relu", {"x"}, {"y"}));
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace ftax::testing {

inline TensorInfo T(const std::string& name, std::vector<int64_t> dims, DType d = DType::kFloat32,
                    bool init = false) {
  TensorInfo t;
  t.name = name;
  t.dtype = d;
  t.has_shape = true;
  for (int64_t v : dims) t.shape.push_back(Dim::Known(v));
  t.is_initializer = init;
  return t;
}

inline Op MakeOp(const std::string& domain, const std::string& type, std::vector<std::string> in,
                 std::vector<std::string> out) {
  Op op;
  op.domain = domain;
  op.type = type;
  op.name = type + "_0";
  op.inputs = std::move(in);
  op.outputs = std::move(out);
  return op;
}

}  // namespace ftax::testing
