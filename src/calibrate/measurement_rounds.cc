#include "calibrate/measurement_rounds.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "calibrate/result_writer.h"
#include "common/percentile.h"

namespace ftax {

std::vector<size_t> VisitOrder(size_t n, int round, int rounds, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (rounds <= 1) return order;
  // std::shuffle's result depends on the library; a Fisher-Yates over mt19937_64 (whose
  // output the standard fixes) gives the same order everywhere.
  std::mt19937_64 rng(seed * 1000003u + uint64_t(round));
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

int RepsPerVisit(double visit_budget_s, double one_iter_s, int rounds, int min_total, int max) {
  const int lo = (min_total + std::max(rounds, 1) - 1) / std::max(rounds, 1);
  const double want = visit_budget_s / std::max(one_iter_s, 1e-6);
  return int(std::clamp(want, double(lo), double(std::max(lo, max))));
}

void AddVisit(const std::vector<double>& host_ms, const std::vector<double>& event_ms,
              RoundedPoint* p, double probe_us, int64_t order) {
  if (host_ms.empty()) return;
  if (probe_us >= 0) p->visit_probe_us.push_back(probe_us);
  if (order >= 0) p->visit_order.push_back(order);
  p->host_ms.insert(p->host_ms.end(), host_ms.begin(), host_ms.end());
  p->event_ms.insert(p->event_ms.end(), event_ms.begin(), event_ms.end());
  p->visit_medians_ms.push_back(Median(host_ms));
}

nlohmann::json PooledRow(const RoundedPoint& p) {
  if (p.host_ms.empty()) return nullptr;
  nlohmann::json row = p.row;
  nlohmann::json lat = SpreadJson(p.host_ms);
  row["latency_ms"] = lat;
  row["event_ms"] = SpreadJson(p.event_ms);
  const double kernel_ms = row.value("kernel_ms", 0.0);
  row["framework_ms_measured"] = std::max(0.0, lat["median"].get<double>() - kernel_ms);
  if (!p.visit_probe_us.empty()) row["host_probe_us"] = Median(p.visit_probe_us);
  if (p.visit_medians_ms.size() > 1) {
    row["visit_medians_ms"] = p.visit_medians_ms;
    if (p.visit_probe_us.size() == p.visit_medians_ms.size()) row["visit_probe_us"] = p.visit_probe_us;
    if (p.visit_order.size() == p.visit_medians_ms.size()) row["visit_order"] = p.visit_order;
    // Microsecond resolution is finer than any host clock's spread here; it halves the file.
    nlohmann::json s = nlohmann::json::array();
    for (double v : p.host_ms) s.push_back(std::round(v * 1e4) / 1e4);
    row["samples_ms"] = s;
  }
  return row;
}

nlohmann::json PooledRows(const std::vector<RoundedPoint>& points) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RoundedPoint& p : points) {
    nlohmann::json r = PooledRow(p);
    if (!r.is_null()) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace ftax
