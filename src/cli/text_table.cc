#include "cli/text_table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace ftax::cli {
namespace {

bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == '%' || c == 'x'))
      return false;
  return true;
}

std::string CsvCell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string TextTable::Render() const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) w[i] = header_[i].size();
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& r, bool header) {
    for (size_t i = 0; i < w.size(); ++i) {
      std::string c = i < r.size() ? r[i] : "";
      std::string pad(w[i] - c.size(), ' ');
      out << (i ? "  " : "") << (!header && LooksNumeric(c) ? pad + c : c + pad);
    }
    out << "\n";
  };
  line(header_, true);
  size_t total = 0;
  for (size_t x : w) total += x + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << "\n";
  for (const auto& r : rows_) line(r, false);
  return out.str();
}

std::string TextTable::RenderCsv() const {
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << CsvCell(r[i]);
    out << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return out.str();
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace ftax::cli
