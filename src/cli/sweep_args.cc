#include "cli/sweep_args.h"

#include <algorithm>
#include <sstream>

namespace ftax::cli {
namespace {

Expected<int64_t> ParsePositive(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    long long v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    if (v <= 0) return InvalidInput(what + ": '" + s + "' must be a positive integer");
    if (v > (int64_t(1) << 32)) return InvalidInput(what + ": '" + s + "' is too large");
    return int64_t(v);
  } catch (const std::exception&) {
    return InvalidInput(what + ": '" + s + "' is not an integer");
  }
}

}  // namespace

Expected<std::vector<int64_t>> ParseBatchList(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return InvalidInput("--batch: empty");
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    Expected<int64_t> lo = ParsePositive(text.substr(0, colon), "--batch");
    if (!lo.ok()) return lo.status();
    Expected<int64_t> hi = ParsePositive(text.substr(colon + 1), "--batch");
    if (!hi.ok()) return hi.status();
    if (hi.value() < lo.value()) return InvalidInput("--batch " + text + ": upper bound below lower bound");
    for (int64_t b = lo.value(); b < hi.value(); b *= 2) out.push_back(b);
    out.push_back(hi.value());
  } else {
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) {
      Expected<int64_t> v = ParsePositive(part, "--batch");
      if (!v.ok()) return v.status();
      out.push_back(v.value());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string FrameworkNames() {
  std::string out;
  for (Framework f : AllFrameworks()) out += std::string(out.empty() ? "" : ", ") + FrameworkName(f);
  return out;
}

std::string FrameworkListHelp() {
  std::string out = "comma list of:";
  for (Framework f : AllFrameworks())
    out += std::string("\n  ") + FrameworkName(f) + ": " + FrameworkDescription(f);
  return out;
}

Expected<std::vector<Framework>> ParseFrameworkList(const std::vector<std::string>& names) {
  std::vector<Framework> out;
  for (const auto& n : names) {
    auto f = ParseFramework(n);
    if (!f)
      return InvalidInput("--framework: unknown framework '" + n + "' (" + FrameworkNames() + ")");
    if (std::find(out.begin(), out.end(), *f) == out.end()) out.push_back(*f);
  }
  return out;
}

Expected<std::vector<DType>> ParsePrecisionList(const std::vector<std::string>& names) {
  std::vector<DType> out;
  for (const auto& n : names) {
    auto d = ParseDType(n);
    if (!d || (*d != DType::kFloat32 && *d != DType::kFloat16 && *d != DType::kBFloat16))
      return InvalidInput("--precision: '" + n + "' is not one of fp32, fp16, bf16");
    if (std::find(out.begin(), out.end(), *d) == out.end()) out.push_back(*d);
  }
  return out;
}

std::vector<SpecLine> ParseSpecLines(const std::string& text) {
  std::vector<SpecLine> out;
  std::stringstream ss(text);
  std::string line;
  int number = 0;
  while (std::getline(ss, line)) {
    ++number;
    const char* kBlank = " \t\r\v\f";
    const size_t first = line.find_first_not_of(kBlank);
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(kBlank);
    out.push_back({number, line.substr(first, last - first + 1)});
  }
  return out;
}

}  // namespace ftax::cli
