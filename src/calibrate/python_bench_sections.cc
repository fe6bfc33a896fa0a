// Sections of the bench's Python part, as python_bench_sections.h describes them.
#include "calibrate/python_bench_sections.h"

namespace ftax {

std::string PythonSectionOf(const nlohmann::json& row) {
  if (!row.is_object()) return "";
  const std::string fw = row.contains("framework") && row["framework"].is_string() ? row["framework"].get<std::string>() : "";
  if (fw.rfind("torch-compile", 0) == 0)
    return fw == "torch-compile-reduce-overhead" ? "compile:reduce-overhead" : "compile:default";
  if (row.contains("op") || row.contains("mix_of")) return "ops:" + fw;  // a mix ends the per-op section
  if (fw.rfind("pytorch-eager", 0) == 0) {
    const std::string mode = row.contains("mode") && row["mode"].is_string() ? row["mode"].get<std::string>() : "";
    return "modes:" + (mode.empty() ? std::string(fw == "pytorch-eager" ? "inference" : "no_grad") : mode);
  }
  return "";
}

}  // namespace ftax
