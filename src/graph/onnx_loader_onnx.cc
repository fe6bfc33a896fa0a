// ONNX loader: the only file in ftax that touches ONNX's protobuf classes.
//
// Two steps. (1) A wire-format pass over the mapped file copies the ModelProto while dropping
// large tensor payloads (raw_data, float_data, ...); pages holding weights are skipped, never
// touched, so a 1 GB file costs a few MB of memory and a single-file model over 2 GB (which
// protobuf itself refuses to parse) still loads when its structure is small. (2) libonnx's
// generated classes parse the slim copy, and the ModelProto is converted into the Graph IR.
#include "graph/onnx_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

namespace ftax {
namespace {

// ---------------------------------------------------------------------------------------------
// Step 1: the wire-format slimming pass.

enum class Msg { kModel, kGraph, kNode, kAttribute, kTensor, kSparseTensor, kFunction, kOpaque };

// Which submessages to descend into; kOpaque fields are copied verbatim.
Msg ChildOf(Msg parent, uint32_t field) {
  switch (parent) {
    case Msg::kModel:
      if (field == 7) return Msg::kGraph;
      if (field == 25) return Msg::kFunction;
      return Msg::kOpaque;
    case Msg::kGraph:
      if (field == 1) return Msg::kNode;
      if (field == 5) return Msg::kTensor;
      if (field == 15) return Msg::kSparseTensor;
      return Msg::kOpaque;
    case Msg::kNode:
      return field == 5 ? Msg::kAttribute : Msg::kOpaque;
    case Msg::kAttribute:
      if (field == 5 || field == 10) return Msg::kTensor;
      if (field == 6 || field == 11) return Msg::kGraph;
      if (field == 22 || field == 23) return Msg::kSparseTensor;
      return Msg::kOpaque;
    case Msg::kFunction:
      return field == 7 ? Msg::kNode : Msg::kOpaque;
    case Msg::kSparseTensor:
      return (field == 1 || field == 2) ? Msg::kTensor : Msg::kOpaque;
    case Msg::kTensor:
    case Msg::kOpaque:
      return Msg::kOpaque;
  }
  return Msg::kOpaque;
}

bool IsTensorPayload(uint32_t field) {
  // float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data
  return field == 4 || field == 5 || field == 6 || field == 7 || field == 9 || field == 10 ||
         field == 11;
}

struct SlimStats {
  uint64_t dropped_bytes = 0;
  uint64_t dropped_fields = 0;
};

class WireSlimmer {
 public:
  WireSlimmer(const uint8_t* base, int64_t max_kept, SlimStats* stats)
      : base_(base), max_kept_(max_kept), stats_(stats) {}

