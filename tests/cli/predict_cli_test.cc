// End-to-end tests of `ftax predict`, `compare` and `validate --measured` on the shipped
// profiles and validation data (real measurements from data/; the numbers are not asserted,
// only the structure, the physics that must hold, and the error paths).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../ftax_cli_run.h"

namespace {

using ::ftax::testing::CliRun;

CliRun RunFtax(const std::string& args) { return ::ftax::testing::RunFtaxCli(args); }

TEST(PredictCliTest, JsonHasEveryPointTermsAndCrossovers) {
  CliRun r = RunFtax("predict --arch bert:layers=12 --dim seq=128 --profile validation/h200/2026-11-22b/profile-refined.json "
                 "--framework pytorch-eager,cuda-graph --precision fp16,fp32 --batch 1:128 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["predictions"].size(), 2u * 2u * 8u);
  for (const auto& p : j["predictions"]) {
    const double lat = p["latency_ms"], fw = p["framework_ms"], comp = p["compute_ms"];
    EXPECT_GE(lat + 1e-9, comp);
    EXPECT_TRUE(p["bound"] == "framework" || p["bound"] == "compute");
    EXPECT_EQ(p["bound"] == "compute", comp > fw);
    EXPECT_LE(p["interval_ms"][0].get<double>(), lat);
    EXPECT_GE(p["interval_ms"][1].get<double>(), lat);
  }
  ASSERT_EQ(j["crossovers"].size(), 4u);
  for (const auto& c : j["crossovers"]) EXPECT_TRUE(c.contains("crossover_batch"));
}

TEST(PredictCliTest, CudaGraphBeatsEagerAtBatchOneOnARealProfile) {
  CliRun r = RunFtax("predict --arch bert:layers=12 --dim seq=128 --profile validation/h100/2026-11-22/profile-refined.json "
                 "--framework pytorch-eager,cuda-graph --precision fp16 --batch 1 --format json");
  ASSERT_EQ(r.rc, 0);
  auto j = nlohmann::json::parse(r.out);
  double eager = 0, graph = 0;
  for (const auto& p : j["predictions"])
    (p["framework"] == "cuda-graph" ? graph : eager) = p["latency_ms"].get<double>();
  EXPECT_GT(eager, 2 * graph);
}

// A profile with per-op costs (host run z's own bench) prices ResNet-50's eager ops by type and
// says where its CPU time goes: the op types' times add up to at most the framework time, and
// the table names the costliest ones.
TEST(PredictCliTest, PerOpCostsSayWhereTheCpuTimeGoes) {
  const std::string cmd = "predict --arch resnet:depth=50 --profile validation/h200/2026-11-26z/profile.json "
                          "--framework pytorch-eager --precision fp16 --batch 1";
  CliRun r = RunFtax(cmd + " --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["predictions"].size(), 1u);
  const auto& p = j["predictions"][0];
  ASSERT_TRUE(p.contains("framework_ms_by_op")) << p.dump();
  double sum = 0;
  int ops = 0;
  for (const auto& [op, v] : p["framework_ms_by_op"].items()) {
    sum += v["ms"].get<double>();
    ops += v["ops"].get<int>();
  }
  EXPECT_GT(sum, 0.5 * p["framework_ms"].get<double>());
  EXPECT_LE(sum, p["framework_ms"].get<double>() + 1e-9);
  EXPECT_LE(ops, p["dispatches"].get<int>());
  EXPECT_EQ(p["framework_ms_by_op"]["conv"]["ops"], 53);  // ResNet-50's convolutions
  CliRun text = RunFtax(cmd);
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("CPU time by op type, pytorch-eager fp16 batch 1: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dispatches priced by their op type's measured cost"), std::string::npos) << text.out;
  // Without per-op costs (a profile whose bench timed no per-op chains), no such line.
  CliRun by_class = RunFtax("predict --arch resnet:depth=50 --profile validation/h200/2026-11-22b/profile.json "
                            "--framework pytorch-eager --precision fp16 --batch 1");
  ASSERT_EQ(by_class.rc, 0);
  EXPECT_EQ(by_class.out.find("CPU time by op type"), std::string::npos);
}

// torch.compile's default mode says where the rest of its call's CPU time goes besides the
// library calls priced by op type: its other dispatches (Triton kernels), the call, the graph's
// inputs and the modules outside the generated code, which with the op types add up to the
// point's framework time; the JSON carries the same parts.
TEST(PredictCliTest, TheDefaultModeSaysWhatItsCallCostsBesidesItsOps) {
  nlohmann::json prof = nlohmann::json::parse(ftax::testing::SlurpFile(std::string(FTAX_SOURCE_DIR) +
                                                        "/validation/h200/2026-11-26aw/profile-refined.json"));
  auto& tc = prof["frameworks"]["torch-compile"];
  tc["module_us"] = {{"value", 1.0}, {"stderr", 0.1}, {"unit", "us"}};
  tc["input_us"] = {{"value", 0.5}, {"stderr", 0.05}, {"unit", "us"}};
  char path[] = "/tmp/ftax-profile-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << prof.dump();
  const std::string cmd = std::string("predict --arch resnet:depth=50 --profile ") + path +
                          " --framework torch-compile --precision fp16 --batch 1";
  CliRun r = RunFtax(cmd + " --format json");
  CliRun text = RunFtax(cmd);
  std::remove(path);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.contains("predictions")) << r.out;
  const nlohmann::json& p = doc["predictions"][0];
  ASSERT_TRUE(p.contains("graph_inputs") && p["graph_inputs"].is_object()) << p.dump();
  ASSERT_TRUE(p.contains("modules") && p.contains("framework_ms_by_op")) << p.dump();
  const int modules = p["modules"]["modules"].get<int>(), inputs = p["graph_inputs"]["tensors"].get<int>();
  EXPECT_GT(modules, 100);  // ResNet-50's modules, counted from its layers
  EXPECT_NEAR(p["modules"]["ms"].get<double>(), modules * 1.0e-3, 1e-9);
  EXPECT_NEAR(p["graph_inputs"]["ms"].get<double>(), inputs * 0.5e-3, 1e-9);
  double ops = 0;
  for (const auto& [op, v] : p["framework_ms_by_op"].items()) ops += v["ms"].get<double>();
  const double parts = ops + p["call_ms"].get<double>() + p["graph_inputs"]["ms"].get<double>() +
                       p["modules"]["ms"].get<double>();
  EXPECT_LT(parts, p["framework_ms"].get<double>());  // the Triton kernels are the rest
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("; the rest: other dispatches "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(std::to_string(modules) + " modules outside the generated code " +
                          std::to_string(modules * 1.0e-3).substr(0, 5) + " ms"),
            std::string::npos)
      << text.out;
}

// Reduce-overhead read as its wrapper's work, then the replay: the JSON and the table say what
// comes before the replay (the call and the modules' guards) and what the replay holds (the
// kernels and the gaps between its nodes), and those parts make the latency. A profile of the
// older reading says none of it.
TEST(PredictCliTest, ReduceOverheadSaysWhatComesBeforeTheReplay) {
  const std::string cmd = "predict --arch resnet:depth=50 --profile h200 --framework torch-compile-reduce-overhead "
                          "--precision fp16 --batch 1 --samples 0";
  CliRun r = RunFtax(cmd + " --format json");
  CliRun text = RunFtax(cmd);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const nlohmann::json p = nlohmann::json::parse(r.out)["predictions"][0];
  ASSERT_TRUE(p.contains("before_replay_ms") && p.contains("modules") && p.contains("node_gap_ms")) << p.dump();
  EXPECT_GT(p["modules"]["modules"].get<int>(), 100);
  EXPECT_NEAR(p["before_replay_ms"].get<double>(), p["call_ms"].get<double>() + p["modules"]["ms"].get<double>(), 1e-12);
  EXPECT_NEAR(p["latency_ms"].get<double>(),
              p["before_replay_ms"].get<double>() + p["compute_ms"].get<double>() + p["node_gap_ms"].get<double>(), 1e-9);
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("torch-compile-reduce-overhead fp16 batch 1: before the replay "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("modules' guards"), std::string::npos) << text.out;

  CliRun older = RunFtax("predict --arch resnet:depth=50 --profile validation/h200/2026-11-26aw/profile-refined.json "
                         "--framework torch-compile-reduce-overhead --precision fp16 --batch 1 --samples 0 --format json");
  ASSERT_EQ(older.rc, 0) << older.out << older.err;
  EXPECT_FALSE(nlohmann::json::parse(older.out)["predictions"][0].contains("before_replay_ms")) << older.out;
}

// --kernels says where the GPU time goes: every group of equal kernels (op type, class, shape)
// with its time; all of them add up to the point's compute time and kernel count, a limit keeps
// the costliest, and without the option the JSON has no such list.
TEST(PredictCliTest, KernelGroupsAddUpToTheComputeTime) {
  const std::string cmd = "predict --arch resnet:depth=50 --profile data/profiles/h100.json "
                          "--framework cuda-graph,torch-compile-reduce-overhead --precision fp16 --batch 1,8 --format json";
  CliRun all = RunFtax(cmd + " --kernels -1");
  ASSERT_EQ(all.rc, 0) << all.out;
  auto j = nlohmann::json::parse(all.out);
  ASSERT_EQ(j["predictions"].size(), 4u);
  for (const auto& p : j["predictions"]) {
    ASSERT_TRUE(p.contains("kernel_groups")) << p.dump();
    double us = 0, last = 1e300;
    int launched = 0;
    for (const auto& g : p["kernel_groups"]) {
      const double total = g["us_total"];
      EXPECT_LE(total, last + 1e-9);  // costliest first
      last = total;
      EXPECT_NEAR(total, g["us_each"].get<double>() * g["count"].get<int>(), 1e-6 * total + 1e-9);
      us += total;
      launched += g["kernels_launched"].get<int>();
    }
    EXPECT_NEAR(us, 1e3 * p["compute_ms"].get<double>(), 1e-6 * us);
    EXPECT_EQ(launched, p["kernels"].get<int>());
    EXPECT_EQ(p["kernel_groups"][0]["class"], "conv") << p["kernel_groups"][0].dump();
  }
  CliRun top = RunFtax(cmd + " --kernels 3");
  ASSERT_EQ(top.rc, 0);
  for (const auto& p : nlohmann::json::parse(top.out)["predictions"]) EXPECT_EQ(p["kernel_groups"].size(), 3u);
  CliRun none = RunFtax(cmd);
  ASSERT_EQ(none.rc, 0);
  for (const auto& p : nlohmann::json::parse(none.out)["predictions"]) EXPECT_FALSE(p.contains("kernel_groups"));
  CliRun table = RunFtax("predict --arch resnet:depth=50 --profile validation/h200/2026-11-22b/profile.json "
                         "--framework cuda-graph --precision fp16 --batch 1 --kernels 4");
  ASSERT_EQ(table.rc, 0);
  EXPECT_NE(table.out.find("GPU kernels by shape, cuda-graph fp16 batch 1 (4 groups"), std::string::npos) << table.out;
  EXPECT_EQ(RunFtax(cmd + " --kernels -2").rc, 2);
}

TEST(PredictCliTest, ErrorsExitTwo) {
  EXPECT_EQ(RunFtax("predict --arch bert --profile /nonexistent/p.json").rc, 2);
  EXPECT_EQ(RunFtax("predict --arch bogus --profile validation/h200/2026-11-22b/profile.json").rc, 2);
  EXPECT_EQ(RunFtax("predict --arch bert --profile validation/h200/2026-11-22b/profile.json --batch 0").rc, 2);
  EXPECT_EQ(RunFtax("predict --arch bert --profile validation/h200/2026-11-22b/profile.json --framework tf").rc, 2);
  EXPECT_EQ(RunFtax("predict --arch bert --profile validation/h200/2026-11-22b/profile.json --whatif colour=2").rc, 2);
  EXPECT_EQ(RunFtax("predict --profile validation/h200/2026-11-22b/profile.json").rc, 2);  // no model
}

TEST(PredictCliTest, WhatIfDepthDoublesFrameworkBoundLatency) {
  CliRun r = RunFtax("predict --arch bert:layers=12 --dim seq=128 --profile validation/h200/2026-11-22b/profile-refined.json "
                 "--framework pytorch-eager --batch 1 --whatif depth=2 --format json");
  ASSERT_EQ(r.rc, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 1u);
  const double base = j["pairs"][0]["base"]["latency_ms"], twice = j["pairs"][0]["whatif"]["latency_ms"];
  EXPECT_GT(twice, 1.7 * base);
  EXPECT_LT(twice, 2.1 * base);
}

TEST(ValidateCliTest, ComparesShippedMeasurements) {
  CliRun r = RunFtax("validate --measured validation/h200/2026-11-22/torchscript-cudagraph.json "
                 "--profile validation/h200/2026-11-22b/profile.json --format json");
  ASSERT_EQ(r.rc, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 192u);
  ASSERT_EQ(j["frameworks"].size(), 2u);
  for (const auto& f : j["frameworks"]) EXPECT_EQ(f["rows"].get<int>(), 96);
}

TEST(ValidateCliTest, BadMeasurementsExitTwo) {
  EXPECT_EQ(RunFtax("validate --measured /nonexistent.json --profile validation/h200/2026-11-22b/profile.json").rc, 2);
  EXPECT_EQ(RunFtax("validate --measured validation/h200/2026-11-22b/profile.json --profile validation/h200/2026-11-22b/profile.json").rc, 2);
  EXPECT_EQ(RunFtax("validate --trace validation/h200/2026-11-22b/profile.json --arch bert --framework pytorch-eager "
                "--precision fp16 --batch 1 --profile validation/h200/2026-11-22b/profile.json").rc, 2);
}

TEST(ValidateCliTest, RunOptionsThatDescribeOneModelAreRefusedForSeveral) {
  CliRun r = RunFtax("validate data/models/bert-base.fp16.pt data/models/gpt2.fp16.pt --arch bert "
                     "-o /tmp/ftax-validate-never-written.json");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("describe one model"), std::string::npos) << r.err;
  r = RunFtax("validate data/models/bert-base.fp16.pt --rounds 0 -o /tmp/ftax-validate-never-written.json");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--rounds"), std::string::npos) << r.err;
}

