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

}  // namespace
}  // namespace ftax
