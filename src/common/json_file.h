// Reading a JSON document from a file: the one JSON file reader of ftax.
//
// Profiles, measurement files, traces, manifests and model descriptions are all JSON files a
// user passes around; each is read by ReadJsonFile, which checks the path with
// ReadRegularFile (a directory or FIFO is refused) and turns a syntax error into InvalidInput
// naming the file. What the document must contain is checked by its own reader
// (HostProfileFromJson, MeasurementsFromJson, ...), which never sees a file.
//
//   Expected<nlohmann::json> j = ReadJsonFile(path, "profile");
//   if (!j.ok()) return j.status();   // "profile 'p.json' is not valid JSON: ..."
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ftax {

// The parsed contents of the regular file `path`; `what` names the file in errors
// ("profile", "measurements", ...).
Expected<nlohmann::json> ReadJsonFile(const std::string& path, const std::string& what);

}  // namespace ftax