// A host without model runs, predicted with the scales two other H200 hosts' refinements
// recorded; the report says which prior it used. --refine prior needs --prior and back.
TEST(ValidateCliTest, PriorFromOtherHostsScalesTheFrameworkCosts) {
  const std::string runs = "--measured validation/h200/2026-11-23o/torchscript-cudagraph.json "
                           "--profile validation/h200/2026-11-23o/profile.json --format json";
  CliRun r = RunFtax("validate " + runs + " --refine prior --prior validation/h200/2026-11-22f/profile-refined.json "
                     "validation/h200/2026-11-23j/profile-refined.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["notes"].empty());
  EXPECT_NE(j["notes"][0].get<std::string>().find("prior from 2 refined profiles"), std::string::npos)
      << j["notes"][0];
  CliRun plain = RunFtax("validate " + runs);
  ASSERT_EQ(plain.rc, 0) << plain.err;
  auto k = nlohmann::json::parse(plain.out);
  ASSERT_EQ(j["rows"].size(), k["rows"].size());
  // TorchScript fp16 at batch 1 is framework-bound: the prior (scales 1.6-2.1 on f and j) slows it.
  for (size_t i = 0; i < j["rows"].size(); ++i)
    if (j["rows"][i]["framework"] == "torchscript" && j["rows"][i]["precision"] == "fp16" &&
        j["rows"][i]["batch"] == 1)
      EXPECT_GT(j["rows"][i]["predicted_ms"].get<double>(), 1.2 * k["rows"][i]["predicted_ms"].get<double>());
  EXPECT_EQ(RunFtax("validate " + runs + " --refine prior").rc, 2);
  EXPECT_EQ(RunFtax("validate " + runs + " --prior validation/h200/2026-11-22f/profile-refined.json").rc, 2);
}

TEST(ValidateCliTest, ComparesMeasurementsMadeInRounds) {
  // Host run o's runs were measured in four shuffled rounds: one pooled row per point.
  CliRun r = RunFtax("validate --measured validation/h200/2026-11-23o/torchscript-cudagraph.json "
                     "--profile validation/h200/2026-11-23o/profile.json --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 192u);
}

}  // namespace

namespace {

TEST(NamedProfileCliTest, ShippedNameResolvesAndIsNamedInTheOutput) {
  CliRun r = RunFtax("predict --arch bert:layers=2 --dim seq=64 --profile h100 --framework cuda-graph "
                     "--precision fp16 --batch 1 --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["profile"]["name"], "h100");
  EXPECT_NE(j["profile"]["gpu"].get<std::string>().find("H100"), std::string::npos);
  EXPECT_NE(j["profile"]["path"].get<std::string>().find("data/profiles/h100.json"), std::string::npos);
  r = RunFtax("predict --arch bert:layers=2 --dim seq=64 --profile h200 --framework cuda-graph --batch 1");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("profile h200: NVIDIA H200"), std::string::npos) << r.out;
}

TEST(NamedProfileCliTest, UnknownNameIsBadInputListingTheShippedOnes) {
  CliRun r = RunFtax("predict --arch bert:layers=2 --profile h300 --batch 1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("no shipped profile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("h100, h200"), std::string::npos) << r.err;
}

TEST(NamedProfileCliTest, ProfilesListsEachGpuWithItsUnseenModelAccuracy) {
  CliRun r = RunFtax("profiles --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> names;
  for (const auto& p : j) {
    names.insert(p["name"].get<std::string>());
    ASSERT_TRUE(p["accuracy"].is_object()) << p.dump();
    // CUDA graphs captured from the TorchScript module or from eager code, whichever the run measured.
    const auto& cg = p["accuracy"].contains("cuda-graph") ? p["accuracy"]["cuda-graph"] : p["accuracy"]["cuda-graph-eager"];
    EXPECT_GT(cg["rows"].get<int>(), 0);
    EXPECT_LE(cg["within"].get<int>(), cg["rows"].get<int>());
    // Its framework costs come from a refinement or from a prior, and the listing says which.
    EXPECT_TRUE(!p["refined_on_models"].get<std::string>().empty() || !p["prior_of"].get<std::string>().empty())
        << p.dump();
    // The models it reports on are the evaluation models, none of the ones it was refined on.
    for (const auto& m : p["accuracy"]["models"])
      EXPECT_EQ(p["refined_on_models"].get<std::string>().find("\"" + m.get<std::string>() + "\""), std::string::npos);
  }
  EXPECT_TRUE(names.count("h100") && names.count("h200"));
}

}  // namespace
