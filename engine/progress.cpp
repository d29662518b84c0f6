#include "engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace dprl {

Progress::Progress(Mode mode, std::string label)
    : enabled_(mode == Mode::kOn || (mode == Mode::kAuto && ::isatty(STDERR_FILENO))),
      label_(std::move(label)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t steps, std::int64_t total_steps, std::int64_t episodes,
                      double recent_return) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200) && steps < total_steps) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(steps) / secs : 0.0;
  const std::string ret = std::isfinite(recent_return) ? fmt::format("{:.2f}", recent_return) : "-";
  fmt::print(stderr, "\r{}{} / {} steps  {} episodes  return {}  {:.0f} steps/s   ", label_, steps,
             total_steps, episodes, ret, rate);
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (enabled_ && printed_) {
    fmt::print(stderr, "\n");
    printed_ = false;
  }
}

}  // namespace dprl
