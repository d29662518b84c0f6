// Helpers shared by the test suites: fixture files and statistical critical values. (Each suite is
// compiled in unity batches, so a helper two test files need lives here once rather than in an
// anonymous namespace of each.)
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"

namespace test_util {

// The source tree (test data, configs).
inline const std::string kSrc = DPRL_SOURCE_DIR;

// A fresh, empty folder TMPDIR/dprl_test_<pid>_<name>: per process, so test processes that ctest
// runs at the same time never share one.
inline std::filesystem::path scratch(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() /
                 ("dprl_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// How many times `what` occurs in s (overlapping occurrences counted).
inline int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The JSON document in file p; REQUIREs that the file can be read.
inline nlohmann::json load_json(const std::filesystem::path& p) {
  REQUIRE_MESSAGE(std::filesystem::is_regular_file(p), p.string());
  return nlohmann::json::parse(dprl::read_file(p));
}

// Wilson-Hilferty chi-square quantile for df k at one-sided p = 1e-6 (normal quantile 4.753): its
// error is below 1% of the value for k >= 20 and a few percent for k >= 10, far inside the margin
// between a correct and a broken sampler (a wrong width by 1% moves the statistic by thousands at
// n = 10^7).
inline double chi2_crit(int k) {
  const double c = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - c + 4.753 * std::sqrt(c), 3.0);
}

}  // namespace test_util
