// Lowering: from graph ops to what one framework makes the CPU and the GPU do.
//
// Each op becomes zero or more CPU dispatches (with a dispatch class) and zero or more GPU
// kernels (with a kernel class, FLOPs, bytes and GEMM-like shape). The rules are one table
// (lowering_table.json, built in; lowering_rules.h), keyed by (domain, op type): aten-domain
// ops from TorchScript files and torch-flavored arch specs map one ATen call to one dispatch;
// ONNX ops are mapped to what PyTorch would run for the module they came from (MatMul + bias
// Add is one GEMM with a bias epilogue; shape arithmetic is Python integer math with no
// dispatch), with a note that an ONNX export has been rewritten by its exporter.
//
// The side kernels PyTorch launches around some ops (fused attention's memsets, half-precision
// batch norm's statistics kernels, a convolution's bias add) are the host's kernel facts
// (kernel_facts.h), which the options carry; predictions take them from the host profile.
//
//   LoweringOptions opt; opt.framework = Framework::kCudaGraph; opt.precision = DType::kFloat16;
//   opt.facts = profile.kernel_facts;
//   Expected<WorkList> w = Lower(graph, opt);
#pragma once

#include "common/status.h"
#include "graph/graph.h"
#include "predictor/framework.h"
#include "predictor/kernel_facts.h"
#include "predictor/work_list.h"

namespace ftax {

struct LoweringOptions {
  Framework framework = Framework::kPytorchEager;
  DType precision = DType::kFloat32;  // floating tensors run in this dtype
  KernelFacts facts;                  // side kernels observed on the host (HostProfile::kernel_facts)
};

// Fails (naming the node) only when a shape the rule needs is unknown.
Expected<WorkList> Lower(const Graph& graph, const LoweringOptions& options);

// Tensors of model state (parameters and buffers, not the code's constants) that torch.compile's
// generated kernels read: those read by an op that launches kernels and is no library call, and
// a convolution's bias (Inductor calls the convolution without it and adds it in the kernel
// that follows). Each is an input the compiled graph takes every call, and costs the call
// (FrameworkParams::input_us). The weights of library calls (convolutions, linear layers,
// matrix products) are not counted: the bench's chains of those ops hold them, so their op
// costs include them. A tensor read by several ops counts once. `work` is the eager lowering
// of `graph`, before Inductor's fusion.
int CountKernelReadState(const Graph& graph, const WorkList& work);

// Number of distinct nn.Module calls implied by the ops' scopes (each scope and each of its
// ancestors once, plus the root module).
int CountModuleCalls(const Graph& graph);

// For a graph whose ops carry no scopes (the dynamo ONNX exporter names nodes after FX nodes):
// the nn.Module calls implied by the parameters' names ("encoder.layer.0.attention.query.weight"
// is a parameter of module encoder.layer.0.attention.query, called inside its ancestors; an
// initializer an exporter folded from a parameter counts as that parameter), each
// module and ancestor once, plus the root; modules without parameters (dropout, activations)
// are not seen. 0 when no parameter name is a dotted module path.
int ModuleCallsFromParameterNames(const Graph& graph);

}  // namespace ftax