  // Copies message [begin, end) of kind `kind` into `out`. On malformed input returns false
  // and sets error().
  bool Slim(size_t begin, size_t end, Msg kind, int depth, std::string* out) {
    if (depth > 100) return Fail(begin, "messages nested more than 100 deep");
    size_t p = begin;
    while (p < end) {
      size_t field_start = p;
      uint64_t tag;
      if (!ReadVarint(&p, end, &tag)) return Fail(field_start, "truncated field tag");
      uint32_t field = static_cast<uint32_t>(tag >> 3);
      uint32_t wire = static_cast<uint32_t>(tag & 7);
      if (field == 0 || tag > 0xFFFFFFFFull) return Fail(field_start, "invalid field number 0");
      switch (wire) {
        case 0: {
          uint64_t v;
          if (!ReadVarint(&p, end, &v)) return Fail(field_start, "truncated varint");
          break;
        }
        case 1:
          if (end - p < 8) return Fail(field_start, "truncated fixed64");
          p += 8;
          break;
        case 5:
          if (end - p < 4) return Fail(field_start, "truncated fixed32");
          p += 4;
          break;
        case 2: {
          uint64_t len;
          if (!ReadVarint(&p, end, &len)) return Fail(field_start, "truncated length");
          if (len > end - p) return Fail(field_start, "length runs past the end of the data");
          Msg child = ChildOf(kind, field);
          if (kind == Msg::kTensor && IsTensorPayload(field) &&
              static_cast<int64_t>(len) > max_kept_) {
            stats_->dropped_bytes += len;
            stats_->dropped_fields += 1;
            p += len;
            continue;  // dropped: weights are never read
          }
          if (child != Msg::kOpaque) {
            std::string sub;
            if (!Slim(p, p + len, child, depth + 1, &sub)) return false;
            WriteVarint(tag, out);
            WriteVarint(sub.size(), out);
            out->append(sub);
            p += len;
            continue;
          }
          p += len;
          break;
        }
        case 3: {  // group (deprecated): skip to the matching end-group tag
          if (!SkipGroup(&p, end, field, depth + 1)) return Fail(field_start, "unterminated group");
          break;
        }
        default:
          return Fail(field_start, "invalid wire type " + std::to_string(wire));
      }
      out->append(reinterpret_cast<const char*>(base_ + field_start), p - field_start);
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  bool ReadVarint(size_t* p, size_t end, uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
      uint8_t b = base_[(*p)++];
      result |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  static void WriteVarint(uint64_t v, std::string* out) {
    while (v >= 0x80) {
      out->push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out->push_back(static_cast<char>(v));
  }
  bool SkipGroup(size_t* p, size_t end, uint32_t group_field, int depth) {
    if (depth > 100) return false;
    while (*p < end) {
      uint64_t tag;
      if (!ReadVarint(p, end, &tag)) return false;
      uint32_t wire = tag & 7;
      uint64_t v;
      switch (wire) {
        case 0:
          if (!ReadVarint(p, end, &v)) return false;
          break;
        case 1:
          if (end - *p < 8) return false;
          *p += 8;
          break;
        case 5:
          if (end - *p < 4) return false;
          *p += 4;
          break;
        case 2:
          if (!ReadVarint(p, end, &v) || v > end - *p) return false;
          *p += v;
          break;
        case 3:
          if (!SkipGroup(p, end, static_cast<uint32_t>(tag >> 3), depth + 1)) return false;
          break;
        case 4:
          return (tag >> 3) == group_field;
        default:
          return false;
      }
    }
    return false;
  }
  bool Fail(size_t at, const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(at);
    return false;
  }

  const uint8_t* base_;
  int64_t max_kept_;
  SlimStats* stats_;
  std::string error_;
};

// ---------------------------------------------------------------------------------------------
// Step 2: ModelProto -> Graph.

DType FromOnnxType(int32_t t) {
  using T = onnx::TensorProto;
  switch (t) {
    case T::FLOAT: return DType::kFloat32;
    case T::UINT8: return DType::kUInt8;
    case T::INT8: return DType::kInt8;
    case T::UINT16: return DType::kInt16;  // same size; ftax has no unsigned 16-bit type
    case T::INT16: return DType::kInt16;
    case T::INT32: return DType::kInt32;
    case T::INT64: return DType::kInt64;
    case T::STRING: return DType::kString;
    case T::BOOL: return DType::kBool;
    case T::FLOAT16: return DType::kFloat16;
    case T::DOUBLE: return DType::kFloat64;
    case T::UINT32: return DType::kInt32;
    case T::UINT64: return DType::kInt64;
    case T::COMPLEX64: return DType::kComplex64;
    case T::BFLOAT16: return DType::kBFloat16;
    case 17: case 18: case 19: case 20:  // float8 variants (IR 9)
      return DType::kFloat8;
    default: return DType::kUnknown;
  }
}

bool IsIntegerType(int32_t t) {
  using T = onnx::TensorProto;
  return t == T::INT64 || t == T::INT32 || t == T::INT16 || t == T::INT8 || t == T::UINT8 ||
         t == T::UINT16 || t == T::UINT32 || t == T::UINT64 || t == T::BOOL;
}

struct Ctx {
  const OnnxLoadOptions& options;
  std::string source;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions;
  std::vector<std::string>* warnings;
};

std::string NodeLabel(const onnx::NodeProto& n, int index) {
  std::string name = n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'";
  return "node " + name + " (" + n.op_type() + ")";
}

// Reads the small integer contents of a tensor, if it has them.
std::optional<std::vector<int64_t>> IntContents(const onnx::TensorProto& t, int64_t count,
                                                int64_t max_elements) {
  if (!IsIntegerType(t.data_type()) || count > max_elements || count < 0) return std::nullopt;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<int64_t> v;
  if (t.int64_data_size() > 0) {
    if (t.int64_data_size() != count) return std::nullopt;
    v.assign(t.int64_data().begin(), t.int64_data().end());
    return v;
  }
  if (t.int32_data_size() > 0) {
    if (t.int32_data_size() != count) return std::nullopt;
    v.assign(t.int32_data().begin(), t.int32_data().end());
    return v;
  }
  if (t.uint64_data_size() > 0) {
    if (t.uint64_data_size() != count) return std::nullopt;
    for (uint64_t x : t.uint64_data()) v.push_back(static_cast<int64_t>(x));
    return v;
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    int size = 0;
    bool is_signed = true;
    using T = onnx::TensorProto;
    switch (t.data_type()) {
      case T::INT64: size = 8; break;
      case T::UINT64: size = 8; is_signed = false; break;
      case T::INT32: size = 4; break;
      case T::UINT32: size = 4; is_signed = false; break;
      case T::INT16: size = 2; break;
      case T::UINT16: size = 2; is_signed = false; break;
      case T::INT8: size = 1; break;
      case T::UINT8: case T::BOOL: size = 1; is_signed = false; break;
      default: return std::nullopt;
    }
    if (static_cast<int64_t>(raw.size()) != count * size) return std::nullopt;
    for (int64_t i = 0; i < count; ++i) {
      uint64_t x = 0;
      for (int b = 0; b < size; ++b)
        x |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i * size + b])) << (8 * b);
      if (is_signed && size < 8 && (x >> (8 * size - 1)) & 1) x |= ~uint64_t{0} << (8 * size);
      v.push_back(static_cast<int64_t>(x));
    }
    return v;
  }
  if (count == 0) return v;
  return std::nullopt;
}

// Reads the contents of a small float/double tensor (Resize scales), if it has them.
std::optional<std::vector<double>> FloatContents(const onnx::TensorProto& t, int64_t count,
                                                 int64_t max_elements) {
  using T = onnx::TensorProto;
  if (count < 0 || count > max_elements || t.data_location() == T::EXTERNAL) return std::nullopt;
  std::vector<double> v;
  if (t.data_type() == T::FLOAT) {
    if (t.float_data_size() == count && count > 0) {
      v.assign(t.float_data().begin(), t.float_data().end());
      return v;
    }
    if (t.has_raw_data() && static_cast<int64_t>(t.raw_data().size()) == count * 4) {
      for (int64_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, t.raw_data().data() + i * 4, 4);
        v.push_back(f);
      }
      return v;
    }
  } else if (t.data_type() == T::DOUBLE) {
    if (t.double_data_size() == count && count > 0) {
      v.assign(t.double_data().begin(), t.double_data().end());
      return v;
    }
    if (t.has_raw_data() && static_cast<int64_t>(t.raw_data().size()) == count * 8) {
      for (int64_t i = 0; i < count; ++i) {
        double d;
        std::memcpy(&d, t.raw_data().data() + i * 8, 8);
        v.push_back(d);
      }
      return v;
    }
  }
  if (count == 0) return v;
  return std::nullopt;
}

Expected<TensorInfo> FromTensorProto(const onnx::TensorProto& t, const std::string& what,
                                     const OnnxLoadOptions& options) {
  TensorInfo info;
  info.name = t.name();
  info.dtype = FromOnnxType(t.data_type());
  info.has_shape = true;
  for (int i = 0; i < t.dims_size(); ++i) {
    if (t.dims(i) < 0)
      return InvalidInput(what + ": dim " + std::to_string(i) + " is negative (" +
                          std::to_string(t.dims(i)) + ")");
    info.shape.push_back(Dim::Known(t.dims(i)));
  }
  std::optional<int64_t> n = NumElements(info.shape);
  if (n) {
    info.int_values = IntContents(t, *n, options.max_int_constant_elements);
    if (!info.int_values)
      info.float_values = FloatContents(t, *n, options.max_int_constant_elements);
  }
  return info;
}

// Shape and dtype from a ValueInfoProto. Non-tensor types (sequences, maps) keep no shape.
Status FillFromValueInfo(const onnx::ValueInfoProto& vi, const std::string& what,
                         TensorInfo* info) {
  if (!vi.has_type()) return Status::Ok();
  const onnx::TypeProto& type = vi.type();
  if (!type.has_tensor_type()) return Status::Ok();
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) info->dtype = FromOnnxType(tt.elem_type());
  if (!tt.has_shape()) return Status::Ok();
  Shape shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return InvalidInput(what + " '" + vi.name() + "': dim " + std::to_string(i) +
                            " is negative (" + std::to_string(d.dim_value()) + ")");
      shape.push_back(Dim::Known(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      shape.push_back(Dim::Symbol(d.dim_param()));
    } else {
      shape.push_back(Dim{});
    }
  }
  info->has_shape = true;
  info->shape = std::move(shape);
  return Status::Ok();
}

std::string ScopeOf(const std::string& name) {
  if (name.size() < 2 || name[0] != '/') return "";
  size_t slash = name.rfind('/');
  if (slash == 0) return "";
  return name.substr(0, slash);
}

// Expands calls of model-local functions into their bodies, recursively.
Status ExpandNode(const onnx::NodeProto& node, int index, Ctx& ctx, int depth,
                  std::deque<onnx::NodeProto>* store, std::vector<const onnx::NodeProto*>* out) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto it = ctx.functions.find({domain, node.op_type()});
  if (it == ctx.functions.end()) {
    out->push_back(&node);
    return Status::Ok();
  }
  if (depth >= ctx.options.max_function_depth)
    return InvalidInput(NodeLabel(node, index) + ": local functions nested deeper than " +
                        std::to_string(ctx.options.max_function_depth) +
                        " (recursive function?)");
  const onnx::FunctionProto& fn = *it->second;
  std::unordered_map<std::string, std::string> rename;
  for (int i = 0; i < fn.input_size(); ++i)
    rename[fn.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < fn.output_size(); ++i)
    rename[fn.output(i)] = i < node.output_size() ? node.output(i) : "";
  std::string prefix = (node.name().empty() ? fn.name() + "_" + std::to_string(index)
                                            : node.name()) + "/";
  auto map_name = [&](const std::string& n) -> std::string {
    if (n.empty()) return n;
    auto r = rename.find(n);
    return r != rename.end() ? r->second : prefix + n;
  };
  for (int k = 0; k < fn.node_size(); ++k) {
    onnx::NodeProto copy = fn.node(k);
    for (auto& in : *copy.mutable_input()) in = map_name(in);
    for (auto& o : *copy.mutable_output()) o = map_name(o);
    copy.set_name(prefix + (copy.name().empty() ? copy.op_type() + "_" + std::to_string(k)
                                                : copy.name()));
    // Attribute references take the caller's value; unresolved ones fall back to defaults.
    auto* attrs = copy.mutable_attribute();
    for (int a = attrs->size() - 1; a >= 0; --a) {
      onnx::AttributeProto* attr = attrs->Mutable(a);
      if (attr->ref_attr_name().empty()) continue;
      const onnx::AttributeProto* given = nullptr;
      for (const auto& ca : node.attribute())
        if (ca.name() == attr->ref_attr_name()) given = &ca;
      if (given) {
        std::string name = attr->name();
        *attr = *given;
        attr->set_name(name);
      } else {
        attrs->DeleteSubrange(a, 1);
      }
    }
    store->push_back(std::move(copy));
    Status s = ExpandNode(store->back(), index, ctx, depth + 1, store, out);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ConvertGraph(const onnx::GraphProto& gp, Ctx& ctx,
                    const std::unordered_set<std::string>& outer, int depth, Graph* out,
                    std::set<std::string>* free_names);

Status ConvertAttribute(const onnx::AttributeProto& a, const std::string& where, Ctx& ctx,
                        const std::unordered_set<std::string>& visible, int depth,
                        Attribute* out, std::set<std::string>* free_names) {
  using A = onnx::AttributeProto;
  int type = a.type();
  if (type == A::UNDEFINED) {  // old exporters leave `type` unset
    if (a.has_f()) type = A::FLOAT;
    else if (a.has_i()) type = A::INT;
    else if (a.has_s()) type = A::STRING;
    else if (a.has_t()) type = A::TENSOR;
    else if (a.has_g()) type = A::GRAPH;
    else if (a.ints_size()) type = A::INTS;
    else if (a.floats_size()) type = A::FLOATS;
    else if (a.strings_size()) type = A::STRINGS;
  }
  std::string what = where + ": attribute '" + a.name() + "'";
  switch (type) {
    case A::FLOAT: out->kind = Attribute::Kind::kFloat; out->f = a.f(); break;
    case A::INT: out->kind = Attribute::Kind::kInt; out->i = a.i(); break;
    case A::STRING: out->kind = Attribute::Kind::kString; out->s = a.s(); break;
    case A::INTS:
      out->kind = Attribute::Kind::kInts;
      out->ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      out->kind = Attribute::Kind::kFloats;
      out->floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::STRINGS:
      out->kind = Attribute::Kind::kStrings;
      out->strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR: {
      Expected<TensorInfo> t = FromTensorProto(a.t(), what, ctx.options);
      if (!t.ok()) return t.status();
      out->kind = Attribute::Kind::kTensor;
      out->tensor = std::make_shared<TensorInfo>(std::move(t.value()));
      break;
    }
    case A::SPARSE_TENSOR: {
      TensorInfo t;
      t.dtype = FromOnnxType(a.sparse_tensor().values().data_type());
      t.has_shape = true;
      for (int64_t d : a.sparse_tensor().dims()) {
        if (d < 0) return InvalidInput(what + ": negative dim");
        t.shape.push_back(Dim::Known(d));
      }
      out->kind = Attribute::Kind::kTensor;
      out->tensor = std::make_shared<TensorInfo>(std::move(t));
      break;
    }
    case A::GRAPH:
    case A::GRAPHS: {
      if (type == A::GRAPHS && a.graphs_size() == 0) break;
      const onnx::GraphProto& g = type == A::GRAPH ? a.g() : a.graphs(0);
      if (depth + 1 > ctx.options.max_subgraph_depth)
        return InvalidInput(what + ": subgraphs nested deeper than " +
                            std::to_string(ctx.options.max_subgraph_depth));
      auto sub = std::make_shared<Graph>();
      sub->source = ctx.source;
      Status s = ConvertGraph(g, ctx, visible, depth + 1, sub.get(), free_names);
      if (!s.ok()) return s.WithContext(what);
      out->kind = Attribute::Kind::kGraph;
      out->graph = std::move(sub);
      break;
    }
    default:
      break;  // type protos and lists of tensors carry nothing ftax counts
  }
  return Status::Ok();
}

Status ConvertGraph(const onnx::GraphProto& gp, Ctx& ctx,
                    const std::unordered_set<std::string>& outer, int depth, Graph* out,
                    std::set<std::string>* free_names) {
  out->name = gp.name();
  const std::string gname = "graph '" + gp.name() + "'";

  for (int i = 0; i < gp.initializer_size(); ++i) {
    const auto& t = gp.initializer(i);
    if (t.name().empty())
      return InvalidInput(gname + ": initializer #" + std::to_string(i) + " has no name");
    Expected<TensorInfo> info = FromTensorProto(t, gname + ": initializer '" + t.name() + "'",
                                                ctx.options);
    if (!info.ok()) return info.status();
    info->is_initializer = true;
    out->tensors[t.name()] = std::move(info.value());
  }
  for (int i = 0; i < gp.sparse_initializer_size(); ++i) {
    const auto& st = gp.sparse_initializer(i);
    const std::string& name = st.values().name();
    if (name.empty())
      return InvalidInput(gname + ": sparse initializer #" + std::to_string(i) + " has no name");
    TensorInfo& t = out->Tensor(name);
    t.dtype = FromOnnxType(st.values().data_type());
    t.has_shape = true;
    t.is_initializer = true;
    for (int64_t d : st.dims()) {
      if (d < 0) return InvalidInput(gname + ": sparse initializer '" + name + "': negative dim");
      t.shape.push_back(Dim::Known(d));
    }
  }
  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) return InvalidInput(gname + ": a graph input has no name");
    TensorInfo& t = out->Tensor(vi.name());
    if (t.is_initializer) continue;  // IR < 4 lists initializers among inputs
    Status s = FillFromValueInfo(vi, "input", &t);
    if (!s.ok()) return s.WithContext(gname);
    t.is_graph_input = true;
    out->inputs.push_back(vi.name());
  }
  if (ctx.options.use_declared_shapes) {
    for (const auto& vi : gp.value_info()) {
      if (vi.name().empty()) continue;
      TensorInfo& t = out->Tensor(vi.name());
      if (t.is_initializer || t.is_graph_input) continue;
      Status s = FillFromValueInfo(vi, "value_info", &t);
      if (!s.ok()) return s.WithContext(gname);
    }
  }
  // The parameter a folded initializer came from (value_info metadata of the dynamo exporter's
  // optimizer: "pkg.onnxscript.optimizer.folded_from" = "['encoder.layer.0.query.weight']"):
  // the first quoted name, for the module calls a file without scopes implies.
  // ValueInfoProto.metadata_props (field 4) is newer than the schema ftax builds against, so
  // it is read from the message's unknown fields, each a StringStringEntryProto.
  for (const auto& vi : gp.value_info()) {
    const google::protobuf::UnknownFieldSet& unknown = vi.unknown_fields();
    for (int f = 0; f < unknown.field_count(); ++f) {
      const google::protobuf::UnknownField& field = unknown.field(f);
      if (field.number() != 4 || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
      onnx::StringStringEntryProto md;
      if (!md.ParseFromString(field.length_delimited())) continue;
      if (md.key() != "pkg.onnxscript.optimizer.folded_from") continue;
      const std::string& v = md.value();
      const size_t a = v.find('\''), b = a == std::string::npos ? a : v.find('\'', a + 1);
      if (b != std::string::npos && b > a + 1 && !vi.name().empty())
        out->Tensor(vi.name()).folded_from = v.substr(a + 1, b - a - 1);
    }
  }
  for (const auto& vi : gp.output()) {
    out->outputs.push_back(vi.name());
    if (!ctx.options.use_declared_shapes) continue;
    TensorInfo& t = out->Tensor(vi.name());
    if (t.is_initializer || t.is_graph_input) continue;
    Status s = FillFromValueInfo(vi, "output", &t);
    if (!s.ok()) return s.WithContext(gname);
  }

  // Flatten local function calls.
  std::deque<onnx::NodeProto> store;
  std::vector<const onnx::NodeProto*> nodes;
  nodes.reserve(gp.node_size());
  for (int i = 0; i < gp.node_size(); ++i) {
    Status s = ExpandNode(gp.node(i), i, ctx, 0, &store, &nodes);
    if (!s.ok()) return s.WithContext(gname);
  }

  // Producers, and the names visible to subgraphs.
  const size_t n = nodes.size();
  std::unordered_map<std::string, size_t> producer;
  producer.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& o : nodes[i]->output()) {
      if (o.empty()) continue;
      auto [it, inserted] = producer.emplace(o, i);
      if (!inserted)
        return InvalidInput(gname + ": tensor '" + o + "' is produced twice, by " +
                            NodeLabel(*nodes[it->second], static_cast<int>(it->second)) +
                            " and " + NodeLabel(*nodes[i], static_cast<int>(i)));
      const TensorInfo* t = out->Find(o);
      if (t && (t->is_initializer || t->is_graph_input))
        return InvalidInput(gname + ": " + NodeLabel(*nodes[i], static_cast<int>(i)) +
                            " writes '" + o + "', which is a graph input or initializer");
    }
  }
  bool has_subgraphs = false;
  for (const auto* node : nodes)
    for (const auto& a : node->attribute())
      if (a.has_g() || a.graphs_size() > 0) has_subgraphs = true;
  std::unordered_set<std::string> visible;
  if (has_subgraphs) {
    visible = outer;
    for (const auto& [name, t] : out->tensors) visible.insert(name);
    for (const auto& [name, i] : producer) visible.insert(name);
  }

  // Convert nodes; collect each node's dependencies (inputs plus names its subgraphs use).
  std::vector<Op> ops(n);
  std::vector<std::vector<std::string>> deps(n);
  for (size_t i = 0; i < n; ++i) {
    const onnx::NodeProto& np = *nodes[i];
    Op& op = ops[i];
    op.type = np.op_type();
    op.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    op.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
    op.scope = ScopeOf(np.name());
    op.inputs.assign(np.input().begin(), np.input().end());
    op.outputs.assign(np.output().begin(), np.output().end());
    if (op.type.empty())
      return InvalidInput(gname + ": " + NodeLabel(np, static_cast<int>(i)) + " has no op_type");
    std::set<std::string> sub_free;
    for (const auto& a : np.attribute()) {
      Attribute attr;
      Status s = ConvertAttribute(a, NodeLabel(np, static_cast<int>(i)), ctx, visible, depth,
                                  &attr, &sub_free);
      if (!s.ok()) return s.WithContext(gname);
      op.attrs[a.name()] = std::move(attr);
    }
    deps[i] = op.inputs;
    deps[i].insert(deps[i].end(), sub_free.begin(), sub_free.end());
  }

  // Topological order (stable: keeps file order where it is already valid). Kahn's algorithm.
  std::vector<std::vector<size_t>> users(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& in : deps[i]) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++pending[i];
        continue;
      }
      const TensorInfo* t = out->Find(in);
      if (t && (t->is_initializer || t->is_graph_input)) continue;
      if (outer.count(in)) {
        free_names->insert(in);
        continue;
      }
      return InvalidInput(gname + ": " + NodeLabel(*nodes[i], static_cast<int>(i)) +
                          ": input '" + in +
                          "' is produced by no node and is neither a graph input nor an "
                          "initializer");
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) continue;
      for (const std::string& in : deps[i]) {
        auto it = producer.find(in);
        if (it != producer.end() && pending[it->second] > 0)
          return InvalidInput(gname + ": cycle: " + NodeLabel(*nodes[i], static_cast<int>(i)) +
                              " needs '" + in + "', which depends on its own output");
      }
    }
    return InvalidInput(gname + ": the nodes form a cycle");
  }
  out->ops.reserve(n);
  for (size_t i : order) {
    for (const std::string& o : ops[i].outputs)
      if (!o.empty()) out->Tensor(o);
    out->ops.push_back(std::move(ops[i]));
  }
  for (const std::string& o : out->outputs) {
    if (o.empty()) continue;
    const TensorInfo* t = out->Find(o);
    bool known = producer.count(o) || (t && (t->is_initializer || t->is_graph_input));
    if (!known) {
      if (outer.count(o)) {
        free_names->insert(o);
        continue;
      }
      return InvalidInput(gname + ": output '" + o + "' is produced by no node");
    }
  }
  return Status::Ok();
}

