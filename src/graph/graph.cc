#include "graph/graph.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace ftax {

int DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kFloat64: return 8;
    case DType::kFloat8: return 1;
    case DType::kInt64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt16: return 2;
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kBool: return 1;
    case DType::kComplex64: return 8;
    case DType::kString:
    case DType::kUnknown: return 0;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "fp32";
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat64: return "fp64";
    case DType::kFloat8: return "fp8";
    case DType::kInt64: return "int64";
    case DType::kInt32: return "int32";
    case DType::kInt16: return "int16";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
    case DType::kString: return "string";
    case DType::kComplex64: return "complex64";
    case DType::kUnknown: return "unknown";
  }
  return "unknown";
}

std::optional<DType> ParseDType(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "fp32" || n == "float32" || n == "float") return DType::kFloat32;
  if (n == "fp16" || n == "float16" || n == "half") return DType::kFloat16;
  if (n == "bf16" || n == "bfloat16") return DType::kBFloat16;
  if (n == "fp64" || n == "float64" || n == "double") return DType::kFloat64;
  if (n == "int64") return DType::kInt64;
  if (n == "int32") return DType::kInt32;
  if (n == "int8") return DType::kInt8;
  if (n == "uint8") return DType::kUInt8;
  if (n == "bool") return DType::kBool;
  return std::nullopt;
}

std::optional<int64_t> NumElements(const Shape& s) {
  int64_t n = 1;
  for (const Dim& d : s) {
    if (!d.known()) return std::nullopt;
    if (d.value != 0 && n > std::numeric_limits<int64_t>::max() / d.value) return std::nullopt;
    n *= d.value;
  }
  return n;
}

std::string ShapeToString(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    if (s[i].known()) out += std::to_string(s[i].value);
    else if (!s[i].symbol.empty()) out += s[i].symbol;
    else out += '?';
  }
  return out.empty() ? "scalar" : out;
}

}  // namespace ftax
