// A JSON results file that is rewritten after every row, so that an interrupted run keeps
// everything measured so far. Used by `ftax bench` (measurement files) and `ftax validate`.
//
//   ResultWriter w("out.json", {{"schema_version", 1}, {"kind", "ftax-measurements"}});
//   w.Append("kernels", row);   // file on disk now holds the row
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/percentile.h"
#include "common/status.h"

namespace ftax {

// {"median", "p10", "p90", "n"} of samples, the spread every measured row records.
inline nlohmann::json SpreadJson(const std::vector<double>& v) {
  return {{"median", Percentile(v, 0.5)}, {"p10", Percentile(v, 0.1)}, {"p90", Percentile(v, 0.9)},
          {"n", v.size()}};
}

class ResultWriter {
 public:
  ResultWriter(std::string path, nlohmann::json header);
  // Appends `row` to the array `list` and rewrites the file atomically (WriteFileAtomic in
  // common/file_io.h: readers never see half a file; IoError names the path on failure).
  Status Append(const std::string& list, nlohmann::json row);
  Status Set(const std::string& key, nlohmann::json value);
  const nlohmann::json& doc() const { return doc_; }
  // The first failed write, or Ok: callers that ignore the Status of each Append (a long
  // measurement run goes on) check this at the end.
  const Status& first_error() const { return first_error_; }

 private:
  Status Flush();
  std::string path_;
  nlohmann::json doc_;
  Status first_error_;
};

}  // namespace ftax
