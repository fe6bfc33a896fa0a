#include "predictor/lowering.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "graph/op_cost.h"
#include "predictor/inductor_fusion.h"
#include "predictor/lowering_rules.h"

namespace ftax {
namespace {

bool IsFloat(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat64 || t == DType::kUnknown;
}

// Comparisons with a literal, inline (std::string == const char* calls an out-of-line
// compare, and the walker makes several per op).
inline bool Eq(const std::string& s, std::string_view lit) { return std::string_view(s) == lit; }
inline bool IsAten(const std::string& domain) { return Eq(domain, "aten"); }

enum class LayoutKind { kOther, kTranspose, kReshape, kContiguous };

// ATen ops whose outputs are slices of their input (views, in general not contiguous).
bool IsSlicing(const std::string& type) {
  static const std::set<std::string, std::less<>> kSlicing = {
      "slice", "chunk", "split", "split_with_sizes", "unsafe_chunk", "unsafe_split", "narrow",
      "select", "unbind", "tensor_split", "as_strided"};
  return kSlicing.count(type) > 0;
}


// Windowed pooling (ATen's max_pool2d and avg_pool2d kernels, ONNX MaxPool and AveragePool);
// global and adaptive pooling is a plain reduction.
bool IsWindowPool(const std::string& type) {
  static const std::set<std::string, std::less<>> kPools = {
      "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "avg_pool1d",
      "avg_pool2d", "avg_pool3d", "MaxPool", "AveragePool", "LpPool"};
  return kPools.count(type) > 0;
}

// A convolution that cuts the input image into non-overlapping patches: at most 4 input
// channels, its stride equal to its kernel (> 1) along every spatial dim (ViT's patch
// embedding, ConvNeXt's and Swin's stems). cuDNN runs it with a kernel of its own, several
// times slower than a downsampling layer of the same GEMM shape over many channels (a 2x2
// stride-2 convolution of 192 channels), which stays a plain convolution. ONNX names the
// attribute "strides", ATen's argument "stride"; a single value applies to every dim.
bool IsPatchify(const Op& op, const Shape& weight) {
  if (weight.size() < 3 || weight[1].value > 4) return false;
  std::vector<int64_t> stride = op.IntsAttr("strides");
  if (stride.empty()) stride = op.IntsAttr("stride");
  const size_t spatial = weight.size() - 2;
  if (stride.size() == 1 && spatial > 1) stride.assign(spatial, stride[0]);
  if (stride.size() != spatial || spatial == 0) return false;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = weight[i + 2].value;
    if (k <= 1 || stride[i] != k) return false;
  }
  return true;
}
// How an op type changes memory layout (looked up once per op; no hashing: the length picks
// the few names to compare).
LayoutKind Layout(const std::string& type) {
  const std::string_view t(type);
  switch (t.size()) {
    case 1: return t == "t" ? LayoutKind::kTranspose : LayoutKind::kOther;
    case 4: return t == "view" ? LayoutKind::kReshape : LayoutKind::kOther;
    case 7:
      if (t == "permute" || t == "reshape" || t == "flatten" || t == "Reshape" || t == "Flatten")
        return t == "permute" ? LayoutKind::kTranspose : LayoutKind::kReshape;
      return LayoutKind::kOther;
    case 9: return t == "transpose" || t == "Transpose" ? LayoutKind::kTranspose : LayoutKind::kOther;
    case 10: return t == "contiguous" ? LayoutKind::kContiguous : LayoutKind::kOther;
    default: return LayoutKind::kOther;
  }
}

// A set of pointers (open addressing, grown by doubling): the walker's sets of tensors, kept
// as their tensor-map entries so that a lookup hashes no name.
class PointerSet {
 public:
  bool empty() const { return size_ == 0; }
  bool contains(const void* p) const {
    if (size_ == 0) return false;
    const size_t mask = slots_.size() - 1;
    for (size_t i = Slot(p, mask);; i = (i + 1) & mask) {
      if (slots_[i] == p) return true;
      if (!slots_[i]) return false;
    }
  }
  void insert(const void* p) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = Slot(p, mask);; i = (i + 1) & mask) {
      if (slots_[i] == p) return;
      if (!slots_[i]) {
        slots_[i] = p;
        ++size_;
        return;
      }
    }
  }

 private:
  static size_t Slot(const void* p, size_t mask) {
    uint64_t x = uint64_t(reinterpret_cast<uintptr_t>(p));
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return size_t(x >> 32) & mask;
  }
  void Grow() {
    std::vector<const void*> old(slots_.size() ? slots_.size() * 2 : 64, nullptr);
    old.swap(slots_);
    size_ = 0;
    for (const void* p : old)
      if (p) insert(p);
  }
  std::vector<const void*> slots_;
  size_t size_ = 0;
};

class Walker {
 public:
  // An exported attention: its operands and whether a mask was added to the scores.
  struct OnnxAttention {
    std::string q, k, v;  // q [.., Sq, d], k transposed [.., d, Sk], v [.., Sk, dv]
    std::string scores;   // [.., Sq, Sk]
    bool masked = false;
    std::vector<int> members;  // the ops folded into it (its last MatMul not among them)
  };

  // An op type's rule and dispatch-cost key, looked up once per walk (RuleFor).
  struct RuleSlot {
    const std::string* type = nullptr;
    const std::string* domain = nullptr;
    const LoweringRule* rule = nullptr;
    const std::string* cost_key = nullptr;
  };

  Walker(const Graph& g, const LoweringOptions& o) : g_(g), opt_(o) {}

