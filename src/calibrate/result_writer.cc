#include "calibrate/result_writer.h"

#include "common/file_io.h"

namespace ftax {

ResultWriter::ResultWriter(std::string path, nlohmann::json header)
    : path_(std::move(path)), doc_(std::move(header)) {}

Status ResultWriter::Append(const std::string& list, nlohmann::json row) {
  if (!doc_.contains(list)) doc_[list] = nlohmann::json::array();
  doc_[list].push_back(std::move(row));
  return Flush();
}

Status ResultWriter::Set(const std::string& key, nlohmann::json value) {
  doc_[key] = std::move(value);
  return Flush();
}

Status ResultWriter::Flush() {
  Status s = WriteFileAtomic(path_, doc_.dump(1) + "\n");
  if (!s.ok() && first_error_.ok()) first_error_ = s;
  return s;
}

}  // namespace ftax
