#include "calibrate/isolated_sweep.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "calibrate/measurement_rounds.h"
#include "calibrate/run_resume.h"
#include "common/progress.h"

namespace ftax {
namespace {

using json = nlohmann::json;

struct Where {
  size_t model;
  Framework framework;
  int64_t batch;
};

json InputsJson(const RunOptions& o) {
  json a = json::array();
  for (const ModelInput& mi : o.inputs) a.push_back({{"shape", mi.shape}, {"dtype", mi.dtype}});
  return a;
}

std::string ExitText(int status) {
  if (status == kWorkerTimedOut)
    return "the worker process ran past its time limit (validate --worker-timeout) and was killed";
  if (status < 0) return "the worker process was killed by signal " + std::to_string(-status);
  return "the worker process exited with code " + std::to_string(status);
}

std::vector<json> ReadLines(const std::string& path) {
  std::vector<json> lines;
  std::ifstream in(path);
  std::string s;
  while (std::getline(in, s)) {
    if (s.empty()) continue;
    try {
      lines.push_back(json::parse(s));
    } catch (const std::exception&) {
      break;  // a line cut short by the worker's death: the visits before it stand
    }
  }
  return lines;
}

}  // namespace

Status MeasureModelsIsolated(const std::vector<RunOptions>& models, const SweepOptions& opt,
                             const WorkerLauncher& launch, const ProgressFn& progress, ResultWriter* out) {
  if (models.empty()) return InvalidInput("no model to measure");
  if (opt.scratch_dir.empty()) return Internal("MeasureModelsIsolated needs a scratch directory");
  const int rounds = std::max(1, opt.rounds.rounds);
  const json kept_rows = opt.kept_rows.is_array() ? opt.kept_rows : json::array();
  json failures = opt.kept_failures.is_array() ? opt.kept_failures : json::array();
  std::set<std::string> kept;
  for (const json& r : kept_rows) kept.insert(RowKey("rows", r));

  std::vector<RoundedPoint> points;
  std::vector<Where> where;
  size_t skipped = 0;
  for (size_t m = 0; m < models.size(); ++m) {
    const RunOptions& o = models[m];
    for (Framework f : o.frameworks) {
      for (int64_t b : o.batches) {
        RoundedPoint p;
        p.row = {{"model", o.model_name}, {"arch", o.arch}, {"framework", FrameworkName(f)},
                 {"precision", o.precision}, {"batch", b},
                 {"seq", o.seq > 0 ? json(o.seq) : json(nullptr)}, {"source", o.model_path},
                 {"inputs", InputsJson(o)}, {"timing", "no-profiler"}};
        if (rounds > 1) p.row["rounds"] = rounds;
        if (kept.count(RowKey("rows", p.row))) {
          ++skipped;
          continue;
        }
        if (f != Framework::kTorchscript && f != Framework::kCudaGraph) {
          json row = p.row;
          row["error"] = "a TorchScript file can be run as torchscript or cuda-graph only";
          failures.push_back(row);
          continue;
        }
        points.push_back(std::move(p));
        where.push_back({m, f, b});
      }
    }
  }
  if (skipped > 0) progress("resuming: " + std::to_string(skipped) + " points kept from the earlier run");

  auto write_rows = [&] {
    json rows = kept_rows;
    for (json& r : PooledRows(points)) rows.push_back(std::move(r));
    out->Set("failures", failures);
    return out->Set("rows", rows);
  };
  Status ws = write_rows();
  if (!ws.ok()) return ws;

  const size_t planned = points.size() * size_t(rounds);
  size_t done = 0;
  int64_t order = 0;
  int workers = 0;
  Progress visits(planned);  // "[k of N] ..., 3 min 10 s left" after every worker
  for (int r = 0; r < rounds; ++r) {
    for (size_t m : VisitOrder(models.size(), r, rounds, opt.rounds.seed)) {
      std::vector<size_t> mine;
      for (size_t i = 0; i < points.size(); ++i)
        if (where[i].model == m && !points[i].failed) mine.push_back(i);
      std::vector<size_t> pending;
      for (size_t k : VisitOrder(mine.size(), r, rounds, opt.rounds.seed * 7919 + m + 1)) pending.push_back(mine[k]);
      while (!pending.empty()) {
        WorkerRequest req;
        req.model = models[m];
        req.rounds = rounds;
        req.probe = true;  // ~2 ms a visit: the CPU's speed while the point ran
        for (size_t i : pending) {
          const bool first = points[i].visit_medians_ms.empty() && !points[i].row.contains("kernels");
          req.visits.push_back({i, where[i].framework, where[i].batch, first, first ? 5 : 2});
        }
        const std::string result = opt.scratch_dir + "/worker-" + std::to_string(workers++) + ".jsonl";
        std::remove(result.c_str());
        const int status = launch(req, result);
        std::vector<bool> reported(req.visits.size(), false);
        bool stopped_by_error = false;
        for (const json& line : ReadLines(result)) {
          if (line.contains("load_error")) {  // the model cannot run at all: each of its points fails
            for (size_t i : mine) {
              if (points[i].failed) continue;
              points[i].failed = true;
              json row = points[i].row;
              row["error"] = line["load_error"];
              failures.push_back(row);
            }
            progress("failed: " + models[m].model_name + ": " + line["load_error"].get<std::string>().substr(0, 200));
            std::fill(reported.begin(), reported.end(), true);
            stopped_by_error = true;
            break;
          }
          const size_t k = line.value("visit", size_t(0));
          if (k >= req.visits.size()) continue;
          reported[k] = true;
          RoundedPoint& p = points[req.visits[k].point];
          ++done;
          if (line.contains("error")) {
            p.failed = true;
            json row = p.row;
            for (const char* f : {"error", "error_detail", "blocking_op"})
              if (line.contains(f)) row[f] = line[f];
            row["round"] = r + 1;
            failures.push_back(row);
            stopped_by_error = true;
            continue;
          }
          if (line.contains("kernels")) {
            for (const char* f : {"kernels_per_iter", "kernel_ms", "gpu_span_ms", "kernels"}) p.row[f] = line[f];
            if (line.contains("kernel_sum_ms")) p.row["kernel_sum_ms"] = line["kernel_sum_ms"];
          }
          const std::vector<double> host = line.value("host_ms", std::vector<double>{});
          const std::vector<double> ev = line.value("event_ms", std::vector<double>{});
          if (host.empty() || host.size() != ev.size()) {
            p.failed = true;
            json row = p.row;
            row["error"] = "the worker reported no samples";
            failures.push_back(row);
            continue;
          }
          AddVisit(host, ev, &p, line.value("probe_us", -1.0), rounds > 1 ? order++ : -1);
        }
        std::vector<size_t> rest;
        bool blamed = stopped_by_error || status == 0;
        for (size_t k = 0; k < req.visits.size(); ++k) {
          if (reported[k]) continue;
          RoundedPoint& p = points[req.visits[k].point];
          if (!blamed) {  // the worker died during this visit
            blamed = true;
            ++done;
            p.failed = true;
            json row = p.row;
            row["error"] = ExitText(status) + " during this point";
            row["round"] = r + 1;
            failures.push_back(row);
            progress("failed: " + models[m].model_name + " " + row["framework"].get<std::string>() + " b" +
                     std::to_string(where[req.visits[k].point].batch) + ": " + row["error"].get<std::string>());
            continue;
          }
          if (!p.failed) rest.push_back(req.visits[k].point);
        }
        if (status == kWorkerTimedOut) {
          // A hang repeats (a JIT that never finishes optimising, a capture that never returns):
          // the model's other points fail with the same reason rather than each costing the limit.
          for (size_t i : rest) {
            ++done;
            points[i].failed = true;
            json row = points[i].row;
            row["error"] = ExitText(status) + " during an earlier point of this model";
            row["round"] = r + 1;
            failures.push_back(row);
          }
          rest.clear();
        }
        if (status == 0 && !rest.empty() && !stopped_by_error) {
          // A worker that ends well must report every visit; one that did not is a bug.
          for (size_t i : rest) {
            points[i].failed = true;
            json row = points[i].row;
            row["error"] = "the worker process ended without reporting this point";
            failures.push_back(row);
          }
          rest.clear();
        }
        std::remove(result.c_str());
        pending = rest;
        ws = write_rows();
        if (!ws.ok()) return ws;
        size_t failed_now = 0;
        for (const RoundedPoint& p : points) failed_now += p.failed;
        progress(visits.At(done, "visits done, last " + models[m].model_name + ", " + std::to_string(failed_now) +
                                     (failed_now == 1 ? " point" : " points") + " failed, " +
                                     FormatDuration(visits.ElapsedSeconds()) + " elapsed"));
      }
    }
    if (rounds > 1) progress("round " + std::to_string(r + 1) + "/" + std::to_string(rounds) + " written");
  }
  return Status::Ok();
}

}  // namespace ftax
