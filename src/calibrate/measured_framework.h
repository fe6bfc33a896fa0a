// The framework a measured model-run row was timed under, as ftax names it.
//
// Run files (ftax validate, scripts/validate_eager.py) write "framework": "cuda-graph" for
// every replayed CUDA graph and say where the graph came from in "captured_from": a graph
// captured from the eager module ("eager") runs the kernels Python eager launches and is
// predicted as cuda-graph-eager; one captured from the TorchScript module (no field, or
// "torchscript") as cuda-graph. Every other row keeps its "framework".
//
//   std::string fw = MeasuredFramework(row);  // "cuda-graph-eager"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ftax {

// The row's framework name ("" when the row has no string "framework").
std::string MeasuredFramework(const nlohmann::json& row);

}  // namespace ftax
