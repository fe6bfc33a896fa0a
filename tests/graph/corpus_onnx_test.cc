// Corpus test over Debian's libonnx-testdata (about 1,000 model.onnx files).
//
// 1. Every model inspects (load + bind + infer + count) or fails with a message; at least 95%
//    must inspect.
// 2. For node tests, ftax's own shape inference (declared value_info/output shapes ignored,
//    inputs set from test_data_set_0/input_N.pb) is compared with the dims of the expected
//    outputs output_N.pb. The count is printed and must not regress below the floor.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"

namespace ftax {
namespace {

namespace fs = std::filesystem;

const char* kCorpus = "/usr/share/libonnx-testdata/data";

// Small integer / float contents of an input tensor (node tests feed pads, shapes, scales as
// inputs; in exported models these are constants that ftax folds).
void SetSmallContents(const onnx::TensorProto& t, TensorInfo* info) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {  // stops before the product can overflow (huge dims in the corpus)
    if (d < 0 || d > 64) return;
    n *= d;
    if (n > 64) return;
  }
  const std::string& raw = t.raw_data();
  if (t.data_type() == onnx::TensorProto::INT64) {
    std::vector<int64_t> v(t.int64_data().begin(), t.int64_data().end());
    if (v.empty() && n > 0 && raw.size() == static_cast<size_t>(n) * 8) {
      v.resize(n);
      std::memcpy(v.data(), raw.data(), raw.size());
    }
    if (static_cast<int64_t>(v.size()) == n) info->int_values = v;
  } else if (t.data_type() == onnx::TensorProto::INT32) {
    std::vector<int64_t> v(t.int32_data().begin(), t.int32_data().end());
    if (v.empty() && n > 0 && raw.size() == static_cast<size_t>(n) * 4) {
      std::vector<int32_t> w(n);
      std::memcpy(w.data(), raw.data(), raw.size());
      v.assign(w.begin(), w.end());
    }
    if (static_cast<int64_t>(v.size()) == n) info->int_values = v;
  } else if (t.data_type() == onnx::TensorProto::FLOAT) {
    std::vector<double> v(t.float_data().begin(), t.float_data().end());
    if (v.empty() && n > 0 && raw.size() == static_cast<size_t>(n) * 4) {
      std::vector<float> w(n);
      std::memcpy(w.data(), raw.data(), raw.size());
      v.assign(w.begin(), w.end());
    }
    if (static_cast<int64_t>(v.size()) == n) info->float_values = v;
  }
}

std::vector<fs::path> Models() {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(kCorpus, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(kCorpus, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == "model.onnx") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(CorpusTest, EveryModelInspectsOrFailsCleanly) {
  std::vector<fs::path> models = Models();
  if (models.empty()) GTEST_SKIP() << "libonnx-testdata not installed (" << kCorpus << ")";
  int ok = 0, failed = 0;
  std::vector<std::string> failures;
  for (const fs::path& p : models) {
    Expected<Graph> g = LoadOnnxFile(p.string());
    Status s = g.ok() ? PrepareGraph(&g.value(), {}, {}) : g.status();
    Expected<GraphStats> st = s.ok() ? ComputeStats(g.value()) : Expected<GraphStats>(s);
    if (st.ok()) {
      ++ok;
      EXPECT_GE(st->totals.macs, 0);
      EXPECT_GE(st->totals.ops, 0);
    } else {
      ++failed;
      EXPECT_FALSE(st.status().message().empty()) << p;
      failures.push_back(p.string() + ": " + st.status().message());
    }
  }
  double rate = static_cast<double>(ok) / models.size();
  std::cout << "corpus: " << ok << " of " << models.size() << " models inspect ("
            << 100.0 * rate << "%), " << failed << " fail cleanly\n";
  for (size_t i = 0; i < failures.size() && i < 20; ++i) std::cout << "  " << failures[i] << "\n";
  RecordProperty("inspected", ok);
  RecordProperty("models", static_cast<int>(models.size()));
  EXPECT_GE(rate, 0.95);
}

TEST(CorpusTest, InferredOutputShapesMatchNodeTestOutputs) {
  std::vector<fs::path> models = Models();
  if (models.empty()) GTEST_SKIP() << "libonnx-testdata not installed (" << kCorpus << ")";
  int compared = 0, correct = 0, tests_with_shapes = 0;
  std::vector<std::string> wrong;
  OnnxLoadOptions opt;
  opt.use_declared_shapes = false;
  for (const fs::path& p : models) {
    if (p.parent_path().parent_path().filename() != "node") continue;
    fs::path data = p.parent_path() / "test_data_set_0";
    if (!fs::exists(data / "output_0.pb")) continue;
    onnx::ModelProto proto;
    if (!proto.ParseFromString(Slurp(p))) continue;
    Expected<Graph> g = LoadOnnxFile(p.string(), opt);
    if (!g.ok()) continue;
    // Inputs: the graph inputs that are not initializers, in order, from input_N.pb.
    std::vector<InputShapeFlag> shapes;
    std::vector<onnx::TensorProto> values;
    bool inputs_ok = true;
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      fs::path f = data / ("input_" + std::to_string(i) + ".pb");
      onnx::TensorProto t;
      if (!fs::exists(f) || !t.ParseFromString(Slurp(f)) || t.data_type() == 0) {
        inputs_ok = false;
        break;
      }
      InputShapeFlag s;
      s.input = g->inputs[i];
      for (int64_t d : t.dims()) s.dims.push_back(d);
      shapes.push_back(s);
      values.push_back(t);
    }
    if (!inputs_ok) continue;
    // Zero-sized dims are legal in ONNX but not as --input-shape values; set them directly.
    for (size_t i = 0; i < shapes.size(); ++i) {
      TensorInfo& t = g->Tensor(shapes[i].input);
      t.has_shape = true;
      t.shape.clear();
      for (int64_t d : shapes[i].dims) t.shape.push_back(Dim::Known(d));
      SetSmallContents(values[i], &t);
    }
    if (!PrepareGraph(&g.value(), {}, {}).ok()) continue;
    bool any = false;
    for (int k = 0; k < proto.graph().output_size(); ++k) {
      if (!proto.graph().output(k).type().has_tensor_type()) continue;
      fs::path f = data / ("output_" + std::to_string(k) + ".pb");
      onnx::TensorProto expected;
      if (!fs::exists(f) || !expected.ParseFromString(Slurp(f)) || expected.data_type() == 0)
        continue;
      any = true;
      ++compared;
      const TensorInfo* t = g->Find(proto.graph().output(k).name());
      bool match = t && t->has_shape &&
                   static_cast<int>(t->shape.size()) == expected.dims_size();
      for (int d = 0; match && d < expected.dims_size(); ++d)
        match = t->shape[d].known() && t->shape[d].value == expected.dims(d);
      if (match) ++correct;
      else
        wrong.push_back(p.parent_path().filename().string() + " output " + std::to_string(k) +
                        ": ftax " + (t && t->has_shape ? ShapeToString(t->shape) : "?"));
    }
    tests_with_shapes += any;
  }
  std::cout << "node tests: " << correct << " of " << compared
            << " expected output shapes inferred correctly (" << tests_with_shapes
            << " node tests with tensor outputs)\n";
  for (size_t i = 0; i < wrong.size() && i < (std::getenv("FTAX_CORPUS_VERBOSE") ? wrong.size() : 40); ++i) std::cout << "  " << wrong[i] << "\n";
  RecordProperty("shapes_correct", correct);
  RecordProperty("shapes_compared", compared);
  ASSERT_GT(compared, 500);
  // Floor from the first measured run (docs/inspect.md); raise it as inference improves.
  EXPECT_GE(static_cast<double>(correct) / compared, 0.90);
}

}  // namespace
}  // namespace ftax
