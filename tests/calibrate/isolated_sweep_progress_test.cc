// MeasureModelsIsolated reports where it is after every worker: "[k of N] ..." over all
// planned visits, with the time left, and "done in" at the end (common/progress.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "calibrate/isolated_sweep.h"

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

// Every visit succeeds, except that `crash_model`'s worker dies at its first visit once.
int FakeWorker(const WorkerRequest& req, const std::string& result, std::string* crash_model) {
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

std::vector<std::string> Sweep(int rounds, std::string crash_model) {
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
      [&](const WorkerRequest& req, const std::string& result) { return FakeWorker(req, result, &crash_model); },
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
  const std::vector<std::string> lines = Sweep(2, "");
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
  const std::vector<std::string> lines = Sweep(1, "bert");
  const auto counts = Counts(lines);
  ASSERT_FALSE(counts.empty());
  EXPECT_EQ(counts.back(), std::make_pair(8, 8));
  for (size_t i = 1; i < counts.size(); ++i) EXPECT_GT(counts[i].first, counts[i - 1].first);
  EXPECT_NE(lines.back().find("1 point failed"), std::string::npos) << lines.back();
}

}  // namespace
}  // namespace ftax
