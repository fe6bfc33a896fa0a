// PyTorch profiler (Kineto) chrome traces as measured rows.
//
// Anyone can record a trace of their own Python code:
//   with torch.profiler.profile(activities=[CPU, CUDA], schedule=...) as p:
//       for _ in range(n): model(x); torch.cuda.synchronize(); p.step()
//   p.export_chrome_trace("trace.json")
// ReadKinetoTrace turns it into one measured row in the format of ftax validate: per-iteration
// latency from the CPU "ProfilerStep#N" spans (median, p10, p90), and GPU kernels (count,
// time, time by name) per iteration from events of category "kernel" and "gpu_memset", and
// the GPU's name ("device") when the trace has Kineto's "deviceProperties".
// The profiler's own CPU overhead is inside those spans: a traced run is slower on the CPU
// side than an unprofiled one (2-3x for BERT-base in eager mode here). The caller adds what the
// trace cannot know: model, arch spec, framework, precision, batch, sequence length.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ftax {

Expected<nlohmann::json> ReadKinetoTrace(const std::string& path);

}  // namespace ftax
