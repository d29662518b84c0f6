#include "engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <utility>

namespace dprl {

namespace {
thread_local std::function<void(std::string_view)> g_note_sink;
}  // namespace

void note(std::string_view line) {
  if (g_note_sink) {
    g_note_sink(line);
    return;
  }
  std::fflush(stdout);
  fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

NoteSink::NoteSink(std::function<void(std::string_view)> sink)
    : previous_(std::exchange(g_note_sink, std::move(sink))) {}

NoteSink::~NoteSink() { g_note_sink = std::move(previous_); }

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
  const std::string ret = std::isfinite(recent_return) && !hide_returns_
                              ? fmt::format("{:.2f}", recent_return)
                              : "-";
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

SweepProgress::SweepProgress(Progress::Mode mode, std::size_t total, std::size_t skipped)
    : enabled_(mode == Progress::Mode::kOn ||
               (mode == Progress::Mode::kAuto && ::isatty(STDERR_FILENO))),
      total_(total),
      skipped_(skipped),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  if (enabled_) draw();
}

SweepProgress::~SweepProgress() { finish(); }

void SweepProgress::run_finished(bool failed, std::string_view line) {
  ++executed_;
  if (failed) ++failed_;
  if (!line.empty()) {
    if (enabled_ && printed_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n", line);
  }
  if (enabled_) draw();
  std::fflush(stderr);
}

void SweepProgress::tick() {
  if (enabled_ && std::chrono::steady_clock::now() - last_ >= std::chrono::seconds(1)) draw();
}

void SweepProgress::log(std::string_view line) {
  // clear the progress line, print, draw it again below
  if (enabled_ && printed_) fmt::print(stderr, "\r\033[K");
  fmt::print(stderr, "{}\n", line);
  if (enabled_ && printed_) draw();
  std::fflush(stderr);
}

void SweepProgress::draw() {
  last_ = std::chrono::steady_clock::now();
  const double hours = std::chrono::duration<double>(last_ - start_).count() / 3600.0;
  const std::size_t done = skipped_ + executed_;
  std::string rate = "-", eta = "-";
  if (executed_ > 0 && hours > 0) {
    const double per_hour = static_cast<double>(executed_) / hours;
    rate = fmt::format("{:.1f}", per_hour);
    const auto secs =
        static_cast<long long>(static_cast<double>(total_ - done) / per_hour * 3600.0);
    eta = fmt::format("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
  }
  fmt::print(stderr, "\r\033[Ksweep: {}/{} runs done ({} skipped), {} failed, {} runs/h, ETA {}",
             done, total_, skipped_, failed_, rate, eta);
  std::fflush(stderr);
  printed_ = true;
}

void SweepProgress::finish() {
  if (enabled_ && printed_) {
    fmt::print(stderr, "\n");
    printed_ = false;
  }
}

}  // namespace dprl
