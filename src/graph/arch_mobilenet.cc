// `mobilenet`: torchvision MobileNetV2 (inverted residual blocks, depthwise 3x3 convs).
//
// kOnnx follows torch.onnx.export (opset 17) in eval mode: Conv (batch norm folded), Clip(0, 6)
// for ReLU6, Add for residuals, GlobalAveragePool, Flatten, Gemm. kTorch: conv2d, batch_norm,
// hardtanh, add, adaptive_avg_pool2d, flatten, dropout, linear.
// Channel counts follow torchvision's _make_divisible(c * width_mult, 8); `expansion`
// replaces the factor 6 of every block that expands (the first block keeps 1).
#include <algorithm>

#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

namespace {

int64_t MakeDivisible(double v, int64_t divisor = 8) {
  int64_t nv = std::max<int64_t>(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (nv < 0.9 * v) nv += divisor;
  return nv;
}

// Conv2dNormActivation(in, out, kernel, stride, groups) with ReLU6, as module `name` with
// children name.0 (conv), name.1 (bn), name.2 (ReLU6).
std::string ConvBnRelu6(GraphBuilder& b, const std::string& name, const std::string& x,
                        const Dims& xd, int64_t out_c, int64_t kernel, int64_t stride,
                        int64_t groups, Dims* yd) {
  ScopeGuard m(b, name);
  std::string y = ConvBn(b, name + ".0", name + ".1", x, xd, out_c, kernel, stride,
                         (kernel - 1) / 2, groups, yd);
  return Relu6(b, name + ".2", y, *yd);
}

}  // namespace

Status BuildMobilenet(const ArchParams& p, Graph* g) {
  double width_mult = 1.0;
  int64_t expansion = 6, classes = 0, image = 0;
  Status s;
  if (!(s = GetFloat(p, "width_mult", 1.0, 16.0, &width_mult)).ok()) return s;
  if (!(s = GetInt(p, "expansion", 6, 64, &expansion)).ok()) return s;
  if (!(s = GetInt(p, "classes", 1000, 1 << 20, &classes)).ok()) return s;
  if (!(s = GetInt(p, "image", 224, 1 << 14, &image)).ok()) return s;

  const bool torch = p.flavor == ArchFlavor::kTorch;
  GraphBuilder b(g, p.dtype, torch ? "aten" : "");
  g->ops.reserve(torch ? 170 : 110);
  // t (expansion), c (channels), n (blocks), s (stride of the first block).
  const int64_t settings[7][4] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
  const int64_t B = p.batch;
  Dims xd = {B, 3, image, image};
  std::string x = b.Input("input", p.dtype, xd);
  Dims yd;
  b.Push("features");
  int64_t in_c = MakeDivisible(32 * width_mult);
  x = ConvBnRelu6(b, "features.0", x, xd, in_c, 3, 2, 1, &yd);
  xd = yd;
  int index = 1;
  for (const auto& st : settings) {
    const int64_t t = st[0] == 1 ? 1 : expansion;
    const int64_t out_c = MakeDivisible(st[1] * width_mult);
    for (int64_t i = 0; i < st[2]; ++i, ++index) {
      const int64_t stride = i == 0 ? st[3] : 1;
      ScopeGuard blk(b, "features." + std::to_string(index));
      const int64_t hidden = in_c * t;
      std::string y = x;
      Dims d = xd;
      {
        ScopeGuard conv(b, "conv");
        int sub = 0;
        if (t != 1) {
          y = ConvBnRelu6(b, "conv." + std::to_string(sub++), y, d, hidden, 1, 1, 1, &yd);
          d = yd;
        }
        y = ConvBnRelu6(b, "conv." + std::to_string(sub++), y, d, hidden, 3, stride, hidden,
                        &yd);
        d = yd;
        const std::string pw = "conv." + std::to_string(sub++);
        const std::string bn = "conv." + std::to_string(sub++);
        y = ConvBn(b, pw, bn, y, d, out_c, 1, 1, 0, 1, &yd);
        d = yd;
      }
      if (stride == 1 && in_c == out_c) y = b.Op1(torch ? "add" : "Add", {x, y}, d);
      x = y;
      xd = d;
      in_c = out_c;
    }
  }
  const int64_t last_c = MakeDivisible(1280 * std::max(1.0, width_mult));
  x = ConvBnRelu6(b, "features." + std::to_string(index), x, xd, last_c, 1, 1, 1, &yd);
  b.Pop();  // features
  x = b.Op1(torch ? "adaptive_avg_pool2d" : "GlobalAveragePool", {x}, {B, last_c, 1, 1});
  if (torch) b.SetInts("output_size", {1, 1});
  x = b.Op1(torch ? "flatten" : "Flatten", {x}, {B, last_c});
  if (torch) {
    b.SetInt("start_dim", 1);
    b.SetInt("end_dim", -1);
  } else {
    b.SetInt("axis", 1);
  }
  {
    ScopeGuard c(b, "classifier");
    x = Dropout(b, "classifier.0", x, {B, last_c}, 0.2);
    x = Linear(b, "classifier.1", x, {B, last_c}, classes);
  }
  b.Output(b.NameLastOutput("output"));
  return b.status();
}

}  // namespace arch
}  // namespace ftax
