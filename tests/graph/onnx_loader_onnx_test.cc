// The ONNX loader against hand-built ModelProtos, malformed files, and libonnx's own shape
// inference as an independent reference.
#include "graph/onnx_loader.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <random>
#include <sstream>

#include "graph/graph_stats.h"
#include "graph/shape_inference.h"

namespace ftax {
namespace {

const std::string kData = FTAX_TEST_DATA "/onnx";

onnx::ValueInfoProto Vi(const std::string& name, std::vector<std::string> dims,
                        int elem = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) || d[0] == '-'))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return v;
}

onnx::NodeProto* Node(onnx::GraphProto* g, const std::string& type, std::vector<std::string> in,
                      std::vector<std::string> out, const std::string& name) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(type);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

onnx::ModelProto BaseModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(17);
  m.mutable_graph()->set_name("g");
  return m;
}

Expected<Graph> Load(const onnx::ModelProto& m, OnnxLoadOptions opt = {}) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return LoadOnnxBuffer(bytes.data(), bytes.size(), "test.onnx", opt);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(OnnxLoaderTest, WeightsAreDroppedButDimsKept) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"batch", "256"});
  *g->add_output() = Vi("y", {"batch", "512"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(256);
  w->add_dims(512);
  w->set_raw_data(std::string(256 * 512 * 4, '\x01'));  // 512 KiB of "weights"
  auto* shape = g->add_initializer();
  shape->set_name("s");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(-1);
  shape->add_int64_data(512);
  Node(g, "MatMul", {"x", "w"}, {"h"}, "mm");
  Node(g, "Reshape", {"h", "s"}, {"y"}, "rs");
  Expected<Graph> graph = Load(m);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const TensorInfo* wt = graph->Find("w");
  ASSERT_NE(wt, nullptr);
  EXPECT_TRUE(wt->is_initializer);
  EXPECT_EQ(ShapeToString(wt->shape), "256x512");
  EXPECT_FALSE(wt->int_values.has_value());
  const TensorInfo* st = graph->Find("s");
  ASSERT_TRUE(st->int_values.has_value());
  EXPECT_EQ(*st->int_values, (std::vector<int64_t>{-1, 512}));
  EXPECT_EQ(graph->inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(ShapeToString(graph->Find("x")->shape), "batchx256");
  ASSERT_EQ(graph->ops.size(), 2u);
  EXPECT_EQ(graph->opset.at(""), 17);
}

TEST(OnnxLoaderTest, ExternalDataFileMayBeMissing) {
  // tiny_mlp.onnx points at missing_weights.bin, which does not exist.
  Expected<Graph> g = LoadOnnxFile(kData + "/tiny_mlp.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(PrepareGraph(&g.value(), {{"batch", 2}}, {}).ok());
  Expected<GraphStats> st = ComputeStats(g.value());
  ASSERT_TRUE(st.ok());
  // fc1 2x64x32 + fc2 2x32x32 + fc3 2x32x32 = 4096 + 2048 + 2048.
  EXPECT_DOUBLE_EQ(st->totals.macs, 8192.0);
  EXPECT_EQ(st->totals.params, 64 * 32 + 32 + 32 * 32);
}

TEST(OnnxLoaderTest, NodesAreSortedTopologically) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"4"});
  *g->add_output() = Vi("z", {"4"});
  Node(g, "Relu", {"y"}, {"z"}, "second");
  Node(g, "Neg", {"x"}, {"y"}, "first");
  Expected<Graph> graph = Load(m);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->ops[0].name, "first");
  EXPECT_EQ(graph->ops[1].name, "second");
}

TEST(OnnxLoaderTest, ScopeComesFromTheExporterNodeName) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"4"});
  *g->add_output() = Vi("y", {"4"});
  Node(g, "Relu", {"x"}, {"y"}, "/encoder/layer.0/act/Relu");
  Expected<Graph> graph = Load(m);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->ops[0].scope, "/encoder/layer.0/act");
}

