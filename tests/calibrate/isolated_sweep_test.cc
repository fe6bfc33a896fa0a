// MeasureModelsIsolated with fake workers: one model's failure, or a worker's death, never
// touches another model's points; a resumed run measures only what it lacks; the sweep says
// where it is after every worker.
#include "calibrate/isolated_sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "calibrate/run_resume.h"

namespace ftax {
namespace {

using json = nlohmann::json;

RunOptions Model(const std::string& name) {
  RunOptions o;
  o.model_path = "/models/" + name + ".pt";
  o.model_name = name;
  o.precision = "fp16";
  o.batches = {1, 8};
  o.frameworks = {Framework::kTorchscript, Framework::kCudaGraph};
  o.budget_s = 0.1;
  return o;
}

// A fake worker: every visit takes `ms` for its model; `fail` decides, per (model,
// framework), what goes wrong: "capture" writes an error line and stops (as a failed capture
// does), "crash" dies without a line, "hang" is killed at the launcher's time limit, "load"
// cannot load the model.
struct FakeWorkers {
  std::map<std::string, std::string> fail;
  std::vector<std::vector<std::pair<std::string, std::string>>> launches;  // per worker: (model, point)
  int operator()(const WorkerRequest& req, const std::string& result) {
    std::ofstream out(result);
    launches.emplace_back();
    const std::string& m = req.model.model_name;
    for (size_t k = 0; k < req.visits.size(); ++k) {
      const VisitRequest& v = req.visits[k];
      const std::string fw = FrameworkName(v.framework);
      launches.back().push_back({m, fw + std::to_string(v.batch)});
      auto it = fail.find(m + "/" + fw);
      const std::string how = it == fail.end() ? "" : it->second;
      if (how == "load") {
        out << json{{"load_error", "cannot load"}}.dump() << "\n";
        return 1;
      }
      if (how == "capture") {
        out << json{{"visit", k}, {"point", v.point}, {"error", "CUDA-graph capture failed: x"},
                    {"blocking_op", "torch.rand_like(x)"}}.dump() << "\n";
        return 1;
      }
      if (how == "crash") return -9;
      if (how == "hang") return kWorkerTimedOut;  // the launcher killed it at its time limit
      json line = {{"visit", k}, {"point", v.point}, {"host_ms", {1.0, 1.1, 0.9}}, {"event_ms", {0.9, 1.0, 0.8}}};
      if (req.probe) line["probe_us"] = 7.0;
      if (v.record_kernels)
        line.update({{"kernels_per_iter", 10}, {"kernel_ms", 0.5}, {"gpu_span_ms", 0.6}, {"kernels", json::object()}});
      out << line.dump() << "\n";
    }
    return 0;
  }
};

class IsolatedSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ftax-sweep-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  json Run(const std::vector<RunOptions>& models, FakeWorkers& fake, int rounds = 1, json kept = json::array()) {
    SweepOptions so;
    so.rounds = RoundOptions{rounds, 3};
    so.scratch_dir = dir_;
    so.kept_rows = kept;
    ResultWriter w(dir_ + "/out.json", {{"kind", "ftax-validation-measurements"}, {"rows", json::array()}});
    Status s = MeasureModelsIsolated(models, so, std::ref(fake), [](const std::string&) {}, &w);
    EXPECT_TRUE(s.ok()) << s.message();
    std::ifstream in(dir_ + "/out.json");
    json doc;
    in >> doc;  // what is on disk, not only in memory
    return doc;
  }
  static std::set<std::string> Points(const json& rows) {
    std::set<std::string> p;
    for (const json& r : rows)
      p.insert(r["model"].get<std::string>() + "/" + r["framework"].get<std::string>() + "/" +
               std::to_string(r["batch"].get<int>()));
    return p;
  }
  std::string dir_;
};

TEST_F(IsolatedSweepTest, FailedCaptureFirstLeavesEveryOtherPointMeasured) {
  FakeWorkers fake;
  fake.fail["vit/cuda-graph"] = "capture";
  json doc = Run({Model("vit"), Model("resnet")}, fake, 2);
  EXPECT_EQ(Points(doc["rows"]), (std::set<std::string>{"vit/torchscript/1", "vit/torchscript/8",
                                                       "resnet/torchscript/1", "resnet/torchscript/8",
                                                       "resnet/cuda-graph/1", "resnet/cuda-graph/8"}));
  ASSERT_EQ(doc["failures"].size(), 2u);
  for (const json& f : doc["failures"]) {
    EXPECT_EQ(f["model"], "vit");
    EXPECT_EQ(f["framework"], "cuda-graph");
    EXPECT_EQ(f["blocking_op"], "torch.rand_like(x)");
  }
  // Every row pooled both rounds' visits; kernels were recorded once.
  for (const json& r : doc["rows"]) {
    EXPECT_EQ(r["latency_ms"]["n"], 6) << r.dump();
    EXPECT_EQ(r["kernels_per_iter"], 10);
  }
  // After each failure a fresh worker took the rest: no worker ran a visit after a failed one.
  for (const auto& launch : fake.launches) {
    bool failed = false;
    for (const auto& [m, p] : launch) {
      EXPECT_FALSE(failed) << "a visit ran in a worker after a failed capture";
      failed = failed || (m == "vit" && p.rfind("cuda-graph", 0) == 0);
    }
  }
}

TEST_F(IsolatedSweepTest, ACrashCostsOnlyThePointItHappenedOn) {
  FakeWorkers fake;
  fake.fail["bert/torchscript"] = "crash";
  json doc = Run({Model("bert"), Model("gpt2")}, fake);
  EXPECT_EQ(Points(doc["rows"]).size(), 6u);  // bert's graphs and all of gpt2
  ASSERT_EQ(doc["failures"].size(), 2u);
  for (const json& f : doc["failures"]) {
    EXPECT_EQ(f["framework"], "torchscript");
    EXPECT_NE(f["error"].get<std::string>().find("signal 9"), std::string::npos) << f.dump();
  }
}

TEST_F(IsolatedSweepTest, AWorkerKilledAtItsTimeLimitFailsItsModelOnly) {
  FakeWorkers fake;
  fake.fail["densenet/torchscript"] = "hang";
  json doc = Run({Model("densenet"), Model("resnet")}, fake, 2);
  EXPECT_EQ(Points(doc["rows"]), (std::set<std::string>{"resnet/torchscript/1", "resnet/torchscript/8",
                                                       "resnet/cuda-graph/1", "resnet/cuda-graph/8"}));
  ASSERT_EQ(doc["failures"].size(), 4u);  // each of densenet's points, once
  for (const json& f : doc["failures"]) {
    EXPECT_EQ(f["model"], "densenet");
    EXPECT_NE(f["error"].get<std::string>().find("time limit"), std::string::npos) << f.dump();
  }
  size_t densenet_launches = 0;
  for (const auto& l : fake.launches) densenet_launches += !l.empty() && l[0].first == "densenet";
  EXPECT_EQ(densenet_launches, 1u);  // one hang is not waited out again, in this round or the next
}

TEST_F(IsolatedSweepTest, AModelThatCannotLoadFailsAloneAndOnce) {
  FakeWorkers fake;
  fake.fail["broken/torchscript"] = "load";
  fake.fail["broken/cuda-graph"] = "load";
  json doc = Run({Model("broken"), Model("ok")}, fake, 3);
  EXPECT_EQ(Points(doc["rows"]).size(), 4u);
  EXPECT_EQ(doc["failures"].size(), 4u);  // each of broken's points, once
  size_t broken_launches = 0;
  for (const auto& l : fake.launches) broken_launches += !l.empty() && l[0].first == "broken";
  EXPECT_EQ(broken_launches, 1u);  // not retried in later rounds
}

TEST_F(IsolatedSweepTest, ResumeMeasuresOnlyMissingPoints) {
  FakeWorkers first;
  json doc = Run({Model("a")}, first);
  json kept = json::array();
  for (const json& r : doc["rows"])
    if (r["framework"] == "torchscript") kept.push_back(r);
  ASSERT_EQ(kept.size(), 2u);
  FakeWorkers second;
  json again = Run({Model("a"), Model("b")}, second, 1, kept);
  EXPECT_EQ(Points(again["rows"]).size(), 8u);  // 2 kept + 2 of a + 4 of b
  size_t measured = 0;
  for (const auto& l : second.launches) measured += l.size();
  EXPECT_EQ(measured, 6u);
  for (const auto& l : second.launches)
    for (const auto& [m, p] : l) EXPECT_FALSE(m == "a" && p.rfind("torchscript", 0) == 0) << "measured again: " << p;
}

TEST(RunResumeTest, RowKeyIgnoresMeasuredValues) {
  json a = {{"model", "m"}, {"framework", "cuda-graph"}, {"precision", "fp16"}, {"batch", 8}, {"latency_ms", 1}};
  json b = a;
  b["latency_ms"] = 2;
  EXPECT_EQ(RowKey("rows", a), RowKey("rows", b));
  b["batch"] = 16;
  EXPECT_NE(RowKey("rows", a), RowKey("rows", b));
  json k = {{"class", "gemm"}, {"dtype", "fp16"}, {"label", "mm 1x2x3"}, {"kernel_us", 3}};
  EXPECT_EQ(RowKeys({{"kernels", {k}}}, "kernels").count(RowKey("kernels", k)), 1u);
}

TEST(RunResumeTest, RefusesAnotherKindOfFile) {
  char tmpl[] = "/tmp/ftax-resume-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  { std::ofstream(tmpl) << R"({"kind": "ftax-host-profile"})"; }
  Expected<json> r = ReadRunToResume(tmpl, "ftax-measurements");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidInput);
  Expected<json> none = ReadRunToResume(std::string(tmpl) + ".absent", "ftax-measurements");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->is_null());
  std::remove(tmpl);
}

