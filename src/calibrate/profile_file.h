// Host profile files: a profile read from a file and checked.
//
// The predictor sees profiles only as HostProfile structs (predictor/host_profile.h) and never
// reads files; this is where a profile file becomes one, through the one JSON file reader
// (common/json_file.h). Errors name the file, and the field at fault where the content is
// wrong (docs/profile-format.md lists the rules checked).
//
//   Expected<HostProfile> p = LoadHostProfile("data/profiles/h200.json");
//   if (!p.ok()) return p.status();   // "profile 'x.json': gpu.kernels.gemm/fp16: ..."
#pragma once

#include <string>

#include "common/status.h"
#include "predictor/host_profile.h"

namespace ftax {

Expected<HostProfile> LoadHostProfile(const std::string& path);

}  // namespace ftax
