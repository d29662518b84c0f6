// Shared code for the tests that drive the dprl executable: run it with arguments, capture the
// exit code, stdout and stderr, and check the one-line error contract.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/io.hpp"
#include "tests/test_util.hpp"

namespace cli_test {

using test_util::count;
using test_util::kSrc;
using test_util::scratch;

struct Result {
  int code;  // exit status, -1 when the process did not exit normally (a crash)
  std::string out;
  std::string err;
};

// `DPRL_EXE args` with stdin closed; its output goes through files in a per-process folder under
// TMPDIR (the tests' TMPDIR is in the build tree).
inline Result run(const std::string& args) {
  static int counter = 0;
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("dprl_cli_test_io_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const std::string tag = std::to_string(counter++);
  const auto out = dir / ("out" + tag), err = dir / ("err" + tag);
  const std::string cmd = std::string(DPRL_EXE) + " " + args + " >" + out.string() + " 2>" +
                          err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, dprl::read_file(out), dprl::read_file(err)};
}

// Exactly one line, starting "dprl: " (the bad-input contract).
inline bool one_line(const std::string& s) {
  return !s.empty() && s.find('\n') == s.size() - 1 && s.rfind("dprl: ", 0) == 0;
}

}  // namespace cli_test
