// Kernel classification by name: maps a CUDA kernel name from CUPTI or a profiler trace to
// ftax's kernel class, so measured kernel time can be compared per class with a prediction.
// Rules are substring tests on the (mangled or demangled) name, first match wins; names
// that match nothing are "other". Inductor's generated kernels (triton_poi_, triton_per_,
// triton_red_) go by their kind, not by the op names fused into their name.
#pragma once

#include <optional>
#include <string>

#include "predictor/framework.h"

namespace ftax {

std::optional<KernelClass> ClassifyKernelName(const std::string& name);

}  // namespace ftax
