// Progress lines for long runs: where a run is and how long it has left.
//
// A Progress is told how many points a run has (and, optionally, the time budget the run has
// been given); each finished point is one Tick, which returns the line to print:
//
//   Progress progress(40);                                // 40 points, no budget
//   for (...) { measure(); std::cerr << progress.Tick("bert-base b8") << "\n"; }
//   // "[12 of 40] bert-base b8, 1 min 05 s left"
//
// The time left is the mean time of the finished points times the points left, counted from
// the Progress's construction. With a budget the line also says when that estimate runs past
// it ("... 2 min 10 s left, 40 s past the 1 min 30 s budget"). When several points finish at
// once (a worker process reporting a batch of them), At(finished, label) sets the count.
// Progress only formats: it prints nothing and reads time through the clock it is given,
// so tests inject one.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace ftax {

class Progress {
 public:
  // Seconds on a monotonic clock; only differences are used.
  using ClockFn = std::function<double()>;

  // `total` points; `budget_s` > 0 is the run's time budget in seconds (0: none); `clock`
  // defaults to std::chrono::steady_clock.
  explicit Progress(size_t total, double budget_s = 0, ClockFn clock = nullptr);

  // One more point finished: "[k of N] label, 12 s left" ("..., done in 40 s" at the last).
  std::string Tick(const std::string& label);
  // `finished` points finished in all (clamped to the total; never goes back).
  std::string At(size_t finished, const std::string& label);

  size_t finished() const { return finished_; }
  size_t total() const { return total_; }
  double ElapsedSeconds() const;
  // Mean seconds per finished point times the points left; negative before any point finished.
  double SecondsLeft() const;

 private:
  std::string Line(const std::string& label) const;

  size_t total_;
  double budget_s_;
  ClockFn clock_;
  double start_;
  size_t finished_ = 0;
};

// "0 s", "12 s", "3 min 05 s", "2 h 04 min": seconds rounded to a whole second.
std::string FormatDuration(double seconds);

}  // namespace ftax
