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
#include <vector>

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

// A crude XML check: every element opened is closed in order, and '&' starts an entity.
inline bool well_formed(const std::string& xml) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    const auto close = xml.find('>', i);
    if (close == std::string::npos) return false;
    const std::string tag = xml.substr(i + 1, close - i - 1);
    i = close + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag.back() == '/') continue;
    const std::string name =
        tag.substr(tag[0] == '/', tag.find_first_of(" \n/", 1) - (tag[0] == '/'));
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  for (auto p = xml.find('&'); p != std::string::npos; p = xml.find('&', p + 1)) {
    const auto semi = xml.find(';', p);
    if (semi == std::string::npos || semi - p > 6) return false;
  }
  return stack.empty();
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

// log Phi(-a) for a >= 0; the asymptotic series where erfc underflows.
inline double log_phi_lower(double a) {
  const double t = 0.5 * std::erfc(a / std::sqrt(2.0));
  if (t > 1e-300) return std::log(t);
  return -0.5 * a * a - std::log(a * std::sqrt(2.0 * M_PI)) + std::log1p(-1.0 / (a * a));
}

// Exact epsilon at delta of mu-GDP (Dong, Roth and Su 2019, Cor. 2.13): Gaussian mechanisms with
// noise multipliers z_i compose to mu^2 = sum 1 / z_i^2, and
// delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) decreases in eps.
inline double gdp_epsilon(double mu, double delta) {
  auto delta_of = [mu](double eps) {
    const double a = eps / mu - mu / 2, b = eps / mu + mu / 2;
    const double p1 = a >= 0 ? std::exp(log_phi_lower(a)) : 1 - std::exp(log_phi_lower(-a));
    return p1 - std::exp(eps + log_phi_lower(b));
  };
  double lo = 0, hi = 1;
  while (delta_of(hi) > delta) hi *= 2;
  while (hi - lo > 1e-10 * hi) {
    const double mid = 0.5 * (lo + hi);
    (delta_of(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace test_util
