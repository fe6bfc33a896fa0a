#include "calibrate/layer_shapes.h"

#include <gtest/gtest.h>

#include "predictor/lowering.h"

namespace ftax {
namespace {

using nlohmann::json;

const std::string kShipped = std::string(FTAX_SOURCE_DIR) + "/data/zoo/layer-shapes.json";

TensorInfo T(const std::string& name, const std::vector<int64_t>& dims, bool init = false) {
  TensorInfo t;
  t.name = name;
  t.dtype = DType::kFloat16;
  t.has_shape = true;
  for (int64_t v : dims) t.shape.push_back(Dim::Known(v));
  t.is_initializer = init;
  return t;
}

// The layer's kernel, from input x to output y, lowered for CUDA graphs (a permute before it is
// a view), or for torch.compile where the row's weights are channels-last (Inductor's layout
// copies before it are kernels of their own).
KernelWork LastLayerKernel(Graph* g, Framework f = Framework::kCudaGraph) {
  g->inputs = {"x"};
  g->outputs = {"y"};
  if (g->tensors.count("y2")) {
    g->inputs.push_back("x2");
    g->outputs.push_back("y2");
  }
  Expected<WorkList> w = Lower(*g, {f, DType::kFloat16});
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok() || w->kernels.empty()) return {};
  for (const KernelWork& k : w->kernels)
    if (k.cls != KernelClass::kCopy) return k;
  return w->kernels.front();
}

// The layer as an ONNX Conv, MaxPool or AveragePool node, lowered for CUDA graphs.
KernelWork Lowered(const LayerShape& l, int64_t batch) {
  Graph g;
  std::vector<int64_t> x = {batch, l.cin}, y = {batch, l.cout};
  x.insert(x.end(), l.spatial.begin(), l.spatial.end());
  for (int64_t o : LayerOutputSpatial(l)) y.push_back(o);
  g.tensors["x"] = T("x", x);
  g.tensors["y"] = T("y", y);
  Op op;
  op.name = "layer";
  op.outputs = {"y"};
  std::vector<int64_t> pads = l.pad;
  pads.insert(pads.end(), l.pad.begin(), l.pad.end());
  auto ints = [](std::vector<int64_t> v) {
    Attribute a;
    a.kind = Attribute::Kind::kInts;
    a.ints = std::move(v);
    return a;
  };
  op.attrs["strides"] = ints(l.stride);
  op.attrs["pads"] = ints(pads);
  op.attrs["kernel_shape"] = ints(l.kernel);
  if (l.op == "conv") {
    std::vector<int64_t> w = {l.cout, l.cin / l.groups};
    w.insert(w.end(), l.kernel.begin(), l.kernel.end());
    g.tensors["w"] = T("w", w, true);
    op.type = "Conv";
    op.inputs = {"x", "w"};
    op.attrs["dilations"] = ints(l.dilation);
    Attribute group;
    group.kind = Attribute::Kind::kInt;
    group.i = l.groups;
    op.attrs["group"] = group;
  } else {
    op.type = l.op == "max_pool" ? "MaxPool" : "AveragePool";
    op.inputs = {"x"};
  }
  if (l.weights_channels_last) {
    // torch.compile makes input and weights channels-last itself, where the model's work is
    // mostly dense convolutions (Inductor's rule, lowering.cc): a dense 3x3 convolution
    // beside the layer stands for the rest of a model such as ResNeXt's.
    g.ops.push_back(op);
    g.tensors["x2"] = T("x2", {batch, 256, 56, 56});
    g.tensors["w2"] = T("w2", {256, 256, 3, 3}, true);
    g.tensors["y2"] = T("y2", {batch, 256, 56, 56});
    Op dense = op;
    dense.name = "dense";
    dense.inputs = {"x2", "w2"};
    dense.outputs = {"y2"};
    dense.attrs["group"].i = 1;
    dense.attrs["kernel_shape"] = ints({3, 3});
    dense.attrs["pads"] = ints({1, 1, 1, 1});
    dense.attrs["strides"] = ints({1, 1});
    dense.attrs["dilations"] = ints({1, 1});
    g.ops.push_back(dense);
    return LastLayerKernel(&g, Framework::kTorchCompileReduceOverhead);
  }
  if (l.channels_last) {  // the input comes from a permute back to NCHW, as in ConvNeXt
    std::vector<int64_t> nhwc = {x[0], x[2], x[3], x[1]};
    g.tensors["x_nhwc"] = T("x_nhwc", nhwc);
    Op t;
    t.type = "Transpose";
    t.inputs = {"x_nhwc"};
    t.outputs = {"x"};
    t.attrs["perm"] = ints({0, 3, 1, 2});
    g.ops.push_back(t);
  }
  g.ops.push_back(op);
  return LastLayerKernel(&g);
}

// A layer norm as an ONNX LayerNormalization node with its scale and bias, lowered likewise.
KernelWork LoweredNorm(const NormShape& l, int64_t batch) {
  Graph g;
  g.tensors["x"] = T("x", {batch, l.positions, l.hidden});
  g.tensors["s"] = T("s", {l.hidden}, true);
  g.tensors["b"] = T("b", {l.hidden}, true);
  g.tensors["y"] = T("y", {batch, l.positions, l.hidden});
  Op op;
  op.name = "norm";
  op.type = "LayerNormalization";
  op.inputs = {"x", "s", "b"};
  op.outputs = {"y"};
  g.ops.push_back(op);
  return LastLayerKernel(&g);
}

// The bench row's work is the lowering's kernel: class, variant, GEMM-like shape, FLOPs, bytes.
void ExpectSameWork(const LayerWork& lw, const KernelWork& k) {
  SCOPED_TRACE(lw.label);
  EXPECT_EQ(lw.cls, KernelClassName(k.cls));
  EXPECT_EQ(lw.work.value("variant", ""), KernelVariantName(k.variant));
  EXPECT_EQ(lw.work.value("m", int64_t(0)), k.m);
  EXPECT_EQ(lw.work.value("n", int64_t(0)), k.n);
  EXPECT_EQ(lw.work.value("k", int64_t(0)), k.k);
  EXPECT_DOUBLE_EQ(lw.work.at("flops").get<double>(), k.flops);
  EXPECT_DOUBLE_EQ(lw.work.at("bytes").get<double>(), k.bytes);
}

// Every shipped layer is measured as the work the predictor gives the same layer: the same
// class, variant, GEMM-like shape, FLOPs and bytes, so each row anchors what it stands for.
TEST(LayerShapesTest, ShippedLayersAreTheLoweringsWork) {
  Expected<LayerShapes> s = ReadLayerShapes(kShipped);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_GE(s->layers.size(), 100u);
  std::map<std::string, int> variants;
  for (const LayerShape& l : s->layers) {
    for (int64_t n : {int64_t(1), int64_t(8)}) {
      const LayerWork lw = LayerKernelWork(l, n, 2);
      ExpectSameWork(lw, Lowered(l, n));
      ++variants[lw.cls + "/" + lw.work.value("variant", "")];
    }
  }
  ASSERT_GE(s->layer_norms.size(), 10u);
  for (const NormShape& l : s->layer_norms) {
    for (int64_t n : {int64_t(1), int64_t(8)}) {
      const LayerWork lw = NormKernelWork(l, n, 2);
      ExpectSameWork(lw, LoweredNorm(l, n));
      ++variants[lw.cls + "/" + lw.work.value("variant", "")];
    }
  }
  // The kinds the plain grids missed are all there.
  for (const char* v : {"conv/grouped", "conv/patchify", "conv/pointwise", "conv/pointwise_odd", "conv/pointwise_nhwc", "conv/", "depthwise/",
                        "depthwise/large_kernel", "depthwise/nhwc", "conv/nhwc", "reduction/pool",
                        "norm/layer_norm"})
    EXPECT_GT(variants[v], 0) << v;
}

TEST(LayerShapesTest, HandCountedConvolutions) {
  LayerShape l;
  l.op = "conv";
  l.cin = 64;
  l.cout = 128;
  l.groups = 32;  // ResNeXt's grouped 3x3: 4 channels a group
  l.spatial = {56, 56};
  l.kernel = {3, 3};
  l.stride = {2, 2};
  l.pad = {1, 1};
  l.dilation = {1, 1};
  EXPECT_EQ(LayerOutputSpatial(l), (std::vector<int64_t>{28, 28}));
  LayerWork w = LayerKernelWork(l, 2, 2);
  EXPECT_EQ(w.cls, "conv");
  EXPECT_EQ(w.work["variant"], "grouped");
  EXPECT_EQ(w.work["m"], 2 * 28 * 28);
  EXPECT_EQ(w.work["n"], 4);
  EXPECT_EQ(w.work["k"], 2 * 9);
  EXPECT_EQ(w.work["batch"], 32);
  EXPECT_DOUBLE_EQ(w.work["flops"].get<double>(), 2.0 * (2 * 28 * 28) * 4 * 18 * 32);
  EXPECT_DOUBLE_EQ(w.work["bytes"].get<double>(),
                   (2.0 * 64 * 56 * 56 + 128.0 * 2 * 9 + 2.0 * 128 * 28 * 28) * 2);
  EXPECT_EQ(w.label, "layer conv n2 64->128 56x56 k3x3 s2x2 p1x1 g32");
  // ViT-B/16's patch embedding: 16x16 patches, no overlap.
  l.cin = 3;
  l.cout = 768;
  l.groups = 1;
  l.spatial = {224, 224};
  l.kernel = l.stride = {16, 16};
  l.pad = {0, 0};
  w = LayerKernelWork(l, 1, 2);
  EXPECT_EQ(w.work["variant"], "patchify");
  EXPECT_EQ(w.work["m"], 196);
  EXPECT_EQ(w.work["k"], 768);
  // ConvNeXt's depthwise 7x7.
  l.cin = l.cout = l.groups = 96;
  l.spatial = {56, 56};
  l.kernel = {7, 7};
  l.stride = {1, 1};
  l.pad = {3, 3};
  w = LayerKernelWork(l, 1, 2);
  EXPECT_EQ(w.cls, "depthwise");
  EXPECT_EQ(w.work["variant"], "large_kernel");
  EXPECT_EQ(w.work["m"], 56 * 56);
  EXPECT_EQ(w.work["n"], 96);
  EXPECT_EQ(w.work["k"], 49);
  // The same layer reading a channels-last tensor, as ConvNeXt runs it: cuDNN's NHWC kernel,
  // shaped the same way.
  l.channels_last = true;
  w = LayerKernelWork(l, 2, 2);
  EXPECT_EQ(w.work["variant"], "nhwc");
  EXPECT_EQ(w.work["m"], 2 * 56 * 56);
  EXPECT_EQ(w.work["k"], 49);
  EXPECT_EQ(w.label, "layer conv n2 96->96 56x56 k7x7 s1x1 p3x3 g96 nhwc");
  // ConvNeXt's 2x2 stride-2 downsampling over 96 channels: not an image cut into patches.
  l.channels_last = false;
  l.groups = 1;
  l.cout = 192;
  l.kernel = l.stride = {2, 2};
  l.pad = {0, 0};
  w = LayerKernelWork(l, 1, 2);
  EXPECT_EQ(w.cls, "conv");
  EXPECT_FALSE(w.work.contains("variant"));
  l.channels_last = true;  // as ConvNeXt runs it, on the channels-last output of a LayerNorm2d
  w = LayerKernelWork(l, 1, 2);
  EXPECT_EQ(w.work["variant"], "nhwc");
  EXPECT_EQ(w.work["batch"], 1);
  l.channels_last = false;
  // A max pool 3x3 stride 2 over 148 px: 73 windows, 74 with ceil mode (the last one starts
  // inside the input); over 147, 73 either way.
  LayerShape p;
  p.op = "max_pool";
  p.cin = p.cout = 64;
  p.spatial = {148, 148};
  p.kernel = {3, 3};
  p.stride = {2, 2};
  p.pad = {0, 0};
  p.dilation = {1, 1};
  EXPECT_EQ(LayerOutputSpatial(p)[0], 73);
  p.ceil_mode = true;
  EXPECT_EQ(LayerOutputSpatial(p)[0], 74);
  p.spatial = {147, 147};
  EXPECT_EQ(LayerOutputSpatial(p)[0], 73);
  w = LayerKernelWork(p, 1, 2);
  EXPECT_EQ(w.cls, "reduction");
  EXPECT_EQ(w.work["variant"], "pool");
}

// ConvNeXt-T's first stage: 56x56 pixels of 96 channels, normalized over the channels.
TEST(LayerShapesTest, HandCountedLayerNorm) {
  NormShape l;
  l.positions = 3136;
  l.hidden = 96;
  const LayerWork w = NormKernelWork(l, 8, 2);
  EXPECT_EQ(w.cls, "norm");
  EXPECT_EQ(w.work["variant"], "layer_norm");
  EXPECT_EQ(w.work["m"], 8 * 3136);
  EXPECT_EQ(w.work["n"], 96);
  EXPECT_DOUBLE_EQ(w.work["flops"].get<double>(), 5.0 * 8 * 3136 * 96);
  EXPECT_DOUBLE_EQ(w.work["bytes"].get<double>(), (2.0 * 8 * 3136 * 96 + 2 * 96) * 2);
  EXPECT_EQ(w.label, "layer layer_norm n8 3136x96");
}

// A 1x1 layer as torch.compile runs it (input and weights channels-last): its own variant,
// shaped as the aligned pointwise one, labelled apart from the NCHW row, timed at its batches.
TEST(LayerShapesTest, AChannelsLastRowForTorchCompile) {
  const json doc = {{"kind", "ftax-layer-shapes"},
                    {"batches", {1, 8, 64}},
                    {"layers", {{{"op", "conv"}, {"cin", 256}, {"cout", 64}, {"spatial", {56, 56}},
                                 {"kernel", {1, 1}}, {"layout", "nhwc"}, {"weights", "nhwc"}, {"batches", {1, 8}}},
                                {{"op", "conv"}, {"cin", 64}, {"cout", 64}, {"spatial", {56, 56}},
                                 {"kernel", {3, 3}}, {"pad", {1, 1}}, {"layout", "nhwc"}, {"weights", "nhwc"}},
                                {{"op", "conv"}, {"cin", 384}, {"cout", 384}, {"spatial", {14, 14}},
                                 {"kernel", {3, 3}}, {"pad", {1, 1}}, {"groups", 16}, {"layout", "nhwc"},
                                 {"weights", "nhwc"}}}}};
  Expected<LayerShapes> s = LayerShapesFromJson(doc, "f.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const LayerShape& pw = s->layers[0];
  EXPECT_TRUE(pw.channels_last && pw.weights_channels_last);
  EXPECT_EQ(pw.batches, (std::vector<int64_t>{1, 8}));
  LayerWork w = LayerKernelWork(pw, 8, 2);
  EXPECT_EQ(w.label, "layer conv n8 256->64 56x56 k1x1 s1x1 p0x0 g1 nhwc w-nhwc");
  EXPECT_EQ(w.work["variant"], "pointwise_nhwc");
  EXPECT_EQ(w.work["m"], 8 * 56 * 56);
  EXPECT_EQ(w.work["n"], 64);
  EXPECT_EQ(w.work["k"], 256);
  EXPECT_EQ(w.work["batch"], 1);
  const LayerShape& dense = s->layers[1];
  EXPECT_TRUE(dense.batches.empty());  // every batch of the file
  w = LayerKernelWork(dense, 1, 2);
  EXPECT_EQ(w.work["variant"], "nhwc");
  EXPECT_EQ(w.work["k"], 64 * 9);
  // 24 channels a group: cuDNN's layout transforms, a variant of its own.
  w = LayerKernelWork(s->layers[2], 1, 2);
  EXPECT_EQ(w.work["variant"], "nhwc_grouped_non_pow2");
  EXPECT_EQ(w.work["n"], 24);
  EXPECT_EQ(w.work["batch"], 16);
}

TEST(LayerShapesTest, BadRowsAreNamed) {
  const json good = {{"kind", "ftax-layer-shapes"},
                     {"batches", {1, 8}},
                     {"layers", {{{"op", "conv"}, {"cin", 8}, {"cout", 8}, {"groups", 2},
                                  {"spatial", {14, 14}}, {"kernel", {3, 3}}}}}};
  ASSERT_TRUE(LayerShapesFromJson(good, "f.json").ok());
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"kind", [](json& j) { j["kind"] = "x"; }, "not a layer-shapes file"},
      {"batches", [](json& j) { j["batches"] = json::array(); }, "f.json.batches"},
      {"op", [](json& j) { j["layers"][0]["op"] = "gemm"; }, "f.json.layers[0].op"},
      {"groups", [](json& j) { j["layers"][0]["groups"] = 3; }, "does not divide"},
      {"zero channels", [](json& j) { j["layers"][0]["cin"] = 0; }, "f.json.layers[0].cin"},
      {"kernel dims", [](json& j) { j["layers"][0]["kernel"] = {3}; }, "f.json.layers[0].kernel"},
      {"stride 0", [](json& j) { j["layers"][0]["stride"] = {0, 1}; }, "f.json.layers[0].stride"},
      {"no output", [](json& j) { j["layers"][0]["kernel"] = {30, 30}; }, "no output"},
      {"3-D", [](json& j) { j["layers"][0]["spatial"] = {4, 4, 4}; }, "spatial dims"},
      {"pool channels", [](json& j) { j["layers"][0]["op"] = "max_pool"; }, "keeps its channels"},
      {"layout", [](json& j) { j["layers"][0]["layout"] = "nchwc"; }, "f.json.layers[0].layout"},
      {"norm hidden", [](json& j) { j["layer_norms"] = {{{"positions", 4}, {"hidden", 0}}}; },
       "f.json.layer_norms[0].hidden"},
      {"norms", [](json& j) { j["layer_norms"] = 3; }, "f.json.layer_norms"},
      {"1-D nhwc", [](json& j) {
         j["layers"][0]["layout"] = "nhwc";
         j["layers"][0]["spatial"] = {14};
         j["layers"][0]["kernel"] = {3};
       }, "nhwc needs 2 spatial dims"},
      {"weights", [](json& j) { j["layers"][0]["weights"] = "nhwc"; }, "nhwc weights need"},
      {"weights value", [](json& j) {
         j["layers"][0]["layout"] = "nhwc";
         j["layers"][0]["weights"] = "ohwi";
       }, "f.json.layers[0].weights"},
      {"row batches", [](json& j) { j["layers"][0]["batches"] = {1, 64}; }, "64 is not one of the file's batches"},
      {"row batches empty", [](json& j) { j["layers"][0]["batches"] = json::array(); }, "f.json.layers[0].batches"},
  };
  for (const Case& c : cases) {
    json j = good;
    c.edit(j);
    Expected<LayerShapes> s = LayerShapesFromJson(j, "f.json");
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.status().code(), ErrorCode::kInvalidInput) << c.what;
    EXPECT_NE(s.status().message().find(c.message), std::string::npos) << c.what << ": " << s.status().message();
  }
  Expected<LayerShapes> missing = ReadLayerShapes("/nonexistent/layer-shapes.json");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/layer-shapes.json"), std::string::npos);
}

}  // namespace
}  // namespace ftax
