// Per-op cost counting: one registry entry per op type; the walker knows no op.
//
// An entry reads the op's attributes and the shapes of its inputs and outputs in the Graph
// and returns what the op costs: MACs, FLOPs, activation bytes read and written, and whether
// it launches GPU work at all (shape-only ops such as Shape, Reshape or Unsqueeze do not).
// Entries are keyed by (domain, op type); ONNX ops live in domain "" (and "ai.onnx"),
// aten ops from TorchScript and torch-flavored arch specs in domain "aten".
//
// FLOP convention (docs/counting.md): a multiply-accumulate is 2 FLOPs; elementwise ops
// count one FLOP per output element (more for transcendental ops, as documented per entry);
// normalization and softmax count a fixed number of FLOPs per element.
//
//   const CostRegistry& reg = CostRegistry::Default();
//   Expected<OpCost> c = reg.Count(graph, op);   // error names the node and what is missing
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "graph/graph.h"

namespace ftax {

struct OpCost {
  double macs = 0;
  double flops = 0;
  double bytes_read = 0;     // activation and weight bytes the op reads
  double bytes_written = 0;  // bytes of its outputs
  bool launches_work = true;  // false for shape-only ops (no GPU kernel needed)
};

using CostFn = std::function<Expected<OpCost>(const Graph&, const Op&)>;

class CostRegistry {
 public:
  // The registry with every built-in entry.
  static const CostRegistry& Default();

  void Register(const std::string& domain, const std::string& op_type, CostFn fn);
  bool Has(const std::string& domain, const std::string& op_type) const;

  // Counts one op. Unknown op types return kUnsupported naming the op type; a known op whose
  // shapes are missing returns kInvalidInput naming the node and tensor. An in-place aten op
  // ("hardswish_") without an entry of its own counts as its out-of-place form.
  Expected<OpCost> Count(const Graph& graph, const Op& op) const;

  // Every registered (domain, op type), sorted; domain "" is ONNX's.
  std::vector<std::pair<std::string, std::string>> Entries() const;

 private:
  const CostFn* Find(const std::string& domain, const std::string& op_type) const;

  std::unordered_map<std::string, CostFn> entries_;  // key: domain + "::" + op_type
};

}  // namespace ftax
