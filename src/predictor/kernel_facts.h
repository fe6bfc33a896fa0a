// Kernel facts: what the lowering and the pipeline take as observed, not fitted, about the
// kernels one GPU host's PyTorch runs: the small side kernels PyTorch launches around some ops,
// how many bytes they move, and how far beyond a class's measured sizes a kernel is said to be
// extrapolated.
//
// Each fact was read off CUPTI kernel records of real runs (the GPU, the PyTorch version and
// the records are named at each field); the defaults are those observations. A host profile
// carries the facts as its optional "kernel_facts" object (docs/profile-format.md): absent,
// the defaults hold; present, a host whose PyTorch launches other side kernels states its own.
// The predictor passes the profile's facts to the lowering (LoweringOptions::facts) and reads
// the extrapolation margin in ResolveParams; nothing else changes them.
//
//   LoweringOptions lo; lo.framework = f; lo.precision = d; lo.facts = profile.kernel_facts;
//   Expected<WorkList> w = Lower(graph, lo);
#pragma once

namespace ftax {

struct KernelFacts {
  // Fused attention (aten::scaled_dot_product_attention, _native_multi_head_attention): the
  // small kernels PyTorch 2.11 runs around the fused call, as CUPTI records of Hugging Face
  // BERT on an H200 show (validation/campaigns.md). Priced as elementwise kernels.

  // Eager code (Python and LibTorch eager, torch.compile, a CUDA graph captured from the eager
  // module) in fp16/bf16: memsets clearing the cuDNN backend's softmax statistics, per
  // attention call (CUPTI, H100, BERT-base fp16 under torch.compile: 12 cuDNN SDPA kernels and
  // 12 memsets per call). 0: none.
  int attention_eager_memsets = 1;
  // Bytes each memset clears per (batch x head, query row): one fp32 log-sum-exp statistic.
  double attention_memset_bytes_per_row = 4;
  // Traced code with a mask (TorchScript, the CUDA graphs replayed from it or captured from
  // the eager module): `where` kernels materializing the additive mask per layer, over
  // [B, heads, Sq, Sk] (CUPTI, H100, BERT-base fp16: 168 kernels per eager call, 214 per replay
  // of its captured graph, with a where and two fills per layer). 0: none.
  int attention_mask_wheres = 1;
  // Bytes each `where` moves per mask element beyond the run's element size (the boolean mask
  // it reads: 1 byte).
  double attention_mask_where_extra_bytes = 1;
  // Traced code with a mask: fills of two small buffers per attention call, beside the where.
  int attention_mask_fills = 2;
  // Bytes each fill writes per (batch x head, query row).
  double attention_mask_fill_bytes_per_row = 4;

  // Half-precision (fp16/bf16) inference batch norm is ATen's native kernel, not cuDNN's:
  // small fp32 kernels over the channel statistics (a copy and the inverse-std computation)
  // precede the transform (CUPTI, ResNet-50 fp16 on H200: 53 of each per iteration; fp32 runs
  // one cuDNN kernel). Per aten::batch_norm in fp16/bf16.
  int batch_norm_half_stat_kernels = 2;
  // Bytes each statistics kernel moves per channel (one fp32 read and one fp32 write).
  double batch_norm_stat_bytes_per_channel = 8;

  // ATen adds a convolution's bias after cuDNN's kernel, with its strided elementwise add over
  // the output (CUPTI, H100, fp16, batch 8: VGG-16-BN's 13 biased convolutions, 13 such adds,
  // 0.34 ms; ConvNeXt-T's 22; SqueezeNet's 26). An ONNX Conv's bias is priced the same way:
  // PyTorch ran the layer it was exported from with its bias added apart, or with a BatchNorm
  // after it that the exporter folded into that bias. false: the bias costs no kernel.
  bool conv_bias_kernel = true;

  // torch.roll over several dims rolls one dim at a time, a kernel each (ATen's roll_cuda;
  // CUPTI, H100, Swin-T: 20 roll kernels for its 10 two-dim rolls). false: one kernel a roll.
  bool roll_kernel_per_dim = true;

  // A kernel whose FLOPs or bytes exceed this many times the largest its class and dtype were
  // measured at is noted as extrapolated (ResolveParams). A margin, not a record: it allows
  // for the fitted curves holding a little beyond their last point.
  double extrapolated_beyond = 1.5;

  bool operator==(const KernelFacts& o) const {
    return attention_eager_memsets == o.attention_eager_memsets &&
           attention_memset_bytes_per_row == o.attention_memset_bytes_per_row &&
           attention_mask_wheres == o.attention_mask_wheres &&
           attention_mask_where_extra_bytes == o.attention_mask_where_extra_bytes &&
           attention_mask_fills == o.attention_mask_fills &&
           attention_mask_fill_bytes_per_row == o.attention_mask_fill_bytes_per_row &&
           batch_norm_half_stat_kernels == o.batch_norm_half_stat_kernels &&
           batch_norm_stat_bytes_per_channel == o.batch_norm_stat_bytes_per_channel &&
           conv_bias_kernel == o.conv_bias_kernel && roll_kernel_per_dim == o.roll_kernel_per_dim &&
           extrapolated_beyond == o.extrapolated_beyond;
  }
  bool operator!=(const KernelFacts& o) const { return !(*this == o); }
};

}  // namespace ftax
