// The TorchScript front end on LibTorch (see torchscript_loader.h). The shape rules for aten
// ops live in torchscript_shapes_torch.cc; this file walks the module: method calls, attributes,
// constants, lists and tuples, integer shape arithmetic, If and Loop.
#include "graph/torchscript_loader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/library.h>
#include <torch/script.h>
#include <torch/version.h>

#include "graph/torchscript_shapes.h"

#if TORCH_VERSION_MAJOR < 2
// LibTorch 1.x has no aten::scaled_dot_product_attention (PyTorch 2.0 added it), which traces
// of torch 2.x transformers call in every layer. ftax never runs the op (its own shape rule
// gives the output), so declaring the 2.x schema is all torch::jit::load needs to resolve the
// call in such a file.
TORCH_LIBRARY_FRAGMENT(aten, m) {
  m.def("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
        "attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
        "bool enable_gqa=False) -> Tensor");
}
#endif

namespace ftax {

bool TorchScriptLoaderAvailable() { return true; }

struct TorchScriptModel::Impl {
  std::string path;
  torch::jit::Module module;
  std::vector<std::string> inputs;
  std::unordered_set<std::string> parameters;  // "m.encoder.layer.0.attention.self.query.weight"
};

namespace {

using ts::Val;

std::string StripSuffix(std::string name) {  // "attention_mask.1" -> "attention_mask"
  auto dot = name.rfind('.');
  if (dot != std::string::npos && dot + 1 < name.size() &&
      std::all_of(name.begin() + dot + 1, name.end(), ::isdigit))
    name.resize(dot);
  return name;
}

bool LooksIntegerInput(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  for (const char* key : {"ids", "mask", "position", "index", "indices", "token"})
    if (n.find(key) != std::string::npos) return true;
  return false;
}

class Walker {
 public:
  Walker(Graph* g, const TorchScriptWalkOptions& o, const std::unordered_set<std::string>& params)
      : g_(g), opt_(o), shapes_(g), params_(params) {}

  Status CallMethod(const torch::jit::Module& m, const std::string& path,
                    const std::string& method, const std::vector<Val>& args,
                    std::vector<Val>* results) {
    if (++depth_ > 256) return InvalidInput("method calls nested deeper than 256");
    auto meth = m.find_method(method);
    if (!meth) return InvalidInput("module '" + path + "' has no method '" + method + "'");
    std::vector<Val> all = {Val::Module(m, path)};  // self
    all.insert(all.end(), args.begin(), args.end());
    Status s = CallGraph(*meth->graph(), m, path, method, all, results);
    --depth_;
    return s;
  }

 private:
  // Walks `graph` with `args` bound to its inputs (self first for a method); ops it holds are
  // attributed to the module at `path`.
  Status CallGraph(torch::jit::Graph& graph, const torch::jit::Module& m, const std::string& path,
                   const std::string& name, const std::vector<Val>& args, std::vector<Val>* results) {
    if (++depth_ > 256) return InvalidInput("calls nested deeper than 256");
    Frame f;
    f.path = path;
    f.module = m;
    auto ins = graph.inputs();
    if (ins.size() != args.size())
      return InvalidInput("call of " + (path.empty() ? name : path + "." + name) + ": " +
                          std::to_string(args.size()) + " arguments, it takes " + std::to_string(ins.size()));
    for (size_t i = 0; i < args.size(); ++i) f.vals[ins[i]] = args[i];
    Status s = WalkBlock(graph.block(), f);
    if (!s.ok()) return s;
    results->clear();
    for (torch::jit::Value* out : graph.outputs()) results->push_back(f.Get(out));
    --depth_;
    return Status::Ok();
  }

  struct Frame {
    std::string path;
    torch::jit::Module module;
    std::unordered_map<const torch::jit::Value*, Val> vals;
    Val Get(const torch::jit::Value* v) const {
      auto it = vals.find(v);
      return it == vals.end() ? Val() : it->second;
    }
  };

