// A plain-text table for people: columns padded to their widest cell, numbers right-aligned.
//
//   TextTable t({"batch", "latency_ms"});
//   t.AddRow({"1", "2.31"});
//   std::cout << t.Render();
#pragma once

#include <string>
#include <vector>

namespace ftax::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  std::string Render() const;
  // Comma-separated, header first; cells with commas or quotes are quoted.
  std::string RenderCsv() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point formatting with `digits` decimals.
std::string Fixed(double v, int digits);

}  // namespace ftax::cli
