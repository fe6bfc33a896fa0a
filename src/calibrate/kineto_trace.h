// PyTorch profiler (Kineto) chrome traces as measured rows.
//
// Anyone can record a trace of their own Python code:
//   with torch.profiler.profile(activities=[CPU, CUDA], schedule=...) as p:
//       for _ in range(n): model(x); torch.cuda.synchronize(); p.step()
//   p.export_chrome_trace("trace.json")
// ReadKinetoTrace turns it into one measured row in the format of ftax validate: per-iteration
// latency from the "ProfilerStep#N" spans (median, p10, p90), and GPU kernels (count, time,
// time by name) per iteration from events of category "kernel". The caller adds what the
// trace cannot know: model, arch spec, framework, precision, batch, sequence length.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ftax {

Expected<nlohmann::json> ReadKinetoTrace(const std::string& path);

}  // namespace ftax
