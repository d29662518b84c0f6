// Live progress lines on a terminal.
//
// Progress: one run's steps, episodes, recent return, steps/s. SweepProgress: a sweep's runs done
// / total (skipped ones counted as done), failures, runs per hour and ETA (both from the runs
// executed so far).
//
// Both print to stderr with a carriage return, redrawing in place, only when stderr is a TTY (or
// when forced); finish() ends the line. Silent otherwise, so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace dprl {

class Progress {
 public:
  enum class Mode { kAuto, kOn, kOff };
  explicit Progress(Mode mode = Mode::kAuto, std::string label = "");
  ~Progress();

  // Cheap to call every step; prints only when due.
  void update(std::int64_t steps, std::int64_t total_steps, std::int64_t episodes,
              double recent_return);
  void finish();
  // Shows "-" for the return from now on: a private run whose figures are published only with
  // its checkpoints (RunDir::hold_metrics) does not show them on the terminal before.
  void hide_returns() { hide_returns_ = true; }

 private:
  bool enabled_;
  bool hide_returns_ = false;
  bool printed_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

// A note or warning for the user ("dprl: note: ..."), one line without its newline: printed on
// stderr, or handed to the sink a host installed on this thread (NoteSink; RunOptions::log).
void note(std::string_view line);

// Installs a sink for note() on the calling thread while it lives (the previous one returns after).
class NoteSink {
 public:
  explicit NoteSink(std::function<void(std::string_view)> sink);
  ~NoteSink();
  NoteSink(const NoteSink&) = delete;
  NoteSink& operator=(const NoteSink&) = delete;

 private:
  std::function<void(std::string_view)> previous_;
};

// Not thread-safe: callers serialise (the sweep dispatcher calls it under its lock).
class SweepProgress {
 public:
  SweepProgress(Progress::Mode mode, std::size_t total, std::size_t skipped);
  ~SweepProgress();

  // Counts a run, prints `line` (if any) above the progress line, redraws it.
  void run_finished(bool failed, std::string_view line = {});
  void tick();  // redraws at most once a second, so the ETA moves
  // Prints a whole line on stderr (always, TTY or not), above the progress line.
  void log(std::string_view line);
  void finish();

 private:
  void draw();

  bool enabled_;
  bool printed_ = false;
  std::size_t total_, skipped_, executed_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace dprl
