// A live progress line on a terminal: steps, episodes, recent return, steps/s.
//
// Prints to stderr with a carriage return, at most five times a second, and only when stderr is
// a TTY (or when forced); finish() ends the line. Silent otherwise, so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

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
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool printed_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace dprl
