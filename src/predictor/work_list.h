// The work list: what a framework makes the CPU and the GPU do for one inference.
//
// Lowering (lowering.h) turns a Graph into a WorkList for one framework and precision: CPU
// dispatches in program order, each with a dispatch class, and the GPU kernels each dispatch
// launches, with the FLOPs, bytes and GEMM-like shape the kernel cost model needs. The
// pipeline simulation (pipeline.h) prices it with a host profile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "predictor/framework.h"

namespace ftax {

// A kernel's flavor where one class runs different kernels for the same work: the host
// profile keeps measured points per variant (host_profile.h, anchors), and a variant without
// points of its own is priced as the plain class (pointwise_odd as pointwise, strided as
// broadcast, where the profile has those).
enum class KernelVariant : uint8_t {
  kPlain,      // the class as its microbenchmark runs it (GEMM: x @ W^T + b, as nn.Linear)
  kGemmNN,     // GEMM with the weight stored [k, n] (x @ W: torch.mm, TorchScript's addmm)
  kGemmNNBias, // the same with a bias fused into cuBLASLt's epilogue (eager torch.addmm)
  kBroadcast,  // elementwise with a broadcast operand: ATen's strided, unvectorized kernel
  kPointwise,  // 1x1 convolution, which cuDNN runs as a GEMM without layout transposes
  kBatchNorm,  // inference batch norm over NCHW activations (its transform kernel)
  kContiguous, // a copy that reads and writes contiguous blocks (cat, stack): it streams at
               // elementwise bandwidth, unlike the class's strided transpose, and is priced
               // with the elementwise class's parameters while counted as a copy
  kGrouped,     // convolution with 1 < groups < channels (ResNeXt, RegNet): cuDNN's grouped
                // kernels, far slower per FLOP than a dense convolution of the same work
  kPatchify,    // convolution whose stride equals its kernel (> 1): the patch embedding of
                // vision transformers and ConvNeXt's stem, one large-k GEMM-like kernel
  kLargeKernel, // depthwise convolution with a kernel over 3x3 (5x5, 7x7): compute, not
                // bandwidth, sets its time
  kPool,        // windowed max or average pooling (not global): one pass over its input
  kNhwc,        // convolution reading a channels-last tensor (the output of a permute back
                // to NCHW, as ConvNeXt's blocks): cuDNN's NHWC kernels; depthwise ones are
                // shaped as large_kernel's (outputs per channel, channels, kernel area)
  kLayerNorm,   // layer norm, shaped m = rows, n = the normalized size (k = 1): ATen's kernel
                // runs narrow rows (ConvNeXt's and Swin's 96 channels) far below bandwidth
  kPermute,     // a copy of a permuted tensor into its own contiguous layout (`.contiguous()`
                // or a reshape after a transpose, a layer norm of a permuted tensor), shaped
                // m = the contiguous runs it moves, n = elements per run (k = 1): a head
                // split's runs are its head dim, a transpose's are single elements. Without
                // permute anchors it is priced as the class's plain copy, by bytes
  kPointwiseOdd, // 1x1 convolution over an odd number of positions per image (7x7, 17x17,
                 // 35x35) in NCHW: the GEMM's rows are aligned to one element, so the
                 // library runs other kernels (CUPTI, H200: cutlass align1 GEMMs, far slower
                 // per FLOP than the aligned ones). Shaped as one GEMM per image (m = the
                 // image's positions, batch = the images). Without anchors of its own it is
                 // priced as the pointwise variant
  kStrided,      // elementwise over full-size operands of different layouts (a transposed one
                 // and a contiguous one: Whisper's residual adds): ATen's strided kernel
                 // reads one of them uncoalesced, slower per byte than a broadcast row.
                 // Without anchors of its own it is priced as the broadcast variant
  kGroupedNonPow2, // grouped convolution whose output channels per group are not a power of
                   // two (RegNetX's 24, 48): cuDNN runs it with a weight transform and
                   // memsets, about twice as long at small work as a power-of-two width (CUPTI,
                   // H100, batch 1: 19.6-20.8 us at 24 and 48 channels a group, 9.8-10.8 at 16
                   // and 32). Without anchors of its own it is priced as the grouped variant
  kPointwiseNhwc,  // 1x1 convolution whose input and weights are both channels-last, as
                   // torch.compile runs every convolution: cuDNN runs it as one cuBLASLt GEMM
                   // (nvjet) with no layout transposes, about 1.5x faster at batch 1 than the
                   // NCHW call (CUPTI: ResNet-101's on an H100, 3.1-4.1 us; the bench's NCHW
                   // rows of ResNet-50's layers at 14x14 on hosts ax and cb, 5.2-5.9). Without
                   // anchors of its own it is priced as the pointwise variant
  kNhwcGroupedNonPow2,  // channels-last grouped convolution whose output channels per group
                        // are not a power of two, as torch.compile runs RegNetX's: cuDNN
                        // transforms the layout around it, four kernels and about 30 us in all
                        // at batch 1 where 8 or 32 channels a group take one kernel of 4 us (the bench's
                        // channels-last rows, H200 host run ce, batch 1, 14x14: 384 channels in
                        // 16 groups of 24 30.3 us, 512 in 16 groups of 32 4.1 us). Without
                        // anchors of its own it is priced as the nhwc variant
};
constexpr int kNumKernelVariants = 19;
// "", "nn", "nn_bias", "broadcast", "pointwise", "batch_norm", "contiguous", "grouped",
// "patchify", "large_kernel", "pool", "nhwc", "layer_norm", "permute", "pointwise_odd",
// "strided", "grouped_non_pow2", "pointwise_nhwc", "nhwc_grouped_non_pow2"
const char* KernelVariantName(KernelVariant v);
std::optional<KernelVariant> ParseKernelVariant(const std::string& name);
// The variant of a grouped (not depthwise) convolution with this many output channels per
// group: grouped_non_pow2 where that is not a power of two, else grouped. One rule for the
// lowering, the bench's layer rows and the reader of older benches.
KernelVariant GroupedVariant(int64_t channels_per_group);
// The same for a convolution reading a channels-last tensor: nhwc_grouped_non_pow2 for a grouped
// one (groups > 1) whose output channels per group are not a power of two, else nhwc.
KernelVariant ChannelsLastVariant(int64_t groups, int64_t channels_per_group);
// Whether `v` is a variant of class `c` (nn and nn_bias of gemm, broadcast and strided of
// elementwise, pointwise, pointwise_odd, pointwise_nhwc, grouped, grouped_non_pow2, nhwc_grouped_non_pow2 and patchify of conv, large_kernel of
// depthwise, nhwc of both, batch_norm
// and layer_norm of norm, pool of reduction, contiguous and permute of copy; plain of every
// class).
bool VariantBelongsTo(KernelVariant v, KernelClass c);

struct KernelWork {
  KernelClass cls = KernelClass::kElementwise;
  DType dtype = DType::kFloat32;
  double flops = 0;
  double bytes = 0;  // bytes read + written in device memory
  // GEMM-like problem shape for tile/wave quantization (m x n outputs, depth k, batch
  // independent problems); zero where it does not apply.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  KernelVariant variant = KernelVariant::kPlain;
  int op_index = -1;  // graph op it came from (-1: framework-added)
};

struct DispatchWork {
  DispatchClass cls = DispatchClass::kKernel;
  int op_index = -1;
  int first_kernel = 0;  // kernels [first_kernel, first_kernel + num_kernels) in WorkList
  int num_kernels = 0;
  // The op type's dispatch-cost key (DispatchCostKey; null: priced by its class alone, e.g. a
  // reshape that copies, which costs what a kernel does, not what a view does).
  const std::string* cost_key = nullptr;
  // The CPU waits here until the GPU has finished every kernel enqueued before this dispatch
  // (a copy of a CPU tensor to the GPU from pageable memory).
  bool waits_for_gpu = false;
};

struct WorkList {
  std::vector<DispatchWork> dispatches;
  std::vector<KernelWork> kernels;
  int module_calls = 0;  // nn.Module __call__s (Python eager), modules guarded (torch.compile's default mode)
  // torch.compile: tensors of model state that the compiled graph's generated kernels read
  // (CountKernelReadState in lowering.h), each an input of the compiled call.
  int graph_inputs = 0;
  std::vector<std::string> notes;  // approximations made while lowering
  // Op types without a row in the lowering table, with their node counts: `generic_ops` have
  // a counting entry and are priced from their counted FLOPs and bytes; `unpriced_ops` have
  // neither and are priced as one elementwise kernel each (a guess, reported as such).
  std::map<std::string, int> generic_ops;
  std::map<std::string, int> unpriced_ops;
};

}  // namespace ftax
