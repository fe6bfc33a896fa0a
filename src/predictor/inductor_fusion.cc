// Inductor's fusion of eager kernels, as inductor_fusion.h describes it.
#include "predictor/inductor_fusion.h"

#include <string>

#include "graph/graph.h"
#include "predictor/lowering_rules.h"

namespace ftax {
namespace {

// Library calls Inductor does not generate code for.
bool IsLibraryKernel(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
    case KernelClass::kConv:
    case KernelClass::kDepthwise:
    case KernelClass::kAttention:
    case KernelClass::kAttentionMasked:
      return true;
    default:
      return false;
  }
}

// Which class a fused kernel is priced as: the member class that costs most per byte wins.
int ClassRank(KernelClass c) {
  switch (c) {
    case KernelClass::kNorm: return 5;
    case KernelClass::kReduction: return 4;
    case KernelClass::kGather: return 3;
    case KernelClass::kElementwise: return 2;
    case KernelClass::kCopy: return 1;
    default: return 0;
  }
}

// The class a member counts as in a fused kernel. Inductor decomposes an inference batch norm
// (aten::_native_batch_norm_legit_no_training) into a per-channel affine, point-wise work that
// fuses into its neighbours' loop: it costs what an element-wise pass costs, not ATen's batch
// norm kernel. On host run ax (H200) the fused kernels after ResNet-50's convolutions took
// 0.19 ms a call at batch 8 under reduce-overhead, where pricing them as norm kernels gave 0.99.
KernelClass FusedClass(const KernelWork& k) {
  return k.cls == KernelClass::kNorm && k.variant == KernelVariant::kBatchNorm ? KernelClass::kElementwise : k.cls;
}

// The bias add ATen runs after a convolution's library kernel (lowering's side kernel).
bool IsConvBias(const KernelWork& k) {
  return k.cls == KernelClass::kElementwise && k.variant == KernelVariant::kBroadcast;
}

class Fuser {
 public:
  explicit Fuser(const WorkList& eager) : in_(eager) {
    out_.module_calls = eager.module_calls;  // Dynamo guards each module every call
    out_.graph_inputs = eager.graph_inputs;
    out_.notes = eager.notes;
    out_.generic_ops = eager.generic_ops;
    out_.unpriced_ops = eager.unpriced_ops;
    out_.dispatches.reserve(eager.dispatches.size());
    out_.kernels.reserve(eager.kernels.size());
  }

