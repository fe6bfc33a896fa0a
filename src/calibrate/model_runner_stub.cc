// RunWorkerVisits for builds without LibTorch+CUDA (and for the light ftax, which hands
// `validate` to ftax-torch before it gets here, cli/torch_handoff.h): says so.
#if !defined(FTAX_HAVE_TORCH) || !defined(FTAX_HAVE_CUDA)
#include "calibrate/model_runner.h"

namespace ftax {

Status RunWorkerVisits(const WorkerRequest&, const std::string&, const ProgressFn&) {
  return Unsupported(
      "this ftax was built without LibTorch and CUDA/CUPTI, which running a model needs; "
      "compare existing measurements with `ftax validate --measured FILE`, or build on the GPU "
      "host (scripts/build_gpu.sh)");
}

}  // namespace ftax
#endif
