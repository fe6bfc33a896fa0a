#include "calibrate/layer_shapes.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "common/json_file.h"
#include "predictor/work_list.h"

namespace ftax {
namespace {

using nlohmann::json;

std::string Join(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

// Reads field `key` of `row` as positive (or, with `zero_ok`, non-negative) integers, one per
// spatial dim; absent and optional: `fallback` repeated.
Status ReadInts(const json& row, const char* key, size_t dims, bool zero_ok, int64_t fallback,
                const std::string& where, std::vector<int64_t>* out) {
  out->clear();
  if (!row.contains(key)) {
    if (fallback < 0) return InvalidInput(where + "." + key + ": missing");
    out->assign(dims, fallback);
    return Status::Ok();
  }
  const json& v = row.at(key);
  if (!v.is_array() || (dims && v.size() != dims))
    return InvalidInput(where + "." + key + ": expected " + (dims ? std::to_string(dims) : "1 or 2") +
                        " integers, one per spatial dim");
  for (const json& e : v) {
    if (!e.is_number_integer()) return InvalidInput(where + "." + key + ": expected integers");
    const int64_t x = e.get<int64_t>();
    if (x < (zero_ok ? 0 : 1) || x > (int64_t(1) << 20))
      return InvalidInput(where + "." + key + ": " + std::to_string(x) + " is out of range");
    out->push_back(x);
  }
  return Status::Ok();
}

Status ReadPositive(const json& row, const char* key, const std::string& where, int64_t* out) {
  if (!row.contains(key) || !row.at(key).is_number_integer())
    return InvalidInput(where + "." + key + ": expected a positive integer");
  *out = row.at(key).get<int64_t>();
  if (*out < 1 || *out > (int64_t(1) << 20))
    return InvalidInput(where + "." + key + ": " + std::to_string(*out) + " is out of range");
  return Status::Ok();
}

}  // namespace

std::vector<int64_t> LayerOutputSpatial(const LayerShape& l) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < l.spatial.size(); ++i) {
    const int64_t span = l.spatial[i] + 2 * l.pad[i] - l.dilation[i] * (l.kernel[i] - 1) - 1;
    if (span < 0) {
      out.push_back(0);
      continue;
    }
    int64_t o = (l.ceil_mode ? (span + l.stride[i] - 1) / l.stride[i] : span / l.stride[i]) + 1;
    // With ceil mode the last window must still start inside the input or its left padding.
    if (l.ceil_mode && (o - 1) * l.stride[i] >= l.spatial[i] + l.pad[i]) --o;
    out.push_back(o);
  }
  return out;
}

