// `resnet`: torchvision ResNet (v1.5: the stride sits on the 3x3 conv of a bottleneck).
//
// kOnnx follows torch.onnx.export (opset 17) of torchvision.models.resnetNN() in eval mode:
// Conv (batch norm folded, so every conv has a bias), Relu, MaxPool, Add, GlobalAveragePool,
// Flatten, Gemm. kTorch follows an eager trace: conv2d, batch_norm (not folded, with its
// running statistics), relu, max_pool2d, add, adaptive_avg_pool2d, flatten, linear.
// A module called more than once in a block (the block's ReLU) gets the exporter's scope
// names relu, relu_1, relu_2.
#include "graph/graph_builder.h"

namespace ftax {
namespace arch {

namespace {

// One residual block in the current scope ("/layerI/layerI.J"); returns its output.
std::string Block(GraphBuilder& b, bool bottleneck, const std::string& x, const Dims& xd,
                  int64_t planes, int64_t stride, Dims* yd) {
  const int64_t expansion = bottleneck ? 4 : 1;
  const int64_t out_c = planes * expansion;
  Dims d1, d2, d3;
  std::string y;
  if (bottleneck) {
    y = ConvBn(b, "conv1", "bn1", x, xd, planes, 1, 1, 0, 1, &d1);
    y = Relu(b, "relu", y, d1, true);
    y = ConvBn(b, "conv2", "bn2", y, d1, planes, 3, stride, 1, 1, &d2);
    y = Relu(b, "relu_1", y, d2, true);
    y = ConvBn(b, "conv3", "bn3", y, d2, out_c, 1, 1, 0, 1, &d3);
  } else {
    y = ConvBn(b, "conv1", "bn1", x, xd, planes, 3, stride, 1, 1, &d1);
    y = Relu(b, "relu", y, d1, true);
    y = ConvBn(b, "conv2", "bn2", y, d1, planes, 3, 1, 1, 1, &d3);
  }
  std::string identity = x;
  if (stride != 1 || xd[1] != out_c) {
    ScopeGuard ds(b, "downsample");
    Dims dd;
    identity = ConvBn(b, "downsample.0", "downsample.1", x, xd, out_c, 1, stride, 0, 1, &dd);
  }
  y = b.Op1(b.torch() ? "add_" : "Add", {y, identity}, d3);  // torchvision: out += identity
  *yd = d3;
  return Relu(b, bottleneck ? "relu_2" : "relu_1", y, d3, true);  // nn.ReLU(inplace=True)
}

}  // namespace

Status BuildResnet(const ArchParams& p, Graph* g) {
  int64_t depth = 0, width = 0, classes = 0, image = 0;
  Status s;
  if (!(s = GetInt(p, "depth", 50, 1 << 20, &depth)).ok()) return s;
  std::vector<int64_t> blocks;
  bool bottleneck = depth >= 50;
  switch (depth) {
    case 18: blocks = {2, 2, 2, 2}; break;
    case 34: blocks = {3, 4, 6, 3}; break;
    case 50: blocks = {3, 4, 6, 3}; break;
    case 101: blocks = {3, 4, 23, 3}; break;
    case 152: blocks = {3, 8, 36, 3}; break;
    default:
      return InvalidInput("key 'depth' must be one of 18, 34, 50, 101, 152 (or give 'blocks'), "
                          "got '" + std::to_string(depth) + "'");
  }
  std::vector<int64_t> given;
  if (!(s = GetIntList(p, "blocks", 1024, &given)).ok()) return s;
  if (!given.empty()) {
    if (given.size() > 8) {
      return InvalidInput("key 'blocks' may list at most 8 stages, got " +
                          std::to_string(given.size()));
    }
    blocks = given;
  }
  if (!(s = GetBool(p, "bottleneck", bottleneck, &bottleneck)).ok()) return s;
  if (!(s = GetInt(p, "width", 64, 1 << 14, &width)).ok()) return s;
  if (!(s = GetInt(p, "classes", 1000, 1 << 20, &classes)).ok()) return s;
  if (!(s = GetInt(p, "image", 224, 1 << 14, &image)).ok()) return s;

  const bool torch = p.flavor == ArchFlavor::kTorch;
  GraphBuilder b(g, p.dtype, torch ? "aten" : "");
  int64_t nblocks = 0;
  for (int64_t n : blocks) nblocks += n;
  g->ops.reserve(static_cast<size_t>(nblocks) * (torch ? 12 : 7) + 16);

  const int64_t B = p.batch;
  Dims xd = {B, 3, image, image};
  std::string x = b.Input("input", p.dtype, xd);
  Dims yd;
  x = ConvBn(b, "conv1", "bn1", x, xd, width, 7, 2, 3, 1, &yd);
  x = Relu(b, "relu", x, yd, true);
  xd = {B, width, ConvOut(yd[2], 3, 2, 1), ConvOut(yd[3], 3, 2, 1)};
  {
    ScopeGuard m(b, "maxpool");
    x = b.Op1(torch ? "max_pool2d" : "MaxPool", {x}, xd);
    if (torch) {
      b.SetInts("kernel_size", {3, 3});
      b.SetInts("stride", {2, 2});
      b.SetInts("padding", {1, 1});
    } else {
      b.SetInts("kernel_shape", {3, 3});
      b.SetInts("pads", {1, 1, 1, 1});
      b.SetInts("strides", {2, 2});
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string layer = "layer" + std::to_string(i + 1);
    ScopeGuard l(b, layer);
    const int64_t planes = width << i;
    for (int64_t j = 0; j < blocks[i]; ++j) {
      ScopeGuard blk(b, layer + "." + std::to_string(j));
      const int64_t stride = (i > 0 && j == 0) ? 2 : 1;
      x = Block(b, bottleneck, x, xd, planes, stride, &yd);
      xd = yd;
    }
  }
  const int64_t C = xd[1];
  {
    ScopeGuard a(b, "avgpool");
    x = b.Op1(torch ? "adaptive_avg_pool2d" : "GlobalAveragePool", {x}, {B, C, 1, 1});
    if (torch) b.SetInts("output_size", {1, 1});
  }
  x = b.Op1(torch ? "flatten" : "Flatten", {x}, {B, C});
  if (torch) {
    b.SetInt("start_dim", 1);
    b.SetInt("end_dim", -1);
  } else {
    b.SetInt("axis", 1);
  }
  x = Linear(b, "fc", x, {B, C}, classes);
  b.Output(b.NameLastOutput("output"));
  return b.status();
}

}  // namespace arch
}  // namespace ftax