// Every visit succeeds, except that `crash_model`'s worker dies at its first visit once.
int CrashOnceWorker(const WorkerRequest& req, const std::string& result, std::string* crash_model) {
  std::ofstream out(result);
  for (size_t k = 0; k < req.visits.size(); ++k) {
    if (req.model.model_name == *crash_model) {
      crash_model->clear();
      return -9;
    }
    json line = {{"visit", k}, {"point", req.visits[k].point}, {"host_ms", {1.0, 1.1}}, {"event_ms", {0.9, 1.0}}};
    out << line.dump() << "\n";
  }
  return 0;
}

// The progress lines of a sweep of bert and vit (common/progress.h: "[k of N] ..." over all
// planned visits, with the time left, and "done in" at the end).
std::vector<std::string> ProgressLines(int rounds, std::string crash_model) {
  char tmpl[] = "/tmp/ftax-sweep-progress-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  SweepOptions so;
  so.rounds = RoundOptions{rounds, 3};
  so.scratch_dir = dir;
  ResultWriter w(dir + "/out.json", {{"kind", "ftax-validation-measurements"}, {"rows", json::array()}});
  std::vector<std::string> lines;
  Status s = MeasureModelsIsolated(
      {Model("bert"), Model("vit")}, so,
      [&](const WorkerRequest& req, const std::string& result) { return CrashOnceWorker(req, result, &crash_model); },
      [&](const std::string& l) { lines.push_back(l); }, &w);
  EXPECT_TRUE(s.ok()) << s.message();
  std::system(("rm -rf '" + dir + "'").c_str());
  return lines;
}

