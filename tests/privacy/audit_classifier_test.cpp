// The audit classifier (privacy/audit_classifier.hpp): its score tends to the true log likelihood
// ratio of Gaussian outputs, a coordinate without noise separates the inputs completely with
// finite scores, the thresholds are the stated order statistics, and bad input throws.
#include "privacy/audit_classifier.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"

using namespace dprl::privacy::audit;

namespace {

// n rows of N(mean, diag(sd^2)) in d dimensions
std::vector<double> gaussian_rows(dprl::Rng& rng, int n, const std::vector<double>& mean,
                                  const std::vector<double>& sd) {
  std::vector<double> rows;
  for (int i = 0; i < n; ++i)
    for (std::size_t j = 0; j < mean.size(); ++j) rows.push_back(mean[j] + sd[j] * rng.normal());
  return rows;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("audit classifier: the score tends to the Gaussian log likelihood ratio") {
    // D: N(0, diag(1, 4, 1)), D': N((0.5, 0, 0), diag(1, 1, 1)); the true log ratio at y is
    // -|y - mu1|^2 / 2 + |Sigma0^-1/2 y|^2 / 2 + log 2 (det Sigma0 = 4)
    dprl::Rng rng(11);
    const auto r0 = gaussian_rows(rng, 50000, {0, 0, 0}, {1, 2, 1});
    const auto r1 = gaussian_rows(rng, 50000, {0.5, 0, 0}, {1, 1, 1});
    const GaussianDiscriminant c(r0, r1, 3);
    const std::vector<double> y = {0.0, 0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1.0};
    std::vector<double> s(3);
    c.score(y, s);
    for (int i = 0; i < 3; ++i) {
      const double a = y[3 * i], b = y[3 * i + 1], e = y[3 * i + 2];
      const double truth = -0.5 * ((a - 0.5) * (a - 0.5) + b * b + e * e) +
                           0.5 * (a * a + b * b / 4 + e * e) + std::log(2.0);
      CAPTURE(i);
      CHECK(std::abs(s[i] - truth) < 0.05);  // 50000 draws: errors of order 0.01
    }
  }

  TEST_CASE("audit classifier: a coordinate without noise separates the inputs") {
    // the last coordinate is 0 under D and 0.5 under D' exactly; the others are noise
    dprl::Rng rng(3);
    auto r0 = gaussian_rows(rng, 1000, {0, 0, 0}, {1, 1, 0});
    auto r1 = gaussian_rows(rng, 1000, {0, 0, 0.5}, {1, 1, 0});
    const GaussianDiscriminant c(r0, r1, 3);
    std::vector<double> s0(1000), s1(1000);
    c.score(r0, s0);
    c.score(r1, s1);
    double max0 = -INFINITY, min1 = INFINITY;
    for (double v : s0) max0 = std::max(max0, v);
    for (double v : s1) min1 = std::min(min1, v);
    CHECK(std::isfinite(max0));
    CHECK(std::isfinite(min1));
    CHECK(min1 > max0 + 1e6);
    const auto t = classifier_thresholds(s0, s1, 4);
    REQUIRE(t.size() == 4);
    // upper quantiles of D's scores: the last is D's maximum; lower ones of D': the last its min
    CHECK(t[1] == max0);
    CHECK(t[3] == min1);
  }

  TEST_CASE("audit classifier: thresholds are the stated order statistics") {
    std::vector<double> s0, s1;
    for (int i = 0; i < 100; ++i) {
      s0.push_back(i);
      s1.push_back(100 + i);
    }
    const auto t = classifier_thresholds(s0, s1, 6);
    REQUIRE(t.size() == 6);
    // tail probabilities 1/2, 1/2 (2/100)^(1/2) = 0.0707 and 1/100: D has 50, 8 and 1 of its 100
    // scores at or above t, D' 49, 7 and 0 below t
    CHECK(t[0] == 50.0);
    CHECK(t[1] == 92.0);
    CHECK(t[2] == 99.0);
    CHECK(t[3] == 149.0);
    CHECK(t[4] == 107.0);
    CHECK(t[5] == 100.0);
  }

  TEST_CASE("audit classifier: bad input throws") {
    const std::vector<double> ok = {0, 1, 2, 3, 4, 5};
    CHECK_THROWS_AS(GaussianDiscriminant(ok, ok, 0), dprl::ParamError);
    CHECK_THROWS_AS(GaussianDiscriminant(ok, ok, 4), dprl::ParamError);  // 6 values, rows of 4
    CHECK_THROWS_AS(GaussianDiscriminant(ok, std::vector<double>{1, 2}, 2), dprl::ParamError);
    CHECK_THROWS_AS(GaussianDiscriminant(ok, std::vector<double>{1, 2, NAN, 3}, 2),
                    dprl::ParamError);
    const GaussianDiscriminant c(ok, std::vector<double>{1, 0, 0, 2, 3, 1}, 2);
    std::vector<double> out(2);
    CHECK_THROWS_AS(c.score(std::vector<double>{1, 2, 3}, out), dprl::ParamError);
    CHECK_THROWS_AS(classifier_thresholds(ok, {}, 4), dprl::ParamError);
    CHECK_THROWS_AS(classifier_thresholds(ok, ok, 1), dprl::ParamError);
  }
}