  Expected<WorkList> Run() {
    const bool any_onnx = std::any_of(g_.ops.begin(), g_.ops.end(),
                                      [](const Op& op) { return !IsAten(op.domain); });
    // Producers are needed only to fold ONNX bias Adds into MatMuls.
    if (any_onnx)
      for (const Op& op : g_.ops) producer_[op.outputs.empty() ? "" : op.outputs[0]] = &op;
    if (!producer_.empty()) {
      IndexReaders();
      FindOnnxGelus();
      FindScatterIndexOps();
      FindOnnxAttentions();
      if (!attention_.empty()) FindPackedQkvSplits();
    }
    // A trace made on the GPU names it wherever the code gave a device (a .to(), a factory's
    // device=); one made on the CPU names only the CPU, and says nothing of where the model's
    // tensors will live, so its factories' devices are not read (HostPlacement).
    gpu_trace_ = std::any_of(g_.ops.begin(), g_.ops.end(), [](const Op& op) {
      return IsAten(op.domain) && op.StringAttr("device", "").rfind("cuda", 0) == 0;
    });
    work_.dispatches.reserve(g_.ops.size());
    work_.kernels.reserve(g_.ops.size());
    const bool any_gelu = !gelu_member_.empty() || !gelu_input_.empty();
    const bool any_attention = !attention_.empty();
    if (IsTorchCompile(opt_.framework)) inductor_channels_last_ = InductorRunsConvsChannelsLast();
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (!scatter_member_.empty() && scatter_member_.count(int(i))) continue;  // a slice assignment's indices
      if (any_attention) {
        // Folded into its attention's last MatMul, or a packed q, k, v split (no work).
        if (attention_member_.count(int(i))) continue;
        if (split_member_.count(int(i))) {
          // No work, but q, k and v are views of the split's layout (TrackBatchStrided).
          TrackBatchStrided(g_.ops[i], Layout(g_.ops[i].type), /*is_view_like=*/false);
          continue;
        }
        auto a = attention_.find(int(i));
        if (a != attention_.end()) {
          Status s = LowerOnnxAttention(int(i), g_.ops[i], a->second);
          if (!s.ok()) return s;
          continue;
        }
      }
      if (any_gelu) {
        if (gelu_member_.count(int(i))) continue;  // folded into its GELU's last op
        auto gelu = gelu_input_.find(int(i));
        if (gelu != gelu_input_.end()) {
          Status s = LowerGelu(int(i), g_.ops[i], *gelu->second);
          if (!s.ok()) return s;
          continue;
        }
      }
      Status s = LowerOp(int(i), g_.ops[i]);
      if (!s.ok()) return s;
    }
    MergeMhaDispatches();
    if (opt_.framework == Framework::kTorchscript || opt_.framework == Framework::kCudaGraph) FuseElementwiseChains();
    // Python eager calls each module's forward; torch.compile checks each module's guards every
    // call (in both modes).
    const bool counts_modules = IsPythonEager(opt_.framework) || IsTorchCompile(opt_.framework);
    work_.module_calls = counts_modules ? CountModuleCalls(g_) : 0;
    if (counts_modules && work_.module_calls <= 1) {
      // No scopes: the modules the parameters' names imply (a dynamo ONNX export).
      const int from_names = ModuleCallsFromParameterNames(g_);
      if (from_names > 1) {
        work_.module_calls = from_names;
        work_.notes.push_back(std::to_string(from_names) +
                              " module calls counted from the parameters' names (the file names no "
                              "module scopes; modules without parameters, such as dropout and "
                              "activations, are not counted)");
      }
    }
    if (IsTorchCompile(opt_.framework)) {
      work_.graph_inputs = CountKernelReadState(g_, work_);
      if (any_onnx)
        work_.notes.push_back(
            "torch.compile from ONNX ops: the " + std::to_string(work_.graph_inputs) +
            " tensors of model state its kernels read are counted from the file; an exporter that "
            "folded batch norms into convolutions left one bias where the PyTorch model passes a "
            "batch norm's four tensors, so the compiled call's cost for them is lower than the "
            "PyTorch model's (a TorchScript trace keeps them)");
      work_ = FuseAsInductor(work_);
    }
    if (any_onnx && !IsCudaGraph(opt_.framework))
      work_.notes.push_back(
          "predicting a PyTorch framework from ONNX ops: the exporter rewrote the model "
          "(BatchNorm folded, GELU decomposed, shape arithmetic made explicit), so dispatch "
          "counts are approximate; a TorchScript trace or an --arch spec with --flavor torch "
          "is closer to what PyTorch runs");
    if (!attention_.empty())
      work_.notes.push_back(std::to_string(attention_.size()) +
                            " decomposed attention blocks (the exporter's MatMul, Softmax, MatMul with its "
                            "scales, mask and NaN guard) priced as fused attention: one kernel each, as "
                            "PyTorch runs F.scaled_dot_product_attention");
    if (packed_splits_ > 0)
      work_.notes.push_back(std::to_string(packed_splits_) +
                            " nn.MultiheadAttention blocks exported through its slow path priced as its fast "
                            "path: the packed in_proj output split into q, k and v (Gather, layout ops) costs "
                            "no kernel and no dispatch, as in aten::_native_multi_head_attention");
    if (merged_mha_ > 0)
      work_.notes.push_back(std::to_string(merged_mha_) +
                            " of them priced as one call each, as aten::_native_multi_head_attention is: the "
                            "block's in_proj, attention, out_proj and the transposes around them under one "
                            "dispatch, their kernels kept");
    if (scatter_assignments_ > 0)
      work_.notes.push_back(std::to_string(scatter_assignments_) +
                            " slice assignments exported as ScatterND priced as PyTorch runs them: the ops that "
                            "build their indices and updates cost no kernel and no dispatch");
    if (fused_gelus_ > 0)
      work_.notes.push_back(std::to_string(fused_gelus_) + " exported GELUs (Div, Erf, Add, Mul, Mul) "
                            "priced as one GELU kernel each, as PyTorch runs F.gelu");
    for (const auto& [type, n] : generic_)
      work_.notes.push_back("op type '" + type + "' (" + std::to_string(n) +
                            " nodes) has no lowering rule: priced as one kernel from its counted "
                            "FLOPs and bytes");
    for (const auto& [type, n] : unknown_)
      work_.notes.push_back("op type '" + type + "' (" + std::to_string(n) +
                            " nodes) is unknown to ftax (no lowering rule, no counting entry): "
                            "priced as one elementwise kernel");
    if (!uploads_.empty())
      work_.notes.push_back(
          (uploads_.size() == 1 ? std::string("1 copy of a CPU tensor")
                                : std::to_string(uploads_.size()) + " copies of CPU tensors") +
          " to the GPU in the forward pass (first: '" + uploads_.front() +
          "'): the CPU waits there until the GPU has run the work queued before it" +
          (IsCudaGraph(opt_.framework) || opt_.framework == Framework::kTorchCompileReduceOverhead
               ? "; CUDA graph capture fails on such a copy ('Cannot copy between CPU and CUDA tensors during "
                 "CUDA graph capture'), so this framework cannot run the model as written"
               : ""));
    work_.generic_ops = generic_;
    work_.unpriced_ops = unknown_;
    return std::move(work_);
  }

 private:
  // g_.Find with a memo of recent names (direct-mapped, 64 entries): each op's rule asks for
  // the same tensors several times (shape, bytes, element count), and an op's input is
  // usually a recent op's output. Keyed by the tensor map's own key strings, so always exact.
  struct MemoEntry {
    const std::string* key = nullptr;
    const TensorInfo* tensor = nullptr;
    size_t size = 0;           // the key's length
    uint64_t head = 0;         // and its first eight bytes (Head)
    bool numel_known = false;  // `numel` holds NumElements(tensor->shape)
    std::optional<int64_t> numel;
  };
  // The first eight bytes of a name, zero-padded: names of at most eight bytes (value names
  // such as "%123") are equal when their lengths and heads are.
  static uint64_t Head(const std::string& name) {
    uint64_t head = 0;
    std::memcpy(&head, name.data(), std::min<size_t>(name.size(), 8));
    return head;
  }
  MemoEntry* Lookup(const std::string& name) const {
    const size_t size = name.size();
    const uint64_t head = Head(name);
    // Direct-mapped by a mix of length, first and last bytes: one entry to check.
    uint64_t tail = 0;
    if (size > 8) std::memcpy(&tail, name.data() + size - 8, 8);
    const size_t slot = size_t(((head ^ (tail * 0x9E3779B97F4A7C15ull) ^ size) * 0xBF58476D1CE4E5B9ull) >> 58) % kMemo;
    MemoEntry& e = memo_[slot];
    if (e.key && e.size == size && e.head == head && (size <= 8 || *e.key == name)) return &e;
    auto it = g_.tensors.find(name);
    if (it == g_.tensors.end()) return nullptr;
    e = MemoEntry{&it->first, &it->second, size, head, false, std::nullopt};
    return &e;
  }
  const TensorInfo* Find(const std::string& name) const {
    const MemoEntry* e = Lookup(name);
    return e ? e->tensor : nullptr;
  }
  // NumElements of a tensor's shape (the same number: concrete dims, no int64 overflow),
  // computed once per memo entry.
  static std::optional<int64_t> NumelOf(MemoEntry* e) {
    if (!e->numel_known) {
      int64_t n = 1;
      bool ok = true;
      for (const Dim& d : e->tensor->shape)
        if (!d.known() || __builtin_mul_overflow(n, d.value, &n)) {
          ok = false;
          break;
        }
      e->numel = ok ? std::optional<int64_t>(n) : std::nullopt;
      e->numel_known = true;
    }
    return e->numel;
  }
  const Shape* ShapeOf(const std::string& name) const {
    const TensorInfo* t = Find(name);
    return t && t->has_shape ? &t->shape : nullptr;
  }
  DType DTypeOf(const std::string& name) const {
    const TensorInfo* t = Find(name);
    DType d = t ? t->dtype : DType::kUnknown;
    return IsFloat(d) ? opt_.precision : d;
  }
  // Bytes of a tensor at the run's precision; -1 if its shape is not concrete.
  double Bytes(const std::string& name) const {
    if (name.empty()) return 0;
    MemoEntry* e = Lookup(name);  // one lookup for shape and dtype
    if (!e || !e->tensor->has_shape) return -1;
    auto n = NumelOf(e);
    if (!n) return -1;
    const DType d = IsFloat(e->tensor->dtype) ? opt_.precision : e->tensor->dtype;
    return double(*n) * DTypeSize(d);
  }
  double Numel(const std::string& name) const {
    MemoEntry* e = Lookup(name);
    if (!e || !e->tensor->has_shape) return -1;
    auto n = NumelOf(e);
    return n ? double(*n) : -1;
  }
  // FindLoweringRule, remembered per (domain, op type) for this walk in a small open-addressed
  // table (a model has a few dozen op types; hashing each op's type string in the global table
  // was a tenth of the walk).
  const LoweringRule* RuleFor(const Op& op) { return SlotFor(op).rule; }
  const RuleSlot& SlotFor(const Op& op) {
    const std::string& t = op.type;
    size_t h = (t.size() * 131u + (t.empty() ? 0u : unsigned(t[0]) * 31u + unsigned(t.back()) * 7u)) % kRuleSlots;
    for (size_t probe = 0; probe < kRuleSlots; ++probe, h = (h + 1) % kRuleSlots) {
      RuleSlot& slot = rule_cache_[h];
      if (!slot.type) {
        slot = RuleSlot{&t, &op.domain, FindLoweringRule(op.domain, t), &DispatchCostKey(op.domain, t)};
        return slot;
      }
      if (*slot.type == t && *slot.domain == op.domain) return slot;
    }
    overflow_slot_ = RuleSlot{&t, &op.domain, FindLoweringRule(op.domain, t), &DispatchCostKey(op.domain, t)};
    return overflow_slot_;
  }
  Status Missing(const Op& op, const std::string& tensor) const {
    return InvalidInput("node '" + op.name + "' (" + op.type + "): shape of tensor '" + tensor +
                        "' is unknown or not concrete; bind its dims with --dim or --input-shape");
  }

  bool IsShapeArithmetic(const Op& op) const {
    if (op.outputs.empty()) return false;
    for (const std::string& o : op.outputs) {
      const TensorInfo* t = Find(o);
      if (!t) return false;
      // Folded values (integer shape math, and the float scale the TorchScript-based exporter
      // computes from a shape: Cast, Sqrt, Div) are constants, not kernels. Shape inference
      // folds up to 1024 elements, so that a value taken from a range of sequence positions
      // (Funnel's pooling offsets) resolves; a tensor of more than 64 values is a model's
      // tensor (BERT's position ids), priced as before.
      if ((t->int_values || t->float_values) && Numel(o) <= 64) continue;
      if (t->dtype != DType::kInt64 && t->dtype != DType::kInt32) return false;
      double n = Numel(o);
      if (n < 0 || n > 16) return false;
    }
    return true;
  }

  // A traced op on CPU scalars: its outputs have rank 0, and every tensor input is a 0-d tensor
  // whose value ftax knows (a size turned into a tensor by the trace, a constant of the code)
  // or the output of another such op (Swin's `(C // heads) ** -0.5`, whose value is not
  // carried). The op runs where its inputs are: on the CPU.
  bool IsHostScalarArithmetic(const Op& op) {
    if (op.outputs.empty()) return false;
    auto rank0 = [this](const std::string& name) {
      const TensorInfo* t = Find(name);
      return t && t->has_shape && t->shape.empty();
    };
    int tensor_inputs = 0;
    for (const std::string& in : op.inputs) {
      if (in.empty()) continue;
      const TensorInfo* t = Find(in);
      if (!t || !t->has_shape) continue;  // not a tensor (a list, a scalar argument)
      ++tensor_inputs;
      if (!rank0(in)) return false;
      if (!(t->int_values || t->float_values) && !InSet(host_scalars_, in)) return false;
    }
    if (tensor_inputs == 0) return false;
    for (const std::string& o : op.outputs)
      if (!rank0(o)) return false;
    for (const std::string& o : op.outputs) AddToSet(host_scalars_, o);
    return true;
  }

  // Where a trace made a tensor on the CPU, the ops on it run on the CPU and moving it to the
  // GPU waits for the GPU. In a trace made on the GPU (gpu_trace_), a factory op (arange,
  // zeros, full, ...) whose device the trace left at its default or set to "cpu" makes a CPU
  // tensor (WavLM's relative positions: torch.arange(n) and the bucket arithmetic on it, then
  // .to(weight.device)); an op whose tensor inputs are all CPU tensors (0-d scalars aside) runs
  // on the CPU: a dispatch, no kernel. aten::to / _to_copy of a CPU tensor to a CUDA device is a copy from pageable
  // memory, which CUDA starts only after the stream's queued work is done: the CPU waits there
  // for the GPU (DispatchWork::waits_for_gpu), and CUDA graph capture refuses it.
  enum class Placement { kDevice, kHostOp, kUpload };
  Placement HostPlacement(const Op& op) {
    static const std::string_view kFactories[] = {"arange", "zeros", "ones", "full", "empty", "tensor",
                                                  "scalar_tensor", "linspace", "eye"};
    if (!gpu_trace_) return Placement::kDevice;
    const std::string device = op.StringAttr("device", "");
    const bool to_host = device.empty() || device.rfind("cpu", 0) == 0;
    const bool is_factory =
        std::find(std::begin(kFactories), std::end(kFactories), std::string_view(op.type)) != std::end(kFactories);
    if (is_factory) {
      bool has_tensor_input = false;
      for (const std::string& in : op.inputs) has_tensor_input |= !in.empty();
      if (has_tensor_input || !to_host) return Placement::kDevice;
      for (const std::string& o : op.outputs) AddToSet(host_tensors_, o);
      return Placement::kHostOp;
    }
    int host_inputs = 0;
    for (const std::string& in : op.inputs) {
      if (in.empty()) continue;
      if (InSet(host_tensors_, in)) {
        ++host_inputs;
        continue;
      }
      const TensorInfo* t = Find(in);
      if (t && t->has_shape && t->shape.empty()) continue;  // a scalar goes with either device
      return Placement::kDevice;
    }
    if (host_inputs == 0) return Placement::kDevice;
    const bool copy = op.type == "to" || op.type == "_to_copy";
    if (copy && !device.empty() && !to_host) return Placement::kUpload;
    for (const std::string& o : op.outputs) AddToSet(host_tensors_, o);
    return Placement::kHostOp;
  }

  // ONNX has no slice assignment: the TorchScript-based exporter writes `mask[a:b, c:d] = v`
  // (Swin's shifted-window attention mask) as a ScatterND whose indices it builds from Range,
  // Slice, Add, Expand, Unsqueeze and Concat on integer tensors, and whose updates it expands
  // from the value. PyTorch runs the assignment as views of the mask and one fill: no index
  // tensor exists. So the ops that only build a ScatterND's indices (integer or boolean
  // outputs, read by nothing but each other, the ScatterND or a Shape) and those that only
  // expand a value ftax knows into its updates cost no kernel and no dispatch; the ScatterND
  // is the fill. Swin-T's TorchScript-based export: 1,605 dispatches priced before, its trace
  // 797.
  void FindScatterIndexOps() {
    std::vector<std::pair<std::string, bool>> work;  // a tensor, and whether it is updates
    std::vector<int> scatters;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      if (op.type != "ScatterND" || !op.domain.empty() || op.inputs.size() < 3) continue;
      scatters.push_back(int(i));
      work.push_back({op.inputs[1], false});
      work.push_back({op.inputs[2], true});
    }
    if (scatters.empty()) return;
    auto integer = [&](const std::string& t) {
      const TensorInfo* x = Find(t);
      return x && (x->dtype == DType::kInt64 || x->dtype == DType::kInt32 || x->dtype == DType::kBool);
    };
    auto known_value = [&](const std::string& t) {
      const TensorInfo* x = Find(t);
      if (x && (x->is_initializer || x->int_values || x->float_values)) return true;
      auto p = producer_.find(t);
      return p != producer_.end() && (p->second->type == "Constant" || p->second->type == "ConstantOfShape");
    };
    std::set<int> cand;
    while (!work.empty()) {
      const auto [t, updates] = work.back();
      work.pop_back();
      auto it = producer_.find(t);
      if (it == producer_.end()) continue;
      const int p = op_index_.at(it->second);
      if (cand.count(p)) continue;
      const Op& op = g_.ops[size_t(p)];
      if (op.outputs.size() != 1 || !op.domain.empty() || op.type == "Constant") continue;
      if (updates) {
        // A value expanded to the updates' shape: Expand, Reshape, Cast, Unsqueeze of a value
        // ftax knows (or of such an op's output).
        const bool shaping = op.type == "Expand" || op.type == "Reshape" || op.type == "Cast" ||
                             op.type == "Unsqueeze" || op.type == "ConstantOfShape";
        if (!shaping || op.inputs.empty()) continue;  // where its data comes from is checked below
      } else if (!integer(op.outputs[0])) {
        continue;
      }
      cand.insert(p);
      for (const std::string& in : op.inputs)
        if (!in.empty()) work.push_back({in, updates});
    }
    // Keep only ops whose every output is read by kept ops, a Shape, or a ScatterND as its
    // indices or updates; an updates chain must start at a value ftax knows.
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = cand.begin(); it != cand.end();) {
        const Op& op = g_.ops[size_t(*it)];
        bool ok = std::find(g_.outputs.begin(), g_.outputs.end(), op.outputs[0]) == g_.outputs.end();
        auto rd = readers_.find(op.outputs[0]);
        if (ok && rd != readers_.end())
          for (int r : rd->second) {
            const Op& reader = g_.ops[size_t(r)];
            if (cand.count(r) || reader.type == "Shape") continue;
            if (reader.type == "ScatterND" && reader.inputs.size() >= 3 &&
                (reader.inputs[1] == op.outputs[0] || reader.inputs[2] == op.outputs[0]) &&
                reader.inputs[0] != op.outputs[0])
              continue;
            ok = false;
            break;
          }
        if (ok && !integer(op.outputs[0]) && op.type != "ConstantOfShape" && !op.inputs.empty()) {
          // an updates op: its data comes from a known value or a kept op
          auto src = producer_.find(op.inputs[0]);
          ok = known_value(op.inputs[0]) || (src != producer_.end() && cand.count(op_index_.at(src->second)));
        }
        if (ok) {
          ++it;
        } else {
          it = cand.erase(it);
          changed = true;
        }
      }
    }
    scatter_member_.insert(cand.begin(), cand.end());
    if (!cand.empty()) scatter_assignments_ = int(scatters.size());
  }

  // Exporters write F.gelu (erf form) as x * (1 + erf(x / sqrt(2))) * 0.5 (the
  // TorchScript-based exporter) or x * (0.5 * (1 + erf(x / sqrt(2)))) (the dynamo exporter):
  // Div (or Mul), Erf, Add, Mul, Mul, each intermediate read by the next op only. PyTorch runs the module as
  // one GELU kernel, so the five ops are priced as that kernel (reading x, writing the result)
  // at the last one; the others cost nothing.
  void FindOnnxGelus() {
    const auto& readers = readers_;
    const auto& index = op_index_;
    auto is_const = [&](const std::string& name) {
      const TensorInfo* t = Find(name);
      if (!t) return false;
      if (t->is_initializer || t->float_values || t->int_values) return true;
      auto p = producer_.find(name);
      return p != producer_.end() && p->second->type == "Constant";
    };
    // The only reader of `tensor`, if it is of `type` (and not a graph output).
    auto sole_reader = [&](const std::string& tensor, const char* type) -> int {
      auto it = readers.find(tensor);
      if (it == readers.end() || it->second.size() != 1) return -1;
      if (std::find(g_.outputs.begin(), g_.outputs.end(), tensor) != g_.outputs.end()) return -1;
      const Op& r = g_.ops[size_t(it->second[0])];
      return r.type == type && r.domain.empty() ? it->second[0] : -1;
    };
    // The input of a binary op that is not `other` (or -1 / "" if the op is not binary).
    auto other_input = [](const Op& op, const std::string& other) -> std::string {
      if (op.inputs.size() != 2) return "";
      if (op.inputs[0] == other) return op.inputs[1];
      if (op.inputs[1] == other) return op.inputs[0];
      return "";
    };
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& erf = g_.ops[i];
      if (erf.type != "Erf" || !erf.domain.empty() || erf.inputs.size() != 1 || erf.outputs.size() != 1) continue;
      auto p = producer_.find(erf.inputs[0]);
      if (p == producer_.end()) continue;
      const Op& scale = *p->second;
      if ((scale.type != "Div" && scale.type != "Mul") || scale.inputs.size() != 2) continue;
      const std::string& x = scale.inputs[0];
      if (!is_const(scale.inputs[1]) || sole_reader(scale.outputs[0], "Erf") != int(i)) continue;
      const int add = sole_reader(erf.outputs[0], "Add");
      if (add < 0 || !is_const(other_input(g_.ops[size_t(add)], erf.outputs[0]))) continue;
      const std::string& sum = g_.ops[size_t(add)].outputs[0];
      const int mul = sole_reader(sum, "Mul");
      if (mul < 0) continue;
      const std::string& product = g_.ops[size_t(mul)].outputs[0];
      const std::string factor = other_input(g_.ops[size_t(mul)], sum);
      int last = mul, half = -1;
      if (factor == x) {
        // x * (1 + erf(..)), then (optionally) * 0.5: the TorchScript-based exporter.
        half = sole_reader(product, "Mul");
        if (half >= 0 && is_const(other_input(g_.ops[size_t(half)], product)))
          last = half;
        else
          half = -1;
      } else if (is_const(factor)) {
        // 0.5 * (1 + erf(..)), then x * that: the dynamo exporter.
        const int times_x = sole_reader(product, "Mul");
        if (times_x < 0 || other_input(g_.ops[size_t(times_x)], product) != x) continue;
        half = times_x;
        last = times_x;
      } else {
        continue;
      }
      for (int m : {index.at(&scale), int(i), add, mul, half})
        if (m >= 0 && m != last) gelu_member_.insert(m);
      gelu_input_[last] = &scale.inputs[0];
    }
  }

  // Both ONNX exporters write F.scaled_dot_product_attention (and nn.MultiheadAttention, which
  // calls it) out of ops, opsets 17 and 18 having no attention op: MatMul of q and k^T, an Add
  // of the mask (a boolean one made additive first: Where(mask, 0, -inf)), Softmax over the
  // last axis, (with a mask) a guard that zeroes NaN rows (IsNaN, Where), and MatMul with v;
  // q, k and v reach it through Reshape/Transpose. PyTorch runs one fused attention kernel on
  // strided views (flash or memory-efficient SDPA), so the pattern is priced as that kernel at
  // the last MatMul, with the dispatch and side kernels of the trace's
  // scaled_dot_product_attention, and its other ops (the layout ops that feed only it
  // included) cost nothing. Every framework ftax predicts runs PyTorch (framework.h); a runtime
  // that executes the ONNX ops themselves would keep them.
  //
  // What marks the pattern as an exported SDPA, and not attention a model writes out by hand
  // (Swin's, SqueezeBERT's, WavLM's, DeBERTa's: one scale on q or on the scores, a bias added,
  // softmax; their traces have aten::softmax and PyTorch runs them op by op, so must ftax):
  // - both operands of the first MatMul scaled by a constant (the exporters' sqrt(scale) on q
  //   and on k^T), or
  // - the second MatMul's output named after the call (the dynamo exporter names values after
  //   their FX nodes: "scaled_dot_product_attention", "scaled_dot_product_attention_3"), where
  //   its optimizer folded the scale away (a model that scales q itself and passes scale=1:
  //   Whisper, OPT).
  // Around that, the match is strict: every intermediate read by the next op only (and no
  // graph output), an optional scale (Mul or Div by a constant scalar) on the scores, an
  // optional Cast or Dropout before the last MatMul (whose left input it must be), Softmax
  // over the last axis, and concrete shapes that agree (q [.., Sq, d], k^T [.., d, Sk],
  // scores [.., Sq, Sk], v [.., Sk, dv]). Anything else stays op by op.
  void FindOnnxAttentions() {
    const auto& readers = readers_;
    const auto& index = op_index_;
    auto is_output = [&](const std::string& t) {
      return std::find(g_.outputs.begin(), g_.outputs.end(), t) != g_.outputs.end();
    };
    auto only_reader = [&](const std::string& t) -> int {
      auto it = readers.find(t);
      return it == readers.end() || it->second.size() != 1 || is_output(t) ? -1 : it->second[0];
    };
    auto producer = [&](const std::string& t) -> int {
      auto p = producer_.find(t);
      return p == producer_.end() ? -1 : index.at(p->second);
    };
    auto is_const = [&](const std::string& name) {
      const TensorInfo* t = Find(name);
      if (t && (t->is_initializer || t->float_values || t->int_values)) return true;
      auto p = producer_.find(name);
      return p != producer_.end() && (p->second->type == "Constant" || IsShapeArithmetic(*p->second) ||
                                      p->second->type == "Sqrt" || p->second->type == "Cast");
    };
    // A constant of one element (a scale), where its shape is known.
    auto is_scalar_const = [&](const std::string& name) {
      if (!is_const(name)) return false;
      const Shape* s = ShapeOf(name);
      if (!s) return true;  // a folded scalar whose shape inference left no shape
      for (const Dim& d : *s)
        if (!d.known() || d.value != 1) return false;
      return true;
    };
    auto type_is = [&](int i, const char* t) { return i >= 0 && g_.ops[size_t(i)].type == t && g_.ops[size_t(i)].domain.empty(); };
    // x * c, c * x or x / c with c a constant scalar: x, else "".
    auto scaled_input = [&](int i) -> std::string {
      if (i < 0 || g_.ops[size_t(i)].inputs.size() != 2) return "";
      const Op& o = g_.ops[size_t(i)];
      if (type_is(i, "Mul")) {
        if (is_scalar_const(o.inputs[1]) && !is_const(o.inputs[0])) return o.inputs[0];
        if (is_scalar_const(o.inputs[0]) && !is_const(o.inputs[1])) return o.inputs[1];
      } else if (type_is(i, "Div")) {
        if (is_scalar_const(o.inputs[1]) && !is_const(o.inputs[0])) return o.inputs[0];
      }
      return "";
    };
    // The dynamo exporter's name for an SDPA call's output.
    auto sdpa_name = [](const std::string& t) {
      static const std::string kName = "scaled_dot_product_attention";
      if (t.compare(0, kName.size(), kName) != 0) return false;
      if (t.size() == kName.size()) return true;
      if (t[kName.size()] != '_' || t.size() == kName.size() + 1) return false;
      return std::all_of(t.begin() + long(kName.size()) + 1, t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    // The layout ops (Reshape, Transpose) that feed `tensor` and nothing else: free with it.
    auto layout_chain = [&](std::string tensor, int reader, std::vector<int>* members) {
      for (int hops = 0; hops < 4; ++hops) {
        const int p = producer(tensor);
        if (!(type_is(p, "Transpose") || type_is(p, "Reshape")) || only_reader(tensor) != reader) return;
        members->push_back(p);
        reader = p;
        tensor = g_.ops[size_t(p)].inputs[0];
      }
    };
    // Concrete dims (at least two) of a tensor, or nullptr.
    auto concrete = [&](const std::string& t) -> const Shape* {
      const Shape* s = ShapeOf(t);
      if (!s || s->size() < 2) return nullptr;
      for (const Dim& d : *s)
        if (!d.known() || d.value <= 0) return nullptr;
      return s;
    };
    const auto opset = g_.opset.find("");
    const int64_t softmax_default_axis = opset == g_.opset.end() || opset->second >= 13 ? -1 : 1;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& sm = g_.ops[i];
      if (sm.type != "Softmax" || !sm.domain.empty() || sm.inputs.size() != 1 || sm.outputs.size() != 1) continue;
      // Over the last axis.
      const Shape* sm_in = concrete(sm.inputs[0]);
      if (!sm_in) continue;
      int64_t axis = sm.IntAttr("axis", softmax_default_axis);
      if (axis < 0) axis += int64_t(sm_in->size());
      if (axis != int64_t(sm_in->size()) - 1) continue;
      std::vector<int> members = {int(i)};
      OnnxAttention a;
      // Back: [Add mask] <- [scale] <- MatMul(q', k') with q' = q or q * c, k' alike.
      std::string t = sm.inputs[0];
      int reader = int(i);
      if (only_reader(t) != reader) continue;
      int m1 = producer(t);
      // The scores side of an Add: the MatMul's output, or its scaled form.
      auto scores_like = [&](const std::string& in) {
        const int p = producer(in);
        if (type_is(p, "MatMul")) return true;
        const std::string x = scaled_input(p);
        return !x.empty() && type_is(producer(x), "MatMul");
      };
      if (type_is(m1, "Add")) {
        const Op& add = g_.ops[size_t(m1)];
        if (add.inputs.size() != 2) continue;
        const bool l = scores_like(add.inputs[0]), r = scores_like(add.inputs[1]);
        if (l == r) continue;  // neither, or both (ambiguous)
        members.push_back(m1);
        a.masked = true;
        reader = m1;
        t = add.inputs[l ? 0 : 1];
        if (only_reader(t) != reader) continue;
        // A boolean mask made additive for this call, Where(mask, 0, -inf): the where a trace
        // runs per call too, priced with the call's side kernels (AddAttentionSideKernels).
        const std::string& mask = add.inputs[l ? 1 : 0];
        const int where = producer(mask);
        if (type_is(where, "Where") && only_reader(mask) == m1 && g_.ops[size_t(where)].inputs.size() == 3 &&
            is_const(g_.ops[size_t(where)].inputs[1]) && is_const(g_.ops[size_t(where)].inputs[2]))
          members.push_back(where);
        m1 = producer(t);
      }
      if (!type_is(m1, "MatMul")) {  // a scale on the scores
        const std::string x = scaled_input(m1);
        if (x.empty()) continue;
        members.push_back(m1);
        reader = m1;
        t = x;
        if (only_reader(t) != reader) continue;
        m1 = producer(t);
      }
      if (!type_is(m1, "MatMul")) continue;
      const Op& mm1 = g_.ops[size_t(m1)];
      if (mm1.inputs.size() != 2 || mm1.outputs.size() != 1) continue;
      members.push_back(m1);
      a.scores = mm1.outputs[0];
      // The operands, each through an optional constant scale.
      int scaled_sides = 0;
      std::string operand[2];
      for (int side = 0; side < 2; ++side) {
        const std::string& in = mm1.inputs[size_t(side)];
        if (only_reader(in) == m1) {
          const int mul = producer(in);
          const std::string x = type_is(mul, "Mul") ? scaled_input(mul) : "";
          if (!x.empty()) {
            members.push_back(mul);
            layout_chain(x, mul, &members);
            operand[side] = x;
            ++scaled_sides;
            continue;
          }
          layout_chain(in, m1, &members);
        }
        operand[side] = in;
      }
      a.q = operand[0];
      a.k = operand[1];
      // Forward: [IsNaN, Where(isnan, 0, p)] -> [Cast | Dropout] -> MatMul(p, v).
      std::string p = sm.outputs[0];
      auto rd = readers.find(p);
      if (rd == readers.end() || is_output(p)) continue;
      if (rd->second.size() == 2) {
        int isnan = -1, where = -1;
        for (int r : rd->second) {
          if (type_is(r, "IsNaN")) isnan = r;
          if (type_is(r, "Where")) where = r;
        }
        if (isnan < 0 || where < 0 || only_reader(g_.ops[size_t(isnan)].outputs[0]) != where) continue;
        const Op& w = g_.ops[size_t(where)];
        if (w.inputs.size() != 3 || w.inputs[2] != p || w.inputs[1] == p) continue;
        members.push_back(isnan);
        members.push_back(where);
        p = w.outputs[0];
      }
      int m2 = only_reader(p);
      for (int hops = 0; hops < 2 && (type_is(m2, "Cast") || type_is(m2, "Dropout")); ++hops) {
        const Op& o = g_.ops[size_t(m2)];
        // Dropout's mask output, where written, must be read by nobody.
        if (o.inputs.empty() || o.inputs[0] != p || o.outputs.empty() ||
            (o.outputs.size() > 1 && !o.outputs[1].empty() && (readers.count(o.outputs[1]) || is_output(o.outputs[1]))))
          break;
        members.push_back(m2);
        p = o.outputs[0];
        m2 = only_reader(p);
      }
      if (!type_is(m2, "MatMul") || g_.ops[size_t(m2)].inputs.size() != 2 || g_.ops[size_t(m2)].inputs[0] != p ||
          g_.ops[size_t(m2)].outputs.size() != 1)
        continue;
      // The exporter's SDPA, not attention written by hand.
      if (scaled_sides != 2 && !sdpa_name(g_.ops[size_t(m2)].outputs[0])) continue;
      a.v = g_.ops[size_t(m2)].inputs[1];
      // Shapes known and consistent: q [.., Sq, d], k^T [.., d, Sk], scores [.., Sq, Sk],
      // v [.., Sk, dv].
      const Shape* s = concrete(a.scores);
      const Shape* q = concrete(a.q);
      const Shape* k = concrete(a.k);
      const Shape* v = concrete(a.v);
      if (!s || !q || !k || !v) continue;
      const int64_t sq = (*s)[s->size() - 2].value, sk = s->back().value;
      if ((*q)[q->size() - 2].value != sq || k->back().value != sk || (*q).back().value != (*k)[k->size() - 2].value ||
          (*v)[v->size() - 2].value != sk)
        continue;
      layout_chain(a.v, m2, &members);
      bool taken = false;  // by an attention or GELU found before
      for (int m : members)
        taken |= attention_member_.count(m) > 0 || attention_.count(m) > 0 || gelu_member_.count(m) > 0 ||
                 gelu_input_.count(m) > 0;
      if (taken) continue;
      for (int m : members) attention_member_.insert(m);
      a.members = members;
      attention_[m2] = a;
    }
  }

  // The rest of an nn.MultiheadAttention block around a packed split (FindPackedQkvSplits):
  // the layout ops before the in_proj (the transpose out of batch_first), the in_proj itself
  // (MatMul and its bias Add, or Gemm), and after the attention the layout ops that merge the
  // heads, the out_proj and the layout ops after it (the transpose back), each read by the
  // next alone. The trace makes all of it one call, aten::_native_multi_head_attention, priced
  // by that op's cost; the export's ops keep their kernels and give up their dispatches to one
  // at the attention (MergeMhaDispatches). A block whose out_proj is not found stays as it is.
  template <class Reader, class Producer, class TypeIs, class IsLayout>
  void FindMhaBlock(int proj, int last, const Reader& data_reader, const Producer& producer, const TypeIs& type_is,
                    const IsLayout& is_layout) {
    std::vector<int> block;
    // The in_proj: a bias Add's MatMul with it, then the layout ops before it.
    int first = proj;
    if (type_is(proj, "Add")) {
      const Op& add = g_.ops[size_t(proj)];
      int mm = -1;
      for (const std::string& in : add.inputs) {
        const int p = producer(in);
        if (type_is(p, "MatMul") && data_reader(in) == proj) mm = p;
      }
      if (mm < 0) return;
      block.push_back(mm);
      first = mm;
    }
    block.push_back(proj);
    std::string t = g_.ops[size_t(first)].inputs.empty() ? "" : g_.ops[size_t(first)].inputs[0];
    for (int reader = first, hops = 0; hops < 3 && !t.empty(); ++hops) {
      const int p = producer(t);
      if (!is_layout(p) || data_reader(t) != reader) break;
      block.push_back(p);
      reader = p;
      t = g_.ops[size_t(p)].inputs[0];
    }
    // After the attention: layout ops, the out_proj (MatMul [+ bias Add] or Gemm), layout ops.
    const Op& att = g_.ops[size_t(last)];
    if (att.outputs.empty()) return;
    t = att.outputs[0];
    bool out_proj = false;
    for (int hops = 0; hops < 8; ++hops) {
      const int r = data_reader(t);
      if (r < 0 || g_.ops[size_t(r)].outputs.empty()) break;
      if (!out_proj && (type_is(r, "MatMul") || type_is(r, "Gemm"))) {
        out_proj = true;
      } else if (out_proj && type_is(r, "Add") && IsFoldedBias(g_.ops[size_t(r)]) &&
                 type_is(block.back(), "MatMul")) {
        // the out_proj's bias
      } else if (!is_layout(r)) {
        break;
      }
      block.push_back(r);
      t = g_.ops[size_t(r)].outputs[0];
    }
    if (!out_proj) return;
    for (int m : block) mha_block_of_[m] = last;
  }

  // An op whose outputs are all a few integers (sizes, a Reshape's target): shape values.
  bool OnShapeValues(int op_index) const {
    if (op_index < 0 || size_t(op_index) >= g_.ops.size()) return false;
    const Op& op = g_.ops[size_t(op_index)];
    if (op.outputs.empty()) return false;
    for (const std::string& o : op.outputs) {
      const TensorInfo* t = Find(o);
      if (!t || (t->dtype != DType::kInt64 && t->dtype != DType::kInt32)) return false;
      const double n = Numel(o);
      if (n < 0 || n > 16) return false;
    }
    return true;
  }

  // One dispatch for each nn.MultiheadAttention block FindMhaBlock found: the block's
  // dispatches, with nothing between them but views on shape values, become one at its
  // attention, priced as aten::_native_multi_head_attention, with all their kernels, as a
  // trace's one fused call is. Under torch.compile, Inductor's fusion then splits that call into
  // the projections, q, k and v's copies and the attention (inductor_fusion.h), as it splits a
  // trace's, so every form of the model gives the same calls (ViT-B/32's ONNX file had 114
  // kernels at batch 32 where its trace has 150, when the block stayed op by op).
  void MergeMhaDispatches() {
    if (mha_block_of_.empty()) return;
    static const std::string& key = DispatchCostKey("aten", "_native_multi_head_attention");
    std::set<int> attentions;
    for (const auto& [op, att] : mha_block_of_) attentions.insert(att);
    std::map<int, std::vector<size_t>> where;  // attention -> positions of its block's dispatches
    for (size_t d = 0; d < work_.dispatches.size(); ++d) {
      const int op = work_.dispatches[d].op_index;
      auto it = mha_block_of_.find(op);
      if (it != mha_block_of_.end()) where[it->second].push_back(d);
      else if (attentions.count(op)) where[op].push_back(d);
    }
    std::set<size_t> dropped;
    for (const auto& [att, pos] : where) {
      if (pos.size() < 2) continue;
      // Between the block's calls only views on shape values (the Unsqueezes that build a
      // Reshape's target from sizes, which the fast path computes inside its call) may sit;
      // another op's call there leaves the block op by op.
      bool contained = true;
      for (size_t p = pos.front(); p <= pos.back() && contained; ++p)
        contained = std::binary_search(pos.begin(), pos.end(), p) ||
                    (work_.dispatches[p].num_kernels == 0 && OnShapeValues(work_.dispatches[p].op_index));
      if (!contained) continue;
      DispatchWork& d = work_.dispatches[pos.front()];
      int kernels = 0;
      bool waits = false;
      for (size_t p = pos.front(); p <= pos.back(); ++p) {
        kernels += work_.dispatches[p].num_kernels;
        waits = waits || work_.dispatches[p].waits_for_gpu;
      }
      d.cls = DispatchClass::kLibrary;
      d.op_index = att;
      d.cost_key = &key;
      d.num_kernels = kernels;
      d.waits_for_gpu = waits;
      for (size_t p = pos.front() + 1; p <= pos.back(); ++p) dropped.insert(p);
      ++merged_mha_;
    }
    if (dropped.empty()) return;
    std::vector<DispatchWork> out;
    out.reserve(work_.dispatches.size() - dropped.size());
    for (size_t d = 0; d < work_.dispatches.size(); ++d)
      if (!dropped.count(d)) out.push_back(work_.dispatches[d]);
    work_.dispatches.swap(out);
  }

  // nn.MultiheadAttention's slow path (F.multi_head_attention_forward), which both exporters
  // write where a trace records the inference fast path (aten::_native_multi_head_attention:
  // torchvision's ViT): the packed in_proj output [L, N, 3E] (MatMul + bias Add, or Gemm) goes
  // through layout ops (Reshape/Unflatten, Unsqueeze, Transpose, Squeeze) to a [3, L, N, E]
  // tensor that three Gathers (indices 0, 1, 2 on axis 0) split into q, k and v, each reaching
  // its operand of a recognised attention (FindOnnxAttentions) through Reshape/Transpose.
  // The fast path runs no kernel for that split: its QKV GEMM (the in_proj GEMM here) writes
  // the packed tensor and the fused attention reads q, k and v as strided views of it
  // (AddNativeMha: QKV GEMM, attention, output GEMM, nothing between). So the Gathers and those
  // layout ops cost no kernel, and neither do the copies ftax would otherwise price for a
  // Reshape of a transposed head view.
  //
  // Dispatches: the trace makes one call per block. What the slow path adds, the split's
  // Gathers and views and the shape arithmetic that feeds only them or the attention (Shape,
  // Gather, Unsqueeze, Concat, Slice on the sizes, which the fast path computes inside its
  // call), costs no dispatch of its own; the rest of the block, the transposes in and out of
  // batch_first layout, the in_proj and out_proj and the attention, becomes that one call
  // (FindMhaBlock, MergeMhaDispatches), its kernels as the export's ops price them. Shape
  // values shared with ops outside the block stay priced as written.
  //
  // The match is strict, else everything stays op by op: every tensor on the way read (for its
  // data; a Shape reads only its dims) by the next op only and no graph output, the Gathers'
  // indices constant scalars 0, 1, 2 feeding q, k, v respectively, one packed tensor that
  // the three Gathers alone read, its element count three times a Gather's, and, before the
  // layout ops, a MatMul (with an optional bias Add) or Gemm.
  void FindPackedQkvSplits() {
    const auto& readers = readers_;
    const auto& index = op_index_;
    auto is_output = [&](const std::string& t) {
      return std::find(g_.outputs.begin(), g_.outputs.end(), t) != g_.outputs.end();
    };
    auto type_is = [&](int i, const char* t) {
      return i >= 0 && g_.ops[size_t(i)].type == t && g_.ops[size_t(i)].domain.empty();
    };
    auto producer = [&](const std::string& t) -> int {
      auto p = producer_.find(t);
      return p == producer_.end() ? -1 : index.at(p->second);
    };
    // The one op that reads `t` for its data (a Shape reads only its dims), or -1.
    auto data_reader = [&](const std::string& t) -> int {
      if (is_output(t)) return -1;
      auto it = readers.find(t);
      if (it == readers.end()) return -1;
      int found = -1;
      for (int r : it->second) {
        if (type_is(r, "Shape")) continue;
        if (found >= 0 && found != r) return -1;
        found = r;
      }
      return found;
    };
    auto is_layout = [&](int i) {
      return type_is(i, "Reshape") || type_is(i, "Transpose") || type_is(i, "Squeeze") || type_is(i, "Unsqueeze");
    };
    // A constant scalar index: its value, else -1.
    auto const_index = [&](const std::string& name) -> int64_t {
      const TensorInfo* t = Find(name);
      if (!t || !t->int_values || t->int_values->size() != 1) return -1;
      if (t->has_shape && !t->shape.empty()) return -1;  // an index of rank 0 selects
      return (*t->int_values)[0];
    };
    std::set<int> all_members;  // of every split found, with its attention's ops
    for (const auto& entry : attention_) {
      // Named copies, not structured bindings: C++17 lambdas cannot capture those (clang).
      const int last = entry.first;
      const auto& a = entry.second;
      std::vector<int> members;
      // Back from an attention operand through layout ops to a Gather: the Gather, or -1.
      auto to_gather = [&](std::string t, int reader) -> int {
        for (int hops = 0; hops < 8; ++hops) {
          if (data_reader(t) != reader) return -1;
          const int p = producer(t);
          if (type_is(p, "Gather")) return p;
          if (!is_layout(p)) return -1;
          if (!attention_member_.count(p)) members.push_back(p);
          reader = p;
          t = g_.ops[size_t(p)].inputs[0];
        }
        return -1;
      };
      // Where the operand is read: the attention op that reads it (a scale Mul or a MatMul).
      auto operand_reader = [&](const std::string& t) -> int {
        const int r = data_reader(t);
        return r >= 0 && (attention_member_.count(r) || r == last) ? r : -1;
      };
      int gather[3] = {-1, -1, -1};
      const std::string* operand[3] = {&a.q, &a.k, &a.v};
      bool ok = true;
      for (int i = 0; i < 3 && ok; ++i) {
        const int r = operand_reader(*operand[i]);
        gather[i] = r < 0 ? -1 : to_gather(*operand[i], r);
        ok = gather[i] >= 0;
      }
      if (!ok || gather[0] == gather[1] || gather[1] == gather[2] || gather[0] == gather[2]) continue;
      const std::string& packed = g_.ops[size_t(gather[0])].inputs.empty() ? "" : g_.ops[size_t(gather[0])].inputs[0];
      for (int i = 0; i < 3 && ok; ++i) {
        const Op& gop = g_.ops[size_t(gather[i])];
        ok = gop.inputs.size() == 2 && gop.outputs.size() == 1 && gop.inputs[0] == packed &&
             gop.IntAttr("axis", 0) == 0 && const_index(gop.inputs[1]) == i;
      }
      if (!ok || packed.empty()) continue;
      // The packed tensor is read by the three Gathers alone, and holds q, k and v.
      auto rd = readers.find(packed);
      if (rd == readers.end() || rd->second.size() != 3 || is_output(packed)) continue;
      const double n_packed = Numel(packed), n_q = Numel(g_.ops[size_t(gather[0])].outputs[0]);
      if (!(n_q > 0) || n_packed != 3 * n_q) continue;
      // Back to the in_proj: layout ops, then MatMul [+ bias Add] or Gemm.
      std::string t = packed;
      int reader = -1;
      int proj = -1;
      for (int hops = 0; hops < 6; ++hops) {
        if (reader >= 0 && data_reader(t) != reader) break;
        const int p = producer(t);
        if (type_is(p, "MatMul") || type_is(p, "Gemm") || (type_is(p, "Add") && IsFoldedBias(g_.ops[size_t(p)]))) {
          proj = reader >= 0 ? p : -1;  // at least one layout op between
          break;
        }
        if (!is_layout(p)) break;
        members.push_back(p);
        reader = p;
        t = g_.ops[size_t(p)].inputs[0];
      }
      if (proj < 0 || Numel(t) != n_packed) continue;
      for (int i = 0; i < 3; ++i) members.push_back(gather[i]);
      bool taken = false;
      for (int m : members)
        taken |= split_member_.count(m) > 0 || attention_.count(m) > 0 || gelu_member_.count(m) > 0 ||
                 gelu_input_.count(m) > 0;
      if (taken) continue;
      for (int m : members) {
        split_member_.insert(m);
        all_members.insert(m);
      }
      for (int m : a.members) all_members.insert(m);
      all_members.insert(last);
      ++packed_splits_;
      FindMhaBlock(proj, last, data_reader, producer, type_is, is_layout);
    }
    if (all_members.empty()) return;
    // The shape arithmetic that feeds only the splits and their attentions: no dispatch.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t j = g_.ops.size(); j-- > 0;) {
        const int i = int(j);
        if (all_members.count(i) || attention_member_.count(i) || attention_.count(i) || gelu_member_.count(i) ||
            gelu_input_.count(i))
          continue;
        const Op& op = g_.ops[j];
        if (op.outputs.empty() || !(op.domain.empty() && (op.type == "Shape" || IsShapeArithmetic(op)))) continue;
        bool only_members = true, read = false;
        for (const std::string& o : op.outputs) {
          if (o.empty()) continue;
          if (is_output(o)) only_members = false;
          auto it = readers.find(o);
          if (it == readers.end()) continue;
          for (int r : it->second) {
            read = true;
            only_members &= all_members.count(r) > 0;
          }
        }
        if (!read || !only_members) continue;
        all_members.insert(i);
        split_member_.insert(i);
        changed = true;
      }
    }
  }

  Status LowerOnnxAttention(int index, const Op& op, const OnnxAttention& a) {
    const Shape* s = ShapeOf(a.scores);
    const Shape* q = ShapeOf(a.q);
    const Shape* v = ShapeOf(a.v);
    if (!s || s->size() < 2) return Missing(op, a.scores);
    if (!q || q->empty()) return Missing(op, a.q);
    if (!v || v->empty()) return Missing(op, a.v);
    double bh = 1;
    for (size_t i = 0; i + 2 < s->size(); ++i) bh *= double((*s)[i].value);
    const double sq = double((*s)[s->size() - 2].value), sk = double(s->back().value);
    const double d = double(q->back().value), dv = double(v->back().value);
    const int first = int(work_.kernels.size());
    KernelWork k;
    k.op_index = index;
    k.dtype = opt_.precision;
    // Eager code drops an all-ones mask before the kernel (see kAttention); an exported mask
    // is priced as the masked kernel under the traced, captured and compiled frameworks
    // (AddAttention).
    k.cls = a.masked && !RunsEagerCode() ? KernelClass::kAttentionMasked : KernelClass::kAttention;
    k.flops = 2.0 * bh * sq * sk * (d + dv);
    k.m = int64_t(sq);
    k.n = 1;
    k.k = int64_t(sk * d / 64.0 + 0.5);
    k.batch = int64_t(bh);
    const double size = DTypeSize(opt_.precision);
    k.bytes = bh * (sq * d + sk * d + sk * dv + sq * dv) * size;
    work_.kernels.push_back(k);
    // With the kernels PyTorch runs around the call, as for F.scaled_dot_product_attention in
    // a trace (AddAttentionAux): the exported graph is the same network.
    AddAttentionSideKernels(index, bh, sq, sk, a.masked);
    // One library call, priced (where a profile keeps per-op costs) as the trace's SDPA call
    // rather than as the MatMul it sits at.
    Dispatch(DispatchClass::kLibrary, index, first);
    work_.dispatches.back().cost_key = &DispatchCostKey("aten", "scaled_dot_product_attention");
    for (const auto& o : op.outputs) AddToSet(attention_out_, o);
    return Status::Ok();
  }

  Status LowerGelu(int index, const Op& op, const std::string& x) {
    const std::string& out = op.outputs[0];
    const double in_bytes = Bytes(x), out_bytes = Bytes(out);
    if (in_bytes < 0) return Missing(op, x);
    if (out_bytes < 0) return Missing(op, out);
    const int first = int(work_.kernels.size());
    KernelWork k;
    k.op_index = index;
    k.dtype = opt_.precision;
    k.cls = KernelClass::kElementwise;
    k.flops = 8.0 * std::max(Numel(out), 0.0);  // erf + 4 arithmetic (docs/counting.md)
    k.bytes = in_bytes + out_bytes;
    work_.kernels.push_back(k);
    Dispatch(DispatchClass::kKernel, index, first);
    ++fused_gelus_;
    return Status::Ok();
  }

  // An initializer, or an Identity of one: the TorchScript-based exporter writes one for
  // every parameter whose values equal another's (it deduplicates them: tied weights, and the
  // all-zero biases of a model built with random weights, BERT's key biases).
  const TensorInfo* Weight(const std::string& name) const {
    const TensorInfo* t = Find(name);
    if (t && t->is_initializer) return t;
    auto p = producer_.find(name);
    if (p == producer_.end() || p->second->type != "Identity" || !p->second->domain.empty() ||
        p->second->inputs.size() != 1)
      return t;
    const TensorInfo* w = Find(p->second->inputs[0]);
    return w && w->is_initializer ? w : t;
  }

  // An ONNX MatMul of a stored 2-D weight is an nn.Linear the exporter wrote out (its bias,
  // if any, an Add folded into it): PyTorch runs it as linear, so its dispatch costs what a
  // linear layer's does (under torch.compile, the wrapper's addmm or mm of a linear).
  bool IsLinearMatMul(const Op& op) const {
    if (op.type != "MatMul" || !op.domain.empty() || op.inputs.size() != 2) return false;
    const TensorInfo* w = Weight(op.inputs[1]);
    return w && w->is_initializer && w->has_shape && w->shape.size() == 2;
  }

  bool IsFoldedBias(const Op& op) const {
    if (op.inputs.size() != 2) return false;
    for (int i = 0; i < 2; ++i) {
      const TensorInfo* b = Weight(op.inputs[i]);
      auto it = producer_.find(op.inputs[1 - i]);
      if (b && b->is_initializer && b->has_shape && b->shape.size() == 1 && it != producer_.end() &&
          it->second->type == "MatMul")
        return true;
    }
    return false;
  }

  // The TorchScript profiling executor's fuser (NNC) compiles groups of element-wise ops into
  // one kernel ("fused_mul_pow_mul_add_mul_tanh_add_mul" for GPT-2's GELU in CUPTI records)
  // after its profiling runs; CUDA graphs captured from a TorchScript module replay those
  // kernels. A group here: element-wise ops (one kernel each) joined where one consumes the
  // other's output and nothing else reads it. The fused kernel skips the intermediates' round
  // trips through memory, and the interpreter runs the group as one op, at its last member.
  // An ONNX form of the network has the same groups: the ATen types' ONNX equivalents (Add,
  // Mul, Sigmoid, ...) in the default domain are fused alike (an SE block's sigmoid-mul, a
  // Swish written as Sigmoid and Mul). Ops on folded shape values have no dispatch here
  // (IsShapeArithmetic), and an exported GELU priced as one GELU kernel at its last Mul is
  // ATen's gelu, which is not among them.
  void FuseElementwiseChains() {
    // Element-wise types NNC fuses (not the in-place ones), per domain; compared without
    // hashing.
    auto fusible_type = [](const Op& op) {
      static const std::string_view kAten[] = {"add", "sub", "mul", "div", "rsub", "neg",
                                               "relu", "sigmoid", "tanh", "exp", "pow"};
      static const std::string_view kOnnx[] = {"Add", "Sub", "Mul", "Div", "Neg",
                                               "Relu", "Sigmoid", "Tanh", "Exp", "Pow"};
      const std::string& t = op.type;
      if (t.size() > 7) return false;
      if (IsAten(op.domain)) {
        for (std::string_view f : kAten)
          if (t == f) return true;
      } else if (op.domain.empty()) {
        for (std::string_view f : kOnnx)
          if (t == f) return true;
      }
      return false;
    };
    // An inference batch norm is an NNC op too (a per-channel affine), whatever kernels ATen
    // runs it with: a group it joins becomes one generated kernel ("fused_batch_norm_add" in
    // CUPTI records: RegNet's and MNASNet's residual adds, where the block's last batch norm,
    // and the shortcut's, feed an out-of-place add). NNC makes no group of one op, so a batch
    // norm whose output goes to a convolution or an in-place ReLU keeps its own kernels. An
    // ONNX file's BatchNormalization is left alone: the exporters fold those a convolution
    // feeds, and the ones left (DenseNet's, before its ReLU) fed an in-place ReLU in PyTorch,
    // which the file writes as an out-of-place Relu.
    auto batch_norm = [](const Op& op) { return IsAten(op.domain) && op.type == "batch_norm"; };
    const size_t n = g_.ops.size();
    // op -> its dispatch, when that is one element-wise kernel or a batch norm
    thread_local std::vector<int> single;
    single.assign(n, -1);
    thread_local std::vector<char> is_bn;  // op -> a batch norm candidate
    is_bn.assign(n, 0);
    bool any_candidate = false;
    for (size_t d = 0; d < work_.dispatches.size(); ++d) {
      const DispatchWork& w = work_.dispatches[d];
      if (w.op_index < 0) continue;
      const Op& op = g_.ops[size_t(w.op_index)];
      if (!op.outputs.empty() && op.repeat <= 1 && w.num_kernels >= 1 && batch_norm(op)) {
        single[size_t(w.op_index)] = int(d);
        is_bn[size_t(w.op_index)] = 1;
        continue;
      }
      if (w.num_kernels != 1) continue;
      if (work_.kernels[size_t(w.first_kernel)].cls != KernelClass::kElementwise) continue;
      if (op.outputs.empty() || op.repeat > 1 || !fusible_type(op)) continue;
      if (!gelu_input_.empty() && gelu_input_.count(w.op_index)) continue;  // an exported GELU
      single[size_t(w.op_index)] = int(d);
      any_candidate = true;
    }
    if (!any_candidate) return;
    // Producer -> consumer pairs among candidates, looked for a few ops back (this runs for
    // every point of a sweep, so no hashing of every tensor name). The ops counted are those
    // that dispatch, in order: an ONNX file's Constant nodes and folded shape arithmetic
    // between two members of a group (GPT-2's tanh GELU) cost nothing and move nothing.
    // A batch norm may lie further back: RegNet's shortcut batch norm runs before the block's
    // eight dispatches of its residual branch, and both meet at the add.
    constexpr size_t kWindow = 8, kBatchNormWindow = 12;
    struct Edge {
      int producer, consumer;
      const std::string* tensor;
    };
    thread_local std::vector<int> dispatched;  // op indices with a dispatch, in order, once each
    dispatched.clear();
    for (const DispatchWork& w : work_.dispatches)
      if (w.op_index >= 0 && (dispatched.empty() || dispatched.back() != w.op_index))
        dispatched.push_back(w.op_index);
    std::vector<Edge> edges;
    for (size_t p = 0; p < dispatched.size(); ++p) {
      const size_t j = size_t(dispatched[p]);
      if (single[j] < 0) continue;
      for (size_t q = p > kBatchNormWindow ? p - kBatchNormWindow : 0; q < p; ++q) {
        const size_t k = size_t(dispatched[q]);
        if (single[k] < 0 || k >= j) continue;
        if (p - q > kWindow && !is_bn[k]) continue;
        const std::string& out = g_.ops[k].outputs[0];
        for (const std::string& in : g_.ops[j].inputs)
          if (in == out) {
            edges.push_back({int(k), int(j), &out});
            break;
          }
      }
    }
    if (edges.empty()) return;
    // Keep edges whose tensor has no other reader (count readers of those few tensors only).
    // One pass over every input; a name is compared in full only when its length and last
    // character match (the value names "%N" mostly share a length).
    std::vector<int> readers(edges.size(), 0);
    auto count = [&](const std::string& name) {
      if (name.empty()) return;
      for (size_t e = 0; e < edges.size(); ++e) {
        const std::string& t = *edges[e].tensor;
        if (t.size() == name.size() && t.back() == name.back() && t == name) ++readers[e];
      }
    };
    for (const Op& op : g_.ops)
      for (const std::string& in : op.inputs) count(in);
    for (const std::string& o : g_.outputs) count(o);
    std::vector<Edge> kept;
    for (size_t e = 0; e < edges.size(); ++e) {
      // An empty tensor name is read by every omitted optional input.
      int r = readers[e];
      if (edges[e].tensor->empty()) {
        r = 0;
        for (const Op& op : g_.ops)
          for (const std::string& in : op.inputs) r += in.empty();
        for (const std::string& o : g_.outputs) r += o.empty();
      }
      if (r == 1) kept.push_back(edges[e]);
    }
    if (kept.empty()) return;
    std::vector<int> parent(n);
    for (size_t i = 0; i < n; ++i) parent[i] = int(i);
    auto find = [&](int x) {
      while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
      return x;
    };
    for (const Edge& e : kept) parent[size_t(find(e.producer))] = find(e.consumer);
    std::vector<int> last(n, -1), size(n, 0);
    for (const Edge& e : kept)
      for (int i : {e.producer, e.consumer}) last[size_t(find(i))] = std::max(last[size_t(find(i))], i);
    for (size_t i = 0; i < n; ++i)
      if (single[i] >= 0) ++size[size_t(find(int(i)))];
    auto internal = [&](int op, const std::string& in) {
      for (const Edge& e : kept)
        if (e.consumer == op && *e.tensor == in) return true;
      return false;
    };
    struct Group {
      KernelWork k;
      std::vector<const std::string*> inputs;  // read from outside the group
    };
    std::unordered_map<int, Group> acc;
    // Compacted in place: a dispatch's kernels follow those of the dispatches before it, and a
    // group only drops dispatches and kernels, so nothing is written past what is read.
    size_t wd = 0, wk = 0;
    for (size_t rd = 0; rd < work_.dispatches.size(); ++rd) {
      const DispatchWork d = work_.dispatches[rd];
      const int i = d.op_index;
      if (i >= 0 && single[size_t(i)] >= 0 && size[size_t(find(i))] > 1) {
        const int r = find(i);
        const KernelWork& k = work_.kernels[size_t(d.first_kernel)];
        double flops = 0;  // a batch norm's every kernel
        for (int m = 0; m < d.num_kernels; ++m) flops += work_.kernels[size_t(d.first_kernel + m)].flops;
        auto [it, fresh] = acc.try_emplace(r, Group{k, {}});
        it->second.k.variant = KernelVariant::kPlain;  // NNC's own generated kernel
        if (fresh && is_bn[size_t(i)]) {  // an element-wise kernel over the batch norm's output
          it->second.k.cls = KernelClass::kElementwise;
          it->second.k.dtype = opt_.precision;
          it->second.k.m = it->second.k.n = it->second.k.k = 0;  // no batch-norm shape
          it->second.k.batch = 1;
        }
        it->second.k.flops = fresh ? flops : it->second.k.flops + flops;
        for (const std::string& in : g_.ops[size_t(i)].inputs) {
          if (in.empty() || internal(i, in)) continue;
          bool seen = false;
          for (const std::string* s : it->second.inputs) seen |= *s == in;
          if (!seen) it->second.inputs.push_back(&in);
        }
        if (i != last[size_t(r)]) continue;
        // The fused kernel reads each outside input once and writes the group's result.
        double bytes = std::max(0.0, Bytes(g_.ops[size_t(i)].outputs[0]));
        for (const std::string* in : it->second.inputs) bytes += std::max(0.0, Bytes(*in));
        it->second.k.bytes = bytes;
        DispatchWork nd = d;
        nd.first_kernel = int(wk);
        work_.kernels[wk++] = it->second.k;
        work_.dispatches[wd++] = nd;
        continue;
      }
      DispatchWork nd = d;
      nd.first_kernel = int(wk);
      if (wk != size_t(d.first_kernel))
        for (int k = 0; k < d.num_kernels; ++k) work_.kernels[wk + size_t(k)] = work_.kernels[size_t(d.first_kernel + k)];
      wk += size_t(d.num_kernels);
      work_.dispatches[wd++] = nd;
    }
    work_.dispatches.resize(wd);
    work_.kernels.resize(wk);
  }

  void Dispatch(DispatchClass c, int op_index, int first_kernel) {
    DispatchWork d;
    d.cls = c;
    d.op_index = op_index;
    // The op's own cost key, where it is dispatched as its rule says (a view that copies, or a
    // host scalar op, is priced by the class it became).
    if (op_index >= 0 && size_t(op_index) < g_.ops.size()) {
      const Op& op = g_.ops[size_t(op_index)];
      const RuleSlot& slot = SlotFor(op);
      if (slot.rule && slot.rule->dispatch_class == c && slot.cost_key && !slot.cost_key->empty())
        d.cost_key = IsLinearMatMul(op) ? &DispatchCostKey("aten", "linear") : slot.cost_key;
    }
    d.first_kernel = first_kernel;
    d.num_kernels = int(work_.kernels.size()) - first_kernel;
    work_.dispatches.push_back(d);
  }

  Status LowerOp(int index, const Op& op) {
    const LoweringRule* found = RuleFor(op);
    LoweringRule rule;
    auto qualified = [&op] { return (op.domain.empty() ? "" : op.domain + "::") + op.type; };
    if (found) {
      rule = *found;
    } else if (CostRegistry::Default().Has(op.domain, op.type)) {
      generic_[qualified()]++;
      rule = LoweringRule{true, DispatchClass::kKernel, KernelRecipe::kCounted, false};
    } else {
      unknown_[qualified()]++;
      rule = LoweringRule{true, DispatchClass::kKernel, KernelRecipe::kElementwise, false};
    }
    const bool onnx = !IsAten(op.domain);
    if (onnx && rule.recipe != KernelRecipe::kNone && IsShapeArithmetic(op)) return Status::Ok();
    // A trace records Python's int arithmetic on sizes (Swin's window padding: floor_divide,
    // remainder, rsub on 0-d tensors made from sizes) as aten ops on CPU scalars. They launch
    // no GPU kernel and are no node of a CUDA graph; the eager module runs them as Python ints
    // (no op at all), the TorchScript interpreter as CPU ops (a dispatch each). CUPTI, H100,
    // Swin-T fp16 batch 1: 400 kernels per replay, where pricing these 225 ops gave 578.
    if (!onnx && rule.recipe != KernelRecipe::kNone && IsHostScalarArithmetic(op)) {
      if (!RunsPythonCode()) Dispatch(DispatchClass::kView, index, int(work_.kernels.size()));
      return Status::Ok();
    }
    if (!onnx) {
      switch (HostPlacement(op)) {
        case Placement::kHostOp:  // runs on the CPU: a dispatch, no kernel
          if (rule.dispatch) Dispatch(DispatchClass::kView, index, int(work_.kernels.size()));
          return Status::Ok();
        case Placement::kUpload:  // a copy from pageable memory: waits for the GPU
          Dispatch(DispatchClass::kKernel, index, int(work_.kernels.size()));
          work_.dispatches.back().waits_for_gpu = true;
          uploads_.push_back(op.name);
          return Status::Ok();
        case Placement::kDevice:
          break;
      }
    }
    if (rule.bias_foldable && IsFoldedBias(op)) return Status::Ok();
    if (!rule.dispatch) return Status::Ok();

    const bool is_view_like = rule.recipe == KernelRecipe::kNone;
    static const std::string kEmpty;
    const std::string& in0 = op.inputs.empty() ? kEmpty : op.inputs[0];
    const LayoutKind layout = Layout(op.type);
    // Slices and chunks of a tensor are views that are in general not contiguous.
    if (IsAten(op.domain) && IsSlicing(op.type))
      for (const auto& o : op.outputs) AddToSet(sliced_, o);
    // Layout: transposes make non-contiguous views; a reshape/flatten/contiguous of one copies.
    if (layout == LayoutKind::kTranspose) {
      // Fused attention kernels write their output as [B, S, heads, d] and return it as a
      // transposed view, so transposing it back yields a contiguous tensor (no copy later);
      // so does moving the channels of a channels-last tensor last.
      if (!InSet(attention_out_, in0) && !(PermutesTo(op, {0, 2, 3, 1}) && InSet(channels_last_, in0)) &&
          !MovesOnlyUnitDims(op)) {
        const int64_t run = RunAfterPermute(op);
        for (const auto& o : op.outputs) {
          AddToSet(strided_, o);
          if (run > 0) run_[o] = run;
        }
      }
    }
    TrackChannelsLast(op, layout, rule.recipe);
    TrackBatchStrided(op, layout, is_view_like);
    if (rule.recipe == KernelRecipe::kAttention && AttentionWritesTokenMajor(op))
      for (const auto& o : op.outputs) AddToSet(attention_out_, o);
    // A reshape or view to the same shape is an alias (transformers 5's `attn_output.reshape`
    // right after SDPA): it keeps the fused kernel's layout.
    if (layout == LayoutKind::kReshape && !op.outputs.empty() && InSet(attention_out_, in0)) {
      const Shape* a = ShapeOf(in0);
      const Shape* b = ShapeOf(op.outputs[0]);
      if (a && b && *a == *b) AddToSet(attention_out_, op.outputs[0]);
    }
    KernelRecipe recipe = rule.recipe;
    DispatchClass dclass = rule.dispatch_class;
    const bool reshape_like = layout == LayoutKind::kReshape || layout == LayoutKind::kContiguous;
    const bool in0_strided =
        (reshape_like || (is_view_like && layout != LayoutKind::kTranspose)) && InSet(strided_, in0);
    if (reshape_like && in0_strided) {
      recipe = KernelRecipe::kCopy;
      dclass = DispatchClass::kKernel;
    } else if (layout == LayoutKind::kContiguous) {
      recipe = KernelRecipe::kNone;
      dclass = DispatchClass::kView;
    } else if (is_view_like && layout != LayoutKind::kTranspose && in0_strided) {
      for (const auto& o : op.outputs) {  // views of a strided view stay strided
        AddToSet(strided_, o);
        if (RunOf(in0) > 0) run_[o] = RunOf(in0);
      }
    }
    if (recipe == KernelRecipe::kElementwise && IsAten(op.domain) && !IsTorchCompile(opt_.framework))
      KeepPermutedLayout(op);

    // An op whose output has no elements launches no kernel (ATen returns before the launch):
    // a KV cache's empty initial tensors, cast with `to` before the first concatenation.
    if (recipe != KernelRecipe::kNone && !op.outputs.empty() && Numel(op.outputs[0]) == 0) recipe = KernelRecipe::kNone;
    const int first = int(work_.kernels.size());
    const double repeat = std::max(1.0, op.repeat);
    // torch.roll over several dims rolls one dim at a time, a kernel each
    // (KernelFacts::roll_kernel_per_dim).
    const int per_call = opt_.facts.roll_kernel_per_dim && IsAten(op.domain) && op.type == "roll"
                             ? std::max<int>(1, int(op.IntsAttr("dims").size()))
                             : 1;
    for (int r = 0; r < int(repeat); ++r) {
      for (int c = 0; c < per_call && recipe != KernelRecipe::kNone; ++c) {
        Status s = AddKernels(index, op, recipe);
        if (!s.ok()) return s;
      }
      Dispatch(dclass, index, r == 0 ? first : int(work_.kernels.size()));
    }
    return Status::Ok();
  }

  // A dense tensor whose memory order is not its logical order: a transpose's output, or an
  // element-wise result of one. Channels-last tensors are tracked apart (TrackChannelsLast),
  // and slices are not dense.
  bool Permuted(const std::string& t) const {
    return InSet(strided_, t) && !InSet(channels_last_, t) && !InSet(sliced_, t);
  }

  // ATen's TensorIterator gives an element-wise result the memory layout of its first
  // full-size operand, so a permuted layout outlives the transpose that made it: Whisper's
  // encoder adds positions to its transposed convolution output, and every residual add
  // after keeps that layout (so each layer norm of the stream copies first, and each add of
  // it to a contiguous tensor is ATen's strided kernel). CUPTI, H200, Whisper-base encoder
  // fp16: 15 strided adds and 37 strided copies, 13 of them before its 13 layer norms.
  // Only a trace's ops follow these strides: an exporter's Transposes are its own rewriting
  // of the network (ViT's exported attention transposes its output back to batch-first,
  // where the trace's fused call returns it so), not the layouts PyTorch runs.
  void KeepPermutedLayout(const Op& op) {
    if (op.outputs.empty()) return;
    const Shape* o = ShapeOf(op.outputs[0]);
    if (!o) return;
    for (const std::string& in : op.inputs) {
      const Shape* x = ShapeOf(in);
      if (!x || *x != *o) continue;
      if (Permuted(in)) {
        AddToSet(strided_, op.outputs[0]);
        if (RunOf(in) > 0) run_[op.outputs[0]] = RunOf(in);
      }
      return;
    }
  }

  // Whether a fused attention's output is laid out token-major ([B, S, heads, d] memory), so
  // that transposing it back is free. PyTorch's flash and memory-efficient kernels always
  // write it so; cuDNN's, which runs half-precision attention on these GPUs, allocates its
  // output in the query's layout: token-major for a head split's transposed view (BERT), but
  // head-major for a query made contiguous first (Whisper's `.transpose(1, 2).contiguous()`),
  // whose transpose back then copies. CUPTI, H200, Whisper-base encoder fp16: one strided
  // copy per attention call after the transpose back.
  bool AttentionWritesTokenMajor(const Op& op) const {
    const bool half = opt_.precision == DType::kFloat16 || opt_.precision == DType::kBFloat16;
    if (!half || IsTorchCompile(opt_.framework) || !IsAten(op.domain) || op.inputs.empty()) return true;
    return InSet(strided_, op.inputs[0]);
  }

  // Whether the permutation of a permute (aten `dims`) or Transpose (`perm`) is `perm`.
  static bool PermutesTo(const Op& op, std::initializer_list<int64_t> perm) {
    const std::vector<int64_t> p = op.IntsAttr(IsAten(op.domain) ? "dims" : "perm");
    return p.size() == perm.size() && std::equal(p.begin(), p.end(), perm.begin());
  }

  // Views whose leading dims (all but the last two) are no longer laid out one after the
  // other: a permute or transpose that moves any of them (Swin's qkv.permute(2, 0, 3, 1, 4),
  // a head split's transpose(1, 2)), and views of such a view (q = qkv[0], k.transpose(-2,
  // -1)). A fused attention's transposed output is contiguous (attention_out_).
  void TrackBatchStrided(const Op& op, LayoutKind layout, bool is_view_like) {
    if (op.inputs.empty() || op.outputs.empty()) return;
    const std::string& in0 = op.inputs[0];
    bool marks = false;
    if (layout == LayoutKind::kTranspose) {
      marks = InSet(batch_strided_, in0) || (!InSet(attention_out_, in0) && MovesLeadingDims(op));
    } else if (layout == LayoutKind::kOther && (is_view_like || IsOnnxSelect(op))) {
      marks = InSet(batch_strided_, in0);  // select, slice, unsqueeze, expand of one
    }
    if (marks) AddToSet(batch_strided_, op.outputs[0]);
  }

  // An ONNX Gather of one index along an axis: the exporters' form of a select (q = qkv[0]).
  bool IsOnnxSelect(const Op& op) const {
    if (!op.domain.empty() || !Eq(op.type, "Gather") || op.inputs.size() < 2) return false;
    const Shape* idx = ShapeOf(op.inputs[1]);
    return idx && idx->empty();
  }

  // Whether a permute or transpose keeps the order of every dim larger than 1 (ConvNeXt's
  // permute of a pooled [N, C, 1, 1] tensor): its output is contiguous.
  bool MovesOnlyUnitDims(const Op& op) const {
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const std::vector<int64_t> p = PermOf(op);
    if (!x || p.empty()) return false;
    int64_t last = -1;
    for (int64_t d : p) {
      const Dim& dim = (*x)[size_t(d)];
      if (!dim.known()) return false;
      if (dim.value == 1) continue;
      if (d < last) return false;
      last = d;
    }
    return true;
  }

  // The permutation a transpose, permute or Transpose applies, normalized (output dim i is
  // input dim p[i]); empty where it is not known.
  std::vector<int64_t> PermOf(const Op& op) const {
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    if (!x) return {};
    const int64_t rank = int64_t(x->size());
    auto norm = [rank](int64_t d) { return d < 0 ? d + rank : d; };
    std::vector<int64_t> p;
    if (Eq(op.type, "t")) {
      if (rank != 2) return {};
      p = {1, 0};
    } else if (Eq(op.type, "transpose")) {
      for (int64_t i = 0; i < rank; ++i) p.push_back(i);
      const int64_t a = norm(op.IntAttr("dim0", 0)), b = norm(op.IntAttr("dim1", 1));
      if (a < 0 || b < 0 || a >= rank || b >= rank) return {};
      std::swap(p[size_t(a)], p[size_t(b)]);
    } else {
      p = op.IntsAttr(IsAten(op.domain) ? "dims" : "perm");
    }
    if (int64_t(p.size()) != rank) return {};
    for (int64_t& d : p) {
      d = norm(d);
      if (d < 0 || d >= rank) return {};
    }
    return p;
  }

  // The elements a permute's output keeps contiguous from its input: the product of the
  // trailing dims it leaves in place (a head split's head dim, Swin's window rows of
  // channels), 1 for a permute that moves the last dim; the input's own run if that is
  // shorter (a permute of a permuted tensor). 0: not known.
  int64_t RunAfterPermute(const Op& op) const {
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const std::vector<int64_t> p = PermOf(op);
    if (!x || p.empty()) return 0;
    int64_t run = 1;
    for (size_t i = p.size(); i-- > 0;) {
      if (p[i] != int64_t(i)) break;
      if (!(*x)[i].known()) return 0;
      run *= (*x)[i].value;
    }
    const int64_t before = RunOf(op.inputs[0]);
    return before > 0 ? std::min(run, before) : run;
  }

  // The contiguous run of a permuted tensor (RunAfterPermute); 0 where not known, or for a
  // tensor that is not permuted.
  int64_t RunOf(const std::string& t) const {
    auto it = run_.find(t);
    return it == run_.end() ? 0 : it->second;
  }

  // A copy of permuted tensor `in` into its contiguous layout, shaped by the runs it moves
  // (work_list.h, KernelVariant::kPermute); left the plain copy where the runs are not known.
  void ShapePermuteCopy(const std::string& in, KernelWork* c) const {
    const int64_t run = RunOf(in);
    const double elems = Numel(in);
    if (run <= 0 || !(elems >= double(run))) return;
    c->variant = KernelVariant::kPermute;
    c->n = run;
    c->m = int64_t(elems / double(run) + 0.5);
    c->k = 1;
    c->batch = 1;
  }

  // Whether a permute or transpose moves a dim other than the last two of its input.
  bool MovesLeadingDims(const Op& op) const {
    const std::vector<int64_t> p = PermOf(op);  // a 2-D transpose has no leading dims
    for (size_t i = 0; i + 2 < p.size(); ++i)
      if (p[i] != int64_t(i)) return true;
    return false;
  }

  // Memory format: which 4-D tensors are channels-last, NCHW sizes over NHWC memory. Moving
  // the channels of an NHWC tensor back to dim 1 (ConvNeXt's permute(0, 3, 1, 2)) makes one;
  // elementwise ops over it and windowed poolings of it keep it (TensorIterator follows the
  // strides of its inputs), and a convolution of it runs cuDNN's NHWC kernels and writes
  // NHWC. CUPTI, H100, ConvNeXt-S fp16: its depthwise 7x7 layers run
  // conv2d_c1_k1_nhwc_specialized.
  void TrackChannelsLast(const Op& op, LayoutKind layout, KernelRecipe recipe) {
    if (op.inputs.empty() || op.outputs.empty()) return;
    const std::string& out = op.outputs[0];
    if (layout == LayoutKind::kTranspose) {
      if (PermutesTo(op, {0, 3, 1, 2}) && !InSet(channels_last_, op.inputs[0])) AddToSet(channels_last_, out);
      return;
    }
    if (channels_last_.tensors.empty() && channels_last_.missing.empty()) return;
    const bool keeps = recipe == KernelRecipe::kConv || recipe == KernelRecipe::kElementwise ||
                       (recipe == KernelRecipe::kReduction && IsWindowPool(op.type));
    if (!keeps) return;
    const Shape* o = ShapeOf(out);
    if (!o || o->size() != 4) return;
    const size_t n = recipe == KernelRecipe::kElementwise ? op.inputs.size() : 1;
    for (size_t i = 0; i < n; ++i) {
      if (!InSet(channels_last_, op.inputs[i])) continue;
      const Shape* x = ShapeOf(op.inputs[i]);
      if (recipe != KernelRecipe::kElementwise || (x && *x == *o)) {
        AddToSet(channels_last_, out);
        return;
      }
    }
  }

  // An op's kernels: the main one its recipe describes (the *Work helpers below fill its class,
  // shape, FLOPs and bytes), then the side kernels the host's PyTorch launches around it.
  Status AddKernels(int index, const Op& op, KernelRecipe recipe) {
    KernelWork k;
    k.op_index = index;
    k.dtype = opt_.precision;
    static const std::string kNone;
    const std::string& out = op.outputs.empty() ? kNone : op.outputs[0];
    const double out_bytes = Bytes(out);
    if (out_bytes < 0) return Missing(op, out);
    Status s = Status::Ok();
    switch (recipe) {
      case KernelRecipe::kNone: return Status::Ok();
      case KernelRecipe::kLinear: s = LinearWork(op, out, &k); break;
      case KernelRecipe::kMatMul:
      case KernelRecipe::kGemmOnnx: s = MatMulWork(op, recipe, out, out_bytes, &k); break;
      case KernelRecipe::kConv: s = ConvWork(op, out, out_bytes, &k); break;
      case KernelRecipe::kAttention: return AddAttention(index, op, out_bytes, &k);
      case KernelRecipe::kReduction:
      case KernelRecipe::kNorm:
      case KernelRecipe::kElementwise: PointwiseWork(op, recipe, out, &k); break;
      case KernelRecipe::kNativeMha: return AddNativeMha(index, op);
      case KernelRecipe::kCounted: {
        Expected<bool> launches = CountedWork(op, &k);
        if (!launches.ok()) return launches.status();
        if (!launches.value()) return Status::Ok();
        break;
      }
      case KernelRecipe::kCopy: CopyWork(op, out_bytes, &k); break;
      case KernelRecipe::kGather: GatherWork(op, out_bytes, &k); break;
    }
    if (!s.ok()) return s;
    NormVariant(op, recipe, &k);
    if (recipe == KernelRecipe::kNorm && IsLayerNorm(op) && IsAten(op.domain) && !IsTorchCompile(opt_.framework) &&
        Permuted(op.inputs[0]) && Bytes(op.inputs[0]) > 0) {
      // Layer norm reads a contiguous input: ATen copies a permuted one first (Whisper's
      // residual stream, KeepPermutedLayout).
      KernelWork c;
      c.op_index = index;
      c.dtype = opt_.precision;
      c.cls = KernelClass::kCopy;
      c.bytes = 2.0 * Bytes(op.inputs[0]);
      ShapePermuteCopy(op.inputs[0], &c);
      work_.kernels.push_back(c);
    }
    if (recipe == KernelRecipe::kConv && k.cls == KernelClass::kConv && inductor_channels_last_ &&
        (k.variant == KernelVariant::kNhwc || k.variant == KernelVariant::kNhwcGroupedNonPow2))
      AddInductorLayoutCopies(index, op);
    work_.kernels.push_back(k);
    AddSideKernels(index, op, recipe, out, out_bytes);
    return Status::Ok();
  }

  // The copies torch.compile's wrapper makes on every call for a convolution it runs
  // channels-last: the weight (a graph input, stored NCHW, as Inductor does not freeze
  // parameters by default) into an NHWC buffer, and likewise a model input the convolution
  // reads. Each is a Triton kernel inside the library call's stretch of the wrapper, which
  // the bench's compiled convolution chains time with it (2 kernels per convolution). Seen in
  // the wrapper torch 2.11 generated for ResNet-50 on an H200: 18 such copies, the image and
  // the weights of the 7x7 and the sixteen 3x3 convolutions; a 1x1 weight is NHWC as stored.
  void AddInductorLayoutCopies(int index, const Op& op) {
    auto copy = [&](double bytes) {
      KernelWork c;
      c.op_index = index;
      c.dtype = opt_.precision;
      c.cls = KernelClass::kCopy;
      c.variant = KernelVariant::kContiguous;  // a Triton loop over the tensor, not ATen's strided copy
      c.bytes = 2.0 * bytes;
      work_.kernels.push_back(c);
    };
    if (std::find(g_.inputs.begin(), g_.inputs.end(), op.inputs[0]) != g_.inputs.end() && Bytes(op.inputs[0]) > 0)
      copy(Bytes(op.inputs[0]));
    const double weight = Bytes(op.inputs[1]);
    if (weight > 0) copy(weight);
  }

  // nn.Linear's x @ W^T, or aten::addmm(bias, x, w): one GEMM.
  Status LinearWork(const Op& op, const std::string& out, KernelWork* kw) {
    if (op.inputs.size() < 2) return InvalidInput("node '" + op.name + "': linear needs x and weight");
    const Shape* w = ShapeOf(op.inputs[1]);
    if (!w || w->size() != 2 || !(*w)[0].known() || !(*w)[1].known()) return Missing(op, op.inputs[1]);
    // aten::linear weight is [out, in]; aten::addmm(bias, x, w) has w [in, out].
    bool addmm = Eq(op.type, "addmm");
    const Shape* wa = addmm ? ShapeOf(op.inputs.size() > 2 ? op.inputs[2] : "") : w;
    if (!wa || wa->size() != 2) return Missing(op, op.inputs.size() > 2 ? op.inputs[2] : "weight");
    int64_t n = addmm ? (*wa)[1].value : (*wa)[0].value;
    int64_t kk = addmm ? (*wa)[0].value : (*wa)[1].value;
    double out_n = Numel(out);
    kw->cls = KernelClass::kGemm;
    kw->n = n;
    kw->k = kk;
    kw->m = int64_t(out_n / double(n));
    kw->flops = 2.0 * double(kw->m) * double(n) * double(kk);
    kw->bytes = (double(kw->m) * kk + double(n) * kk + double(kw->m) * n + n) * DTypeSize(kw->dtype);
    // Eager addmm fuses the bias into cuBLASLt's epilogue; TorchScript decomposes it into
    // mm and a broadcast add (see the bias kernel below).
    if (addmm) kw->variant = AddmmRunsAsMmAndAdd() ? KernelVariant::kGemmNN : KernelVariant::kGemmNNBias;
    return Status::Ok();
  }

  // A matrix product (aten::matmul, ONNX MatMul and Gemm): one GEMM, batched where both
  // operands are.
  Status MatMulWork(const Op& op, KernelRecipe recipe, const std::string& out, double out_bytes,
                    KernelWork* kw) {
    if (op.inputs.size() < 2) return InvalidInput("node '" + op.name + "': matmul needs two inputs");
    const Shape* a = ShapeOf(op.inputs[0]);
    const Shape* b = ShapeOf(op.inputs[1]);
    const Shape* o = ShapeOf(out);
    if (!a || a->empty()) return Missing(op, op.inputs[0]);
    if (!b || b->empty()) return Missing(op, op.inputs[1]);
    if (!o) return Missing(op, out);
    int64_t kk;
    if (recipe == KernelRecipe::kGemmOnnx) {
      kk = op.IntAttr("transA", 0) ? (*a)[0].value : a->back().value;
    } else {
      kk = a->back().value;
    }
    double out_n = Numel(out);
    int64_t n = o->empty() ? 1 : o->back().value;
    if (b->size() <= 2 || recipe == KernelRecipe::kGemmOnnx) {
      // Weight-like right operand: the batch folds into M. In PyTorch it is stored [k, n]
      // (x @ W), which cuBLAS runs with other kernels than nn.Linear's x @ W^T.
      kw->batch = 1;
      kw->m = int64_t(out_n / double(std::max<int64_t>(n, 1)));
      if (IsAten(op.domain) && recipe == KernelRecipe::kMatMul) kw->variant = KernelVariant::kGemmNN;
    } else {
      kw->m = o->size() >= 2 ? (*o)[o->size() - 2].value : 1;
      kw->batch = int64_t(out_n / double(std::max<int64_t>(kw->m * n, 1)));
    }
    kw->cls = KernelClass::kGemm;
    kw->n = n;
    kw->k = kk;
    kw->flops = 2.0 * out_n * double(kk);
    if (GemmIsAddmm(op, recipe)) kw->variant = AddmmRunsAsMmAndAdd() ? KernelVariant::kGemmNN : KernelVariant::kGemmNNBias;
    double ba = Bytes(op.inputs[0]), bb = Bytes(op.inputs[1]);
    if (ba < 0) return Missing(op, op.inputs[0]);
    if (bb < 0) return Missing(op, op.inputs[1]);
    kw->bytes = ba + bb + out_bytes;
    return Status::Ok();
  }

  // A convolution: an implicit GEMM, or a depthwise kernel priced by its bytes.
  Status ConvWork(const Op& op, const std::string& out, double out_bytes, KernelWork* kw) {
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const Shape* w = ShapeOf(op.inputs.size() > 1 ? op.inputs[1] : "");
    const Shape* o = ShapeOf(out);
    if (!x || x->size() < 3) return Missing(op, op.inputs.empty() ? "input" : op.inputs[0]);
    if (!w || w->size() < 3) return Missing(op, op.inputs.size() > 1 ? op.inputs[1] : "weight");
    if (!o) return Missing(op, out);
    int64_t groups = op.IntAttr("group", op.IntAttr("groups", 1));
    int64_t cin = (*x)[1].value, cout = (*w)[0].value, cin_g = (*w)[1].value;
    double kernel = 1;
    for (size_t i = 2; i < w->size(); ++i) kernel *= double((*w)[i].value);
    double spatial = 1;
    for (size_t i = 2; i < o->size(); ++i) spatial *= double((*o)[i].value);
    kw->cls = (groups > 1 && cin_g == 1 && groups == cin) ? KernelClass::kDepthwise : KernelClass::kConv;
    kw->m = int64_t(double((*o)[0].value) * spatial);
    kw->n = cout / std::max<int64_t>(groups, 1);
    kw->k = int64_t(double(cin_g) * kernel);
    kw->batch = groups;
    kw->flops = 2.0 * double(kw->m) * double(kw->n) * double(kw->k) * double(groups);
    double bx = Bytes(op.inputs[0]), bw = Bytes(op.inputs[1]);
    kw->bytes = bx + bw + out_bytes;
    // Under torch.compile's channels-last layout a dense or grouped convolution with a kernel
    // over 1x1 runs without its layout transposes, and a depthwise one runs cuDNN's NHWC
    // depthwise kernel (CUPTI, H200 host run ce, MobileNetV3-Small under reduce-overhead:
    // conv2d_c1_k1_nhwc, 4.8 us a layer at batch 1, its Python eager NCHW kernel 2.4). A 1x1
    // one runs as a GEMM in either layout (kPointwise, no transposes), and a patch embedding
    // keeps its own measured points (kPatchify), the bench having none of it channels-last.
    const bool nhwc = InSet(channels_last_, op.inputs[0]) ||
                      (inductor_channels_last_ && x->size() == 4 &&
                       ((kw->cls == KernelClass::kConv && kernel > 1 && !IsPatchify(op, *w)) ||
                        kw->cls == KernelClass::kDepthwise));
    if (kw->cls == KernelClass::kDepthwise) {
      // A depthwise kernel is priced by its bytes; a large-kernel or channels-last one by
      // its geometry too (outputs per channel, channels, kernel area), since 5x5 and 7x7
      // layers of equal bytes differ in time.
      if (kernel > 9 || nhwc) {
        kw->variant = nhwc ? KernelVariant::kNhwc : KernelVariant::kLargeKernel;
        kw->n = cout;
        kw->k = int64_t(kernel);
        kw->batch = 1;
      } else {
        kw->m = kw->n = kw->k = 0;
      }
    } else if (nhwc) {
      kw->variant = ChannelsLastVariant(groups, kw->n);
    } else if (groups > 1) {
      kw->variant = GroupedVariant(kw->n);
    } else if (kernel == 1 && inductor_channels_last_ && x->size() == 4) {
      // Under torch.compile both the input and the weight (a 1x1 weight is channels-last as
      // stored) are NHWC: cuDNN runs one cuBLASLt GEMM, no layout transposes.
      kw->variant = KernelVariant::kPointwiseNhwc;
    } else if (kernel == 1) {
      // Odd positions per image (7x7, 17x17, 35x35) in NCHW leave the GEMM's rows aligned to
      // one element, and the library runs other kernels for it (channels-last rows are not).
      const bool odd = !inductor_channels_last_ && spatial > 1 && std::fmod(spatial, 2.0) == 1.0;
      kw->variant = odd ? KernelVariant::kPointwiseOdd : KernelVariant::kPointwise;
      if (odd) {
        // The library runs it as one GEMM per image (its rows are the image's positions, whose
        // odd count sets the alignment), so it is shaped so: m = positions, batch = images.
        // Inception-v3's 17x17 layers at batch 8 then lie near the bench's 15x15 rows at batch
        // 8, which ran the same cutlass kernels, not near 7x7 rows at batch 64 of similar m,
        // which ran cuDNN's NHWC kernels (CUPTI, H200, host run bn).
        kw->m = int64_t(spatial);
        kw->batch = (*o)[0].value;
      }
    } else if (IsPatchify(op, *w)) {
      kw->variant = KernelVariant::kPatchify;
    }
    return Status::Ok();
  }

  // Fused attention (scaled_dot_product_attention and its forms): its kernel, then the side
  // kernels around it (AddAttentionAux).
  Status AddAttention(int index, const Op& op, double out_bytes, KernelWork* kw) {
    const Shape* q = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const Shape* kv = ShapeOf(op.inputs.size() > 1 ? op.inputs[1] : "");
    if (!q || q->size() != 4) return Missing(op, op.inputs.empty() ? "query" : op.inputs[0]);
    if (!kv || kv->size() != 4) return Missing(op, op.inputs.size() > 1 ? op.inputs[1] : "key");
    double bh = double((*q)[0].value) * double((*q)[1].value);
    double sq = double((*q)[2].value), d = double((*q)[3].value), sk = double((*kv)[2].value);
    // HF models drop an all-ones padding mask in eager mode (a data-dependent check), while
    // a trace keeps it: eager runs the unmasked kernel, TorchScript the masked one. So does
    // a graph captured from the eager module: during a capture the check cannot read the
    // mask, and the mask is kept (CUPTI, H100, BERT-base fp16: 168 kernels per eager call,
    // 214 per replay of its graph, with a where and two fills per layer). torch.compile
    // passes the mask to the same cuDNN kernel eager runs unmasked, building it once per
    // call in a Triton kernel (CUPTI, H100, BERT-base fp16: 12 cuDNN SDPA kernels and 12
    // memsets per call, no where). That kernel reads the mask: it took 1.47x eager's time on
    // the calibration models BERT-base and DistilBERT (host run u, H100: 73.4 against 50.1
    // us a call at batch 1, as the trace's masked kernel, 68.9), so it is priced as the
    // masked kernel, with none of the trace's side kernels.
    const bool masked = op.inputs.size() > 3 && !op.inputs[3].empty() &&
                        !(RunsEagerCode() && IsAten(op.domain));
    kw->cls = masked ? KernelClass::kAttentionMasked : KernelClass::kAttention;
    kw->flops = 4.0 * bh * sq * sk * d;
    kw->m = int64_t(sq);
    kw->n = 1;  // one tile column: the head dim fits a tile
    kw->k = int64_t(sk * d / 64.0 + 0.5);
    kw->batch = int64_t(bh);
    kw->bytes = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      double b = Bytes(op.inputs[i]);
      if (b > 0) kw->bytes += b;
    }
    kw->bytes += out_bytes;
    work_.kernels.push_back(*kw);
    AddAttentionAux(index, op, bh, sq, sk, op.inputs.size() > 3 && !op.inputs[3].empty());
    return Status::Ok();
  }

  // Element-wise ops, reductions and norms: memory-bound kernels priced by their bytes.
  void PointwiseWork(const Op& op, KernelRecipe recipe, const std::string& out, KernelWork* kw) {
    kw->cls = recipe == KernelRecipe::kReduction ? KernelClass::kReduction
            : recipe == KernelRecipe::kNorm    ? KernelClass::kNorm
                                               : KernelClass::kElementwise;
    double in_bytes = 0;
    for (const std::string& in : op.inputs) {
      double b = Bytes(in);
      if (b > 0) in_bytes += b;
    }
    double total_out = 0;
    for (const std::string& o : op.outputs) {
      double b = Bytes(o);
      if (b > 0) total_out += b;
    }
    kw->bytes = in_bytes + total_out;
    double n = Numel(out);
    kw->flops = (recipe == KernelRecipe::kElementwise ? 1.0 : 5.0) * std::max(n, 0.0);
    if (recipe == KernelRecipe::kReduction && IsWindowPool(op.type)) kw->variant = KernelVariant::kPool;
    if (recipe == KernelRecipe::kElementwise) {
      // An operand broadcast along a dimension (a bias row over a matrix) keeps ATen's
      // TensorIterator off its vectorized path.
      for (const std::string& in : op.inputs) {
        const double e = Numel(in);
        if (e > 1 && e < n) kw->variant = KernelVariant::kBroadcast;
      }
      // So do full-size operands of different layouts (a permuted tensor and a contiguous
      // one: Whisper's residual adds, KeepPermutedLayout), which run slower still: one of
      // them is read uncoalesced (the strided variant).
      if (kw->variant == KernelVariant::kPlain && IsAten(op.domain) && !IsTorchCompile(opt_.framework)) {
        bool permuted = false, other = false;
        for (const std::string& in : op.inputs)
          if (n > 1 && Numel(in) == n) (Permuted(in) ? permuted : other) = true;
        if (permuted && other) kw->variant = KernelVariant::kStrided;
      }
    }
  }

  // An op the cost registry counts (graph/op_cost.h); false when it launches no work.
  Expected<bool> CountedWork(const Op& op, KernelWork* kw) {
    Expected<OpCost> c = CostRegistry::Default().Count(g_, op);
    if (!c.ok()) return c.status();
    if (!c->launches_work) return false;
    kw->cls = c->macs > 0 ? KernelClass::kGemm : KernelClass::kElementwise;
    kw->flops = c->flops;
    // Counted bytes are at the file's dtypes; scale floating tensors to the run's.
    kw->bytes = (c->bytes_read + c->bytes_written) * ByteScale(op);
    return true;
  }

  // A copy (cat, contiguous, ...): twice the output's bytes.
  void CopyWork(const Op& op, double out_bytes, KernelWork* kw) {
    kw->cls = KernelClass::kCopy;
    kw->bytes = 2.0 * out_bytes;
    const LayoutKind layout = Layout(op.type);
    if ((layout == LayoutKind::kReshape || layout == LayoutKind::kContiguous) && !op.inputs.empty() &&
        InSet(strided_, op.inputs[0]))
      ShapePermuteCopy(op.inputs[0], kw);
    // A pad that pads nothing (Swin's window padding where the feature map is a whole number
    // of windows) is a clone: one device-to-device memcpy, at element-wise speed, not the
    // strided copy the copy class measures. CUPTI, H200, Swin-T fp16 batch 1: 15 pads, 15
    // Memcpy DtoD.
    if ((Eq(op.type, "pad") || Eq(op.type, "constant_pad_nd")) && IsAten(op.domain) && !op.inputs.empty() &&
        !op.outputs.empty() && !InSet(strided_, op.inputs[0]) && !InSet(sliced_, op.inputs[0])) {
      const Shape* a = ShapeOf(op.inputs[0]);
      const Shape* b = ShapeOf(op.outputs[0]);
      if (a && b && *a == *b) kw->variant = KernelVariant::kContiguous;
    }
    // torch.roll's kernel (roll_cuda_kernel, one a dim) finds each output's source by index
    // arithmetic over the rolled dim, unvectorized: not the strided transpose the copy class
    // measures, nor element-wise speed, but the strided element-wise variant's (by the
    // broadcast rows where a bench has none). CUPTI, H200, Swin-T fp16 batch 8 (a calibration
    // model, host run ay): 20 roll kernels of 2.4 to 9.6 MB, 5.64 us each, where element-wise
    // speed gives about 2.
    if (Eq(op.type, "roll") && IsAten(op.domain) && !op.inputs.empty() && !InSet(strided_, op.inputs[0])) {
      kw->cls = KernelClass::kElementwise;
      kw->variant = KernelVariant::kStrided;
    }
    // Concatenating contiguous tensors copies whole blocks (ATen's vectorized
    // CatArrayBatchedCopy): elementwise speed, not the strided transpose the copy class
    // measures. With a transposed or sliced input ATen runs its strided kernel, which the
    // copy class prices. (CUPTI, H100, fp16, batch 64: DenseNet-121's 58 concatenations
    // of contiguous tensors 1.41 ms, vectorized; GPT-2's 48 with a transposed key or value
    // 1.92 ms, ShuffleNetV2's 13 with a chunk 0.19 ms, neither vectorized; so are the
    // 24 of GPT-2's cache that join an empty tensor and the past.)
    if (Eq(op.type, "cat") || Eq(op.type, "stack") || Eq(op.type, "Concat") ||
        Eq(op.type, "concat")) {
      bool contiguous_inputs = true;
      for (const auto& in : op.inputs)
        if (InSet(strided_, in) || InSet(sliced_, in) || Numel(in) == 0) contiguous_inputs = false;
      if (contiguous_inputs) kw->variant = KernelVariant::kContiguous;
    }
  }

  // An embedding lookup: the rows it reads and writes, and its indices.
  void GatherWork(const Op& op, double out_bytes, KernelWork* kw) {
    kw->cls = KernelClass::kGather;
    double idx = op.inputs.size() > 1 ? Bytes(op.inputs[1]) : 0;
    kw->bytes = 2.0 * out_bytes + std::max(idx, 0.0);
  }

  static bool IsLayerNorm(const Op& op) {
    return !op.inputs.empty() &&
           ((IsAten(op.domain) && (Eq(op.type, "layer_norm") || Eq(op.type, "native_layer_norm"))) ||
            (op.domain.empty() && Eq(op.type, "LayerNormalization")));
  }

  // The norm variants: a batch norm, and a layer norm shaped by its rows and normalized size.
  void NormVariant(const Op& op, KernelRecipe recipe, KernelWork* kw) {
  if (recipe == KernelRecipe::kNorm &&
      ((IsAten(op.domain) && Eq(op.type, "batch_norm")) || (op.domain.empty() && Eq(op.type, "BatchNormalization")))) {
    kw->variant = KernelVariant::kBatchNorm;
    // Shaped by its positions per channel (images x spatial size) and its channels: its
    // transform kernel's time follows the positions, not the bytes (InterpolatesTime).
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const double n = Numel(op.inputs.empty() ? "" : op.inputs[0]);
    if (x && x->size() >= 2 && (*x)[1].known() && (*x)[1].value > 0 && n > 0) {
      const double channels = double((*x)[1].value);
      kw->m = int64_t(n / channels + 0.5);
      kw->n = int64_t(channels);
      kw->k = 1;
      kw->batch = 1;
    }
  }
  if (recipe == KernelRecipe::kNorm && IsLayerNorm(op)) {
    // Shaped by its rows and the normalized size: the weight's elements (or, without one,
    // the last dim).
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    double hidden = op.inputs.size() > 1 && !op.inputs[1].empty() ? Numel(op.inputs[1]) : -1;
    if (!(hidden > 0) && x && !x->empty() && x->back().known()) hidden = double(x->back().value);
    const double n = Numel(op.inputs.empty() ? "" : op.inputs[0]);
    if (hidden > 0 && n >= hidden) {
      kw->variant = KernelVariant::kLayerNorm;
      kw->m = int64_t(n / hidden + 0.5);
      kw->n = int64_t(hidden);
      kw->k = 1;
      kw->batch = 1;
    }
  }
  }

  // The kernels the host's PyTorch launches beside an op's main one: half-precision batch
  // norm's statistics, a convolution's bias add, TorchScript's decomposed addmm bias.
  void AddSideKernels(int index, const Op& op, KernelRecipe recipe, const std::string& out,
                      double out_bytes) {
  const bool half = opt_.precision == DType::kFloat16 || opt_.precision == DType::kBFloat16;
  if (half && ((Eq(op.type, "batch_norm") && IsAten(op.domain)) ||
               (Eq(op.type, "BatchNormalization") && op.domain.empty()))) {
    // Half-precision inference batch norm is ATen's native kernel, not cuDNN's: small fp32
    // kernels over the channel statistics precede the transform
    // (KernelFacts::batch_norm_half_stat_kernels). An exported BatchNormalization the
    // exporter left unfolded (DenseNet's pre-activation ones) is the same module.
    const Shape* x = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const double channels = x && x->size() >= 2 && (*x)[1].known() ? double((*x)[1].value) : 0;
    for (int i = 0; i < opt_.facts.batch_norm_half_stat_kernels; ++i) {
      KernelWork c;
      c.op_index = index;
      c.dtype = DType::kFloat32;
      c.cls = KernelClass::kElementwise;
      c.flops = channels;
      c.bytes = channels * opt_.facts.batch_norm_stat_bytes_per_channel;
      work_.kernels.push_back(c);
    }
  }
  if (recipe == KernelRecipe::kConv && opt_.facts.conv_bias_kernel && (IsAten(op.domain) || op.domain.empty()) &&
      op.inputs.size() > 2 && !op.inputs[2].empty() && Numel(op.inputs[2]) > 0) {
    // ATen adds a convolution's bias after cuDNN's kernel, with its strided elementwise add
    // over the output; an ONNX Conv's bias is priced the same way (one more kernel over the
    // output either way; KernelFacts::conv_bias_kernel).
    KernelWork b;
    b.op_index = index;
    b.dtype = opt_.precision;
    b.cls = KernelClass::kElementwise;
    b.variant = KernelVariant::kBroadcast;
    b.flops = std::max(0.0, Numel(out));
    b.bytes = 2.0 * out_bytes + std::max(0.0, Bytes(op.inputs[2]));
    work_.kernels.push_back(b);
  }
  if (IsAten(op.domain) && Eq(op.type, "masked_fill")) {
    // Out-of-place masked_fill clones its input, then fills in place: a device-to-device copy
    // before the fill kernel (CUPTI, H200, Swin-T's attention masks: 10 masked_fill, 10
    // Memcpy DtoD beside their 10 fill kernels).
    KernelWork c;
    c.op_index = index;
    c.dtype = opt_.precision;
    c.cls = KernelClass::kCopy;
    c.variant = KernelVariant::kContiguous;
    c.bytes = 2.0 * out_bytes;
    work_.kernels.push_back(c);
  }
  if (recipe == KernelRecipe::kMatMul && (IsAten(op.domain) || op.domain.empty()) && op.inputs.size() >= 2) {
    // aten::matmul of operands with two or more batch dims folds each into [batch, rows,
    // cols] with reshape, which copies an operand whose batch dims are not laid out one after
    // the other (a head split's permuted q, k or v). CUPTI, H200, Swin-T fp16 batch 1: 24
    // strided copies beside the 24 products of q and k, and of the scores and v. An ONNX
    // MatMul of Transposes is the same call.
    const Shape* a = ShapeOf(op.inputs[0]);
    const Shape* b = ShapeOf(op.inputs[1]);
    if (a && b && a->size() >= 3 && b->size() >= 3 && std::max(a->size(), b->size()) >= 4) {
      for (int i = 0; i < 2; ++i) {
        const std::string& in = op.inputs[size_t(i)];
        const Shape* x = i == 0 ? a : b;
        if (x->size() < 4 || !InSet(batch_strided_, in)) continue;
        const double bytes = Bytes(in);
        if (bytes <= 0) continue;
        KernelWork c;
        c.op_index = index;
        c.dtype = opt_.precision;
        c.cls = KernelClass::kCopy;
        c.bytes = 2.0 * bytes;
        ShapePermuteCopy(in, &c);
        work_.kernels.push_back(c);
      }
    }
  }
  if (AddmmRunsAsMmAndAdd() && ((Eq(op.type, "addmm") && IsAten(op.domain)) || GemmIsAddmm(op, recipe))) {
    // aten::addmm(bias, x, w) as Hugging Face's Conv1D calls it (GPT-2): TorchScript's
    // DecomposeOps pass turns it into mm and an add of the broadcast bias, ATen's strided
    // elementwise kernel (CUPTI, H100 and H200); eager runs one cuBLASLt GEMM with a bias
    // epilogue.
    KernelWork b;
    b.op_index = index;
    b.dtype = opt_.precision;
    b.cls = KernelClass::kElementwise;
    b.variant = KernelVariant::kBroadcast;
    b.flops = Numel(out);
    b.bytes = 2.0 * out_bytes + std::max(0.0, Bytes(op.inputs.empty() ? "" : op.inputs[0]));
    work_.kernels.push_back(b);
  }
  }
  // The ratio of the run's float size to the op's first float tensor's (counted bytes are at
  // the dtypes the file declares).
  double ByteScale(const Op& op) const {
    for (const auto* names : {&op.inputs, &op.outputs})
      for (const std::string& n : *names) {
        const TensorInfo* t = n.empty() ? nullptr : Find(n);
        if (t && t->dtype != DType::kUnknown && IsFloat(t->dtype) && DTypeSize(t->dtype) > 0)
          return double(DTypeSize(opt_.precision)) / DTypeSize(t->dtype);
      }
    return 1.0;
  }

  // aten::_native_multi_head_attention(query, key, value, qkv_weight, qkv_bias, proj_weight,
  // proj_bias, mask?) with attributes embed_dim and num_head: what its CUDA implementation runs
  // for inference without attention weights: x @ qkv_weight^T + qkv_bias as one GEMM (for
  // self-attention; separate q and kv GEMMs otherwise), scaled_dot_product_attention over the
  // heads on strided views, and the output projection GEMM with bias.
  Status AddNativeMha(int index, const Op& op) {
    const std::string out = op.outputs.empty() ? "" : op.outputs[0];
    const Shape* q = ShapeOf(op.inputs.empty() ? "" : op.inputs[0]);
    const Shape* kv = ShapeOf(op.inputs.size() > 1 ? op.inputs[1] : "");
    if (!q || q->size() != 3 || !NumElements(*q)) return Missing(op, op.inputs.empty() ? "query" : op.inputs[0]);
    if (!kv || kv->size() != 3 || !NumElements(*kv)) return Missing(op, op.inputs.size() > 1 ? op.inputs[1] : "key");
    const int64_t b = (*q)[0].value, l = (*q)[1].value, e = (*q)[2].value, s = (*kv)[1].value;
    const int64_t heads = std::max<int64_t>(op.IntAttr("num_head", 1), 1);
    const int64_t d = e / heads;
    const int bytes = DTypeSize(opt_.precision);
    auto gemm = [&](int64_t m, int64_t n, int64_t kk) {
      KernelWork g;
      g.op_index = index;
      g.dtype = opt_.precision;
      g.cls = KernelClass::kGemm;
      g.m = m;
      g.n = n;
      g.k = kk;
      g.flops = 2.0 * double(m) * double(n) * double(kk);
      g.bytes = (double(m) * kk + double(n) * kk + double(m) * n + n) * bytes;
      work_.kernels.push_back(g);
    };
    const bool self = op.inputs.size() > 2 && op.inputs[0] == op.inputs[1] && op.inputs[1] == op.inputs[2];
    if (self) {
      gemm(b * l, 3 * e, e);
    } else {
      gemm(b * l, e, e);
      gemm(b * s, 2 * e, e);
    }
    const bool masked = op.inputs.size() > 7 && !op.inputs[7].empty();
    KernelWork a;
    a.op_index = index;
    a.dtype = opt_.precision;
    a.cls = masked ? KernelClass::kAttentionMasked : KernelClass::kAttention;
    const double bh = double(b) * double(heads);
    a.flops = 4.0 * bh * double(l) * double(s) * double(d);
    a.m = l;
    a.n = 1;
    a.k = int64_t(double(s) * double(d) / 64.0 + 0.5);
    a.batch = int64_t(bh);
    a.bytes = (double(b) * l * e * 2 + double(b) * s * e * 2) * bytes;
    work_.kernels.push_back(a);
    AddAttentionAux(index, op, bh, double(l), double(s), masked);
    gemm(b * l, e, e);
    if (Numel(out) < 0) return Missing(op, out);
    return Status::Ok();
  }

  // Whether the model's eager code runs uncaptured (Python or LibTorch eager), free to look
  // at its tensors' values, rather than traced or captured.
  // The model's Python code runs (Python eager, a graph captured from it, torch.compile):
  // Python's own int arithmetic is no op.
  bool RunsPythonCode() const {
    return IsPythonEager(opt_.framework) || opt_.framework == Framework::kCudaGraphEager ||
           IsTorchCompile(opt_.framework);
  }

  // Whether torch.compile's Inductor runs this graph's convolutions channels-last (its layout
  // optimization, decided per graph in torch/_inductor/graph.py, decide_layout_opt): a graph
  // with convolutions, static shapes (ftax predicts each batch as compiled for its own shapes,
  // dynamic=False), and not a few convolutions among many other nodes (its FX graph at least
  // 300 nodes per convolution; counted here as the ops plus the parameters, which the graph
  // takes as inputs). For inference, the convolutions' FLOPs are weighted by the speed-up
  // Inductor expects from channels-last per kind of layer (grouped with more than one input
  // channel a group 1.358, small, both channel counts at most 64, 0.783, narrowing, out at most
  // half of in with a kernel over 1, 0.725, any other 0.823), and it turns the layout on when
  // the weighted FLOPs do not exceed the plain ones. Channels-last convolutions run cuDNN's NHWC
  // kernels without the layout transposes an NCHW one adds (CUPTI, H200, ResNet-18 fp16 under
  // torch.compile: 20 convolution kernels, none of cuDNN's nchwToNhwc or nhwcToNchw).
  bool InductorRunsConvsChannelsLast() {
    int convs = 0;
    double params = 0, total = 0, weighted = 0;
    for (const auto& [name, t] : g_.tensors)
      if (t.is_initializer) params += 1;
    for (const Op& op : g_.ops) {
      const LoweringRule* rule = RuleFor(op);
      if (!rule || rule->recipe != KernelRecipe::kConv || op.inputs.size() < 2 || op.outputs.empty()) continue;
      ++convs;
      const Shape* w = ShapeOf(op.inputs[1]);
      const double out = Numel(op.outputs[0]);
      if (!w || w->size() < 3 || out <= 0) continue;
      const int64_t groups = op.IntAttr("group", op.IntAttr("groups", 1));
      const int64_t cout = (*w)[0].value, cin_g = (*w)[1].value, kh = (*w)[2].value;
      double area = 1;
      for (size_t i = 2; i < w->size(); ++i) area *= double((*w)[i].value);
      const double flops = 2.0 * out * double(cin_g) * area;
      const double factor = groups > 1 && cin_g > 1       ? 1.358
                            : cout <= 64 && cin_g <= 64    ? 0.783
                            : cout * 2 <= cin_g && kh > 1 ? 0.725
                                                           : 0.823;
      total += flops;
      weighted += flops * factor;
    }
    if (convs == 0) return false;
    const double nodes = double(g_.ops.size()) + params;
    bool on = nodes < 300.0 * convs && weighted <= total;
    work_.notes.push_back(std::string("torch.compile: Inductor ") +
                          (on ? "runs the convolutions channels-last (NHWC kernels, no layout transposes)"
                              : "keeps the convolutions in their NCHW layout") +
                          " (" + std::to_string(convs) + " convolutions among about " +
                          std::to_string(int64_t(nodes)) + " graph nodes)");
    return on;
  }

  bool RunsEagerCode() const {
    return IsPythonEager(opt_.framework) || opt_.framework == Framework::kLibtorchEager;
  }

  // An ONNX Gemm that is aten::addmm(bias, x, w) exported (Hugging Face's Conv1D, GPT-2): a
  // bias and a weight stored [k, n] (transB = 0) that is the parameter itself, not one an
  // exporter transposed from nn.Linear's [n, k] (TensorInfo::folded_from).
  bool GemmIsAddmm(const Op& op, KernelRecipe recipe) const {
    if (recipe != KernelRecipe::kGemmOnnx || op.IntAttr("transB", 0) != 0 || op.IntAttr("transA", 0) != 0 ||
        op.inputs.size() < 3 || op.inputs[2].empty())
      return false;
    const TensorInfo* w = Find(op.inputs[1]);
    return w && w->is_initializer && w->folded_from.empty();
  }
  bool AddmmRunsAsMmAndAdd() const {
    return opt_.framework == Framework::kTorchscript || opt_.framework == Framework::kCudaGraph;
  }

  // Small kernels PyTorch runs around a fused attention call (KernelFacts, whose defaults are
  // PyTorch 2.11's in CUPTI records of HF BERT on an H200): eager runs clear the cuDNN
  // backend's softmax statistics (a memset) in fp16/bf16; a TorchScript trace of the same
  // module materializes the additive mask per layer (a where over [B, heads, Sq, Sk]) and
  // fills two small buffers. Priced as elementwise kernels.
  void AddAttentionAux(int index, const Op& op, double bh, double sq, double sk, bool masked) {
    if (IsAten(op.domain)) AddAttentionSideKernels(index, bh, sq, sk, masked);
  }
  // The side kernels themselves, for an aten attention and for an exported one priced as the
  // fused call PyTorch makes (LowerOnnxAttention).
  void AddAttentionSideKernels(int index, double bh, double sq, double sk, bool masked) {
    auto add = [&](double bytes) {
      KernelWork a;
      a.cls = KernelClass::kElementwise;
      a.dtype = opt_.precision;
      a.op_index = index;
      a.bytes = bytes;
      a.flops = bytes / std::max(1, DTypeSize(opt_.precision));
      work_.kernels.push_back(a);
    };
    const bool half = opt_.precision == DType::kFloat16 || opt_.precision == DType::kBFloat16;
    const bool eager = RunsEagerCode() || IsTorchCompile(opt_.framework);
    // A graph captured from the eager module runs eager's attention calls, memsets included
    // (CUPTI, H200, the calibration models' graphs captured from eager code: one memset per
    // attention call of ViT-B/32, DeiT-T, BERT-base, -wide and -deep, DistilBERT, ALBERT and
    // GPT-2), and, like a trace, the mask's where and fills.
    const bool captured_eager = opt_.framework == Framework::kCudaGraphEager;
    const KernelFacts& f = opt_.facts;
    // Decode attention (one query token against a KV cache) runs cuDNN's sm80 kernel, which
    // sets no statistics (CUPTI, H100 and H200: OPT-125m and GPT-2 with a KV cache, 12
    // attention calls a step, no memset; with 128 query tokens, 12).
    if ((eager || captured_eager) && half && sq > 1)  // memsets of the log-sum-exp statistics
      for (int i = 0; i < f.attention_eager_memsets; ++i) add(bh * sq * f.attention_memset_bytes_per_row);
    if (!eager && masked) {
      for (int i = 0; i < f.attention_mask_wheres; ++i)  // where(mask, 0, min)
        add(bh * sq * sk * (DTypeSize(opt_.precision) + f.attention_mask_where_extra_bytes));
      for (int i = 0; i < f.attention_mask_fills; ++i) add(bh * sq * f.attention_mask_fill_bytes_per_row);
    }
  }

  const Graph& g_;
  LoweringOptions opt_;
  WorkList work_;
  static constexpr size_t kMemo = 64;
  static constexpr size_t kRuleSlots = 64;
  std::array<RuleSlot, kRuleSlots> rule_cache_{};
  RuleSlot overflow_slot_;
  mutable std::array<MemoEntry, kMemo> memo_{};
  std::unordered_map<std::string, const Op*> producer_;
  // For the ONNX pattern finders (FindOnnxGelus, FindOnnxAttentions, FindPackedQkvSplits):
  // each tensor's readers (op indices, in order), and each op's index.
  std::unordered_map<std::string, std::vector<int>> readers_;
  std::unordered_map<const Op*, int> op_index_;
  void IndexReaders() {
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      op_index_[&g_.ops[i]] = int(i);
      for (const std::string& in : g_.ops[i].inputs)
        if (!in.empty()) readers_[in].push_back(int(i));
    }
  }
  // Sets of tensors by name: the graph's tensors by their map entries, names the graph lacks
  // by name.
  struct TensorSet {
    PointerSet tensors;
    std::unordered_set<std::string> missing;
  };
  bool InSet(const TensorSet& set, const std::string& name) const {
    if (set.tensors.empty() && set.missing.empty()) return false;
    const TensorInfo* t = Find(name);
    return t ? set.tensors.contains(t) : set.missing.count(name) > 0;
  }
  void AddToSet(TensorSet& set, const std::string& name) const {
    const TensorInfo* t = Find(name);
    if (t) set.tensors.insert(t);
    else set.missing.insert(name);
  }
  TensorSet strided_;
  std::unordered_map<std::string, int64_t> run_;  // permuted tensors' contiguous runs (RunAfterPermute)
  // Views whose leading (batch) dims no longer follow one another in memory (TrackBatchStrided).
  TensorSet batch_strided_;
  TensorSet sliced_;  // outputs of slices, chunks and splits (views, in general not contiguous)
  TensorSet attention_out_;
  TensorSet channels_last_;  // 4-D tensors in NHWC memory (TrackChannelsLast)
  bool inductor_channels_last_ = false;  // torch.compile runs every 2-D convolution channels-last
  TensorSet host_scalars_;  // 0-d tensors on the CPU (IsHostScalarArithmetic)
  TensorSet host_tensors_;  // tensors a trace made on the CPU (HostPlacement)
  bool gpu_trace_ = false;  // some op names a CUDA device
  std::vector<std::string> uploads_;  // nodes that copy a CPU tensor to the GPU
  std::map<std::string, int> unknown_;
  std::map<std::string, int> generic_;
  std::unordered_map<int, OnnxAttention> attention_;  // last MatMul -> the attention it ends
  std::unordered_set<int> attention_member_;          // ops folded into an attention
  std::unordered_set<int> split_member_;  // ops of a packed q, k, v split (FindPackedQkvSplits)
  // Ops of an nn.MultiheadAttention block around such a split (FindMhaBlock) -> its attention's
  // last op, where the block's one dispatch goes (MergeMhaDispatches).
  std::map<int, int> mha_block_of_;
  // Ops that only build a ScatterND's indices or updates (FindScatterIndexOps): no work.
  std::unordered_set<int> scatter_member_;
  int scatter_assignments_ = 0;
  int merged_mha_ = 0;
  int packed_splits_ = 0;
  std::unordered_set<int> gelu_member_;                         // ops folded into a GELU
  std::unordered_map<int, const std::string*> gelu_input_;      // last op of a GELU -> its x
  int fused_gelus_ = 0;
};

}  // namespace