Expected<Graph> LoadSlimmed(const uint8_t* data, size_t size, const std::string& source,
                            const OnnxLoadOptions& options) {
  if (size == 0) return InvalidInput(source + ": empty file (0 bytes); not an ONNX model");
  SlimStats stats;
  WireSlimmer slimmer(data, options.max_kept_payload_bytes, &stats);
  std::string slim;
  if (!slimmer.Slim(0, size, Msg::kModel, 0, &slim))
    return InvalidInput(source + ": not an ONNX model: invalid protobuf data (" +
                        slimmer.error() + "; truncated file, or not a .onnx file?)");
  if (slim.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return Unsupported(source + ": the model structure (without weights) exceeds 2 GiB");
  onnx::ModelProto model;
  if (!model.ParseFromString(slim))
    return InvalidInput(source + ": not an ONNX model: the protobuf does not match ONNX's "
                        "ModelProto schema (wrong field types)");
  std::string().swap(slim);
  if (!model.has_graph())
    return InvalidInput(source + ": not an ONNX model: field 'graph' is missing");
  if (model.ir_version() <= 0)
    return InvalidInput(source + ": not an ONNX model: field 'ir_version' is missing or " +
                        std::to_string(model.ir_version()));

  Graph g;
  g.source = source;
  for (const auto& os : model.opset_import()) {
    std::string d = os.domain() == "ai.onnx" ? "" : os.domain();
    g.opset[d] = os.version();
  }
  if (model.opset_import_size() == 0) g.opset[""] = 1;  // IR 1-2 without imports
  Ctx ctx{options, source, {}, &g.warnings};
  for (const auto& f : model.functions()) {
    std::string d = f.domain() == "ai.onnx" ? "" : f.domain();
    ctx.functions[{d, f.name()}] = &f;
    for (const auto& os : f.opset_import()) {
      std::string od = os.domain() == "ai.onnx" ? "" : os.domain();
      if (!g.opset.count(od)) g.opset[od] = os.version();
    }
  }
  std::set<std::string> free_names;
  Status s = ConvertGraph(model.graph(), ctx, {}, 0, &g, &free_names);
  if (!s.ok()) return s.WithContext(source);
  return g;
}

}  // namespace

