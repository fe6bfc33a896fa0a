// Architecture specs: a Graph built directly from a one-line description, with no model file.
//
// NAS designers price candidates such as "bert:layers=6,hidden=512" inside a search loop;
// `BuildArchGraph` turns such a spec into the same Graph IR the file loaders produce, with
// concrete shapes, so counting and prediction treat it like any model.
//
// Grammar:  FAMILY[:KEY=VALUE[,KEY=VALUE...]]
//   bert      layers, hidden, heads, ffn, vocab, max_pos, type_vocab        (encoder)
//   gpt       layers, hidden, heads, ffn, vocab, max_pos, kv_cache=0|1, past, lm_head=0|1
//   resnet    depth=18|34|50|101|152 or blocks=2-2-2-2, bottleneck=0|1, width=64, classes,
//             image
//   mobilenet width_mult, expansion, classes, image                          (MobileNetV2)
//   vit       layers, hidden, heads, ffn, patch, image, classes
// Defaults, limits and the op decomposition of each family: docs/arch-specs.md.
// Dims bound by the caller: `batch` (default 1) and, for sequence models, `seq` (default 128).
//
// Flavors: real front ends decompose the same module differently. `kOnnx` produces the op
// types torch.onnx.export writes (MatMul + Add for a Linear, BatchNorm folded, ...);
// `kTorch` produces aten-domain ops (domain "aten"), one per ATen call of a traced eager run
// (linear, layer_norm, scaled_dot_product_attention, views...), with each op's module scope
// set, so the predictor can count dispatches and nn.Module calls.
//
//   Expected<Graph> g = BuildArchGraph("bert:layers=12,hidden=768", {{"batch", 8}, {"seq", 128}},
//                                      ArchFlavor::kTorch);
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "graph/graph.h"

namespace ftax {

enum class ArchFlavor { kOnnx, kTorch };

// Named dims the generator reads: "batch", "seq" (others are ignored, so callers can pass
// every --dim the user gave).
using DimBindings = std::map<std::string, int64_t>;

// Builds the graph for `spec`. Errors (unknown family, unknown key, non-positive or
// non-numeric value, inconsistent values such as hidden % heads != 0) name the key at fault.
Expected<Graph> BuildArchGraph(const std::string& spec, const DimBindings& dims,
                               ArchFlavor flavor);
// The same with weights and activations of `dtype` (fp32, fp16, bf16 or fp64; the
// overload above uses fp32). Integer inputs (token ids, masks) stay int64.
Expected<Graph> BuildArchGraph(const std::string& spec, const DimBindings& dims,
                               ArchFlavor flavor, DType dtype);

// For search loops: builds into `*graph`, reusing the storage a previous build left there
// (op slots, tensor-map nodes, name strings), so repeated builds allocate almost nothing.
// `*graph` must be empty or hold an earlier result of BuildArchGraph/BuildArchGraphInto (not a
// graph from a file loader: only the fields a build sets are reset); it is overwritten whole.
// On error it is left empty.
//
//   Graph g;
//   for (const std::string& spec : candidates) {
//     if (!BuildArchGraphInto(spec, dims, ArchFlavor::kOnnx, DType::kFloat16, &g).ok()) continue;
//     Score(g);
//   }
Status BuildArchGraphInto(const std::string& spec, const DimBindings& dims, ArchFlavor flavor,
                          DType dtype, Graph* graph);

// One line per family with its keys and defaults, for --help and docs.
std::string ArchSpecHelp();

}  // namespace ftax