Expected<LayerShapes> LayerShapesFromJson(const json& doc, const std::string& where) {
  if (!doc.is_object() || doc.value("kind", "") != "ftax-layer-shapes")
    return InvalidInput(where + ": not a layer-shapes file (kind must be \"ftax-layer-shapes\")");
  LayerShapes s;
  s.path = where;
  if (!doc.contains("batches") || !doc["batches"].is_array() || doc["batches"].empty())
    return InvalidInput(where + ".batches: expected a non-empty array of batch sizes");
  for (const json& b : doc["batches"]) {
    if (!b.is_number_integer() || b.get<int64_t>() < 1 || b.get<int64_t>() > 4096)
      return InvalidInput(where + ".batches: expected integers in 1..4096");
    s.batches.push_back(b.get<int64_t>());
  }
  if (!doc.contains("layers") || !doc["layers"].is_array())
    return InvalidInput(where + ".layers: expected an array");
  for (size_t i = 0; i < doc["layers"].size(); ++i) {
    const json& row = doc["layers"][i];
    const std::string at = where + ".layers[" + std::to_string(i) + "]";
    if (!row.is_object()) return InvalidInput(at + ": expected an object");
    LayerShape l;
    l.op = row.value("op", "");
    if (l.op != "conv" && l.op != "max_pool" && l.op != "avg_pool")
      return InvalidInput(at + ".op: '" + l.op + "' is not conv, max_pool or avg_pool");
    Status st = ReadPositive(row, "cin", at, &l.cin);
    if (st.ok()) st = ReadPositive(row, "cout", at, &l.cout);
    if (!st.ok()) return st;
    l.groups = 1;
    if (row.contains("groups")) {
      st = ReadPositive(row, "groups", at, &l.groups);
      if (!st.ok()) return st;
    }
    if (l.cin % l.groups || l.cout % l.groups)
      return InvalidInput(at + ".groups: " + std::to_string(l.groups) + " does not divide the channels (" +
                          std::to_string(l.cin) + " in, " + std::to_string(l.cout) + " out)");
    if (l.op != "conv" && (l.cin != l.cout || l.groups != 1))
      return InvalidInput(at + ": a pooling keeps its channels (cin == cout, groups 1)");
    st = ReadInts(row, "spatial", 0, false, -1, at, &l.spatial);
    if (!st.ok()) return st;
    const size_t dims = l.spatial.size();
    if (dims < 1 || dims > 2) return InvalidInput(at + ".spatial: 1 or 2 spatial dims are supported");
    st = ReadInts(row, "kernel", dims, false, -1, at, &l.kernel);
    if (st.ok()) st = ReadInts(row, "stride", dims, false, 1, at, &l.stride);
    if (st.ok()) st = ReadInts(row, "pad", dims, true, 0, at, &l.pad);
    if (st.ok()) st = ReadInts(row, "dilation", dims, false, 1, at, &l.dilation);
    if (!st.ok()) return st;
    if (row.contains("ceil_mode")) {
      if (!row["ceil_mode"].is_boolean()) return InvalidInput(at + ".ceil_mode: expected true or false");
      l.ceil_mode = row["ceil_mode"].get<bool>();
    }
    if (row.contains("layout")) {
      const json& lay = row["layout"];
      if (!lay.is_string() || (lay != "nchw" && lay != "nhwc"))
        return InvalidInput(at + ".layout: expected \"nchw\" or \"nhwc\"");
      l.channels_last = lay == "nhwc";
      if (l.channels_last && dims != 2) return InvalidInput(at + ".layout: nhwc needs 2 spatial dims");
    }
    if (row.contains("weights")) {
      const json& wl = row["weights"];
      if (!wl.is_string() || (wl != "nchw" && wl != "nhwc"))
        return InvalidInput(at + ".weights: expected \"nchw\" or \"nhwc\"");
      l.weights_channels_last = wl == "nhwc";
      if (l.weights_channels_last && (!l.channels_last || l.op != "conv"))
        return InvalidInput(at + ".weights: nhwc weights need a convolution with \"layout\": \"nhwc\"");
    }
    if (row.contains("batches")) {
      const json& bs = row["batches"];
      if (!bs.is_array() || bs.empty()) return InvalidInput(at + ".batches: expected a list of the file's batches");
      for (const json& b : bs) {
        if (!b.is_number_integer() ||
            std::find(s.batches.begin(), s.batches.end(), b.get<int64_t>()) == s.batches.end())
          return InvalidInput(at + ".batches: " + b.dump() + " is not one of the file's batches");
        l.batches.push_back(b.get<int64_t>());
      }
    }
    l.kind = row.value("kind", "");
    for (int64_t o : LayerOutputSpatial(l))
      if (o < 1) return InvalidInput(at + ": the kernel is larger than the padded input (no output)");
    s.layers.push_back(std::move(l));
  }
  if (doc.contains("layer_norms")) {
    if (!doc["layer_norms"].is_array()) return InvalidInput(where + ".layer_norms: expected an array");
    for (size_t i = 0; i < doc["layer_norms"].size(); ++i) {
      const json& row = doc["layer_norms"][i];
      const std::string at = where + ".layer_norms[" + std::to_string(i) + "]";
      if (!row.is_object()) return InvalidInput(at + ": expected an object");
      NormShape n;
      Status st = ReadPositive(row, "positions", at, &n.positions);
      if (st.ok()) st = ReadPositive(row, "hidden", at, &n.hidden);
      if (!st.ok()) return st;
      s.layer_norms.push_back(n);
    }
  }
  return s;
}

Expected<LayerShapes> ReadLayerShapes(const std::string& path) {
  Expected<json> doc = ReadJsonFile(path, "layer shapes");
  if (!doc.ok()) return doc.status();
  return LayerShapesFromJson(doc.value(), path);
}