Status OnnxLoadOptions::Validate() const {
  if (max_int_constant_elements < 0 || max_kept_payload_bytes < 0)
    return InvalidInput("onnx load options: negative limits");
  if (max_kept_payload_bytes < max_int_constant_elements * 8)
    return InvalidInput("onnx load options: max_kept_payload_bytes must hold "
                        "max_int_constant_elements int64 values");
  if (max_subgraph_depth < 1 || max_function_depth < 1)
    return InvalidInput("onnx load options: nesting limits must be >= 1");
  return Status::Ok();
}

bool OnnxLoaderAvailable() { return true; }

Expected<Graph> LoadOnnxBuffer(const void* data, size_t size, const std::string& source,
                               const OnnxLoadOptions& options) {
  Status v = options.Validate();
  if (!v.ok()) return v;
  return LoadSlimmed(static_cast<const uint8_t*>(data), size, source, options);
}

Expected<Graph> LoadOnnxFile(const std::string& path, const OnnxLoadOptions& options) {
  Status v = options.Validate();
  if (!v.ok()) return v;
  // O_NONBLOCK: a FIFO is refused below instead of waiting for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return InvalidInput(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidInput(path + (S_ISDIR(st.st_mode) ? ": is a directory, not a model file"
                                                    : ": not a regular file (a FIFO, socket or device)"));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return InvalidInput(path + ": empty file (0 bytes); not an ONNX model");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return InvalidInput(path + ": cannot map file: " + std::strerror(errno));
  Expected<Graph> g = LoadSlimmed(static_cast<const uint8_t*>(map), size, path, options);
  ::munmap(map, size);
  return g;
}

}  // namespace ftax
