// The validation report's bound check: prediction and measurement judged by the same rule.
#include "calibrate/validation_report.h"
#include "calibrate/profile_file.h"

#include <cmath>

#include <gtest/gtest.h>

#include "graph/arch_spec.h"
#include "predictor/host_profile.h"
#include "predictor/predict.h"

namespace ftax {
namespace {

using json = nlohmann::json;

const std::string kBert = "bert:layers=12,hidden=768,heads=12,ffn=3072";

// A run measured exactly as predicted agrees on its bound at every batch, including batches
// where the GPU is busy more than half the time while the CPU still takes longer (the model's
// own bound says "framework" there, the measurement cannot see that).
TEST(ValidationReportTest, ARunMeasuredAsPredictedAgreesOnItsBound) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  json measured = {{"rows", json::array()}};
  int differs = 0;
  for (int64_t b : {1, 4, 16, 32, 64, 128, 256}) {
    Expected<Graph> g = BuildArchGraph(kBert, {{"batch", b}, {"seq", 128}}, ArchFlavor::kTorch);
    ASSERT_TRUE(g.ok());
    Expected<PredictionPoint> p =
        PredictPoint(g.value(), prof.value(), Framework::kPytorchEager, DType::kFloat16, 0, 1, nullptr);
    ASSERT_TRUE(p.ok());
    const bool observable_compute = p->compute_ms > p->latency_ms - p->compute_ms;
    differs += (p->bound == "compute") != observable_compute;
    measured["rows"].push_back({{"model", "bert-base"}, {"arch", kBert}, {"framework", "pytorch-eager"},
                                {"precision", "fp16"}, {"batch", b}, {"seq", 128},
                                {"latency_ms", {{"median", p->latency_ms}, {"p10", p->latency_ms},
                                                {"p90", p->latency_ms}}},
                                {"kernel_ms", p->compute_ms}});
  }
  EXPECT_GT(differs, 0) << "no batch where the two rules differ: the test shows nothing";
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep = CompareMeasurements(measured, prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 7u);
  for (const ValidationRow& r : rep->rows) {
    EXPECT_NEAR(r.error_pct, 0, 1e-6) << r.batch;
    EXPECT_TRUE(r.bound_agrees) << "batch " << r.batch << ": measured " << r.measured_bound
                                << ", predicted " << r.predicted_observable_bound;
  }
  ASSERT_EQ(rep->crossovers.size(), 1u);
  EXPECT_TRUE(rep->crossovers[0].agrees);
  EXPECT_EQ(rep->crossovers[0].measured, rep->crossovers[0].predicted);
}

// The GPU span that `ftax validate` records since 2026-11-23 reaches the report; runs without
// one say so with null rather than a made-up zero.
TEST(ValidationReportTest, TheGpuSpanIsReportedWhenRecorded) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  json row = {{"model", "bert-base"}, {"arch", kBert}, {"framework", "cuda-graph"},
              {"precision", "fp16"}, {"batch", 1}, {"seq", 128},
              {"latency_ms", {{"median", 0.84}, {"p10", 0.83}, {"p90", 0.86}}}, {"kernel_ms", 0.64}};
  json with_span = row;
  with_span["gpu_span_ms"] = 0.79;
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep =
      CompareMeasurements({{"rows", {with_span, row}}}, prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rep->rows[0].measured_gpu_span_ms, 0.79);
  EXPECT_LT(rep->rows[1].measured_gpu_span_ms, 0);
  json j = ValidationReportToJson(rep.value());
  EXPECT_DOUBLE_EQ(j["rows"][0]["measured_gpu_span_ms"].get<double>(), 0.79);
  EXPECT_TRUE(j["rows"][1]["measured_gpu_span_ms"].is_null());
}

// A reduce-overhead row whose replay was marked (validate_eager.py's before_replay_ms) is
// reported beside the prediction's time before the replay, and a miss says how they differ.
TEST(ValidationReportTest, AReduceOverheadRowsTimeBeforeTheReplayIsComparedWithThePredictions) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/data/profiles/h200.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  ASSERT_TRUE(prof->FindFramework(Framework::kTorchCompileReduceOverhead)->call_before_replay);
  json row = {{"model", "bert-base"}, {"arch", kBert}, {"framework", "torch-compile-reduce-overhead"},
              {"precision", "fp16"}, {"batch", 1}, {"seq", 128},
              {"latency_ms", {{"median", 2.0}, {"p10", 1.9}, {"p90", 2.1}}}, {"kernel_ms", 0.5},
              {"before_replay_ms", 1.2}};
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep = CompareMeasurements({{"rows", {row}}}, prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 1u);
  const ValidationRow& r = rep->rows[0];
  EXPECT_DOUBLE_EQ(r.measured_before_replay_ms, 1.2);
  EXPECT_NEAR(r.predicted_before_replay_ms, r.predicted.call_ms + r.predicted.module_ms, 1e-12);
  EXPECT_GT(r.predicted_before_replay_ms, 0);
  ASSERT_TRUE(r.miss.has_value());
  EXPECT_NE(r.miss->detail.find("before the replay: measured 1.200 ms"), std::string::npos) << r.miss->detail;
  json j = ValidationReportToJson(rep.value());
  EXPECT_DOUBLE_EQ(j["rows"][0]["measured_before_replay_ms"].get<double>(), 1.2);
  EXPECT_NEAR(j["rows"][0]["predicted_before_replay_ms"].get<double>(), r.predicted_before_replay_ms, 1e-12);
}

