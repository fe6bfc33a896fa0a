// Refining framework costs from measured rows, here rows made from PyTorch profiler traces
// (the path of `ftax calibrate --from-trace`): which rows are used, the scale and its error,
// the profiler overhead factor, and the provenance record.
#include "calibrate/framework_refit.h"
#include "calibrate/profile_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "calibrate/traced_run.h"
#include "graph/arch_spec.h"
#include "predictor/predict.h"
#include "synthetic_trace.h"
#include "predictor/host_profile.h"

namespace ftax {
namespace {

using json = nlohmann::json;

const std::string kBert = "bert:layers=12,hidden=768,heads=12,ffn=3072";

HostProfile H200() {
  Expected<HostProfile> p = LoadHostProfile(std::string(FTAX_SOURCE_DIR) + "/validation/h200/2026-11-22b/profile.json");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.value();
}

json TraceRow(int batch, double overhead = 1) {
  TracedRun run;
  run.path = std::string(FTAX_TEST_DATA) + "/traces/h200-bert-base-fp16-b" + std::to_string(batch) +
             ".trimmed.trace.json";
  run.name = "bert-base";
  run.arch = kBert;
  run.framework = "pytorch-eager";
  run.precision = "fp16";
  run.batch = batch;
  run.seq = 128;
  Expected<json> row = MeasuredRowFromTrace(run);
  EXPECT_TRUE(row.ok()) << row.status().message();
  json r = row.value();
  if (overhead != 1) r["profiler_overhead_factor"] = overhead;
  return r;
}

// A GPU-bound run: 3 steps of 1 ms, each with 0.8 ms of kernels.
std::string GpuBoundTrace() {
  char name[] = "/tmp/ftax_gpu_bound_XXXXXX";
  close(mkstemp(name));
  ::ftax::testing::WriteGpuBoundTrace(name);
  return name;
}

TEST(FrameworkRefitTest, TracesOfFrameworkBoundRunsSetTheScaleToTheirMedianRatio) {
  const HostProfile profile = H200();
  json measured = {{"rows", {TraceRow(1), TraceRow(32)}}};
  RefitOptions opt;
  opt.min_rows = 2;
  RefitReport rep;
  Expected<HostProfile> refined = RefineFrameworkCosts(profile, measured, opt, &rep);
  ASSERT_TRUE(refined.ok()) << refined.status().message();
  ASSERT_EQ(rep.rows.size(), 2u);
  ASSERT_EQ(rep.frameworks.size(), 1u);
  const RefitReport::Entry& e = rep.frameworks[0];
  EXPECT_EQ(e.framework, "pytorch-eager");
  EXPECT_EQ(e.rows, 2);

  // Recompute each ratio from the rows themselves.
  const double call_ms = profile.frameworks.at("pytorch-eager").call_us.value / 1e3;
  std::vector<double> ratios;
  for (int i = 0; i < 2; ++i) {
    const FrameworkTimeRow& r = rep.rows[i];
    ASSERT_TRUE(r.usable) << r.reason;
    const json& m = measured["rows"][i];
    // CPU-side time: the latency less the GPU work predicted after the last dispatch, which
    // in a framework-bound run is a small part of the kernel time.
    EXPECT_GE(r.gpu_tail_ms, 0);
    EXPECT_LT(r.gpu_tail_ms, m["kernel_ms"].get<double>());
    const double fw = m["latency_ms"]["median"].get<double>() - r.gpu_tail_ms;
    EXPECT_NEAR(r.measured_ms, fw, 1e-9);
    EXPECT_GT(r.measured_ms, m["latency_ms"]["median"].get<double>() - m["kernel_ms"].get<double>());
    EXPECT_NEAR(r.call_ms, call_ms, 1e-12);
    EXPECT_GT(r.predicted_ms, r.call_ms);
    EXPECT_GE(r.launch_ms, 0);
    ratios.push_back((fw - call_ms - r.launch_ms) / (r.predicted_ms - call_ms - r.launch_ms));
    EXPECT_NEAR(r.ratio, ratios.back(), 1e-12);
  }
  // The median of two is their mean; the error 1.4826 * MAD / sqrt(2).
  EXPECT_NEAR(e.scale, (ratios[0] + ratios[1]) / 2, 1e-12);
  EXPECT_NEAR(e.scale_stderr, 1.4826 * std::fabs(ratios[0] - ratios[1]) / 2 / std::sqrt(2.0), 1e-12);
  // Under the profiler the CPU side is far slower than the microbenchmark chains price it.
  EXPECT_GT(e.scale, 2.0);

  // Every dispatch cost and the module cost scale; the call cost does not.
  const FrameworkParams& before = profile.frameworks.at("pytorch-eager");
  const FrameworkParams& after = refined->frameworks.at("pytorch-eager");
  for (int c = 0; c < kNumDispatchClasses; ++c)
    EXPECT_NEAR(after.dispatch_us[c].value, before.dispatch_us[c].value * e.scale, 1e-9);
  EXPECT_NEAR(after.module_us.value, before.module_us.value * e.scale, 1e-9);
  EXPECT_DOUBLE_EQ(after.call_us.value, before.call_us.value);
  // Other frameworks are untouched.
  EXPECT_DOUBLE_EQ(refined->frameworks.at("torchscript").dispatch_us[0].value,
                   profile.frameworks.at("torchscript").dispatch_us[0].value);

  // With the refined costs, the two rows straddle their measurements: one under, one over.
  Expected<std::vector<FrameworkTimeRow>> post = CompareFrameworkTime(refined.value(), measured, opt);
  ASSERT_TRUE(post.ok());
  const double e0 = post.value()[0].predicted_ms - rep.rows[0].measured_ms;
  const double e1 = post.value()[1].predicted_ms - rep.rows[1].measured_ms;
  EXPECT_LT(e0 * e1, 0) << e0 << " " << e1;
  // Refining the refined profile on the same rows changes almost nothing: the scale is 1 up
  // to the small shift of the predicted GPU tail that the new dispatch costs cause.
  RefitReport again;
  ASSERT_TRUE(RefineFrameworkCosts(refined.value(), measured, opt, &again).ok());
  ASSERT_EQ(again.frameworks.size(), 1u);
  EXPECT_NEAR(again.frameworks[0].scale, 1.0, 0.02);
}

TEST(FrameworkRefitTest, ProfilerOverheadFactorDividesMeasuredFrameworkTime) {
  const HostProfile profile = H200();
  RefitOptions opt;
  opt.min_rows = 2;
  RefitReport plain, corrected;
  ASSERT_TRUE(RefineFrameworkCosts(profile, json{{"rows", {TraceRow(1), TraceRow(32)}}}, opt, &plain).ok());
  ASSERT_TRUE(
      RefineFrameworkCosts(profile, json{{"rows", {TraceRow(1, 2.0), TraceRow(32, 2.0)}}}, opt, &corrected)
          .ok());
  ASSERT_EQ(corrected.frameworks.size(), 1u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(corrected.rows[i].measured_ms, plain.rows[i].measured_ms / 2, 1e-9);
    const double call = corrected.rows[i].call_ms, launch = corrected.rows[i].launch_ms;
    EXPECT_NEAR(corrected.rows[i].ratio,
                (plain.rows[i].measured_ms / 2 - call - launch) /
                    (plain.rows[i].predicted_ms - call - launch),
                1e-12);
  }
  EXPECT_LT(corrected.frameworks[0].scale, plain.frameworks[0].scale / 2 + 1e-9);

  // A factor that is not a positive number makes the row unusable, with the reason.
  json bad = TraceRow(1);
  bad["profiler_overhead_factor"] = 0;
  Expected<std::vector<FrameworkTimeRow>> rows = CompareFrameworkTime(profile, json{{"rows", {bad}}}, opt);
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE(rows.value()[0].usable);
  EXPECT_NE(rows.value()[0].reason.find("profiler_overhead_factor"), std::string::npos);
}

// A row that read the CPU gauge slower than the profile's ran in the host's slow state: its
// measured CPU time is brought to the profile's speed before the ratio; a reading more than
// 2x away is left out, with the reason.
TEST(FrameworkRefitTest, RowsAreBroughtToTheProfilesCpuSpeed) {
  HostProfile profile = H200();
  profile.cpu_gauge_us = 3.0;
  RefitOptions opt;
  opt.min_rows = 2;
  RefitReport plain, slow;
  ASSERT_TRUE(RefineFrameworkCosts(profile, json{{"rows", {TraceRow(1), TraceRow(32)}}}, opt, &plain).ok());
  json a = TraceRow(1), b = TraceRow(32);
  a["cpu_gauge_us"] = 4.5;  // 1.5x the profile's
  b["cpu_gauge_us"] = 4.5;
  ASSERT_TRUE(RefineFrameworkCosts(profile, json{{"rows", {a, b}}}, opt, &slow).ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(slow.rows[i].usable) << slow.rows[i].reason;
    EXPECT_DOUBLE_EQ(slow.rows[i].cpu_speed_factor, 1.5);
    EXPECT_NEAR(slow.rows[i].measured_ms, plain.rows[i].measured_ms / 1.5, 1e-9);
  }
  a["cpu_gauge_us"] = 6.5;  // 2.17x: not the state the run met, maybe
  Expected<std::vector<FrameworkTimeRow>> rows = CompareFrameworkTime(profile, json{{"rows", {a}}}, opt);
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE(rows.value()[0].usable);
  EXPECT_NE(rows.value()[0].reason.find("CPU gauge read 2.167x"), std::string::npos) << rows.value()[0].reason;
}

TEST(FrameworkRefitTest, GpuBoundTracesAndTooFewRowsAreNotUsed) {
  const HostProfile profile = H200();
  const std::string gpu_bound = GpuBoundTrace();
  TracedRun run{gpu_bound, "bert-base", kBert, "pytorch-eager", "fp16", 256, 128};
  Expected<json> g = MeasuredRowFromTrace(run);
  std::remove(gpu_bound.c_str());
  ASSERT_TRUE(g.ok()) << g.status().message();
  json measured = {{"rows", {TraceRow(1), g.value()}}};

  RefitOptions opt;  // min_rows 3
  RefitReport rep;
  Expected<HostProfile> refined = RefineFrameworkCosts(profile, measured, opt, &rep);
  ASSERT_TRUE(refined.ok());
  ASSERT_EQ(rep.rows.size(), 2u);
  EXPECT_TRUE(rep.rows[0].usable);
  EXPECT_FALSE(rep.rows[1].usable);
  EXPECT_NE(rep.rows[1].reason.find("not framework-bound"), std::string::npos) << rep.rows[1].reason;
  EXPECT_NEAR(rep.rows[1].kernel_ms, 0.8, 1e-9);
  EXPECT_NEAR(rep.rows[1].measured_ms, 0.2, 1e-9);
  // One usable row < min_rows: nothing refined, the profile unchanged.
  EXPECT_TRUE(rep.frameworks.empty());
  EXPECT_DOUBLE_EQ(refined->frameworks.at("pytorch-eager").dispatch_us[1].value,
                   profile.frameworks.at("pytorch-eager").dispatch_us[1].value);

  // With min_rows 1, the one ratio is the scale, and its error is unknown, not zero.
  opt.min_rows = 1;
  RefitReport one;
  refined = RefineFrameworkCosts(profile, measured, opt, &one);
  ASSERT_TRUE(refined.ok());
  ASSERT_EQ(one.frameworks.size(), 1u);
  EXPECT_NEAR(one.frameworks[0].scale, one.rows[0].ratio, 1e-12);
  EXPECT_TRUE(std::isnan(one.frameworks[0].scale_stderr));
  EXPECT_TRUE(std::isnan(refined->frameworks.at("pytorch-eager").dispatch_us[1].std_error));
  // ... which the profile writes as null and reads back.
  json pj = HostProfileToJson(refined.value());
  EXPECT_TRUE(pj["frameworks"]["pytorch-eager"]["dispatch_us"]["kernel"]["stderr"].is_null());
  EXPECT_TRUE(HostProfileFromJson(pj).ok());
}

// CUDA-graph replays issue no dispatches; their overhead is the latency the kernels do not
// fill, and every row (GPU-bound or not) refines the per-node costs.
TEST(FrameworkRefitTest, CudaGraphRowsScaleThePerNodeCosts) {
  const HostProfile profile = H200();
  const FrameworkParams& g = profile.frameworks.at("cuda-graph");
  json rows = json::array();
  std::vector<double> overhead_ms;
  const std::vector<double> fraction = {0.5, 0.6, 0.7};  // measured / predicted per-node cost
  for (int i = 0; i < 3; ++i) {
    const int batch = 1 << (2 * i);
    Expected<Graph> graph = BuildArchGraph(kBert, {{"batch", batch}, {"seq", 128}}, ArchFlavor::kTorch);
    ASSERT_TRUE(graph.ok());
    Expected<PredictionPoint> p =
        PredictPoint(graph.value(), profile, Framework::kCudaGraph, DType::kFloat16, 0, 1, nullptr);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const double call_ms = g.call_us.value / 1e3;
    const double kernel_ms = 2.5 * (i + 1);  // any: the overhead is what the kernels leave
    const double over = call_ms + fraction[i] * (p->framework_ms - call_ms);
    overhead_ms.push_back(over);
    rows.push_back({{"model", "bert-base"}, {"arch", kBert}, {"framework", "cuda-graph"},
                    {"precision", "fp16"}, {"batch", batch}, {"seq", 128},
                    {"latency_ms", {{"median", kernel_ms + over}}}, {"kernel_ms", kernel_ms}});
  }
  RefitReport rep;
  Expected<HostProfile> refined = RefineFrameworkCosts(profile, {{"rows", rows}}, {}, &rep);
  ASSERT_TRUE(refined.ok()) << refined.status().message();
  ASSERT_EQ(rep.rows.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(rep.rows[i].usable) << rep.rows[i].reason;
    EXPECT_NEAR(rep.rows[i].measured_ms, overhead_ms[i], 1e-9);
    EXPECT_NEAR(rep.rows[i].ratio, fraction[i], 1e-9);
  }
  ASSERT_EQ(rep.frameworks.size(), 1u);
  EXPECT_EQ(rep.frameworks[0].framework, "cuda-graph");
  EXPECT_NEAR(rep.frameworks[0].scale, 0.6, 1e-9);  // the median
  const FrameworkParams& r = refined->frameworks.at("cuda-graph");
  EXPECT_NEAR(r.replay_per_node_us.value, 0.6 * g.replay_per_node_us.value, 1e-9);
  EXPECT_NEAR(r.node_gap_us.value, 0.6 * g.node_gap_us.value, 1e-9);
  EXPECT_DOUBLE_EQ(r.call_us.value, g.call_us.value);  // the launch itself is not scaled
}

TEST(FrameworkRefitTest, RecordRefinementKeepsTheEarlierOne) {
  HostProfile p = H200();
  p.provenance = {{"date", "2026-11-22T00:00:00Z"},
                  {"refined_with", {"eager.json"}},
                  {"refinement", {{{"framework", "pytorch-eager"}, {"dispatch_scale", 2.17}}}},
                  {"refinement_method", "old"}};
  RefitReport rep;
  rep.frameworks.push_back({"pytorch-eager", 2, 1.5, std::nan("")});
  RecordRefinement(rep, json{"b1.json", "b32.json"}, json{{"refinement_notes", {"n"}}}, &p);
  EXPECT_EQ(p.provenance["date"], "2026-11-22T00:00:00Z");
  EXPECT_EQ(p.provenance["refined_with"], (json{"b1.json", "b32.json"}));
  EXPECT_DOUBLE_EQ(p.provenance["refinement"][0]["dispatch_scale"].get<double>(), 1.5);
  EXPECT_TRUE(p.provenance["refinement"][0]["stderr"].is_null());
  EXPECT_EQ(p.provenance["refinement_notes"], json{"n"});
  ASSERT_EQ(p.provenance["previous_refinements"].size(), 1u);
  const json& prev = p.provenance["previous_refinements"][0];
  EXPECT_EQ(prev["refined_with"], json{"eager.json"});
  EXPECT_DOUBLE_EQ(prev["refinement"][0]["dispatch_scale"].get<double>(), 2.17);
  EXPECT_FALSE(prev.contains("date"));

  RecordRefinement(rep, json{"b8.json"}, json::object(), &p);
  ASSERT_EQ(p.provenance["previous_refinements"].size(), 2u);
  EXPECT_EQ(p.provenance["previous_refinements"][1]["refinement_notes"], json{"n"});
  EXPECT_FALSE(p.provenance.contains("refinement_notes"));
}

HostProfile RefinedWith(std::vector<std::pair<std::string, double>> scales) {
  HostProfile p = H200();
  RefitReport rep;
  for (const auto& [fw, s] : scales) rep.frameworks.push_back({fw, 40, s, 0.05});
  RecordRefinement(rep, json{"runs.json"}, json::object(), &p);
  return p;
}

// A prior is the median of the hosts' scales, its error their spread (not the error of a
// mean: a new host is one more draw); frameworks missing from some hosts take the others'.
TEST(FrameworkRefitTest, PriorIsTheMedianOfOtherHostsScales) {
  Expected<RefitReport> prior = PriorFromRefinedProfiles(
      {RefinedWith({{"pytorch-eager", 2.0}, {"torchscript", 1.2}}),
       RefinedWith({{"pytorch-eager", 3.0}, {"torchscript", 1.6}}),
       RefinedWith({{"pytorch-eager", 2.4}})},
      {"a", "b", "c"});
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  ASSERT_EQ(prior->frameworks.size(), 3u);
  const auto& eager = prior->frameworks[0];
  EXPECT_EQ(eager.framework, "pytorch-eager");
  EXPECT_EQ(eager.rows, 3);
  EXPECT_DOUBLE_EQ(eager.scale, 2.4);
  EXPECT_NEAR(eager.scale_stderr, 1.4826 * 0.4, 1e-12);  // deviations 0.4, 0.6, 0
  // No host refined Python eager under no_grad: it takes the inference-mode scale.
  const auto& no_grad = prior->frameworks[1];
  EXPECT_EQ(no_grad.framework, "pytorch-eager-no-grad");
  EXPECT_DOUBLE_EQ(no_grad.scale, 2.4);
  EXPECT_DOUBLE_EQ(no_grad.scale_stderr, eager.scale_stderr);
  const auto& ts = prior->frameworks[2];
  EXPECT_EQ(ts.rows, 2);
  EXPECT_NEAR(ts.scale, 1.4, 1e-12);

  HostProfile p = H200();
  const double before = p.frameworks.at("torchscript").dispatch_us[0].value;
  const double call = p.frameworks.at("torchscript").call_us.value;
  ApplyScales(prior.value(), &p);
  EXPECT_NEAR(p.frameworks.at("torchscript").dispatch_us[0].value, 1.4 * before, 1e-9);
  EXPECT_DOUBLE_EQ(p.frameworks.at("torchscript").call_us.value, call);
}

TEST(FrameworkRefitTest, PriorKeepsANoGradScaleOfItsOwn) {
  Expected<RefitReport> prior = PriorFromRefinedProfiles(
      {RefinedWith({{"pytorch-eager", 2.0}, {"pytorch-eager-no-grad", 1.5}}),
       RefinedWith({{"pytorch-eager", 3.0}, {"pytorch-eager-no-grad", 1.7}})},
      {"a", "b"});
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  ASSERT_EQ(prior->frameworks.size(), 2u);
  EXPECT_EQ(prior->frameworks[1].framework, "pytorch-eager-no-grad");
  EXPECT_DOUBLE_EQ(prior->frameworks[1].scale, 1.6);
}

// Relative op scales that refinements fitted travel op type by op type (the median of the
// profiles that have them) and are set where the target prices that framework per op type; a
// dispatch scale that one profile alone recorded has no spread and is not carried.
TEST(FrameworkRefitTest, PriorCarriesRelativeOpScalesAndNotALoneScale) {
  auto with_ops = [](double conv, double rest) {
    HostProfile p = RefinedWith({{"pytorch-eager", 2.0}});
    p.provenance["refinement_op_scale"] = {
        {"torchscript", {{"rows", 30}, {"op_scale", {{"conv", conv}, {"*", rest}}}}}};
    return p;
  };
  Expected<RefitReport> prior = PriorFromRefinedProfiles(
      {with_ops(0.8, 1.4), with_ops(0.9, 1.6), RefinedWith({{"pytorch-eager", 3.0}, {"torch-compile", 1.3}})},
      {"a", "b", "c"});
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  ASSERT_EQ(prior->op_scales.count("torchscript"), 1u);
  const RefitReport::OpScales& ts = prior->op_scales.at("torchscript");
  EXPECT_EQ(ts.profiles, 2);
  EXPECT_NEAR(ts.scale.at("conv"), 0.85, 1e-12);
  EXPECT_NEAR(ts.scale.at("*"), 1.5, 1e-12);
  for (const auto& e : prior->frameworks) EXPECT_NE(e.framework, "torch-compile");
  ASSERT_EQ(prior->not_carried.size(), 1u);
  EXPECT_EQ(prior->not_carried[0], "torch-compile: x1.300 from one profile alone, not carried");

  HostProfile per_op = H200();
  per_op.frameworks["torchscript"].op_us["conv"] = Param::Of(30, 1);
  std::vector<std::string> skipped;
  RefitReport applied = ApplyScales(prior.value(), &per_op, &skipped);
  EXPECT_EQ(per_op.frameworks.at("torchscript").op_scale, ts.scale);
  EXPECT_EQ(applied.op_scales.count("torchscript"), 1u);
  RecordRefinement(applied, json{"a", "b", "c"}, json::object(), &per_op);
  EXPECT_EQ(per_op.provenance["refinement_op_scale"]["torchscript"]["profiles"], 2);

  // A framework whose bench measured an op mix still takes the op scales (they are
  // level-free: the mix sets the level, they the proportions), though it takes no scale.
  HostProfile mixed = H200();
  mixed.frameworks["torchscript"].op_us["conv"] = Param::Of(30, 1);
  mixed.frameworks["torchscript"].mix_scale = 1.6;
  const double mixed_dispatch = mixed.frameworks.at("torchscript").dispatch_us[0].value;
  skipped.clear();
  ApplyScales(prior.value(), &mixed, &skipped);
  EXPECT_EQ(mixed.frameworks.at("torchscript").op_scale, ts.scale);
  EXPECT_DOUBLE_EQ(mixed.frameworks.at("torchscript").dispatch_us[0].value, mixed_dispatch);
  for (const std::string& s : skipped) EXPECT_EQ(s.find("op scales"), std::string::npos) << s;

  HostProfile by_class = H200();
  by_class.frameworks["torchscript"].op_us.clear();
  skipped.clear();
  ApplyScales(prior.value(), &by_class, &skipped);
  EXPECT_TRUE(by_class.frameworks.at("torchscript").op_scale.empty());
  bool said = false;
  for (const std::string& line : skipped)
    said = said || line == "torchscript: the prior's op scales (2 profiles) not applied: this profile does not price its ops by type";
  EXPECT_TRUE(said);
}

// The graph replay's scale belongs to the GPU: with the target's GPU named, it comes from the
// profiles of that GPU when two or more have one; CPU-side scales come from every profile.
TEST(FrameworkRefitTest, PriorTakesTheGraphScaleFromHostsOfTheSameGpu) {
  auto host = [](std::string gpu, double graph, double eager) {
    HostProfile p = RefinedWith({{"cuda-graph", graph}, {"pytorch-eager", eager}});
    p.host = {{"gpu", gpu}};
    return p;
  };
  std::vector<HostProfile> hosts = {host("H100", 0.75, 2.0), host("H100", 0.80, 3.0),
                                    host("H200", 1.10, 2.5), host("H200", 1.16, 2.6)};
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  Expected<RefitReport> h200 = PriorFromRefinedProfiles(hosts, names, "H200");
  ASSERT_TRUE(h200.ok()) << h200.status().message();
  EXPECT_NEAR(h200->frameworks[0].scale, 1.13, 1e-12);  // cuda-graph: c and d
  EXPECT_EQ(h200->frameworks[0].rows, 2);
  EXPECT_NEAR(h200->frameworks[1].scale, 2.55, 1e-12);  // pytorch-eager: all four
  EXPECT_EQ(h200->frameworks[1].rows, 4);
  // An unknown GPU, or none named: every profile.
  Expected<RefitReport> other = PriorFromRefinedProfiles(hosts, names, "A100");
  ASSERT_TRUE(other.ok());
  EXPECT_NEAR(other->frameworks[0].scale, (0.80 + 1.10) / 2, 1e-12);
  EXPECT_EQ(other->frameworks[0].rows, 4);
}

// A host refined on its own runs after a prior (or an earlier refinement) scaled its costs
// holds the product of both scales; that product, not the last factor alone, is what its
// runs taught about its bench. Frameworks only the earlier step scaled are not counted.
TEST(FrameworkRefitTest, PriorComposesAHostsSuccessiveRefinements) {
  HostProfile twice = RefinedWith({{"pytorch-eager", 2.0}, {"torchscript", 1.5}});
  RefitReport second;
  second.frameworks.push_back({"pytorch-eager", 30, 1.8, 0.05});
  RecordRefinement(second, json{"calibration-runs.json"}, json::object(), &twice);
  Expected<RefitReport> prior =
      PriorFromRefinedProfiles({twice, RefinedWith({{"pytorch-eager", 3.0}})}, {"a", "b"});
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  ASSERT_EQ(prior->frameworks.size(), 2u);  // pytorch-eager and its no_grad twin
  EXPECT_EQ(prior->frameworks[0].framework, "pytorch-eager");
  EXPECT_NEAR(prior->frameworks[0].scale, (2.0 * 1.8 + 3.0) / 2, 1e-12);
}

TEST(FrameworkRefitTest, PriorNeedsTwoRefinedHosts) {
  Expected<RefitReport> one = PriorFromRefinedProfiles({RefinedWith({{"pytorch-eager", 2.0}})}, {"a"});
  EXPECT_FALSE(one.ok());
  Expected<RefitReport> unrefined =
      PriorFromRefinedProfiles({RefinedWith({{"pytorch-eager", 2.0}}), H200()}, {"a", "plain.json"});
  ASSERT_FALSE(unrefined.ok());
  EXPECT_NE(unrefined.status().message().find("plain.json"), std::string::npos)
      << unrefined.status().message();
  HostProfile borrowed = RefinedWith({{"pytorch-eager", 2.4}});
  borrowed.provenance["refinement_method"] = "prior: median of other hosts' scales";
  Expected<RefitReport> twice =
      PriorFromRefinedProfiles({RefinedWith({{"pytorch-eager", 2.0}}), borrowed}, {"a", "borrowed.json"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("borrowed.json"), std::string::npos);
}


// Scales found for costs priced by dispatch class and for costs priced by op type are kept
// apart: a profile that prices a framework's ops by type takes only scales of the same kind.
TEST(FrameworkRefitTest, PriorScalesApplyOnlyToCostsOfTheirKind) {
  HostProfile by_op = H200();
  by_op.frameworks.at("pytorch-eager").op_us["conv"] = Param::Of(20, 1);
  auto refined = [&](HostProfile p, double s) {
    RefitReport rep;
    rep.frameworks.push_back({"pytorch-eager", 40, s, 0.05});
    RecordRefinement(rep, json{"runs.json"}, json::object(), &p);
    return p;
  };
  Expected<RefitReport> prior = PriorFromRefinedProfiles(
      {refined(H200(), 2.0), refined(H200(), 3.0), refined(by_op, 1.2), refined(by_op, 1.4)}, {"a", "b", "c", "d"});
  ASSERT_TRUE(prior.ok()) << prior.status().message();
  const RefitReport::Entry* cls = nullptr;
  const RefitReport::Entry* op = nullptr;
  for (const auto& e : prior->frameworks)
    if (e.framework == "pytorch-eager") (e.op_costs ? op : cls) = &e;
  ASSERT_TRUE(cls && op);
  EXPECT_DOUBLE_EQ(cls->scale, 2.5);
  EXPECT_DOUBLE_EQ(op->scale, 1.3);

  HostProfile target = by_op;
  std::vector<std::string> skipped;
  RefitReport applied = ApplyScales(prior.value(), &target, &skipped);
  EXPECT_NEAR(target.frameworks.at("pytorch-eager").op_us.at("conv").value, 20 * 1.3, 1e-9);
  bool said = false;
  for (const std::string& line : skipped)
    said = said || line.find("pytorch-eager: the prior's scale (x2.5") == 0;
  EXPECT_TRUE(said);
  for (const auto& e : applied.frameworks)
    if (e.framework == "pytorch-eager") EXPECT_TRUE(e.op_costs);

  // One kind only: a profile priced the other way takes no scale for that framework.
  Expected<RefitReport> class_only =
      PriorFromRefinedProfiles({refined(H200(), 2.0), refined(H200(), 3.0)}, {"a", "b"});
  ASSERT_TRUE(class_only.ok());
  HostProfile untouched = by_op;
  skipped.clear();
  ApplyScales(class_only.value(), &untouched, &skipped);
  EXPECT_DOUBLE_EQ(untouched.frameworks.at("pytorch-eager").op_us.at("conv").value, 20);
  EXPECT_FALSE(skipped.empty());
}

// A scale found while an op's further launches were priced by libtorch-eager's kernel less view
// dispatch applies to no profile that times launches (gpu.launch_us), and the other way round;
// a graph framework pays no launches, so its scale applies either way.
TEST(FrameworkRefitTest, PriorScalesApplyOnlyWithTheLaunchPricingTheyWereFoundWith) {
  auto refined = [&](HostProfile p, double ts, double graph) {
    RefitReport rep;
    rep.frameworks.push_back({"torchscript", 40, ts, 0.05});
    rep.frameworks.push_back({"cuda-graph", 40, graph, 0.05});
    RecordRefinement(rep, json{"runs.json"}, json::object(), &p);
    return p;
  };
  HostProfile timed = H200();
  timed.gpu.launch_us = Param::Of(4.2, 0.05);
  Expected<RefitReport> older =
      PriorFromRefinedProfiles({refined(H200(), 1.1, 0.9), refined(H200(), 1.3, 1.1)}, {"a", "b"});
  ASSERT_TRUE(older.ok()) << older.status().message();
  for (const auto& e : older->frameworks) EXPECT_FALSE(e.timed_launch) << e.framework;

  HostProfile target = timed;
  const double ts = target.frameworks.at("torchscript").dispatch_us[0].value;
  const double gap = target.frameworks.at("cuda-graph").node_gap_us.value;
  std::vector<std::string> skipped;
  ApplyScales(older.value(), &target, &skipped);
  EXPECT_DOUBLE_EQ(target.frameworks.at("torchscript").dispatch_us[0].value, ts);  // not applied
  EXPECT_NEAR(target.frameworks.at("cuda-graph").node_gap_us.value, gap * 1.0, 1e-9);  // median 1.0
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].find("torchscript: the prior's scale (x1.2"), 0u) << skipped[0];
  EXPECT_NE(skipped[0].find("gpu.launch_us"), std::string::npos) << skipped[0];

