// Kernel names from CUPTI records sorted into the classes the predictor prices.
#include "calibrate/kernel_classify.h"

#include <gtest/gtest.h>

namespace ftax {
namespace {

TEST(KernelClassifyTest, KernelNamesOfRealRunsFallInTheirClasses) {
  // Names as CUPTI records them (H200, Swin-T, BERT-base, ResNet-50; shortened).
  const std::pair<const char*, KernelClass> cases[] = {
      {"void at::native::roll_cuda_kernel<c10::Half>(c10::Half const*, c10::Half*, long, long)",
       KernelClass::kElementwise},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
       "TensorIteratorBase&)::{lambda()#3}",
       KernelClass::kCopy},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>",
       KernelClass::kElementwise},
      {"void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true>",
       KernelClass::kCopy},
      {"void cutlass::Kernel2<cutlass_75_tensorop_f16_s1688gemm_f16_64x64_nn_align1>", KernelClass::kGemm},
      {"void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 6>",
       KernelClass::kReduction},
  };
  for (const auto& [name, cls] : cases) {
    std::optional<KernelClass> c = ClassifyKernelName(name);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_EQ(*c, cls) << name;
  }
  EXPECT_FALSE(ClassifyKernelName("Memset (Device)").has_value());
}

// Inductor names a generated kernel for the ops fused into it, library ops among them; its
// kind (point-wise, persistent or looped reduction) is its class. Names from CUPTI records of
// torch.compile'd models (H200, host runs cs and ct).
TEST(KernelClassifyTest, InductorKernelsGoByTheirKindNotTheOpsInTheirName) {
  const std::pair<const char*, KernelClass> cases[] = {
      {"triton_poi_fused_convolution_mean_mul_sigmoid_silu_12", KernelClass::kElementwise},
      {"triton_poi_fused__scaled_dot_product_cudnn_attention_clone_select_squeeze_transpose_unsqueeze_view_5",
       KernelClass::kElementwise},
      {"triton_poi_fused_add_clone_native_layer_norm_select_view_3", KernelClass::kElementwise},
      {"triton_poi_fused_add_embedding_1", KernelClass::kGather},
      {"triton_per_fused_add_cat_convolution_expand_native_layer_norm_transpose_view_0", KernelClass::kNorm},
      {"triton_red_fused_add_cat_convolution_expand_native_layer_norm_permute_view_2", KernelClass::kNorm},
      {"triton_per_fused_mean_silu_4", KernelClass::kReduction},
      {"triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_9", KernelClass::kReduction},
  };
  for (const auto& [name, cls] : cases) {
    std::optional<KernelClass> c = ClassifyKernelName(name);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_EQ(*c, cls) << name;
  }
}

}  // namespace
}  // namespace ftax
