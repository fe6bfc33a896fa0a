#include "calibrate/kineto_trace.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ftax {
namespace {

std::string Write(const std::string& text) {
  char name[] = "/tmp/ftax_trace_XXXXXX";
  int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(KinetoTraceTest, StepsGiveLatencyAndKernelsPerIteration) {
  // A hand-made trace: 3 steps of 1.0, 2.0 and 3.0 ms; 2 kernels of 10 µs per step, one
  // kernel outside the steps (ignored), and a CPU op (not a kernel).
  std::string t = R"({"traceEvents": [
    {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 1000},
    {"ph": "X", "name": "ProfilerStep#2", "cat": "user_annotation", "ts": 1000, "dur": 2000},
    {"ph": "X", "name": "ProfilerStep#3", "cat": "user_annotation", "ts": 3000, "dur": 3000},
    {"ph": "X", "name": "ProfilerStep#1", "cat": "gpu_user_annotation", "ts": 90, "dur": 50},
    {"ph": "X", "name": "aten::linear", "cat": "cpu_op", "ts": 10, "dur": 50},
    {"ph": "X", "name": "nvjet_gemm", "cat": "kernel", "ts": 100, "dur": 10},
    {"ph": "X", "name": "layer_norm_kernel", "cat": "kernel", "ts": 200, "dur": 10},
    {"ph": "X", "name": "nvjet_gemm", "cat": "kernel", "ts": 1100, "dur": 10},
    {"ph": "X", "name": "layer_norm_kernel", "cat": "kernel", "ts": 1200, "dur": 10},
    {"ph": "X", "name": "nvjet_gemm", "cat": "kernel", "ts": 3100, "dur": 10},
    {"ph": "X", "name": "layer_norm_kernel", "cat": "kernel", "ts": 3200, "dur": 10},
    {"ph": "X", "name": "warmup_kernel", "cat": "kernel", "ts": 9000, "dur": 500}
  ]})";
  std::string path = Write(t);
  Expected<nlohmann::json> r = ReadKinetoTrace(path);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r.value()["latency_ms"]["median"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r.value()["latency_ms"]["p10"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(r.value()["kernels_per_iter"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r.value()["kernel_ms"].get<double>(), 0.02);
  EXPECT_FALSE(r.value()["kernels"].contains("warmup_kernel"));
}

TEST(KinetoTraceTest, ClearErrors) {
  std::string no_steps = Write(R"({"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "ts": 1, "dur": 1}]})");
  Expected<nlohmann::json> r = ReadKinetoTrace(no_steps);
  std::remove(no_steps.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ProfilerStep"), std::string::npos);
  std::string bad = Write("not json");
  r = ReadKinetoTrace(bad);
  std::remove(bad.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not valid JSON"), std::string::npos);
  r = ReadKinetoTrace("/nonexistent/trace.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ftax
