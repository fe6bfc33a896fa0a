// What is in a model: the numbers behind `ftax inspect`, computed once for every renderer.
//
// ComputeStats walks a Graph (ops in topological order, If/Loop/Scan bodies included) and
// asks the counting registry (op_cost.h) for each op's cost; the walker itself knows no op.
// It returns totals (MACs, FLOPs, parameters, ops, work ops, depth, weight and activation
// bytes), a breakdown by op type, optionally one row per node, and what it could not count:
// unbound symbolic dims, unknown op types, and warnings naming the node. Only `strict` makes
// those failures errors.
//
// Counting needs concrete shapes; PrepareGraph binds --dim / --input-shape values and runs
// shape inference first (both are no-ops on a graph whose shapes are already concrete, such
// as one from BuildArchGraph).
//
//   Graph g = LoadOnnxFile(path).value();
//   Status s = PrepareGraph(&g, {{"batch", 1}}, {}, {});
//   Expected<GraphStats> st = ComputeStats(g, {});
//   double gmacs = st->totals.macs / 1e9;
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "graph/dim_binding.h"
#include "graph/graph.h"
#include "graph/op_cost.h"

namespace ftax {

struct StatsOptions {
  // Unknown op types and ops that cannot be counted (missing shapes) become errors.
  bool strict = false;
  // Fill GraphStats::nodes with one row per counted node.
  bool per_node = false;
  // Counting entries; nullptr means CostRegistry::Default().
  const CostRegistry* registry = nullptr;
};

// Totals per inference. Ops inside a Loop with a constant trip count count once per trip.
struct StatsTotals {
  double macs = 0;             // multiply-accumulates of Conv, Gemm, MatMul, Einsum, attention
  double flops = 0;            // 2 x MACs + elementwise/normalization/softmax FLOPs
  int64_t params = 0;          // elements of weight initializers, each shared one once
  int64_t ops = 0;             // nodes executed (control-flow bodies expanded)
  int64_t work_ops = 0;        // nodes that launch GPU work (not shape-only)
  int64_t depth = 0;           // work ops on the longest dependency path
  double weight_bytes = 0;     // bytes of all referenced initializers (any dtype)
  double activation_bytes = 0; // non-initializer bytes each work op reads plus bytes it writes
};

struct OpTypeStats {
  std::string op_type;  // "Conv", or "aten::linear" / "com.microsoft::Attention" off-domain
  int64_t count = 0;
  int64_t work_ops = 0;
  double macs = 0;
  double flops = 0;
  double bytes = 0;  // read + written
};

struct NodeStats {
  std::string name;
  std::string op_type;  // domain-qualified as in OpTypeStats
  std::string scope;
  std::string output_shape;
  double repeat = 1;
  bool launches_work = true;
  bool counted = true;  // false: unknown op type or missing shapes (costs are 0)
  double macs = 0;
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
};

struct TensorSummary {
  std::string name;
  std::string dtype;
  std::string shape;
};

struct GraphStats {
  std::string source;
  std::map<std::string, int64_t> opset;
  std::vector<TensorSummary> inputs;
  std::vector<TensorSummary> outputs;
  StatsTotals totals;
  std::vector<OpTypeStats> by_op_type;  // by MACs, then FLOPs, then count, descending
  std::vector<NodeStats> nodes;         // only with StatsOptions::per_node
  std::vector<std::string> unbound_dims;
  std::vector<std::string> unknown_op_types;
  int64_t uncounted_ops = 0;  // ops counted as zero (unknown type or missing shapes)
  std::vector<std::string> warnings;
};

// Binds dims and input shapes, then runs shape inference (graph warnings collect findings).
Status PrepareGraph(Graph* graph, const DimBindings& dims,
                    const std::vector<InputShapeFlag>& input_shapes, bool strict = false);

Expected<GraphStats> ComputeStats(const Graph& graph, const StatsOptions& options = {});

}  // namespace ftax