  static std::string NodeText(const torch::jit::Node* n) {
    std::string outs;
    for (const torch::jit::Value* o : n->outputs()) outs += (outs.empty() ? "%" : ", %") + o->debugName();
    return (outs.empty() ? "" : outs + " = ") + n->kind().toQualString();
  }

  Status Fail(const torch::jit::Node* n, const Frame& f, const std::string& why) {
    return InvalidInput("node '" + NodeText(n) + "' in module '" + (f.path.empty() ? "<top>" : f.path) +
                        "': " + why);
  }

  Status WalkBlock(torch::jit::Block* b, Frame& f) {
    for (torch::jit::Node* n : b->nodes()) {
      Status s = WalkNode(n, f);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  std::string Scope(const std::string& path) const {
    // "m.encoder.layer.0.attention" -> "/m/encoder/layer.0/attention"
    std::string out;
    size_t start = 0;
    while (start <= path.size() && !path.empty()) {
      size_t dot = path.find('.', start);
      std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
      out += (numeric && !out.empty() ? "." : "/") + part;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return out;
  }

  Status WalkNode(torch::jit::Node* n, Frame& f) {
    const torch::jit::Symbol kind = n->kind();
    const std::string k = kind.toQualString();
    std::vector<Val> in;
    in.reserve(n->inputs().size());
    for (const torch::jit::Value* v : n->inputs()) in.push_back(f.Get(v));
    auto set1 = [&](Val v) {
      if (!n->outputs().empty()) f.vals[n->outputs()[0]] = std::move(v);
      return Status::Ok();
    };

    if (k == "prim::Constant") {
      auto iv = torch::jit::toIValue(n->output());
      if (!iv) return set1(Val());
      return set1(FromIValue(*iv, "constant"));
    }
    if (k == "prim::GetAttr") {
      const std::string name = n->s(torch::jit::attr::name);
      if (in.empty() || in[0].kind != Val::kModule) return Fail(n, f, "attribute of a non-module");
      const torch::jit::Module& owner = *in[0].module;
      if (!owner.hasattr(name)) return Fail(n, f, "module has no attribute '" + name + "'");
      c10::IValue iv = owner.attr(name);
      const std::string path = in[0].path.empty() ? name : in[0].path + "." + name;
      if (iv.isModule()) return set1(Val::Module(iv.toModule(), path));
      return set1(FromIValue(iv, path));
    }
    if (k == "prim::CallMethod") {
      if (in.empty() || in[0].kind != Val::kModule) return Fail(n, f, "method call on a non-module");
      std::vector<Val> args(in.begin() + 1, in.end());
      std::vector<Val> res;
      Status s = CallMethod(*in[0].module, in[0].path, n->s(torch::jit::attr::name), args, &res);
      if (!s.ok()) return s;
      for (size_t i = 0; i < n->outputs().size() && i < res.size(); ++i) f.vals[n->outputs()[i]] = res[i];
      return Status::Ok();
    }
    if (k == "prim::CallFunction") {
      // A free TorchScript function (a @torch.jit.script helper a traced model calls, as
      // DeBERTa's relative positions are): walked like a method, with no module of its own.
      auto ft = n->inputs().empty() ? nullptr : n->input(0)->type()->cast<c10::FunctionType>();
      if (!ft) return Fail(n, f, "call of something that is not a TorchScript function");
      auto* fn = dynamic_cast<torch::jit::GraphFunction*>(ft->function());
      if (!fn) return Fail(n, f, "call of a function that has no TorchScript graph");
      std::vector<Val> args(in.begin() + 1, in.end());
      std::vector<Val> res;
      Status s = CallGraph(*fn->graph(), f.module, f.path, fn->name(), args, &res);
      if (!s.ok()) return s;
      for (size_t i = 0; i < n->outputs().size() && i < res.size(); ++i) f.vals[n->outputs()[i]] = res[i];
      return Status::Ok();
    }
    if (k == "prim::ListConstruct" || k == "prim::TupleConstruct") return set1(Val::List(in));
    if (k == "prim::DictConstruct") {
      std::vector<Val> values;
      for (size_t i = 1; i < in.size(); i += 2) values.push_back(in[i]);
      return set1(Val::List(values));
    }
    if (k == "prim::ListUnpack" || k == "prim::TupleUnpack") {
      if (in.empty() || in[0].kind != Val::kList) return Fail(n, f, "unpacking a non-list");
      if (in[0].items.size() != n->outputs().size())
        return Fail(n, f, "list of " + std::to_string(in[0].items.size()) + " unpacked into " +
                              std::to_string(n->outputs().size()));
      for (size_t i = 0; i < n->outputs().size(); ++i) f.vals[n->outputs()[i]] = in[0].items[i];
      return Status::Ok();
    }
    if (k == "prim::TupleIndex" || k == "aten::__getitem__" || k == "prim::ListIndex") {
      if (in.size() < 2 || in[0].kind != Val::kList || in[1].kind != Val::kInt)
        return Fail(n, f, "index into a list that is not known");
      int64_t i = in[1].i < 0 ? in[1].i + static_cast<int64_t>(in[0].items.size()) : in[1].i;
      if (i < 0 || i >= static_cast<int64_t>(in[0].items.size())) return Fail(n, f, "index out of range");
      return set1(in[0].items[static_cast<size_t>(i)]);
    }
    if (k == "aten::len") {
      if (in.empty() || in[0].kind != Val::kList) return set1(Val());
      return set1(Val::Int(static_cast<int64_t>(in[0].items.size())));
    }
    if (k == "prim::If") return WalkIf(n, f, in);
    if (k == "prim::Loop") return WalkLoop(n, f, in);
    if (k == "prim::RaiseException" || k == "aten::warn" || k == "prim::Print") return Status::Ok();
    if (k == "prim::unchecked_cast" || k == "prim::TupleSlice") return set1(in.empty() ? Val() : in[0]);
    if (k == "prim::Uninitialized" || k == "prim::device" || k == "prim::dtype" ||
        k == "prim::layout" || k == "prim::requires_grad" || k == "prim::is_cuda")
      return set1(ts::PrimScalar(k, in, *g_));
    if (k == "prim::NumToTensor") return set1(shapes_.NumToTensor(in.empty() ? Val() : in[0]));
    if (k == "aten::__is__" || k == "aten::__isnot__") {
      if (in.size() < 2) return set1(Val());
      bool none0 = in[0].kind == Val::kNone, none1 = in[1].kind == Val::kNone;
      if (none1 || none0) return set1(Val::Bool((none0 == none1) == (k == "aten::__is__")));
      return set1(Val());
    }

    // Scalar arithmetic and tensor-to-scalar conversions (integer shape math).
    if (kind.is_aten()) {
      Expected<std::optional<Val>> scalar = shapes_.ScalarOp(k, in);
      if (!scalar.ok()) return Fail(n, f, scalar.status().message());
      if (scalar->has_value()) return set1(*scalar.value());
      return EmitAten(n, f, k, in);
    }
    return Fail(n, f, "unsupported node kind '" + k + "'");
  }

  Status EmitAten(torch::jit::Node* n, Frame& f, const std::string& k, const std::vector<Val>& in) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema) return Fail(n, f, "no operator schema for '" + k + "'");
    ts::Call call;
    call.op = k.substr(6);
    call.overload = schema->overload_name();
    const auto& args = schema->arguments();
    for (size_t i = 0; i < in.size(); ++i)
      call.args.emplace_back(i < args.size() ? args[i].name() : "arg" + std::to_string(i), in[i]);
    call.num_outputs = n->outputs().size();
    for (const torch::jit::Value* o : n->outputs())
      call.output_is_list.push_back(o->type()->kind() == c10::TypeKind::ListType);

    Expected<std::vector<Val>> outs = shapes_.Infer(call);
    bool by_meta = false;
    if (!outs.ok() && outs.status().code() == ErrorCode::kUnsupported) {
      outs = shapes_.RunMeta(n, call);
      by_meta = true;
      if (!outs.ok())
        return Fail(n, f, "no shape rule for '" + k + "', and running it on the meta device failed: " +
                              outs.status().message());
      meta_ops_[k]++;
    }
    if (!outs.ok()) return Fail(n, f, outs.status().message());
    if (opt_.cross_check_with_meta && !by_meta) {
      Expected<std::vector<Val>> meta = shapes_.RunMeta(n, call);
      if (meta.ok()) {
        std::string diff = shapes_.Compare(outs.value(), meta.value());
        if (!diff.empty()) g_->warnings.push_back("shape rule of '" + k + "' disagrees with LibTorch's meta kernel at " + Scope(f.path) + ": " + diff);
      }
    }

    // Record the op (anything that takes or makes a tensor is a dispatch).
    Op op;
    op.type = call.op;
    op.domain = "aten";
    op.scope = Scope(f.path);
    int& count = name_counts_[op.scope + "/" + op.type];
    op.name = op.scope + "/" + op.type + (count ? "_" + std::to_string(count) : "");
    ++count;
    for (const auto& [name, v] : call.args) {
      if (v.kind == Val::kTensor) {
        op.inputs.push_back(v.tensor);
      } else if (v.kind == Val::kList && !v.items.empty() && v.items[0].kind == Val::kTensor) {
        for (const Val& t : v.items) op.inputs.push_back(t.kind == Val::kTensor ? t.tensor : "");
      } else if (v.kind == Val::kNone && IsTensorArg(schema, name)) {
        op.inputs.emplace_back();
      } else {
        ts::SetAttr(&op, name, v);
      }
    }
    while (!op.inputs.empty() && op.inputs.back().empty()) op.inputs.pop_back();
    bool makes_tensor = false;
    for (size_t i = 0; i < outs->size(); ++i) {
      const Val& o = outs.value()[i];
      if (o.kind == Val::kTensor) {
        op.outputs.push_back(o.tensor);
        makes_tensor = true;
      } else if (o.kind == Val::kList) {
        for (const Val& t : o.items)
          if (t.kind == Val::kTensor) {
            op.outputs.push_back(t.tensor);
            makes_tensor = true;
          }
      }
      if (i < n->outputs().size()) f.vals[n->outputs()[i]] = o;
    }
    if (makes_tensor) g_->ops.push_back(std::move(op));
    return Status::Ok();
  }

  static bool IsTensorArg(const c10::FunctionSchema* s, const std::string& name) {
    for (const auto& a : s->arguments())
      if (a.name() == name) {
        c10::TypePtr t = a.type();
        if (t->kind() == c10::TypeKind::OptionalType) t = t->containedTypes()[0];
        return t->kind() == c10::TypeKind::TensorType;
      }
    return false;
  }

  Status WalkIf(torch::jit::Node* n, Frame& f, const std::vector<Val>& in) {
    auto blocks = n->blocks();
    if (blocks.size() != 2) return Fail(n, f, "If without two blocks");
    int taken = -1;
    if (!in.empty() && in[0].kind == Val::kBool) taken = in[0].b ? 0 : 1;
    if (!in.empty() && in[0].kind == Val::kInt) taken = in[0].i ? 0 : 1;
    if (taken < 0) {
      // Unknown condition: walk both, keep the branch with more ops (an upper bound).
      size_t before = g_->ops.size();
      Status s = WalkBlock(blocks[0], f);
      if (!s.ok()) return s;
      std::vector<Op> first(g_->ops.begin() + static_cast<long>(before), g_->ops.end());
      g_->ops.resize(before);
      s = WalkBlock(blocks[1], f);
      if (!s.ok()) return s;
      taken = 1;
      if (first.size() > g_->ops.size() - before) {
        g_->ops.resize(before);
        g_->ops.insert(g_->ops.end(), first.begin(), first.end());
        taken = 0;
      }
      g_->warnings.push_back("If at " + Scope(f.path) + ": condition not known from shapes; counted the branch with more ops");
    } else {
      Status s = WalkBlock(blocks[static_cast<size_t>(taken)], f);
      if (!s.ok()) return s;
    }
    auto outs = blocks[static_cast<size_t>(taken)]->outputs();
    for (size_t i = 0; i < n->outputs().size() && i < outs.size(); ++i) f.vals[n->outputs()[i]] = f.Get(outs[i]);
    return Status::Ok();
  }

  Status WalkLoop(torch::jit::Node* n, Frame& f, const std::vector<Val>& in) {
    // prim::Loop(max_trip_count, initial_condition, carried...) with body block
    // (iteration, carried...) -> (condition, carried...).
    if (in.size() < 2 || in[0].kind != Val::kInt)
      return Fail(n, f, "loop trip count is not known from shapes");
    torch::jit::Block* body = n->blocks()[0];
    std::vector<Val> carried(in.begin() + 2, in.end());
    bool cond = in[1].kind != Val::kBool || in[1].b;
    for (int64_t it = 0; it < in[0].i && cond; ++it) {
      if (++loop_iterations_ > opt_.max_loop_iterations)
        return Fail(n, f, "loop runs more than " + std::to_string(opt_.max_loop_iterations) + " iterations in all");
      auto bin = body->inputs();
      f.vals[bin[0]] = Val::Int(it);
      for (size_t i = 0; i + 1 < bin.size() && i < carried.size(); ++i) f.vals[bin[i + 1]] = carried[i];
      Status s = WalkBlock(body, f);
      if (!s.ok()) return s;
      auto bout = body->outputs();
      Val c = f.Get(bout[0]);
      cond = c.kind != Val::kBool || c.b;
      for (size_t i = 0; i + 1 < bout.size() && i < carried.size(); ++i) carried[i] = f.Get(bout[i + 1]);
    }
    for (size_t i = 0; i < n->outputs().size() && i < carried.size(); ++i) f.vals[n->outputs()[i]] = carried[i];
    return Status::Ok();
  }

  Val FromIValue(const c10::IValue& iv, const std::string& name) {
    if (iv.isNone()) return Val::None();
    if (iv.isBool()) return Val::Bool(iv.toBool());
    if (iv.isInt()) return Val::Int(iv.toInt());
    if (iv.isDouble()) return Val::Double(iv.toDouble());
    if (iv.isString()) return Val::Str(iv.toStringRef());
    if (iv.isTensor()) return shapes_.ConstantTensor(iv.toTensor(), name, params_.count(name) > 0);
    if (iv.isList()) {
      std::vector<Val> items;
      size_t i = 0;
      for (const c10::IValue& e : iv.toListRef()) items.push_back(FromIValue(e, name + "." + std::to_string(i++)));
      return Val::List(items);
    }
    if (iv.isTuple()) {
      std::vector<Val> items;
      size_t i = 0;
      for (const c10::IValue& e : iv.toTupleRef().elements())
        items.push_back(FromIValue(e, name + "." + std::to_string(i++)));
      return Val::List(items);
    }
    if (iv.isDevice()) return Val::Str(iv.toDevice().str());
    return Val();
  }

  Graph* g_;
  TorchScriptWalkOptions opt_;
  ts::ShapeRules shapes_;
  const std::unordered_set<std::string>& params_;  // paths of the module's parameters
  std::unordered_map<std::string, int> name_counts_;
  std::map<std::string, int> meta_ops_;
  int depth_ = 0;
  int loop_iterations_ = 0;

 public:
  const std::map<std::string, int>& meta_ops() const { return meta_ops_; }
};

}  // namespace

Expected<TorchScriptModel> TorchScriptModel::Load(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  try {
    impl->module = torch::jit::load(path, c10::Device(c10::kCPU));
    impl->module.eval();
  } catch (const std::exception& e) {
    std::string what = ts::FirstLine(e.what());
    if (what.find("Unknown builtin op") != std::string::npos)
      what += " (this ftax runs on LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
              std::to_string(TORCH_VERSION_MINOR) +
              ", which lacks an op the file uses; build ftax against the LibTorch that traced it)";
    return InvalidInput(path + ": not a loadable TorchScript file: " + what);
  }
  auto fwd = impl->module.find_method("forward");
  if (!fwd) return InvalidInput(path + ": the module has no forward method");
  const auto& args = fwd->function().getSchema().arguments();
  for (size_t i = 1; i < args.size(); ++i) impl->inputs.push_back(StripSuffix(args[i].name()));
  for (const auto& p : impl->module.named_parameters(/*recurse=*/true)) impl->parameters.insert(p.name);
  TorchScriptModel m;
  m.impl_ = impl;
  return m;
}

const std::vector<std::string>& TorchScriptModel::input_names() const { return impl_->inputs; }
const std::string& TorchScriptModel::path() const { return impl_->path; }

Expected<Graph> TorchScriptModel::Walk(const std::vector<InputShapeFlag>& flags,
                                       const TorchScriptWalkOptions& options) const {
  Graph g;
  g.source = impl_->path;
  g.name = impl_->module.type()->name() ? impl_->module.type()->name()->name() : "module";
  const auto& names = impl_->inputs;
  auto list = [&] {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  // Match flags to forward's arguments.
  std::vector<const InputShapeFlag*> by_input(names.size(), nullptr);
  for (const InputShapeFlag& f : flags) {
    if (!f.symbols.empty())
      for (const std::string& s : f.symbols)
        if (!s.empty())
          return InvalidInput("--input-shape: symbolic dim '" + s + "' has no value (give --dim " + s + "=N)");
    size_t idx = names.size();
    if (f.input.empty()) {
      if (names.size() != 1)
        return InvalidInput(impl_->path + ": --input-shape without a NAME=, but forward takes " +
                            std::to_string(names.size()) + " inputs (" + list() + ")");
      idx = 0;
    } else {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == f.input) idx = i;
      if (idx == names.size())
        return InvalidInput(impl_->path + ": --input-shape: forward has no input named '" + f.input +
                            "' (inputs: " + list() + ")");
    }
    if (by_input[idx]) return InvalidInput("--input-shape: input '" + names[idx] + "' given twice");
    by_input[idx] = &f;
  }
  // The model's floating-point type: its first floating parameter's.
  DType float_type = DType::kFloat32;
  for (const at::Tensor& p : impl_->module.parameters()) {
    if (p.is_floating_point()) {
      float_type = ts::FromScalarType(p.scalar_type());
      break;
    }
  }
  std::vector<Val> args;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!by_input[i])
      return InvalidInput(impl_->path + ": TorchScript files carry no input shapes; give " +
                          "--input-shape NAME=DIMS for every input of forward (" + list() +
                          "), e.g. --input-shape " + names[i] + "=1x128");
    const InputShapeFlag& f = *by_input[i];
    TensorInfo& t = g.Tensor(names[i]);
    t.dtype = f.dtype ? *f.dtype : (LooksIntegerInput(names[i]) ? DType::kInt64 : float_type);
    t.has_shape = true;
    for (int64_t d : f.dims) t.shape.push_back(Dim::Known(d));
    t.is_graph_input = true;
    g.inputs.push_back(names[i]);
    args.push_back(Val::Tensor(names[i]));
  }
  Walker w(&g, options, impl_->parameters);
  std::vector<Val> results;
  try {
    Status s = w.CallMethod(impl_->module, "", "forward", args, &results);
    if (!s.ok()) return s.WithContext(impl_->path);
  } catch (const std::exception& e) {
    return InvalidInput(impl_->path + ": LibTorch error while walking the graph: " + ts::FirstLine(e.what()));
  }
  std::vector<Val> stack = results;
  while (!stack.empty()) {
    Val v = stack.back();
    stack.pop_back();
    if (v.kind == Val::kTensor) g.outputs.insert(g.outputs.begin(), v.tensor);
    for (auto it = v.items.rbegin(); it != v.items.rend(); ++it) stack.push_back(*it);
  }
  for (const auto& [op, count] : w.meta_ops())
    g.warnings.push_back(op + ": no ftax shape rule; shapes of " + std::to_string(count) +
                         " node(s) from LibTorch's meta kernels");
  return g;
}

}  // namespace ftax
