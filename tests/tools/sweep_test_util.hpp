// Shared code for the sweep tests: run `dprl` in a directory, compare run trees byte for byte.
//
// Sweeps that are compared run in separate working directories with the same relative `out`, so
// their config.yaml files, config digests and sweep.csv `dir` columns are the same text.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace sweep_test {

namespace fs = std::filesystem;

using cli_test::count;
using cli_test::Result;
using cli_test::scratch;

// base.yaml (the text base) and sweep.yaml ("base: base.yaml", "out: out", then the text sweep) in
// dir, which is created if missing.
inline void write_sweep(const fs::path& dir, const std::string& base, const std::string& sweep) {
  fs::create_directories(dir);
  dprl::write_file_atomic(dir / "base.yaml", base);
  dprl::write_file_atomic(dir / "sweep.yaml", "base: base.yaml\nout: out\n" + sweep);
}

// `prefix DPRL_EXE args` run in cwd (prefix: e.g. an mpirun command line, or "").
inline Result run_in(const fs::path& cwd, const std::string& args, const std::string& prefix = "") {
  const auto out = cwd / "cmd.stdout";
  const auto err = cwd / "cmd.stderr";
  const std::string cmd = "cd " + cwd.string() + " && " + prefix + std::string(DPRL_EXE) + " " +
                          args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, dprl::read_file(out),
           dprl::read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

// Every regular file under dir, relative and sorted.
inline std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir));
  std::sort(files.begin(), files.end());
  return files;
}

// Checks that trees a and b hold the same files with the same bytes, timing.json aside (the only
// files with wall-clock figures); returns how many files were compared.
inline int check_same_tree(const fs::path& a, const fs::path& b) {
  const auto fa = files_under(a);
  const auto fb = files_under(b);
  CHECK(fa == fb);
  int compared = 0;
  for (const auto& f : fa) {
    if (f.filename() == "timing.json" || !fs::exists(b / f)) continue;
    INFO("file: " << f.string());
    CHECK(dprl::read_file(a / f) == dprl::read_file(b / f));
    ++compared;
  }
  return compared;
}

}  // namespace sweep_test