TEST(OnnxLoaderTest, AFoldedInitializerNamesTheParameterItCameFrom) {
  // The dynamo exporter's optimizer writes a Linear's transposed weight as a new initializer
  // and records the parameter in its value_info's metadata_props (field 4, newer than the
  // schema ftax builds against: written here as the unknown field a newer writer leaves).
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"2", "4"});
  *g->add_output() = Vi("y", {"2", "4"});
  auto* w = g->add_initializer();
  w->set_name("val_7");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  onnx::ValueInfoProto vi = Vi("val_7", {"4", "4"});
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"pkg.torch.onnx.original_node_name", "x"},
                             {"pkg.onnxscript.optimizer.folded_from", "['encoder.layer.0.query.weight']"}}) {
    onnx::StringStringEntryProto e;
    e.set_key(k);
    e.set_value(v);
    vi.mutable_unknown_fields()->AddLengthDelimited(4, e.SerializeAsString());
  }
  *g->add_value_info() = vi;
  Node(g, "MatMul", {"x", "val_7"}, {"y"}, "node_MatMul_6");
  Expected<Graph> graph = Load(m);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->Find("val_7")->folded_from, "encoder.layer.0.query.weight");
  EXPECT_EQ(graph->Find("x")->folded_from, "");
}

TEST(OnnxLoaderTest, LocalFunctionsAreInlined) {
  onnx::ModelProto m = BaseModel();
  auto* f = m.add_functions();
  f->set_name("Dense");
  f->set_domain("custom");
  f->add_input("a");
  f->add_input("b");
  f->add_output("c");
  auto* mm = f->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("a");
  mm->add_input("b");
  mm->add_output("t");
  auto* act = f->add_node();
  act->set_op_type("Relu");
  act->add_input("t");
  act->add_output("c");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(17);
  auto* os = m.add_opset_import();
  os->set_domain("custom");
  os->set_version(1);
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"2", "8"});
  *g->add_output() = Vi("y", {"2", "8"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(8);
  w->add_dims(8);
  auto* call = Node(g, "Dense", {"x", "w"}, {"y"}, "dense1");
  call->set_domain("custom");
  Expected<Graph> graph = Load(m);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->ops.size(), 2u);
  EXPECT_EQ(graph->ops[0].type, "MatMul");
  EXPECT_EQ(graph->ops[0].inputs[0], "x");
  EXPECT_EQ(graph->ops[1].outputs[0], "y");
  ASSERT_TRUE(InferShapes(&graph.value()).ok());
  Expected<GraphStats> st = ComputeStats(graph.value());
  ASSERT_TRUE(st.ok());
  EXPECT_DOUBLE_EQ(st->totals.macs, 2 * 8 * 8.0);
}

TEST(OnnxLoaderTest, SubgraphsSeeOuterNamesAndCountOnce) {
  Expected<Graph> g = LoadOnnxFile(kData + "/tiny_control_flow.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(PrepareGraph(&g.value(), {}, {}).ok());
  Expected<GraphStats> st = ComputeStats(g.value());
  ASSERT_TRUE(st.ok());
  // Loop: 3 trips x MatMul 4x8x8 (256) + If (flag is an input): then-branch MatMul 256.
  EXPECT_DOUBLE_EQ(st->totals.macs, 4 * 256.0);
  EXPECT_EQ(st->totals.params, 64);  // lw, used by both bodies
  EXPECT_EQ(st->totals.depth, 4);
}

struct BadCase {
  const char* file;
  ErrorCode code;
  const char* needle;
};

TEST(OnnxLoaderTest, BadFilesFailCleanlyWithContext) {
  const BadCase cases[] = {
      {"bad/empty.onnx", ErrorCode::kInvalidInput, "empty file"},
      {"bad/random.onnx", ErrorCode::kInvalidInput, "not an ONNX model"},
      {"bad/truncated.onnx", ErrorCode::kInvalidInput, "not an ONNX model"},
      {"bad/text.onnx", ErrorCode::kInvalidInput, "not an ONNX model"},
      {"bad/no_graph_field.onnx", ErrorCode::kInvalidInput, "'graph'"},
      {"bad/negative_dim.onnx", ErrorCode::kInvalidInput, "input 'x': dim 1 is negative"},
      {"bad/cycle.onnx", ErrorCode::kInvalidInput, "cycle"},
      {"bad/dangling.onnx", ErrorCode::kInvalidInput, "input 'nowhere'"},
      {"does_not_exist.onnx", ErrorCode::kNotFound, "no such file"},
  };
  for (const BadCase& c : cases) {
    std::string path = kData + "/" + c.file;
    Expected<Graph> g = LoadOnnxFile(path);
    ASSERT_FALSE(g.ok()) << c.file;
    EXPECT_EQ(g.status().code(), c.code) << c.file;
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos)
        << c.file << ": " << g.status().message();
    EXPECT_NE(g.status().message().find(path), std::string::npos) << "names the file";
  }
  EXPECT_FALSE(LoadOnnxFile(kData).ok());  // a directory
}

