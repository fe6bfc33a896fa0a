#include "calibrate/result_writer.h"

#include <cstdio>
#include <fstream>

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
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return NotFound("cannot write '" + tmp + "'");
    out << doc_.dump(1) << "\n";
    if (!out) return Internal("write to '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    return Internal("cannot rename '" + tmp + "' to '" + path_ + "'");
  return Status::Ok();
}

}  // namespace ftax