  // Scales of hosts that timed launches apply to a profile that does, and not to one that doesn't.
  Expected<RefitReport> newer =
      PriorFromRefinedProfiles({refined(timed, 1.0, 0.9), refined(timed, 1.2, 1.1)}, {"c", "d"});
  ASSERT_TRUE(newer.ok());
  HostProfile t2 = timed;
  skipped.clear();
  ApplyScales(newer.value(), &t2, &skipped);
  EXPECT_NEAR(t2.frameworks.at("torchscript").dispatch_us[0].value, 1.1 * ts, 1e-9);
  EXPECT_TRUE(skipped.empty());
  HostProfile untimed = H200();
  skipped.clear();
  ApplyScales(newer.value(), &untimed, &skipped);
  EXPECT_DOUBLE_EQ(untimed.frameworks.at("torchscript").dispatch_us[0].value, ts);
  EXPECT_EQ(skipped.size(), 1u);

  // A profile whose bench priced its own op mix takes no scale of other hosts' model runs.
  HostProfile mixed = timed;
  mixed.frameworks.at("torchscript").mix_scale = 1.4;
  skipped.clear();
  ApplyScales(newer.value(), &mixed, &skipped);
  EXPECT_DOUBLE_EQ(mixed.frameworks.at("torchscript").dispatch_us[0].value, ts);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("op mix"), std::string::npos) << skipped[0];
}

}  // namespace
}  // namespace ftax
