// libFuzzer target: arbitrary bytes -> LoadOnnxBuffer -> bind -> infer -> count.
//
// Nothing here may crash, hang or trip ASan/UBSan; every input must either inspect or come
// back as a Status. Build and run (validation/fuzz-runs.md records the runs):
//   CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DFTAX_FUZZ=ON -DFTAX_BUILD_TESTS=OFF \
//       -DFTAX_BUILD_BENCH=OFF -DFTAX_WITH_CERES=OFF -DFTAX_WITH_TORCH=OFF
//   make -C build-fuzz -j2 inspect_fuzz
//   mkdir -p /tmp/fuzz_corpus && build-fuzz/tests/fuzz/inspect_fuzz -max_total_time=600 \
//       -max_len=65536 /tmp/fuzz_corpus tests/data/onnx tests/data/onnx/bad
#include <cstddef>
#include <cstdint>

#include "graph/graph_stats.h"
#include "graph/onnx_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ftax::Expected<ftax::Graph> g = ftax::LoadOnnxBuffer(data, size, "fuzz.onnx");
  if (!g.ok()) return 0;
  // Bind every symbolic input dim so counting goes as deep as it can.
  ftax::DimBindings dims;
  for (const auto& in : g->inputs)
    if (const ftax::TensorInfo* t = g->Find(in))
      for (const ftax::Dim& d : t->shape)
        if (!d.symbol.empty()) dims[d.symbol] = 2;
  if (!ftax::PrepareGraph(&g.value(), dims, {}).ok()) return 0;
  ftax::StatsOptions opt;
  opt.per_node = true;
  ftax::Expected<ftax::GraphStats> st = ftax::ComputeStats(g.value(), opt);
  (void)st;
  return 0;
}