LayerWork LayerKernelWork(const LayerShape& l, int64_t batch, int elem_size) {
  const std::vector<int64_t> out = LayerOutputSpatial(l);
  const double es = elem_size;
  const double in_elems = double(batch * l.cin) * double(Product(l.spatial));
  const double out_elems = double(batch * l.cout) * double(Product(out));
  LayerWork w;
  w.label = "layer " + l.op + " n" + std::to_string(batch) + " " + std::to_string(l.cin) + "->" +
            std::to_string(l.cout) + " " + Join(l.spatial, "x") + " k" + Join(l.kernel, "x") + " s" +
            Join(l.stride, "x") + " p" + Join(l.pad, "x") +
            (Product(l.dilation) > 1 ? " d" + Join(l.dilation, "x") : "") + " g" +
            std::to_string(l.groups) + (l.ceil_mode ? " ceil" : "") + (l.channels_last ? " nhwc" : "") +
            (l.weights_channels_last ? " w-nhwc" : "");
  if (l.op != "conv") {  // the lowering's reduction recipe: 5 FLOPs per output, in + out bytes
    w.cls = "reduction";
    w.work = {{"flops", 5.0 * out_elems}, {"bytes", (in_elems + out_elems) * es}, {"variant", "pool"}};
    return w;
  }
  // As lowering.cc prices a convolution: m outputs per group, n channels, k the depth.
  const int64_t cin_g = l.cin / l.groups, kernel = Product(l.kernel);
  const int64_t m = batch * Product(out), n = l.cout / l.groups, k = cin_g * kernel;
  const double weight_elems = double(l.cout) * double(cin_g) * double(kernel);
  const bool depthwise = l.groups > 1 && cin_g == 1 && l.groups == l.cin;
  w.cls = depthwise ? "depthwise" : "conv";
  w.work = {{"flops", 2.0 * double(m) * double(n) * double(k) * double(l.groups)},
            {"bytes", (in_elems + weight_elems + out_elems) * es}};
  if (depthwise) {
    if (kernel > 9 || l.channels_last)  // shaped: outputs per channel, channels, kernel area
      w.work.update({{"m", m}, {"n", l.cout}, {"k", kernel}, {"batch", 1},
                     {"variant", l.channels_last ? "nhwc" : "large_kernel"}});
    else
      w.work.update({{"m", 0}, {"n", 0}, {"k", 0}, {"batch", 1}});
    return w;
  }
  const bool odd_pointwise = !l.channels_last && l.groups == 1 && kernel == 1 && Product(out) > 1 &&
                             Product(out) % 2 == 1;
  if (odd_pointwise)  // one GEMM per image (lowering.cc): m = positions, batch = images
    w.work.update({{"m", Product(out)}, {"n", n}, {"k", k}, {"batch", batch}});
  else
    w.work.update({{"m", m}, {"n", n}, {"k", k}, {"batch", l.groups}});
  bool patchify = kernel > 1 && cin_g <= 4;  // an image cut into patches (lowering.cc)
  for (size_t i = 0; i < l.kernel.size(); ++i) patchify = patchify && l.kernel[i] > 1 && l.stride[i] == l.kernel[i];
  if (l.channels_last && l.weights_channels_last && kernel == 1 && l.groups == 1) w.work["variant"] = "pointwise_nhwc";
  else if (l.channels_last) w.work["variant"] = KernelVariantName(ChannelsLastVariant(l.groups, n));
  else if (l.groups > 1) w.work["variant"] = KernelVariantName(GroupedVariant(n));
  else if (kernel == 1) w.work["variant"] = odd_pointwise ? "pointwise_odd" : "pointwise";
  else if (patchify) w.work["variant"] = "patchify";
  return w;
}

LayerWork NormKernelWork(const NormShape& l, int64_t batch, int elem_size) {
  // As lowering.cc prices a layer norm: 5 FLOPs an element; input, weight, bias and output
  // bytes; shaped rows x hidden.
  const int64_t rows = batch * l.positions;
  const double elems = double(rows) * double(l.hidden);
  LayerWork w;
  w.cls = "norm";
  w.label = "layer layer_norm n" + std::to_string(batch) + " " + std::to_string(l.positions) + "x" +
            std::to_string(l.hidden);
  w.work = {{"flops", 5.0 * elems}, {"bytes", (2.0 * elems + 2.0 * double(l.hidden)) * elem_size},
            {"m", rows}, {"n", l.hidden}, {"k", 1}, {"batch", 1}, {"variant", "layer_norm"}};
  return w;
}

}  // namespace ftax
