// RunBench for builds without LibTorch+CUDA (and for the light ftax, which hands `bench` to
// ftax-torch before it gets here, cli/torch_handoff.h): says so.
#if !defined(FTAX_HAVE_TORCH) || !defined(FTAX_HAVE_CUDA)
#include "calibrate/bench.h"

namespace ftax {

Status RunBench(const BenchOptions&, const ProgressFn&) {
  return Unsupported(
      "this ftax was built without LibTorch and CUDA/CUPTI, which `ftax bench` needs; build it "
      "on the GPU host (scripts/build_gpu.sh) with -DFTAX_WITH_TORCH=ON");
}

}  // namespace ftax
#endif
