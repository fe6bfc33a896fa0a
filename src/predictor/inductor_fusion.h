// What torch.compile's Inductor makes of the kernels eager PyTorch launches.
//
// Inductor leaves GEMMs, convolutions and fused attention to their libraries (cuBLAS, cuDNN,
// the SDPA kernels: "extern" calls in the compiled wrapper) and generates Triton kernels for
// everything between them, fusing point-wise ops, normalizations, softmaxes, pooling, gathers
// and layout copies that run back to back into one kernel that reads its inputs once and
// writes its outputs once. Views cost nothing at run time: the wrapper reinterprets strides.
// FuseAsInductor models that on an eager work list (lowered as a CUDA graph captured from the
// eager module would be: eager's kernels, the padding mask kept): every run of non-library
// kernels between two library calls becomes one kernel, of the heaviest member's class
// (norm before reduction before gather before element-wise before copy; an inference batch
// norm counts as element-wise, since Inductor decomposes it into a per-channel affine that
// fuses into its neighbours' loop), moving as many bytes
// as the member that moves the most (a fused chain streams its tensor once, not once per op),
// with the members' FLOPs. A convolution's bias, which ATen adds with a kernel of its own after
// cuDNN's, is added in the fused kernel after the call; a fused layer norm keeps its shape; a
// reduction that shrinks its input (a global average pool) starts a kernel of its own. Each
// library call and each fused kernel is one dispatch: one call
// of the compiled Python wrapper (default mode) or one node of the replayed graph
// (reduce-overhead).
//
//   WorkList eager = Lower(graph, {Framework::kTorchCompile, DType::kFloat16}).value();
//   // Lower calls FuseAsInductor itself for the torch-compile frameworks.
#pragma once

#include "predictor/work_list.h"

namespace ftax {

// The work list of `eager` as Inductor fuses it (notes say how many kernels became how many).
WorkList FuseAsInductor(const WorkList& eager);

}  // namespace ftax
