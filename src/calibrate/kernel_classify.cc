#include "calibrate/kernel_classify.h"

#include <algorithm>
#include <cctype>

namespace ftax {
namespace {

struct Rule {
  const char* needle;
  KernelClass cls;
};

// Order matters: attention before gemm (flash kernels mention gemm-like tiles), conv before
// gemm (cuDNN implicit-GEMM kernels), norms before elementwise.
const Rule kRules[] = {
    {"fmha", KernelClass::kAttention},
    {"flash", KernelClass::kAttention},
    {"attention", KernelClass::kAttention},
    {"attn", KernelClass::kAttention},
    {"depthwise", KernelClass::kDepthwise},
    {"dgrad", KernelClass::kConv},
    {"conv", KernelClass::kConv},
    {"implicit_gemm", KernelClass::kConv},
    {"fprop", KernelClass::kConv},
    {"implicit_convolve", KernelClass::kConv},
    {"nchwtonhwc", KernelClass::kCopy},
    {"nhwctonchw", KernelClass::kCopy},
    {"gemm", KernelClass::kGemm},
    {"nvjet", KernelClass::kGemm},
    {"cutlass", KernelClass::kGemm},
    {"xmma", KernelClass::kGemm},
    {"cublas", KernelClass::kGemm},
    {"splitk", KernelClass::kGemm},
    {"softmax", KernelClass::kReduction},
    {"layer_norm", KernelClass::kNorm},
    {"layernorm", KernelClass::kNorm},
    {"batch_norm", KernelClass::kNorm},
    {"batchnorm", KernelClass::kNorm},
    {"bn_fw", KernelClass::kNorm},
    {"reduce", KernelClass::kReduction},
    {"pool", KernelClass::kReduction},
    {"indexselect", KernelClass::kGather},
    {"index_select", KernelClass::kGather},
    {"embedding", KernelClass::kGather},
    {"gather", KernelClass::kGather},
    {"roll_cuda", KernelClass::kElementwise},  // torch.roll (lowering.cc prices it so)
    {"cat", KernelClass::kCopy},
    {"copy", KernelClass::kCopy},
    {"elementwise", KernelClass::kElementwise},
    {"vectorized", KernelClass::kElementwise},
    {"fused", KernelClass::kElementwise},
};

}  // namespace

std::optional<KernelClass> ClassifyKernelName(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  // Inductor's generated kernels are named for the ops fused into them
  // ("triton_poi_fused_convolution_mean_mul_sigmoid_silu_12"), library ops among them: their
  // kind says what they are. A point-wise kernel is element-wise work (gather where it
  // indexes); a persistent or looped reduction is a norm where a layer norm is fused in, else
  // a reduction (inductor_fusion.cc prices a fused kernel by the same ranking). Templates
  // (triton_tem_, max-autotune's GEMMs) go by the rules below.
  if (n.rfind("triton_poi_", 0) == 0)
    return n.find("embedding") != std::string::npos || n.find("index") != std::string::npos ||
                   n.find("gather") != std::string::npos
               ? KernelClass::kGather
               : KernelClass::kElementwise;
  if (n.rfind("triton_per_", 0) == 0 || n.rfind("triton_red_", 0) == 0)
    return n.find("layer_norm") != std::string::npos || n.find("group_norm") != std::string::npos
               ? KernelClass::kNorm
               : KernelClass::kReduction;
  for (const Rule& r : kRules)
    if (n.find(r.needle) != std::string::npos) return r.cls;
  return std::nullopt;
}

}  // namespace ftax
