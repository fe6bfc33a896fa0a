// Wall-clock helpers for provenance fields.
#pragma once

#include <ctime>
#include <string>

namespace ftax {

// "2026-11-22T01:02:03Z"
inline std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace ftax
