// libFuzzer target: arbitrary bytes -> JSON -> the readers of host profiles
// (HostProfileFromJson, then HostProfileToJson and back) and of measurement files
// (MeasurementsFromJson).
//
// Profiles and measurement files are passed around between hosts; whatever a file holds, each
// reader must return a value or a Status, never crash, hang or trip ASan/UBSan. Seeds: the
// shipped profiles, the test measurement files and the hostile cases. Build and run as
// inspect_fuzz (docs/inspect.md, "Fuzzing"):
//   build-fuzz/tests/fuzz/profile_fuzz -max_total_time=600 /tmp/profile_corpus \
//       data/profiles tests/data/measurements tests/hostile/cases
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/measurements.h"
#include "predictor/host_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  ftax::Expected<ftax::HostProfile> p = ftax::HostProfileFromJson(j);
  if (p.ok()) {
    // A profile that was accepted must survive its own writer and be accepted again.
    ftax::Expected<ftax::HostProfile> again = ftax::HostProfileFromJson(ftax::HostProfileToJson(p.value()));
    if (!again.ok()) __builtin_trap();
  }
  ftax::Expected<ftax::Measurements> m = ftax::MeasurementsFromJson(j);
  (void)m;
  return 0;
}
