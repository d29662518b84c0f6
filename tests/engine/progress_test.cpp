#include "engine/progress.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "engine/io.hpp"

namespace {

// Runs fn with stderr sent to a file; returns what it printed.
template <class Fn>
std::string capture_stderr(Fn fn) {
  const auto path =
      std::filesystem::temp_directory_path() / ("dprl_progress_test_" + std::to_string(::getpid()));
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  std::FILE* f = std::fopen(path.c_str(), "w");
  ::dup2(::fileno(f), STDERR_FILENO);
  fn();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(f);
  std::string text = dprl::read_file(path);
  std::filesystem::remove(path);
  return text;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the sweep progress line counts runs in place and logs lines above it") {
    const std::string text = capture_stderr([] {
      dprl::SweepProgress p(dprl::Progress::Mode::kOn, 5, 2);
      p.run_finished(false, "[3/5] base seed 3: return 1.0000");
      p.log("a note");
      p.run_finished(true);
      p.finish();
    });
    // every redraw starts with a carriage return and a clear-line, so the line stays in place
    CHECK(text.rfind("\r\033[Ksweep: 2/5 runs done (2 skipped), 0 failed, - runs/h, ETA -", 0) ==
          0);
    CHECK(text.find("\r\033[K[3/5] base seed 3: return 1.0000\n\r\033[Ksweep: 3/5 runs done") !=
          std::string::npos);
    CHECK(text.find("\r\033[Ka note\n") != std::string::npos);
    CHECK(text.find("sweep: 4/5 runs done (2 skipped), 1 failed, ") != std::string::npos);
    CHECK(text.find(" runs/h, ETA 0:") != std::string::npos);
    CHECK(text.back() == '\n');
  }

  TEST_CASE("the sweep progress line is silent when off, but logged lines still print") {
    const std::string text = capture_stderr([] {
      dprl::SweepProgress p(dprl::Progress::Mode::kOff, 3, 0);
      p.run_finished(false);
      p.log("a line");
      p.tick();
      p.finish();
    });
    CHECK(text == "a line\n");
  }

  TEST_CASE("a run's progress line hides the return once asked") {
    const std::string shown = capture_stderr([] {
      dprl::Progress p(dprl::Progress::Mode::kOn, "r: ");
      p.update(100, 100, 1, 12.5);  // the last step always prints
      p.finish();
    });
    CHECK(shown.find("12.50") != std::string::npos);
    const std::string hidden = capture_stderr([] {
      dprl::Progress p(dprl::Progress::Mode::kOn, "r: ");
      p.hide_returns();
      p.update(100, 100, 1, 12.5);  // the last step always prints
      p.finish();
    });
    CHECK(hidden.find("12.5") == std::string::npos);
    CHECK(hidden.find("r: ") != std::string::npos);
  }
}
