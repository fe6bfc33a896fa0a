#include "predictor/lowering_rules.h"

#include <unordered_map>

namespace ftax {
namespace {

using DC = DispatchClass;
using KR = KernelRecipe;

struct Key {
  const char* domain;
  const char* type;
};

struct Row {
  Key key;
  LoweringRule rule;
};

constexpr LoweringRule kView{true, DC::kView, KR::kNone, false};
constexpr LoweringRule kFree{false, DC::kView, KR::kNone, false};  // no dispatch at all
constexpr LoweringRule kLib(KR r) { return LoweringRule{true, DC::kLibrary, r, false}; }
constexpr LoweringRule kKer(KR r) { return LoweringRule{true, DC::kKernel, r, false}; }

// clang-format off
const Row kRows[] = {
  // ---- aten domain: one ATen call, one dispatch ----
  {{"aten", "linear"}, kLib(KR::kLinear)},
  {{"aten", "addmm"}, kLib(KR::kLinear)},
  {{"aten", "matmul"}, kLib(KR::kMatMul)},
  {{"aten", "bmm"}, kLib(KR::kMatMul)},
  {{"aten", "baddbmm"}, kLib(KR::kMatMul)},
  {{"aten", "mm"}, kLib(KR::kMatMul)},
  {{"aten", "conv1d"}, kLib(KR::kConv)},
  {{"aten", "conv2d"}, kLib(KR::kConv)},
  {{"aten", "_convolution"}, kLib(KR::kConv)},
  {{"aten", "convolution"}, kLib(KR::kConv)},
  {{"aten", "scaled_dot_product_attention"}, kLib(KR::kAttention)},
  {{"aten", "layer_norm"}, kKer(KR::kNorm)},
  {{"aten", "batch_norm"}, kKer(KR::kNorm)},
  {{"aten", "softmax"}, kKer(KR::kReduction)},
  {{"aten", "log_softmax"}, kKer(KR::kReduction)},
  {{"aten", "mean"}, kKer(KR::kReduction)},
  {{"aten", "sum"}, kKer(KR::kReduction)},
  {{"aten", "max_pool2d"}, kKer(KR::kReduction)},
  {{"aten", "avg_pool2d"}, kKer(KR::kReduction)},
  {{"aten", "adaptive_avg_pool2d"}, kKer(KR::kReduction)},
  {{"aten", "gelu"}, kKer(KR::kElementwise)},
  {{"aten", "relu"}, kKer(KR::kElementwise)},
  {{"aten", "relu_"}, kKer(KR::kElementwise)},
  {{"aten", "relu6"}, kKer(KR::kElementwise)},
  {{"aten", "hardtanh"}, kKer(KR::kElementwise)},
  {{"aten", "hardtanh_"}, kKer(KR::kElementwise)},
  {{"aten", "silu"}, kKer(KR::kElementwise)},
  {{"aten", "sigmoid"}, kKer(KR::kElementwise)},
  {{"aten", "tanh"}, kKer(KR::kElementwise)},
  {{"aten", "add"}, kKer(KR::kElementwise)},
  {{"aten", "add_"}, kKer(KR::kElementwise)},
  {{"aten", "sub"}, kKer(KR::kElementwise)},
  {{"aten", "rsub"}, kKer(KR::kElementwise)},
  {{"aten", "mul"}, kKer(KR::kElementwise)},
  {{"aten", "div"}, kKer(KR::kElementwise)},
  {{"aten", "pow"}, kKer(KR::kElementwise)},
  {{"aten", "where"}, kKer(KR::kElementwise)},
  {{"aten", "masked_fill"}, kKer(KR::kElementwise)},
  {{"aten", "to"}, kKer(KR::kElementwise)},
  {{"aten", "embedding"}, kKer(KR::kGather)},
  {{"aten", "index_select"}, kKer(KR::kGather)},
  {{"aten", "cat"}, kKer(KR::kCopy)},
  {{"aten", "contiguous"}, kKer(KR::kCopy)},
  {{"aten", "clone"}, kKer(KR::kCopy)},
  {{"aten", "view"}, kView},
  {{"aten", "reshape"}, kView},
  {{"aten", "permute"}, kView},
  {{"aten", "transpose"}, kView},
  {{"aten", "t"}, kView},
  {{"aten", "expand"}, kView},
  {{"aten", "unsqueeze"}, kView},
  {{"aten", "squeeze"}, kView},
  {{"aten", "select"}, kView},
  {{"aten", "slice"}, kView},
  {{"aten", "flatten"}, kView},
  {{"aten", "split"}, kView},
  {{"aten", "chunk"}, kView},
  {{"aten", "dropout"}, kView},
  {{"aten", "detach"}, kView},
  {{"aten", "size"}, kFree},
  // ---- ONNX domain ----
  {{"", "MatMul"}, kLib(KR::kMatMul)},
  {{"", "Gemm"}, kLib(KR::kGemmOnnx)},
  {{"", "Conv"}, kLib(KR::kConv)},
  {{"", "Attention"}, kLib(KR::kAttention)},
  {{"", "Softmax"}, kKer(KR::kReduction)},
  {{"", "LogSoftmax"}, kKer(KR::kReduction)},
  {{"", "LayerNormalization"}, kKer(KR::kNorm)},
  {{"", "BatchNormalization"}, kKer(KR::kNorm)},
  {{"", "InstanceNormalization"}, kKer(KR::kNorm)},
  {{"", "ReduceMean"}, kKer(KR::kReduction)},
  {{"", "ReduceSum"}, kKer(KR::kReduction)},
  {{"", "ReduceMax"}, kKer(KR::kReduction)},
  {{"", "GlobalAveragePool"}, kKer(KR::kReduction)},
  {{"", "GlobalMaxPool"}, kKer(KR::kReduction)},
  {{"", "MaxPool"}, kKer(KR::kReduction)},
  {{"", "AveragePool"}, kKer(KR::kReduction)},
  {{"", "Add"}, LoweringRule{true, DC::kKernel, KR::kElementwise, true}},
  {{"", "Sub"}, kKer(KR::kElementwise)},
  {{"", "Mul"}, kKer(KR::kElementwise)},
  {{"", "Div"}, kKer(KR::kElementwise)},
  {{"", "Pow"}, kKer(KR::kElementwise)},
  {{"", "Sqrt"}, kKer(KR::kElementwise)},
  {{"", "Erf"}, kKer(KR::kElementwise)},
  {{"", "Gelu"}, kKer(KR::kElementwise)},
  {{"", "Relu"}, kKer(KR::kElementwise)},
  {{"", "Sigmoid"}, kKer(KR::kElementwise)},
  {{"", "HardSigmoid"}, kKer(KR::kElementwise)},
  {{"", "HardSwish"}, kKer(KR::kElementwise)},
  {{"", "Tanh"}, kKer(KR::kElementwise)},
  {{"", "Clip"}, kKer(KR::kElementwise)},
  {{"", "Where"}, kKer(KR::kElementwise)},
  {{"", "Cast"}, kKer(KR::kElementwise)},
  {{"", "Neg"}, kKer(KR::kElementwise)},
  {{"", "Exp"}, kKer(KR::kElementwise)},
  {{"", "Gather"}, kKer(KR::kGather)},
  {{"", "Concat"}, kKer(KR::kCopy)},
  {{"", "Reshape"}, kView},
  {{"", "Flatten"}, kView},
  {{"", "Transpose"}, kView},
  {{"", "Squeeze"}, kView},
  {{"", "Unsqueeze"}, kView},
  {{"", "Slice"}, kView},
  {{"", "Split"}, kView},
  {{"", "Expand"}, kView},
  {{"", "Dropout"}, kView},
  {{"", "Identity"}, kFree},
  {{"", "Shape"}, kFree},
  {{"", "Constant"}, kFree},
  {{"", "ConstantOfShape"}, kFree},
  {{"", "Range"}, kFree},
};
// clang-format on

const std::unordered_map<std::string, LoweringRule>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, LoweringRule>();
    for (const Row& r : kRows) (*t)[std::string(r.key.domain) + "::" + r.key.type] = r.rule;
    return t;
  }();
  return *table;
}

}  // namespace

const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type) {
  const std::string d = (domain == "ai.onnx") ? "" : domain;
  auto it = Table().find(d + "::" + op_type);
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace ftax