std::vector<std::pair<int, int>> Counts(const std::vector<std::string>& lines) {
  std::vector<std::pair<int, int>> out;
  const std::regex re("^\\[([0-9]+) of ([0-9]+)\\] ");
  for (const std::string& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, re)) out.push_back({std::stoi(m[1]), std::stoi(m[2])});
  }
  return out;
}

TEST(IsolatedSweepProgressTest, CountsEveryPlannedVisitAndEndsDone) {
  // 2 models x 2 frameworks x 2 batches x 2 rounds, one worker per model and round.
  const std::vector<std::string> lines = ProgressLines(2, "");
  const auto counts = Counts(lines);
  ASSERT_EQ(counts, (std::vector<std::pair<int, int>>{{4, 16}, {8, 16}, {12, 16}, {16, 16}}));
  size_t with_left = 0, done = 0;
  for (const std::string& l : lines) {
    if (l.rfind('[', 0) != 0) continue;
    with_left += l.find(" left") != std::string::npos;
    done += l.find(", done in ") != std::string::npos;
    EXPECT_NE(l.find(" elapsed"), std::string::npos) << l;
  }
  EXPECT_EQ(with_left, 3u);
  EXPECT_EQ(done, 1u);
  EXPECT_NE(lines.back().find("round 2/2 written"), std::string::npos);
}

TEST(IsolatedSweepProgressTest, AWorkerDeathCountsItsPointAndNamesTheFailures) {
  // bert's first worker dies at its first visit: that point fails, a fresh worker takes bert's
  // other three, then vit's four: 8 visits in all, 1 failed.
  const std::vector<std::string> lines = ProgressLines(1, "bert");
  const auto counts = Counts(lines);
  ASSERT_FALSE(counts.empty());
  EXPECT_EQ(counts.back(), std::make_pair(8, 8));
  for (size_t i = 1; i < counts.size(); ++i) EXPECT_GT(counts[i].first, counts[i - 1].first);
  EXPECT_NE(lines.back().find("1 point failed"), std::string::npos) << lines.back();
}

}  // namespace
}  // namespace ftax
