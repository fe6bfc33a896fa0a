// Layer shapes for `ftax bench`: convolutions, poolings and layer norms as real models' layers
// run them.
//
// The bench's own grids cover dense convolutions; grouped, depthwise, large-kernel, patchify
// and pooling kernels of a new model fell outside anything measured. A layer-shapes file
// (data/zoo/layer-shapes.json, made by scripts/layer_shapes.py from the calibration models of
// the zoo's fixed split, installed beside the binary) lists their geometries; the bench times
// each at the file's batches, and each row becomes an anchor of the kernel class and variant
// the lowering gives the same layer (LayerKernelWork mirrors it, and a test checks that they
// agree), so the predictor interpolates between measured layers.
//
//   Expected<LayerShapes> s = ReadLayerShapes(path);      // InvalidInput names file and row
//   for (const LayerShape& l : s->layers)
//     for (int64_t n : s->batches) { LayerWork w = LayerKernelWork(l, n, 2); ... }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ftax {

struct LayerShape {
  std::string op;  // "conv", "max_pool", "avg_pool"
  int64_t cin = 0, cout = 0, groups = 1;
  // Per spatial dim (1 or 2 of them): input size, kernel, stride, padding, dilation.
  std::vector<int64_t> spatial, kernel, stride, pad, dilation;
  bool ceil_mode = false;
  // The input's memory format: false NCHW (contiguous), true channels-last (NHWC memory, as a
  // convolution after ConvNeXt's permute back to NCHW reads it; the file's "layout": "nhwc").
  bool channels_last = false;
  // The weights' memory format, for a channels-last convolution: false as a module keeps them
  // (NCHW; cuDNN copies a dense weight to NHWC inside the call), true channels-last too, as
  // torch.compile hands both to the library (its layout copies are kernels of their own; a
  // 1x1 weight is channels-last as stored). The file's "weights": "nhwc".
  bool weights_channels_last = false;
  // The batches this row is timed at, where it names its own ("batches", a subset of the
  // file's); empty: every batch of the file.
  std::vector<int64_t> batches;
  std::string kind;  // the file's label (dense, grouped, patchify, ...), for messages only
};

// A layer norm: `positions` rows per sample (tokens, or pixels of an NHWC activation) of
// `hidden` elements each, normalized over `hidden`.
struct NormShape {
  int64_t positions = 0, hidden = 0;
};

struct LayerShapes {
  std::string path;
  std::vector<int64_t> batches;
  std::vector<LayerShape> layers;
  std::vector<NormShape> layer_norms;  // the file's optional "layer_norms"
};

// Reads and checks a layer-shapes file: every row's op known, channels, sizes, kernels,
// strides and dilations positive, paddings non-negative, one value per spatial dim, groups
// dividing both channel counts, an output of at least one element.
Expected<LayerShapes> ReadLayerShapes(const std::string& path);
// The same from a parsed document (`where` names it in errors).
Expected<LayerShapes> LayerShapesFromJson(const nlohmann::json& doc, const std::string& where);

// Output spatial size of a layer.
std::vector<int64_t> LayerOutputSpatial(const LayerShape& l);

// What one call of the layer at `batch` is to the cost model: the kernel class, the work
// fields of a measurement row (flops, bytes, m, n, k, batch, variant) as the lowering gives them
// for the same layer, and a label ("layer conv n8 64->64 56x56 k3x3 s1 p1 g1").
struct LayerWork {
  std::string cls;  // conv, depthwise or reduction
  nlohmann::json work;
  std::string label;
};
LayerWork LayerKernelWork(const LayerShape& l, int64_t batch, int elem_size);
// The same for a layer norm with weight and bias ("layer layer_norm n8 3136x96").
LayerWork NormKernelWork(const NormShape& l, int64_t batch, int elem_size);

}  // namespace ftax
