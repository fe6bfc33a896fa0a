// A synthetic PyTorch profiler (Kineto) trace for the calibrate tests: a GPU-bound run of
// 3 ProfilerStep spans of 1 ms, each holding 0.8 ms of kernels.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace ftax::testing {

inline void WriteGpuBoundTrace(const std::string& path) {
  nlohmann::json ev = nlohmann::json::array();
  for (int s = 0; s < 3; ++s) {
    ev.push_back({{"ph", "X"},
                  {"cat", "user_annotation"},
                  {"name", "ProfilerStep#" + std::to_string(s)},
                  {"ts", s * 1000},
                  {"dur", 1000}});
    ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}, {"ts", s * 1000 + 100}, {"dur", 800}});
  }
  std::ofstream(path) << nlohmann::json{{"traceEvents", ev}}.dump();
}

}  // namespace ftax::testing
