#include "calibrate/measured_framework.h"

namespace ftax {

std::string MeasuredFramework(const nlohmann::json& row) {
  if (!row.is_object() || !row.contains("framework") || !row["framework"].is_string()) return "";
  std::string fw = row["framework"].get<std::string>();
  if (fw == "cuda-graph" && row.contains("captured_from") && row["captured_from"].is_string() &&
      row["captured_from"].get<std::string>() == "eager")
    fw = "cuda-graph-eager";
  return fw;
}

}  // namespace ftax
