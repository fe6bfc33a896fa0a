// What exporters write that is not the network, as the parity corpus (tests/data/parity) found
// it, on hand-built ModelProtos: a dim declared 1 where the inputs give the batch (the dynamo
// exporter's value_info), and a constant Reshape target fixed at the batch a file was exported
// for. (Initializers renamed through Identity are the lowering's: tests/predictor/lowering_test.cc.)
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"

namespace ftax {
namespace {

onnx::ValueInfoProto Vi(const std::string& name, std::vector<std::string> dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return v;
}

void Node(onnx::GraphProto* g, const std::string& type, std::vector<std::string> in,
          std::vector<std::string> out, const std::string& name) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(type);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
}

void Init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
          std::vector<int64_t> ints = {}) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(ints.empty() ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : ints) t->add_int64_data(v);
  if (ints.empty()) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
  }
}

onnx::ModelProto Base() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(17);
  m.mutable_graph()->set_name("g");
  return m;
}

Expected<Graph> Prepared(const onnx::ModelProto& m, int64_t batch) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  Expected<Graph> g = LoadOnnxBuffer(bytes.data(), bytes.size(), "test.onnx");
  if (!g.ok()) return g;
  Status s = PrepareGraph(&g.value(), {{"batch", batch}}, {});
  if (!s.ok()) return s;
  return g;
}

int Count(const Graph& g, const std::string& type) {
  int n = 0;
  for (const Op& op : g.ops) n += op.type == type;
  return n;
}

// x [batch, 4] -> Relu -> r, declared [1, 4] (exported at batch 1), -> Reshape to a constant
// target [1, 2, 2] -> y.
onnx::ModelProto FixedAtBatchOne() {
  onnx::ModelProto m = Base();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"batch", "4"});
  *g->add_output() = Vi("y", {"1", "2", "2"});
  *g->add_value_info() = Vi("r", {"1", "4"});
  Init(g, "target", {3}, {1, 2, 2});
  Node(g, "Relu", {"x"}, {"r"}, "relu");
  Node(g, "Reshape", {"r", "target"}, {"y"}, "view");
  return m;
}

TEST(ExportArtifacts, ADimDeclaredOneWhereTheInputsGiveTheBatchIsInferred) {
  Expected<Graph> graph = Prepared(FixedAtBatchOne(), 8);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(ShapeToString(graph->Find("r")->shape), "8x4");
  bool named = false;
  for (const std::string& w : graph->warnings)
    named |= w.find("node 'relu' (Relu): the file declares 'r' 1x4, its inputs give 8x4") != std::string::npos;
  EXPECT_TRUE(named);
  // At the batch the file declares, nothing changes and nothing is said.
  Expected<Graph> one = Prepared(FixedAtBatchOne(), 1);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->warnings.empty());
}

TEST(ExportArtifacts, AConstantReshapeTargetThatFixesTheBatchIsNamed) {
  Expected<Graph> graph = Prepared(FixedAtBatchOne(), 8);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  // The target is kept (what follows is counted at the shapes the file fixes) and said.
  EXPECT_EQ(ShapeToString(graph->Find("y")->shape), "1x2x2");
  bool named = false;
  for (const std::string& w : graph->warnings)
    named |= w.find("node 'view' (Reshape): a constant target 1x2x2 (4 elements) for an input of 8x4 (32)") !=
                 std::string::npos &&
             w.find("the file fixes a shape these dims change") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(ExportArtifacts, ADeclaredShapeThatIsNotABatchOfOneIsKept) {
  // Declared 3x4 where the inputs give 8x4: not a specialization to 1, so declared wins.
  onnx::ModelProto m = Base();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"batch", "4"});
  *g->add_output() = Vi("r", {"3", "4"});
  Node(g, "Relu", {"x"}, {"r"}, "relu");
  Expected<Graph> graph = Prepared(m, 8);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(ShapeToString(graph->Find("r")->shape), "3x4");
}

}  // namespace
}  // namespace ftax