  WorkList Run() {
    for (const DispatchWork& d : in_.dispatches) {
      bool library = false;
      for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i)
        library = library || IsLibraryKernel(in_.kernels[size_t(i)].cls);
      if (!library) {
        for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i) Add(in_.kernels[size_t(i)]);
        continue;
      }
      Flush();
      if (d.cost_key && *d.cost_key == "multi_head_attention") {
        SplitMultiHeadAttention(d);
        continue;
      }
      // A convolution's bias: ATen adds it after cuDNN's kernel (a broadcast add over the
      // output); Inductor calls the convolution without it and adds it in the Triton kernel
      // that follows ("triton_poi_fused_convolution_relu" in CUPTI records of SqueezeNet 1.1).
      int end = d.first_kernel + d.num_kernels;
      if (d.cost_key && *d.cost_key == "conv")
        while (end > d.first_kernel + 1 && IsConvBias(in_.kernels[size_t(end - 1)])) --end;
      DispatchWork e = d;
      e.cls = DispatchClass::kLibrary;
      e.first_kernel = int(out_.kernels.size());
      e.num_kernels = end - d.first_kernel;
      for (int i = d.first_kernel; i < end; ++i) out_.kernels.push_back(in_.kernels[size_t(i)]);
      out_.dispatches.push_back(e);
      for (int i = end; i < d.first_kernel + d.num_kernels; ++i) Add(in_.kernels[size_t(i)]);
    }
    Flush();
    if (mha_ > 0)
      out_.notes.push_back("torch.compile: " + std::to_string(mha_) +
                           " nn.MultiheadAttention calls run as Dynamo traces their Python code: each an "
                           "input-projection GEMM, three Triton copies of q, k and v, a fused attention call "
                           "and an output-projection GEMM, each its own call of the compiled wrapper");
    out_.notes.push_back("torch.compile: eager's " + std::to_string(in_.kernels.size()) +
                         " kernels become " + std::to_string(out_.kernels.size()) + " (" +
                         std::to_string(fused_) + " Triton kernels fused from " +
                         std::to_string(members_) +
                         " point-wise, reduction, gather and copy kernels; library calls kept)");
    return std::move(out_);
  }

 private:
  // nn.MultiheadAttention under torch.compile: Dynamo traces its Python code, not eager's fused
  // fast path (aten::_native_multi_head_attention), so Inductor's wrapper calls the projection
  // GEMMs and the attention kernel one by one, and writes q, k and v into buffers of their own
  // for it with three Triton copies (the wrapper torch 2.11 generated for torchvision's
  // ViT-B/32 on an H200: per layer an addmm, three copy kernels, a cuDNN attention call and an
  // addmm). Each library kernel becomes its own library call, priced as the op type it is.
  void SplitMultiHeadAttention(const DispatchWork& d) {
    ++mha_;
    bool in_call = false;  // a library call of this attention has been emitted
    for (int i = d.first_kernel; i < d.first_kernel + d.num_kernels; ++i) {
      const KernelWork& k = in_.kernels[size_t(i)];
      if (!IsLibraryKernel(k.cls)) {
        // the attention's side kernels (its statistics' memsets) run inside the call before
        // them; one ahead of every library call is a Triton kernel of its own
        if (in_call) {
          out_.kernels.push_back(k);
          ++out_.dispatches.back().num_kernels;
        } else {
          EmitTriton(k);
        }
        continue;
      }
      const bool attention = k.cls == KernelClass::kAttention || k.cls == KernelClass::kAttentionMasked;
      if (attention) {
        for (int c = 0; c < 3; ++c) {
          KernelWork copy;
          copy.cls = KernelClass::kCopy;
          copy.variant = KernelVariant::kContiguous;  // a Triton loop, not ATen's strided copy
          copy.dtype = k.dtype;
          copy.op_index = k.op_index;
          copy.bytes = k.bytes / 2;  // one of q, k, v read and written (self-attention)
          EmitTriton(copy);
        }
      }
      DispatchWork e;
      e.cls = DispatchClass::kLibrary;
      e.op_index = d.op_index;
      e.first_kernel = int(out_.kernels.size());
      e.num_kernels = 1;
      e.cost_key = &DispatchCostKey("aten", attention ? "scaled_dot_product_attention" : "linear");
      out_.kernels.push_back(k);
      out_.dispatches.push_back(e);
      in_call = true;
    }
  }

  // A layer norm keeps its shape in the fused kernel: Inductor's kernel is a reduction over
  // each row of the normalized size, the residual add and the other point-wise work folded into
  // its loads and stores, so it is priced as a layer-norm kernel of that shape, not as a plain
  // norm kernel of its bytes. ViT-B/32 and DeiT-T under reduce-overhead on host run ba
  // (calibration models): their fused norms took 0.036 and 0.035 ms a call at batch 1, priced
  // 0.097 by bytes and 0.079 and 0.072 by shape; still slow, since ATen's kernels, which the
  // bench times, are slower than Inductor's.
  static bool KeepsShape(const KernelWork& k) {
    return k.cls == KernelClass::kNorm && k.variant == KernelVariant::kLayerNorm;
  }

  // A reduction that shrinks its input to far fewer values (a global average pool: a
  // squeeze-excitation block's squeeze, a classifier's pooling), as lowering prices it: FLOPs
  // five per output value, bytes its input and output. Not a softmax, whose output is as
  // large as its input, nor a windowed pool.
  static bool Shrinks(const KernelWork& k) {
    if (k.cls != KernelClass::kReduction || k.variant == KernelVariant::kPool || k.bytes <= 0) return false;
    const double out_bytes = k.flops / 5.0 * DTypeSize(k.dtype);
    return out_bytes * 8 < k.bytes;
  }

  void Add(const KernelWork& k) {
    // Inductor writes the point-wise work before such a reduction out as a kernel of its own
    // and reduces in another: a squeeze-excitation block's input is read again by the gate's
    // multiply. CUPTI records under torch.compile, host run ax (H200), calibration
    // models: EfficientNet-B2 270 kernels a call, MobileNetV3-Large 139, where one kernel per
    // run between library calls gave 245 and 132 (its 23 and 8 blocks).
    if (group_size_ > 0 && Shrinks(k)) Flush();
    ++members_;
    if (group_size_ == 0) {
      group_ = k;
      group_.cls = FusedClass(k);
      if (!KeepsShape(k)) {
        group_.variant = KernelVariant::kPlain;
        group_.m = group_.n = group_.k = 0;
        group_.batch = 1;
      }
    } else {
      if (KeepsShape(k) && group_.variant != KernelVariant::kLayerNorm) {
        group_.variant = k.variant;
        group_.m = k.m;
        group_.n = k.n;
        group_.k = k.k;
        group_.batch = k.batch;
      }
      if (ClassRank(FusedClass(k)) > ClassRank(group_.cls)) group_.cls = FusedClass(k);
      if (k.bytes > group_.bytes) {
        group_.bytes = k.bytes;
        group_.dtype = k.dtype;
      }
      group_.flops += k.flops;
    }
    ++group_size_;
  }

  void Flush() {
    if (group_size_ == 0) return;
    EmitTriton(group_);
    group_size_ = 0;
  }

  // One Triton kernel, one call of the wrapper.
  void EmitTriton(const KernelWork& k) {
    DispatchWork d;
    d.cls = DispatchClass::kKernel;
    d.op_index = k.op_index;
    d.first_kernel = int(out_.kernels.size());
    d.num_kernels = 1;
    out_.kernels.push_back(k);
    out_.dispatches.push_back(d);
    ++fused_;
  }

  const WorkList& in_;
  WorkList out_;
  KernelWork group_;
  int group_size_ = 0;
  int fused_ = 0;
  int members_ = 0;
  int mha_ = 0;
};

}  // namespace

WorkList FuseAsInductor(const WorkList& eager) { return Fuser(eager).Run(); }

}  // namespace ftax
