// The TorchScript front end against hand-counted tiny models, LibTorch's own meta kernels, and
// the ONNX export of the same architecture.
//
// Fixtures come from scripts/export_torchscript_fixtures.py: *.v113.pt traced by Debian's
// torch 1.13, *.v211.pt and tiny_*.pt by the PyTorch 2.11 wheel (weights zeroed; ftax reads
// only dims). Full-size parity files are made on demand with --full.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"
#include "graph/torchscript_loader.h"

namespace ftax {
namespace {

std::string Data(const std::string& f) { return std::string(FTAX_TEST_DATA) + "/torchscript/" + f; }

GraphStats Stats(const Graph& g) {
  Expected<GraphStats> st = ComputeStats(g);
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? st.value() : GraphStats{};
}

Expected<Graph> LoadAndWalk(const std::string& path, const std::vector<InputShapeFlag>& inputs,
                            bool cross_check = true) {
  Expected<TorchScriptModel> m = TorchScriptModel::Load(path);
  if (!m.ok()) return m.status();
  TorchScriptWalkOptions o;
  o.cross_check_with_meta = cross_check;
  return m->Walk(inputs, o);
}

void ExpectNoDisagreement(const Graph& g) {
  for (const std::string& w : g.warnings) {
    EXPECT_EQ(w.find("disagrees"), std::string::npos) << w;
    EXPECT_EQ(w.find("meta kernels"), std::string::npos) << "op without an ftax rule: " << w;
  }
}

std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> t;
  for (const Op& op : g.ops) t.push_back(op.type);
  return t;
}

class TinyVersions : public ::testing::TestWithParam<const char*> {};

// conv 3->16 3x3/2 on 32x32 (16x16 out) + depthwise 3x3 on 8x8 + fc 16->10, batch 2.
TEST_P(TinyVersions, CnnCountsByHand) {
  Expected<Graph> g = LoadAndWalk(Data(std::string("tiny_cnn.") + GetParam() + ".pt"), {{"", {2, 3, 32, 32}}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ExpectNoDisagreement(g.value());
  GraphStats st = Stats(g.value());
  const double macs = 2 * (16 * 16 * 16 * 27.0 + 16 * 8 * 8 * 9.0 + 16 * 10.0);
  EXPECT_DOUBLE_EQ(st.totals.macs, macs);
  // Parameters as PyTorch counts them: BatchNorm running statistics are buffers.
  EXPECT_EQ(st.totals.params, 432 + 32 + 144 + 16 + 160 + 10);
  EXPECT_EQ(st.uncounted_ops, 0);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(ShapeToString(g->Find(g->outputs[0])->shape), "2x10");
}

// qkv 32->96, attention over 4 heads of 8, out 32->32, up 32->64, down 32->32; batch 2, seq 16.
TEST_P(TinyVersions, AttentionCountsByHand) {
  Expected<Graph> g = LoadAndWalk(Data(std::string("tiny_attention.") + GetParam() + ".pt"), {{"", {2, 16}}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ExpectNoDisagreement(g.value());
  GraphStats st = Stats(g.value());
  const double tokens = 2 * 16;
  const double macs = tokens * (32 * 96 + 32 * 32 + 32 * 64 + 32 * 32) + 2 * (2 * 4 * 16 * 16 * 8.0);
  EXPECT_DOUBLE_EQ(st.totals.macs, macs);
  EXPECT_EQ(st.totals.params, 3200 + 64 + 3168 + 1056 + 2112 + 1056);
  EXPECT_EQ(g->Find(g->inputs[0])->dtype, DType::kInt64) << "input_ids is an index input";
  EXPECT_EQ(ShapeToString(g->Find(g->outputs[0])->shape), "2x16x32");
  // Shapes at another batch come from the size() arithmetic the trace recorded.
  Expected<Graph> g8 = LoadAndWalk(Data(std::string("tiny_attention.") + GetParam() + ".pt"), {{"", {8, 16}}});
  ASSERT_TRUE(g8.ok()) << g8.status().message();
  EXPECT_DOUBLE_EQ(Stats(g8.value()).totals.macs, 4 * macs);
}

// A scripted loop of constant trip count 3 around a linear, then an If on a constant flag.
TEST_P(TinyVersions, ScriptedLoopUnrolledAndConstantIfTaken) {
  Expected<Graph> g = LoadAndWalk(Data(std::string("tiny_scripted.") + GetParam() + ".pt"), {{"", {4, 8}}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<std::string> types = OpTypes(g.value());
  EXPECT_EQ(std::count(types.begin(), types.end(), "linear"), 3);
  EXPECT_EQ(std::count(types.begin(), types.end(), "relu"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "sigmoid"), 0);
  EXPECT_DOUBLE_EQ(Stats(g.value()).totals.macs, 3 * 4 * 8 * 8.0);
}

INSTANTIATE_TEST_SUITE_P(TracedBy, TinyVersions, ::testing::Values("v113", "v211"));

TEST(TorchScriptLoader, FilesOfBothVersionsGiveTheSameGraph) {
  for (const char* name : {"tiny_cnn", "tiny_attention"}) {
    Expected<Graph> a = LoadAndWalk(Data(std::string(name) + ".v113.pt"), {{"", name[5] == 'c' ? std::vector<int64_t>{2, 3, 32, 32} : std::vector<int64_t>{2, 16}}}, false);
    Expected<Graph> b = LoadAndWalk(Data(std::string(name) + ".v211.pt"), {{"", name[5] == 'c' ? std::vector<int64_t>{2, 3, 32, 32} : std::vector<int64_t>{2, 16}}}, false);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(OpTypes(a.value()), OpTypes(b.value())) << name;
  }
}

TEST(TorchScriptLoader, ModuleScopesFollowTheModuleTree) {
  Expected<Graph> g = LoadAndWalk(Data("tiny_bert_base.pt"), {{"input_ids", {2, 16}}, {"attention_mask", {2, 16}}});
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::set<std::string> scopes;
  for (const Op& op : g->ops) scopes.insert(op.scope);
  EXPECT_TRUE(scopes.count("/m/encoder/layer.1/attention/self/query")) << "query linear of layer 1";
  EXPECT_TRUE(scopes.count("/m/embeddings/LayerNorm"));
  int linears = 0;
  for (const Op& op : g->ops)
    if (op.type == "linear") {
      ++linears;
      EXPECT_EQ(op.domain, "aten");
      EXPECT_EQ(op.inputs.size(), 3u) << op.name << ": x, weight, bias";
    }
  EXPECT_EQ(linears, 2 * 6) << "q, k, v, attention output, intermediate, output per layer";
}

// Every fixture: every op has a rule that agrees with LibTorch's meta kernel, every op counts.
TEST(TorchScriptLoader, AllFixturesAgreeWithMetaKernels) {
  for (const char* name : {"tiny_bert_base", "tiny_gpt2", "tiny_resnet18", "tiny_resnet50", "tiny_mobilenet_v2",
                           "tiny_vit_b_16"}) {
    std::ifstream meta(Data(std::string(name) + ".json"));
    ASSERT_TRUE(meta.good()) << name;
    nlohmann::json j = nlohmann::json::parse(meta);
    std::vector<InputShapeFlag> inputs;
    for (const auto& [k, v] : j["inputs"].items()) inputs.push_back({k, v.get<std::vector<int64_t>>()});
    Expected<Graph> g = LoadAndWalk(Data(std::string(name) + ".pt"), inputs);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    ExpectNoDisagreement(g.value());
    GraphStats st = Stats(g.value());
    std::string warnings;
    for (const std::string& w : st.warnings) warnings += w + "\n";
    EXPECT_EQ(st.uncounted_ops, 0) << name << ":\n" << warnings;
    EXPECT_EQ(st.totals.params, j["params"].get<int64_t>()) << name << ": params as PyTorch counts them";
  }
}

// The same architecture traced to TorchScript and exported to ONNX: MACs within 1%.
void CheckParity(const std::string& dir, const std::string& name) {
  std::ifstream meta(dir + name + ".json");
  if (!meta.good()) GTEST_SKIP() << dir + name + ".json is absent; run scripts/export_torchscript_fixtures.py";
  nlohmann::json j = nlohmann::json::parse(meta);
  std::vector<InputShapeFlag> inputs;
  DimBindings dims;
  for (const auto& [k, v] : j["inputs"].items()) {
    inputs.push_back({k, v.get<std::vector<int64_t>>()});
    dims["batch"] = v[0].get<int64_t>();
  }
  Expected<Graph> ts = LoadAndWalk(dir + name + ".pt", inputs, false);
  ASSERT_TRUE(ts.ok()) << ts.status().message();
  Expected<Graph> ox = LoadOnnxFile(dir + name + ".onnx");
  ASSERT_TRUE(ox.ok()) << ox.status().message();
  ASSERT_TRUE(PrepareGraph(&ox.value(), dims, inputs).ok());
  GraphStats a = Stats(ts.value()), b = Stats(ox.value());
  std::cout << name << ": TorchScript " << a.totals.macs << " MACs, " << a.totals.params << " params, " << a.totals.ops
            << " ops; ONNX " << b.totals.macs << " MACs, " << b.totals.params << " params, " << b.totals.ops
            << " ops; PyTorch params " << j["params"] << "\n";
  EXPECT_GT(a.totals.macs, 0);
  EXPECT_NEAR(a.totals.macs, b.totals.macs, 0.01 * b.totals.macs) << name;
  EXPECT_EQ(a.totals.params, j["params"].get<int64_t>()) << name;
}

class TinyParity : public ::testing::TestWithParam<const char*> {};
TEST_P(TinyParity, MacsMatchOnnxExport) { CheckParity(Data(""), std::string("tiny_") + GetParam()); }
class FullParity : public ::testing::TestWithParam<const char*> {};
TEST_P(FullParity, MacsMatchOnnxExport) { CheckParity(Data("full/"), GetParam()); }

const char* kArchitectures[] = {"resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "bert_base", "gpt2"};
INSTANTIATE_TEST_SUITE_P(Arch, TinyParity, ::testing::ValuesIn(kArchitectures));
INSTANTIATE_TEST_SUITE_P(Arch, FullParity, ::testing::ValuesIn(kArchitectures));

TEST(TorchScriptLoaderErrors, MissingInputShapeNamesTheInputs) {
  Expected<TorchScriptModel> m = TorchScriptModel::Load(Data("tiny_bert_base.pt"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->input_names(), (std::vector<std::string>{"input_ids", "attention_mask"}));
  Expected<Graph> g = m->Walk({{"input_ids", {1, 16}}});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("attention_mask"), std::string::npos) << g.status().message();
  g = m->Walk({{"tokens", {1, 16}}});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("no input named 'tokens'"), std::string::npos) << g.status().message();
  g = m->Walk({{"", {1, 16}}});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("2 inputs"), std::string::npos) << g.status().message();
}

TEST(TorchScriptLoaderErrors, WrongRankIsAnErrorNamingTheNode) {
  Expected<Graph> g = LoadAndWalk(Data("tiny_cnn.v211.pt"), {{"", {2, 3, 32}}}, false);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("tiny_cnn.v211.pt"), std::string::npos) << g.status().message();
}

TEST(TorchScriptLoaderErrors, NotTorchScriptFiles) {
  const std::string onnx = std::string(FTAX_TEST_DATA) + "/onnx/tiny_mlp.onnx";
  EXPECT_FALSE(LooksLikeTorchScript(onnx));
  EXPECT_TRUE(LooksLikeTorchScript(Data("tiny_cnn.v113.pt")));
  Expected<TorchScriptModel> m = TorchScriptModel::Load(onnx);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("tiny_mlp.onnx"), std::string::npos);
  // A truncated archive.
  std::ifstream in(Data("tiny_cnn.v113.pt"), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  const std::string cut = ::testing::TempDir() + "/ftax_truncated.pt";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_TRUE(LooksLikeTorchScript(cut));
  m = TorchScriptModel::Load(cut);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("not a loadable TorchScript file"), std::string::npos) << m.status().message();
  m = TorchScriptModel::Load("/nonexistent/model.pt");
  EXPECT_FALSE(m.ok());
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

std::string ZooTrace(const std::string& name) {
  return std::string(FTAX_SOURCE_DIR) + "/data/models/" + name + ".fp16.pt";
}

// DeBERTa-v3's traced encoder calls scripted free functions (prim::CallFunction, its relative
// positions): they are walked like methods, and every op in them is counted.
TEST(TorchScriptZoo, DebertaFreeFunctionsAreWalked) {
  Expected<TorchScriptModel> m = TorchScriptModel::Load(ZooTrace("deberta-v3-base"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<InputShapeFlag> in;
  for (const std::string& name : m->input_names()) in.push_back({name, {1, 128}, {}, DType::kInt64});
  TorchScriptWalkOptions o;
  o.cross_check_with_meta = false;
  Expected<Graph> g = m->Walk(in, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  GraphStats st = Stats(g.value());
  EXPECT_EQ(st.uncounted_ops, 0);
  // By hand, per layer of 12: QKV, output and FFN GEMMs over 128 tokens 0.906 G; the shared
  // key and query projections of the 512 relative-position embeddings 2 x 512 x 768 x 768 =
  // 0.604 G; scores and context 2 x 128 x 128 x 768 = 0.025 G; content-to-position and
  // position-to-content 2 x 12 heads x 128 x 512 x 64 = 0.101 G. 12 x 1.636 G = 19.6 G.
  EXPECT_NEAR(st.totals.macs, 19.63e9, 0.1e9);
}

// WavLM's positional convolution is weight-normalized (aten::_weight_norm): counted.
TEST(TorchScriptZoo, WavlmWeightNormIsCounted) {
  Expected<TorchScriptModel> m = TorchScriptModel::Load(ZooTrace("wavlm-base"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  TorchScriptWalkOptions o;
  o.cross_check_with_meta = false;
  Expected<Graph> g = m->Walk({{"", {1, 32000}, {}, DType::kFloat16}}, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int weight_norms = 0;
  for (const Op& op : g->ops) weight_norms += op.type == "_weight_norm";
  EXPECT_GE(weight_norms, 1);
  EXPECT_EQ(Stats(g.value()).uncounted_ops, 0);
}

}  // namespace
}  // namespace ftax
