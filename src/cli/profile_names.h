// Shipped profiles by name: `--profile h200` is data/profiles/h200.json of the checkout ftax
// was built from; anything else is a path. `ftax profiles` lists the shipped ones.
//
//   Expected<HostProfile> p = LoadNamedProfile("h100");       // or a path to a profile file
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "calibrate/profile_file.h"
#include "predictor/host_profile.h"

namespace ftax::cli {

// The folder of shipped profiles (FTAX_SOURCE_DIR/data/profiles).
std::string ShippedProfileDir();

// The names of the shipped profiles (file names without .json), sorted.
std::vector<std::string> ShippedProfileNames();

// A path as given when a file exists there; else, for a bare name (letters, digits, '-',
// '_'), the shipped profile of that name; else the path as given (loading it then fails
// with a message that lists the shipped names).
std::string ResolveProfilePath(const std::string& name_or_path);

// LoadHostProfile of ResolveProfilePath; a name that is neither a file nor a shipped
// profile is an error listing the shipped names.
Expected<HostProfile> LoadNamedProfile(const std::string& name_or_path);

// A one-line description of a loaded profile for table headers: "h200.json: NVIDIA H200,
// fitted 2026-11-23".
std::string ProfileHeadline(const std::string& name_or_path, const HostProfile& profile);

}  // namespace ftax::cli
