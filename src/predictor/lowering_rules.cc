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
  // Small ops of mask construction (transformers 5 builds the SDPA mask with these).
  {{"aten", "__and__"}, kKer(KR::kElementwise)},
  {{"aten", "bitwise_and"}, kKer(KR::kElementwise)},
  {{"aten", "bitwise_or"}, kKer(KR::kElementwise)},
  {{"aten", "bitwise_not"}, kKer(KR::kElementwise)},
  {{"aten", "logical_and"}, kKer(KR::kElementwise)},
  {{"aten", "ge"}, kKer(KR::kElementwise)},
  {{"aten", "gt"}, kKer(KR::kElementwise)},
  {{"aten", "le"}, kKer(KR::kElementwise)},
  {{"aten", "lt"}, kKer(KR::kElementwise)},
  {{"aten", "eq"}, kKer(KR::kElementwise)},
  {{"aten", "ne"}, kKer(KR::kElementwise)},
  {{"aten", "arange"}, kKer(KR::kElementwise)},
  {{"aten", "ones"}, kKer(KR::kElementwise)},
  {{"aten", "new_ones"}, kKer(KR::kElementwise)},
  {{"aten", "zeros"}, kKer(KR::kElementwise)},
  {{"aten", "new_zeros"}, kKer(KR::kElementwise)},
  {{"aten", "full"}, kKer(KR::kElementwise)},
  {{"aten", "fill_"}, kKer(KR::kElementwise)},
  {{"aten", "masked_fill_"}, kKer(KR::kElementwise)},
  {{"aten", "type_as"}, kKer(KR::kElementwise)},
  {{"aten", "index"}, kKer(KR::kGather)},
  {{"aten", "gather"}, kKer(KR::kGather)},
  {{"aten", "expand_as"}, kView},
  {{"aten", "view_as"}, kView},
  {{"aten", "alias"}, kView},
  {{"aten", "numpy_T"}, kView},
  {{"aten", "mul_"}, kKer(KR::kElementwise)},
  {{"aten", "div_"}, kKer(KR::kElementwise)},
  {{"aten", "sub_"}, kKer(KR::kElementwise)},
  {{"aten", "tanh_"}, kKer(KR::kElementwise)},
  {{"aten", "gelu_"}, kKer(KR::kElementwise)},
  {{"aten", "exp"}, kKer(KR::kElementwise)},
  {{"aten", "sqrt"}, kKer(KR::kElementwise)},
  {{"aten", "rsqrt"}, kKer(KR::kElementwise)},
  {{"aten", "neg"}, kKer(KR::kElementwise)},
  {{"aten", "hardswish"}, kKer(KR::kElementwise)},
  {{"aten", "hardsigmoid"}, kKer(KR::kElementwise)},
  {{"aten", "clamp"}, kKer(KR::kElementwise)},
  {{"aten", "clamp_min"}, kKer(KR::kElementwise)},
  {{"aten", "stack"}, kKer(KR::kCopy)},
  {{"aten", "flip"}, kKer(KR::kCopy)},
  {{"aten", "roll"}, kKer(KR::kCopy)},
  {{"aten", "pad"}, kKer(KR::kCopy)},
  {{"aten", "constant_pad_nd"}, kKer(KR::kCopy)},
  {{"aten", "upsample_nearest2d"}, kKer(KR::kCopy)},
  {{"aten", "adaptive_max_pool2d"}, kKer(KR::kReduction)},
  {{"aten", "amax"}, kKer(KR::kReduction)},
  {{"aten", "max"}, kKer(KR::kReduction)},
  {{"aten", "var_mean"}, kKer(KR::kReduction)},
  {{"aten", "group_norm"}, kKer(KR::kNorm)},
  {{"aten", "native_layer_norm"}, kKer(KR::kNorm)},
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

// op type -> rules for the ONNX domain ([0]) and the aten domain ([1]); a null entry means
// no rule. Keyed by op type alone so a lookup allocates nothing.
using Entry = std::pair<const LoweringRule*, const LoweringRule*>;

const std::unordered_map<std::string, Entry>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, Entry>();
    for (const Row& r : kRows) {
      Entry& e = (*t)[r.key.type];
      (std::string(r.key.domain) == "aten" ? e.second : e.first) = &r.rule;
    }
    return t;
  }();
  return *table;
}

}  // namespace

const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type) {
  auto it = Table().find(op_type);
  if (it == Table().end()) return nullptr;
  if (domain == "aten") return it->second.second;
  if (domain.empty() || domain == "ai.onnx") return it->second.first;
  return nullptr;
}

}  // namespace ftax
