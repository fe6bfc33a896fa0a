// The sections of the bench's Python part (scripts/bench_eager.py): the chains of one grad
// mode ("modes:inference", "modes:no_grad"), one framework's per-op chains ("ops:pytorch-eager",
// "ops:torchscript", ...) and one torch.compile mode ("compile:default",
// "compile:reduce-overhead"). bench_eager.py writes its rows after each section it finishes, so
// `ftax bench` keeps the sections an interrupted run finished and, with --resume, asks only
// for the others.
//
//   PythonSectionOf({{"framework", "pytorch-eager"}, {"mode", "inference"}, {"op", "conv"}})
//     == "ops:pytorch-eager"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ftax {

// The section a dispatch row of the bench was measured in; empty for a row the C++ bench
// measured itself (LibTorch eager, TorchScript class chains, CUDA graphs).
std::string PythonSectionOf(const nlohmann::json& row);

}  // namespace ftax