// BERT-base at batch 1 and sequence 128 as a profile prices it under one framework.
Expected<PredictionPoint> BertBatch1(const HostProfile& prof, Framework framework) {
  Expected<Graph> g = BuildArchGraph(kBert, {{"batch", 1}, {"seq", 128}}, ArchFlavor::kTorch);
  if (!g.ok()) return g.status();
  return PredictPoint(g.value(), prof, framework, DType::kFloat16, 0, 1, nullptr);
}

// Only a miss (neither within tolerance nor inside p10..p90) gets a cause, and a point measured
// in rounds whose visits spread past the tolerance, one agreeing, is put on the host.
TEST(ValidationReportTest, MissesAndOnlyMissesCarryTheirCause) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  Expected<PredictionPoint> p = BertBatch1(prof.value(), Framework::kTorchscript);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const double ms = p->latency_ms;
  auto row = [&](double median, json visits) {
    json r = {{"model", "bert-base"}, {"arch", kBert}, {"framework", "torchscript"},
              {"precision", "fp16"}, {"batch", 1}, {"seq", 128},
              {"latency_ms", {{"median", median}, {"p10", median * 0.98}, {"p90", median * 1.02}}},
              {"kernel_ms", p->compute_ms}};
    if (!visits.is_null()) r["visit_medians_ms"] = visits;
    return r;
  };
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep = CompareMeasurements(
      {{"rows", {row(ms * 1.05, nullptr), row(ms * 1.6, nullptr), row(ms * 1.6, {ms * 1.05, ms * 1.7})}}},
      prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 3u);
  EXPECT_FALSE(rep->rows[0].miss.has_value());
  ASSERT_TRUE(rep->rows[1].miss.has_value());
  EXPECT_EQ(rep->rows[1].miss->kind, "framework overhead");  // the kernels were measured as predicted
  ASSERT_TRUE(rep->rows[2].miss.has_value());
  EXPECT_EQ(rep->rows[2].miss->kind, "host drift");
  json j = ValidationReportToJson(rep.value());
  EXPECT_TRUE(j["rows"][0]["miss_cause"].is_null());
  EXPECT_EQ(j["rows"][2]["miss_cause"]["kind"], "host drift");
  EXPECT_EQ(j["frameworks"][0]["miss_causes"]["host drift"], 1);
  EXPECT_EQ(j["frameworks"][0]["miss_causes"]["framework overhead"], 1);

  // A Python eager row whose process probe ran 1.5x the profile's Python-eager chain of adds
  // is put on the process; a TorchScript row's probe (C++) is no such evidence; a probe that
  // is not a positive number is refused, naming the field.
  const FrameworkParams* eager = prof->FindFramework(Framework::kPytorchEager);
  ASSERT_TRUE(eager && eager->dispatch_us[int(DispatchClass::kKernel)].known());
  Expected<PredictionPoint> pe = BertBatch1(prof.value(), Framework::kPytorchEager);
  ASSERT_TRUE(pe.ok()) << pe.status().message();
  json slow_eager = row(pe->latency_ms * 1.6, nullptr);
  slow_eager["framework"] = "pytorch-eager";
  slow_eager["kernel_ms"] = pe->compute_ms;
  slow_eager["host_probe_us"] = 1.5 * eager->dispatch_us[int(DispatchClass::kKernel)].value;
  json slow = row(ms * 1.6, nullptr);
  slow["host_probe_us"] = slow_eager["host_probe_us"];
  Expected<ValidationReport> probed = CompareMeasurements({{"rows", {slow_eager, slow}}}, prof.value(), opt);
  ASSERT_TRUE(probed.ok()) << probed.status().message();
  ASSERT_EQ(probed->rows.size(), 2u);
  ASSERT_TRUE(probed->rows[0].miss.has_value() && probed->rows[1].miss.has_value());
  EXPECT_EQ(probed->rows[0].miss->kind, "slow process");
  EXPECT_EQ(probed->rows[1].miss->kind, "framework overhead");
  slow["host_probe_us"] = -3;
  Expected<ValidationReport> bad = CompareMeasurements({{"rows", {slow}}}, prof.value(), opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("host_probe_us"), std::string::npos) << bad.status().message();
}

