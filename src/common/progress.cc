#include "common/progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace ftax {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string FormatDuration(double seconds) {
  const long s = seconds > 0 ? std::lround(seconds) : 0;
  char b[48];
  if (s < 60) std::snprintf(b, sizeof(b), "%ld s", s);
  else if (s < 3600) std::snprintf(b, sizeof(b), "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(b, sizeof(b), "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  return b;
}

Progress::Progress(size_t total, double budget_s, ClockFn clock)
    : total_(total), budget_s_(budget_s > 0 ? budget_s : 0), clock_(clock ? std::move(clock) : SteadySeconds) {
  start_ = clock_();
}

double Progress::ElapsedSeconds() const { return std::max(0.0, clock_() - start_); }

double Progress::SecondsLeft() const {
  if (finished_ == 0) return -1;
  return ElapsedSeconds() / double(finished_) * double(total_ - finished_);
}

std::string Progress::Tick(const std::string& label) { return At(finished_ + 1, label); }

std::string Progress::At(size_t finished, const std::string& label) {
  finished_ = std::min(total_, std::max(finished_, finished));
  return Line(label);
}

std::string Progress::Line(const std::string& label) const {
  std::string line = "[" + std::to_string(finished_) + " of " + std::to_string(total_) + "] " + label;
  const double elapsed = ElapsedSeconds();
  if (finished_ >= total_) return line + ", done in " + FormatDuration(elapsed);
  const double left = SecondsLeft();
  if (left < 0) {
    if (budget_s_ > 0) line += ", budget " + FormatDuration(budget_s_);
    return line;
  }
  line += ", " + FormatDuration(left) + " left";
  const double over = elapsed + left - budget_s_;
  if (budget_s_ > 0 && over >= 0.5)
    line += ", " + FormatDuration(over) + " past the " + FormatDuration(budget_s_) + " budget";
  return line;
}

}  // namespace ftax
