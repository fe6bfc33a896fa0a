// Fuzz-ish robustness of the profile loader: random mutations of a valid profile must load or
// fail with an error, never crash or throw. Deterministic (fixed seeds), so a failure repeats.
#include <random>

#include <gtest/gtest.h>

#include "predictor/host_profile.h"

namespace ftax {
namespace {

using json = nlohmann::json;

json ValidProfile() {
  return json::parse(R"({
    "schema_version": 1, "kind": "ftax-host-profile", "synthetic": true,
    "host": {"gpu": "SYNTHETIC", "sm_count": 132},
    "provenance": {"date": "2026-01-01T00:00:00Z", "ftax_commit": null},
    "fit": {"kernels": []},
    "gpu": {
      "num_sms": 132,
      "kernel_gap_us": {"value": 1.1, "stderr": 0.1, "unit": "us"},
      "kernels": {
        "gemm/fp16": {"floor_us": {"value": 4.0, "stderr": 0.05, "unit": "us"},
                      "rate_tflops": {"value": 650, "stderr": 5, "unit": "TFLOP/s"},
                      "bandwidth_gbps": {"value": 4200, "stderr": null, "unit": "GB/s"},
                      "tile_m": 128, "tile_n": 64,
                      "range": {"min_flops": 1e6, "max_flops": 1e12, "min_bytes": 1e3, "max_bytes": 1e9},
                      "points": 77, "r2": 0.999, "median_abs_err_pct": 2.0},
        "elementwise/fp16": {"floor_us": {"value": 2.2, "stderr": 0.02, "unit": "us"},
                             "rate_tflops": {"value": null, "stderr": null, "unit": "TFLOP/s"},
                             "bandwidth_gbps": {"value": 3600, "stderr": 20, "unit": "GB/s"}}
      }
    },
    "frameworks": {
      "libtorch-eager": {"call_us": {"value": 12, "stderr": 0.3, "unit": "us"},
                         "dispatch_us": {"view": {"value": 0.8, "stderr": 0.01, "unit": "us"},
                                         "kernel": {"value": 4.5, "stderr": 0.02, "unit": "us"},
                                         "library": {"value": 7, "stderr": null, "unit": "us"}},
                         "module_us": {"value": null, "stderr": null, "unit": "us"},
                         "node_gap_us": {"value": null, "stderr": null, "unit": "us"},
                         "points": 27, "r2": 0.999}
    }
  })");
}

// Every value in the document, by JSON pointer.
void CollectPointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>* out) {
  out->push_back(at);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) CollectPointers(v, at / k, out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) CollectPointers(j[i], at / i, out);
}

json RandomValue(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0: return nullptr;
    case 1: return true;
    case 2: return -1;
    case 3: return 0;
    case 4: return 1e308;
    case 5: return -3.5;
    case 6: return "fp16";
    case 7: return "gemm/fp16";
    case 8: return json::array({1, "x"});
    case 9: return json::object({{"value", "x"}});
    case 10: return std::numeric_limits<int64_t>::max();
    default: return std::string(1, char('a' + rng() % 26));
  }
}

void Mutate(json* doc, std::mt19937_64& rng) {
  std::vector<json::json_pointer> ptrs;
  CollectPointers(*doc, json::json_pointer(), &ptrs);
  const json::json_pointer at = ptrs[rng() % ptrs.size()];
  switch (rng() % 4) {
    case 0:  // replace
      (*doc)[at] = RandomValue(rng);
      break;
    case 1:  // delete
      if (!at.empty()) {
        json& parent = (*doc)[at.parent_pointer()];
        if (parent.is_object()) parent.erase(at.back());
        else if (parent.is_array() && !parent.empty()) parent.erase(parent.size() - 1);
      }
      break;
    case 2:  // add a key
      if ((*doc)[at].is_object()) (*doc)[at]["mut" + std::to_string(rng() % 3)] = RandomValue(rng);
      break;
    default:  // rename to a near-valid key
      if ((*doc)[at].is_object() && !(*doc)[at].empty()) {
        json& o = (*doc)[at];
        const std::string key = o.begin().key();
        json v = o[key];
        o.erase(key);
        o[rng() % 2 ? "gemm/fp13" : "cuda-graph"] = v;
      }
  }
}

TEST(HostProfileMutationTest, ValidProfileLoads) {
  Expected<HostProfile> p = HostProfileFromJson(ValidProfile());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->gpu.kernels.size(), 2u);
}

TEST(HostProfileMutationTest, StructuralMutationsNeverCrash) {
  std::mt19937_64 rng(2024);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    json doc = ValidProfile();
    const int n = 1 + int(rng() % 3);
    for (int i = 0; i < n; ++i) Mutate(&doc, rng);
    Expected<HostProfile> p = Expected<HostProfile>(Internal("unset"));
    ASSERT_NO_THROW(p = HostProfileFromJson(doc)) << "trial " << trial << ": " << doc.dump();
    if (!p.ok()) {
      ++rejected;
      EXPECT_FALSE(p.status().message().empty());
    } else {
      // Whatever loads must be usable: it saves and loads again.
      Expected<HostProfile> again = Expected<HostProfile>(Internal("unset"));
      ASSERT_NO_THROW(again = HostProfileFromJson(HostProfileToJson(p.value()))) << doc.dump();
      EXPECT_TRUE(again.ok()) << doc.dump() << "\n" << again.status().message();
    }
  }
  EXPECT_GT(rejected, 300);  // the mutations do reach the validation
}

TEST(HostProfileMutationTest, ByteMutationsNeverCrash) {
  const std::string text = ValidProfile().dump();
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string t = text;
    const int n = 1 + int(rng() % 4);
    for (int i = 0; i < n; ++i) {
      const size_t pos = rng() % t.size();
      switch (rng() % 3) {
        case 0: t[pos] = char(rng() % 128); break;
        case 1: t.erase(pos, 1 + rng() % 8); break;
        default: t.insert(pos, 1, "{}[]\",:0-e9"[rng() % 11]);
      }
      if (t.empty()) t = "{";
    }
    json doc = json::parse(t, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) continue;
    ASSERT_NO_THROW((void)HostProfileFromJson(doc)) << "trial " << trial << ": " << t;
  }
}

}  // namespace
}  // namespace ftax