// The memsets among a row's kernel records (the profiler's "Memset (Device)", a replayed graph's
// "memset32") are counted apart and reach the report and its JSON; a miss that ran far more
// records than predicted only because of them is not put on unpredicted kernels.
TEST(ValidationReportTest, MemsetRecordsAreCountedApartFromKernels) {
  Expected<HostProfile> prof = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(prof.ok()) << prof.status().message();
  Expected<PredictionPoint> p = BertBatch1(prof.value(), Framework::kTorchscript);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const double extra = std::ceil(0.5 * p->kernels);  // far past the 15% of an unpredicted program
  auto row = [&](bool memsets) {
    json kernels = {{"ampere_fp16_gemm", {double(p->kernels), 1e3 * p->compute_ms}}};
    if (memsets) {  // the profiler's records, and a replayed graph's memset nodes
      kernels["Memset (Device)"] = {extra - 2, extra - 2};
      kernels["memset32"] = {2.0, 2.0};
    } else {
      kernels["void other_kernel<float>"] = {extra, extra};
    }
    return json{{"model", "bert-base"}, {"arch", kBert}, {"framework", "torchscript"}, {"precision", "fp16"},
                {"batch", 1}, {"seq", 128},
                {"latency_ms", {{"median", 1.6 * p->latency_ms}, {"p10", 1.6 * p->latency_ms}, {"p90", 1.6 * p->latency_ms}}},
                {"kernel_ms", p->compute_ms}, {"kernels_per_iter", p->kernels + extra}, {"kernels", kernels}};
  };
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> rep = CompareMeasurements({{"rows", {row(true), row(false)}}}, prof.value(), opt);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rep->rows[0].measured_memsets, extra);
  EXPECT_DOUBLE_EQ(rep->rows[1].measured_memsets, 0);
  ASSERT_TRUE(rep->rows[0].miss.has_value() && rep->rows[1].miss.has_value());
  EXPECT_NE(rep->rows[0].miss->kind, "unpredicted kernels") << rep->rows[0].miss->detail;
  EXPECT_EQ(rep->rows[1].miss->kind, "unpredicted kernels") << rep->rows[1].miss->detail;
  json j = ValidationReportToJson(rep.value());
  EXPECT_DOUBLE_EQ(j["rows"][0]["measured_memsets"].get<double>(), extra);
}

}  // namespace
}  // namespace ftax