Expected<WorkList> Lower(const Graph& graph, const LoweringOptions& options) {
  return Walker(graph, options).Run();
}

int CountKernelReadState(const Graph& graph, const WorkList& work) {
  std::vector<char> library(graph.ops.size(), 0), kernels(graph.ops.size(), 0), conv(graph.ops.size(), 0);
  for (const DispatchWork& d : work.dispatches) {
    if (d.op_index < 0 || size_t(d.op_index) >= graph.ops.size()) continue;
    if (d.cls == DispatchClass::kLibrary) library[size_t(d.op_index)] = 1;
    else if (d.num_kernels > 0) kernels[size_t(d.op_index)] = 1;
    if (d.cost_key && *d.cost_key == "conv") conv[size_t(d.op_index)] = 1;
  }
  auto is_state = [&](const std::string& name) {
    const TensorInfo* t = graph.Find(name);
    if (!t || !t->is_initializer || t->outer_scope || t->int_values || t->float_values) return false;
    if (name.rfind("const.", 0) == 0) return false;  // a constant of the traced code
    const std::optional<int64_t> n = t->has_shape ? NumElements(t->shape) : std::nullopt;
    return !n || *n > 1;  // one-element initializers are an exporter's scalar constants
  };
  std::unordered_set<std::string_view> read;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (library[i]) {
      // A convolution's bias (its third input) is added by the kernel after it.
      if (conv[i] && op.inputs.size() > 2 && is_state(op.inputs[2])) read.insert(op.inputs[2]);
      continue;
    }
    if (!kernels[i]) continue;
    for (const std::string& in : op.inputs)
      if (!in.empty() && is_state(in)) read.insert(in);
  }
  return int(read.size());
}

