// libFuzzer target: arbitrary bytes -> JSON -> the readers of host profiles
// (HostProfileFromJson, then HostProfileToJson and back), of measurement files
// (MeasurementsFromJson) and of layer-shapes files (LayerShapesFromJson, then the work of
// every layer it accepts).
//
// Profiles and measurement files are passed around between hosts; whatever a file holds, each
// reader must return a value or a Status, never crash, hang or trip ASan/UBSan. Seeds: the
// shipped profiles, the test measurement files, the hostile cases and data/zoo's files. Build and run as
// inspect_fuzz (validation/fuzz-runs.md records the runs):
//   build-fuzz/tests/fuzz/profile_fuzz -max_total_time=600 /tmp/profile_corpus \
//       data/profiles tests/data/measurements tests/hostile/cases
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/layer_shapes.h"
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
  ftax::Expected<ftax::LayerShapes> l = ftax::LayerShapesFromJson(j, "fuzz");
  if (l.ok())
    for (const ftax::LayerShape& s : l->layers)
      for (int64_t n : l->batches) (void)ftax::LayerKernelWork(s, n, 2);
  return 0;
}