namespace ftax {
namespace {

// --cpu-speed row: a Python eager row measured while the CPU gauge read twice the profile's is
// predicted with twice the framework's CPU-side costs, and says so; by default (the profile's
// speed, as `ftax predict` gives) and for rows without a gauge nothing is scaled.
TEST(ValidationReportTest, RowsCanBePredictedAtTheCpuSpeedTheyRanAt) {
  Expected<HostProfile> loaded = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  HostProfile prof = loaded.value();
  prof.cpu_gauge_us = 3.0;
  json row = {{"model", "bert-base"}, {"arch", kBert}, {"framework", "pytorch-eager"}, {"precision", "fp16"},
              {"batch", 1}, {"seq", 128}, {"latency_ms", {{"median", 9.0}, {"p10", 8.5}, {"p90", 9.5}}},
              {"kernel_ms", 1.5}, {"cpu_gauge_us", 6.0}};
  json plain = row;
  plain.erase("cpu_gauge_us");
  CompareOptions opt;
  opt.interval_samples = 0;
  Expected<ValidationReport> as_profile = CompareMeasurements({{"rows", {row}}}, prof, opt);
  opt.at_row_cpu_speed = true;
  Expected<ValidationReport> as_row = CompareMeasurements({{"rows", {row, plain}}}, prof, opt);
  ASSERT_TRUE(as_profile.ok() && as_row.ok());
  ASSERT_EQ(as_row->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(as_profile->rows[0].cpu_speed_factor, 1);
  EXPECT_DOUBLE_EQ(as_row->rows[0].cpu_speed_factor, 2);
  EXPECT_DOUBLE_EQ(as_row->rows[1].cpu_speed_factor, 1);
  EXPECT_NEAR(as_row->rows[0].predicted.framework_ms, 2 * as_profile->rows[0].predicted.framework_ms,
              1e-6 * as_profile->rows[0].predicted.framework_ms);
  EXPECT_DOUBLE_EQ(as_row->rows[0].predicted.compute_ms, as_profile->rows[0].predicted.compute_ms);
  bool noted = false;
  for (const std::string& n : as_row->notes) noted |= n.find("CPU speed each was measured at") != std::string::npos;
  EXPECT_TRUE(noted);
  row["cpu_gauge_us"] = -2;
  EXPECT_FALSE(CompareMeasurements({{"rows", {row}}}, prof, opt).ok());

  // A TorchScript row goes by the host probe (C++), never by a Python gauge.
  prof.host_probe_us = 6.0;
  json ts = plain;
  ts["framework"] = "torchscript";
  ts["host_probe_us"] = 9.0;
  ts["cpu_gauge_us"] = 30.0;  // not its reading
  json ts_plain = ts;
  ts_plain.erase("host_probe_us");
  Expected<ValidationReport> ts_row = CompareMeasurements({{"rows", {ts, ts_plain}}}, prof, opt);
  ASSERT_TRUE(ts_row.ok()) << ts_row.status().message();
  ASSERT_EQ(ts_row->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(ts_row->rows[0].cpu_speed_factor, 1.5);
  EXPECT_DOUBLE_EQ(ts_row->rows[1].cpu_speed_factor, 1);
  EXPECT_GT(ts_row->rows[0].predicted.framework_ms, ts_row->rows[1].predicted.framework_ms);
  bool probe_noted = false;
  for (const std::string& n : ts_row->notes) probe_noted |= n.find("their host probe over the profile's 6.00 us") != std::string::npos;
  EXPECT_TRUE(probe_noted);

  // torch.compile's wrapper is Python code: its rows go by the Python gauge, as eager's do.
  prof.frameworks["torch-compile"] = prof.frameworks.at("pytorch-eager");
  json tc = ts;
  tc["framework"] = "torch-compile";
  tc["cpu_gauge_us"] = 6.0;
  tc["host_probe_us"] = 30.0;  // not its reading
  Expected<ValidationReport> tc_row = CompareMeasurements({{"rows", {tc}}}, prof, opt);
  ASSERT_TRUE(tc_row.ok()) << tc_row.status().message();
  ASSERT_EQ(tc_row->rows.size(), 1u) << (tc_row->skipped.empty() ? "" : tc_row->skipped[0]);
  EXPECT_DOUBLE_EQ(tc_row->rows[0].cpu_speed_factor, 2);

  // --cpu-speed typical: every row at the bench's median reading over the fast state, whatever
  // the row read (a Python row by the gauge's, 3.6 / 3.0; a TorchScript row by the probe's,
  // 7.5 / 6.0), and a row without a reading alike.
  prof.cpu_gauge_typical_us = 3.6;
  prof.host_probe_typical_us = 7.5;
  row["cpu_gauge_us"] = 6.0;
  CompareOptions typical;
  typical.interval_samples = 0;
  typical.at_typical_cpu_speed = true;
  Expected<ValidationReport> at_typical = CompareMeasurements({{"rows", {row, plain, ts}}}, prof, typical);
  ASSERT_TRUE(at_typical.ok()) << at_typical.status().message();
  ASSERT_EQ(at_typical->rows.size(), 3u);
  EXPECT_DOUBLE_EQ(at_typical->rows[0].cpu_speed_factor, 1.2);
  EXPECT_DOUBLE_EQ(at_typical->rows[1].cpu_speed_factor, 1.2);
  EXPECT_DOUBLE_EQ(at_typical->rows[2].cpu_speed_factor, 1.25);
  bool typical_noted = false;
  for (const std::string& n : at_typical->notes) typical_noted |= n.find("typical CPU speed") != std::string::npos;
  EXPECT_TRUE(typical_noted);
}

// A row's GPU time: kernel_ms as written where the run wrote kernel_sum_ms beside it (the
// busy time); an older run's summed durations capped at the GPU span, else at the latency,
// where overlapping kernels made the sum exceed them.
TEST(ValidationReportTest, MeasuredKernelTimeIsTheBusyTime) {
  const nlohmann::json lat = {{"median", 3.1}, {"p10", 3.0}, {"p90", 3.2}};
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}, {"kernel_ms", 2.5}, {"kernel_sum_ms", 12.4}}), 2.5);
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}, {"kernel_ms", 12.4}}), 3.1);
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}, {"kernel_ms", 12.4}, {"gpu_span_ms", 2.9}}), 2.9);
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}, {"kernel_ms", 1.2}, {"gpu_span_ms", 2.9}}), 1.2);
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}}), 0);
  EXPECT_DOUBLE_EQ(MeasuredKernelMs({{"latency_ms", lat}, {"kernel_ms", nullptr}}), 0);
}

}  // namespace
}  // namespace ftax