int CountModuleCalls(const Graph& graph) {
  // Views into the ops' scope strings: no allocation per prefix.
  std::unordered_set<std::string_view> scopes;
  scopes.reserve(graph.ops.size());
  const std::string* last = nullptr;
  for (const Op& op : graph.ops) {
    const std::string& s = op.scope;
    if (last && *last == s) continue;  // consecutive ops of one module add nothing new
    last = &s;
    for (size_t pos = 1; pos <= s.size(); ++pos) {
      if (pos == s.size() || s[pos] == '/') {
        std::string_view prefix(s.data(), pos);
        if (prefix != "/") scopes.insert(prefix);
      }
    }
  }
  return int(scopes.size()) + 1;
}

int ModuleCallsFromParameterNames(const Graph& graph) {
  // A module path: dot-separated components of letters, digits and '_' (not "onnx::MatMul_12"
  // or "val_3", the exporters' own names).
  auto module_of = [](const std::string& name) -> std::string_view {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0) return {};
    for (size_t i = 0; i < dot; ++i) {
      const char c = name[i];
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      (c == '.' && i > 0 && name[i - 1] != '.');
      if (!ok) return {};
    }
    return std::string_view(name.data(), dot);
  };
  std::unordered_set<std::string_view> modules;
  std::unordered_set<std::string_view> seen_inputs;
  for (const Op& op : graph.ops)
    for (const std::string& in : op.inputs) {
      if (in.empty() || !seen_inputs.insert(in).second) continue;
      auto t = graph.tensors.find(in);
      if (t == graph.tensors.end() || !t->second.is_initializer) continue;
      const std::string_view m = module_of(t->second.folded_from.empty() ? t->first : t->second.folded_from);
      for (size_t pos = 1; pos <= m.size(); ++pos)
        if (pos == m.size() || m[pos] == '.') modules.insert(m.substr(0, pos));
    }
  return modules.empty() ? 0 : int(modules.size()) + 1;
}

}  // namespace ftax