TEST(OnnxLoaderTest, EveryTruncationOfAModelFailsOrLoadsWithoutCrashing) {
  std::string bytes = ReadFile(kData + "/tiny_cnn.onnx");
  ASSERT_FALSE(bytes.empty());
  int loaded = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    Expected<Graph> g = LoadOnnxBuffer(bytes.data(), n, "cut.onnx");
    if (g.ok()) {
      ++loaded;
      Status s = PrepareGraph(&g.value(), {{"N", 1}}, {});
      if (s.ok()) (void)ComputeStats(g.value());
    }
  }
  EXPECT_LT(loaded, static_cast<int>(bytes.size()));
  EXPECT_TRUE(LoadOnnxBuffer(bytes.data(), bytes.size(), "full.onnx").ok());
}

TEST(OnnxLoaderTest, DuplicateOutputNamesAreRejected) {
  onnx::ModelProto m = BaseModel();
  auto* g = m.mutable_graph();
  *g->add_input() = Vi("x", {"4"});
  *g->add_output() = Vi("y", {"4"});
  Node(g, "Relu", {"x"}, {"y"}, "a");
  Node(g, "Neg", {"x"}, {"y"}, "b");
  Expected<Graph> graph = Load(m);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("produced twice"), std::string::npos);
}

// libonnx's shape inference is the reference: every tensor both infer concretely must agree.
void CrossCheck(const std::string& path, int64_t batch) {
  std::string bytes = ReadFile(path);
  ASSERT_FALSE(bytes.empty()) << path;
  onnx::ModelProto ref;
  ASSERT_TRUE(ref.ParseFromString(bytes));
  // Bind the batch dim in the reference model the same way --dim does.
  for (auto& in : *ref.mutable_graph()->mutable_input())
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param()) d.set_dim_value(batch);
  ref.mutable_graph()->clear_value_info();
  onnx::shape_inference::InferShapes(ref);

  OnnxLoadOptions opt;
  opt.use_declared_shapes = false;
  Expected<Graph> g = LoadOnnxFile(path, opt);
  ASSERT_TRUE(g.ok()) << g.status().message();
  DimBindings dims;
  for (const auto& in : g->inputs)
    for (const Dim& d : g->Find(in)->shape)
      if (!d.symbol.empty()) dims[d.symbol] = batch;
  ASSERT_TRUE(PrepareGraph(&g.value(), dims, {}).ok());
  int compared = 0;
  for (const auto& vi : ref.graph().value_info()) {
    const TensorInfo* t = g->Find(vi.name());
    if (!t || !t->has_shape || !vi.type().tensor_type().has_shape()) continue;
    const auto& rs = vi.type().tensor_type().shape();
    bool ref_concrete = true;
    for (const auto& d : rs.dim()) ref_concrete &= d.has_dim_value();
    if (!ref_concrete || !NumElements(t->shape)) continue;
    ASSERT_EQ(static_cast<int>(t->shape.size()), rs.dim_size()) << vi.name();
    for (int k = 0; k < rs.dim_size(); ++k)
      EXPECT_EQ(t->shape[k].value, rs.dim(k).dim_value()) << path << ": " << vi.name() << " dim " << k;
    ++compared;
  }
  EXPECT_GT(compared, 5) << path;
  std::cout << path << ": " << compared << " tensor shapes agree with libonnx\n";
}

TEST(OnnxLoaderTest, ShapesAgreeWithLibonnxShapeInference) {
  CrossCheck(kData + "/tiny_cnn.onnx", 3);
  for (const char* m : {"resnet18.onnx", "mobilenet_v2.onnx", "vit_b_16.onnx", "bert_base.onnx"}) {
    std::string path = kData + "/" + m;
    if (!std::ifstream(path).good()) continue;
    CrossCheck(path, 2);
  }
}

}  // namespace
}  // namespace ftax
