#include "predictor/lowering_rules.h"

#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

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
  {{"aten", "_weight_norm"}, kKer(KR::kReduction)},
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

// Op types that share one rule, beyond the rows above (a row above wins). Each is what the op
// runs in PyTorch: one ATen call, one kernel of the named recipe (aten); for ONNX ops, the
// kernel PyTorch runs for the module the exporter wrote them from.
struct Group {
  const char* domain;
  LoweringRule rule;
  std::vector<const char*> types;
};

const std::vector<Group>& Groups() {
  static const auto* groups = new std::vector<Group>{
      {"aten", kView,
       {"unflatten", "narrow", "as_strided", "unbind", "split_with_sizes", "_reshape_alias",
        "_unsafe_view", "lift_fresh", "identity", "feature_dropout", "alpha_dropout",
        "movedim", "swapaxes", "unfold", "diagonal", "view_as_real", "view_as_complex",
        "empty", "empty_like", "new_empty", "lift_fresh_copy"}},
      {"aten", kFree, {"numel", "dim", "item", "is_floating_point"}},
      {"aten", kLib(KR::kNativeMha), {"_native_multi_head_attention"}},
      {"aten", kLib(KR::kAttention),
       {"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention"}},
      {"aten", kLib(KR::kConv),
       {"conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}},
      {"aten", kLib(KR::kCounted), {"einsum", "addbmm"}},
      {"aten", kKer(KR::kNorm),
       {"native_group_norm", "instance_norm", "rms_norm", "native_batch_norm",
        "_native_batch_norm_legit_no_training"}},
      {"aten", kKer(KR::kReduction),
       {"_softmax", "_log_softmax", "amin", "min", "prod", "norm", "linalg_vector_norm", "var", "std", "argmax",
        "argmin", "topk", "max_pool1d", "max_pool3d", "avg_pool1d", "avg_pool3d",
        "adaptive_avg_pool1d", "adaptive_avg_pool3d", "cumsum", "cumprod", "logsumexp",
        "any", "all"}},
      {"aten", kKer(KR::kElementwise),
       {"abs", "clamp_max", "leaky_relu", "logical_not", "logical_or", "logical_xor",
        "maximum", "minimum", "floor", "ceil", "round", "sign", "reciprocal", "__or__",
        "__xor__", "bitwise_xor", "diff", "floor_divide", "remainder", "fmod", "true_divide",
        "square", "trunc", "frac", "isnan", "isinf", "isfinite", "nan_to_num", "threshold",
        "copysign", "lerp", "log1p", "expm1", "log2", "log10", "sinh", "cosh", "asin", "acos",
        "atan", "atan2", "erfinv", "logit", "hypot", "xlogy", "log", "erf", "sin", "cos",
        "softplus", "elu", "selu", "celu", "mish", "rand", "randn", "rand_like", "randn_like",
        "scalar_tensor", "zeros_like", "ones_like", "full_like", "new_full", "zero_",
        "masked_scatter", "addcmul", "addcdiv", "softsign", "tril", "triu", "prelu", "glu",
        "__lshift__", "__rshift__"}},
      {"aten", kKer(KR::kCopy),
       {"_to_copy", "copy_", "repeat", "masked_select", "scatter", "scatter_add",
        "index_put", "index_put_", "upsample_bilinear2d", "upsample_bicubic2d", "interpolate",
        "reflection_pad2d", "replication_pad2d", "pixel_shuffle", "pixel_unshuffle",
        "channel_shuffle", "repeat_interleave", "expand_copy", "permute_copy",
        "tensor"}},  // torch.tensor(values, device=cuda): a host-to-device copy
      {"", kKer(KR::kElementwise),
       {"Abs", "Ceil", "Floor", "Round", "Sign", "Reciprocal", "Log", "Sin", "Cos", "Tan",
        "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
        "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "PRelu", "ThresholdedRelu", "Shrink",
        "Swish", "Mish", "Mod", "Min", "Max", "Sum", "Mean", "Not", "And", "Or", "Xor",
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf",
        "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "CastLike",
        "Trilu", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "BiasAdd",
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
        "EyeLike", "HannWindow", "HammingWindow", "BlackmanWindow", "Det", "Multinomial"}},
      {"", kKer(KR::kReduction),
       {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
        "ReduceSumSquare", "ArgMax", "ArgMin", "TopK", "Hardmax", "LpPool", "GlobalLpPool",
        "CumSum", "LRN", "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}},
      {"", kKer(KR::kNorm),
       {"GroupNormalization", "LpNormalization", "MeanVarianceNormalization"}},
      {"", kKer(KR::kCopy),
       {"Pad", "Tile", "Resize", "Upsample", "ScatterND", "ScatterElements", "Scatter",
        "DepthToSpace", "SpaceToDepth", "ReverseSequence", "Compress", "NonZero", "Unique",
        "OneHot", "MaxUnpool", "GridSample", "RoiAlign", "SplitToSequence",
        "ConcatFromSequence"}},
      {"", kKer(KR::kGather), {"GatherElements", "GatherND"}},
      {"", kLib(KR::kConv), {"ConvTranspose", "ConvInteger", "QLinearConv"}},
      {"", kLib(KR::kMatMul), {"MatMulInteger", "QLinearMatMul"}},
      {"", kLib(KR::kCounted), {"Einsum", "LSTM", "GRU", "RNN"}},
      {"", kView, {"Size", "Optional", "OptionalHasElement", "OptionalGetElement",
                   "SequenceEmpty", "SequenceLength", "SequenceAt", "SequenceConstruct",
                   "SequenceInsert", "SequenceErase", "SequenceMap", "StringNormalizer",
                   "TfIdfVectorizer"}},
      {"", kFree, {"If", "Loop", "Scan"}},
  };
  return *groups;
}

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
    for (const Group& g : Groups())
      for (const char* type : g.types) {
        Entry& e = (*t)[type];
        const LoweringRule*& slot = std::string(g.domain) == "aten" ? e.second : e.first;
        if (!slot) slot = &g.rule;
      }
    return t;
  }();
  return *table;
}

}  // namespace

const LoweringRule* FindLoweringRule(const std::string& domain, const std::string& op_type) {
  const std::string_view d(domain);
  const bool aten = d == "aten";
  if (!aten && !d.empty() && d != "ai.onnx") return nullptr;
  auto it = Table().find(op_type);
  const LoweringRule* r = nullptr;
  if (it != Table().end()) r = aten ? it->second.second : it->second.first;
  if (!r && aten && op_type.size() > 1 && op_type.back() == '_' && op_type[op_type.size() - 2] != '_') {
    // In-place form ("hardswish_") of an out-of-place row; "__and__" is not one.
    auto base = Table().find(op_type.substr(0, op_type.size() - 1));
    if (base != Table().end()) r = base->second.second;
  }
  return r;
}

const std::string& DispatchCostKey(const std::string& domain, const std::string& op_type) {
  static const std::string kNone;
  // aten op types (and ONNX op types, as the PyTorch call an exporter wrote them from) whose
  // key is not their own name. An aten op type not listed is its own key, its in-place form
  // ("relu_") its out-of-place one's.
  static const auto* aliases = new std::unordered_map<std::string, std::string>{
      {"_convolution", "conv"}, {"convolution", "conv"}, {"conv1d", "conv"}, {"conv2d", "conv"},
      {"conv3d", "conv"}, {"addmm", "linear"}, {"bmm", "matmul"}, {"mm", "matmul"},
      {"baddbmm", "matmul"}, {"native_layer_norm", "layer_norm"},
      {"_scaled_dot_product_flash_attention", "scaled_dot_product_attention"},
      {"_scaled_dot_product_efficient_attention", "scaled_dot_product_attention"},
      {"_scaled_dot_product_cudnn_attention", "scaled_dot_product_attention"},
      {"_native_multi_head_attention", "multi_head_attention"},
      {"_softmax", "softmax"}, {"_to_copy", "to"}, {"type_as", "to"}};
  static const auto* onnx = new std::unordered_map<std::string, std::string>{
      {"Conv", "conv"}, {"Gemm", "linear"}, {"MatMul", "matmul"},
      {"LayerNormalization", "layer_norm"}, {"BatchNormalization", "batch_norm"},
      {"Softmax", "softmax"}, {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},
      {"HardSwish", "hardswish"}, {"Gelu", "gelu"}, {"Add", "add"}, {"Mul", "mul"}, {"Div", "div"},
      {"Cast", "to"}, {"MaxPool", "max_pool2d"}, {"GlobalAveragePool", "adaptive_avg_pool2d"},
      {"ReduceMean", "mean"}, {"Concat", "cat"}, {"Reshape", "reshape"}, {"Transpose", "permute"},
      {"Flatten", "flatten"}, {"Slice", "slice"}, {"Expand", "expand"}, {"Dropout", "dropout"},
      {"Attention", "scaled_dot_product_attention"}};
  // Interned keys, so that a work list's dispatches point at them.
  static auto* interned = new std::unordered_map<std::string, std::string>();
  static std::mutex mu;
  const std::string_view d(domain);
  std::string key;
  if (d == "aten") {
    std::string base = op_type;
    if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') base.pop_back();
    auto a = aliases->find(base);
    key = a != aliases->end() ? a->second : base;
  } else if (d.empty() || d == "ai.onnx") {
    auto o = onnx->find(op_type);
    if (o == onnx->end()) return kNone;
    key = o->second;
  } else {
    return kNone;
  }
  std::lock_guard<std::mutex> lock(mu);
  return interned->emplace(key, key).first->second;
}

std::vector<std::pair<std::string, std::string>> LoweringTableKeys() {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [type, e] : Table()) {
    if (e.first) keys.emplace_back("", type);
    if (e.second) keys.emplace_back("aten", type);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace ftax
