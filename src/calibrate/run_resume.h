// Resuming an interrupted measurement run: `ftax bench --resume` and `ftax validate --resume`.
//
// Both commands rewrite their output file after every finished row, so a run killed by
// SIGINT, SIGTERM or an out-of-memory point leaves every finished row on disk. A rerun with
// --resume reads that file back, keeps its rows, and measures only the points whose row
// identity (RowKey) the file does not hold.
//
//   Expected<nlohmann::json> old = ReadRunToResume("h200.measurements.json", "ftax-measurements");
//   std::set<std::string> done = RowKeys(old.value(), "kernels");
//   if (done.count(RowKey("kernels", row))) ...skip...
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ftax {

// The identity of a row of a measurement file ("kernels", "dispatch") or of a validation run
// ("rows"): the fields that say which point was measured, never the measured values. Two
// rows with the same key measure the same point.
std::string RowKey(const std::string& list, const nlohmann::json& row);

// The keys of every row of `list` in `doc`.
std::set<std::string> RowKeys(const nlohmann::json& doc, const std::string& list);

// The run file at `path` when it exists and is a file of `kind`; a JSON null when there is
// no file (nothing to resume: a fresh run); an error naming the path when it cannot be read,
// is not JSON, or is another kind of file.
Expected<nlohmann::json> ReadRunToResume(const std::string& path, const std::string& kind);

}  // namespace ftax
