#include "engine/space.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/rng.hpp"

namespace {

constexpr double kSpaceInf = std::numeric_limits<double>::infinity();

// Pearson's statistic of counts against equal expected counts
double chi_square_uniform(const std::vector<long>& counts, long n) {
  const double expected = static_cast<double>(n) / static_cast<double>(counts.size());
  double stat = 0;
  for (long c : counts) stat += (c - expected) * (c - expected) / expected;
  return stat;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("space: contains") {
    const dprl::Space d = dprl::Space::discrete(3);
    CHECK(d.contains(std::int64_t{2}));
    CHECK_FALSE(d.contains(std::int64_t{3}));
    CHECK_FALSE(d.contains(std::int64_t{-1}));
    const dprl::Space b = dprl::Space::box({-1, 0}, {1, kSpaceInf});
    CHECK(b.contains(std::vector<double>{-1, 1e300}));
    CHECK_FALSE(b.contains(std::vector<double>{-1.5, 0}));
    CHECK_FALSE(b.contains(std::vector<double>{0}));
  }

  TEST_CASE("space: samples lie in the space and repeat with the seed") {
    const dprl::Space b = dprl::Space::box({-2, 1, -kSpaceInf, -kSpaceInf, 5},
                                           {3, kSpaceInf, 4, kSpaceInf, 5});
    const dprl::Space d = dprl::Space::discrete(7);
    dprl::Rng r1(3), r2(3);
    for (int i = 0; i < 1000; ++i) {
      const std::vector<double> x = b.sample(r1);
      REQUIRE(b.contains(std::span<const double>(x)));
      REQUIRE(x == b.sample(r2));
      CHECK(x[4] == 5.0);  // a degenerate [5, 5] component
      const std::int64_t a = d.sample_index(r1);
      REQUIRE(d.contains(a));
      REQUIRE(d.sample(r2) == std::vector<double>{static_cast<double>(a)});
    }
  }
}

TEST_SUITE("statistical") {
  // n = 1e6 draws with a fixed seed; every bound is the p = 1e-6 critical value:
  // chi-square with 6 degrees of freedom 38.26, with 10: 46.86 (upper tail); a mean within
  // 4.892 standard errors (two-sided normal).
  TEST_CASE("space: Discrete(n) samples are uniform") {
    const dprl::Space d = dprl::Space::discrete(7);
    dprl::Rng rng(11);
    constexpr long kN = 1000000;
    std::vector<long> counts(7, 0);
    for (long i = 0; i < kN; ++i) ++counts[static_cast<std::size_t>(d.sample_index(rng))];
    CHECK(chi_square_uniform(counts, kN) < 38.26);
  }

  TEST_CASE("space: Box samples follow Gymnasium's rule for each kind of bound") {
    // [-2, 3) uniform; [1, inf) 1 + Exp(1); (-inf, 4] 4 - Exp(1); (-inf, inf) N(0, 1)
    const dprl::Space b =
        dprl::Space::box({-2, 1, -kSpaceInf, -kSpaceInf}, {3, kSpaceInf, 4, kSpaceInf});
    dprl::Rng rng(12);
    constexpr long kN = 1000000;
    std::vector<long> bins(11, 0);
    std::array<double, 4> sum{}, sum_sq{};
    long exp_tail = 0;  // 1 + Exp(1) > 1 + ln 2: probability 1/2
    std::vector<double> x(4);
    for (long i = 0; i < kN; ++i) {
      b.sample(rng, x);
      ++bins[static_cast<std::size_t>((x[0] + 2) / 5 * 11)];
      exp_tail += x[1] > 1 + std::log(2.0);
      for (std::size_t k = 0; k < 4; ++k) {
        sum[k] += x[k];
        sum_sq[k] += x[k] * x[k];
      }
    }
    CHECK(chi_square_uniform(bins, kN) < 46.86);
    const double n = static_cast<double>(kN);
    // means 0.5, 2, 3, 0 with variances 25/12, 1, 1, 1
    const std::array<double, 4> mean{0.5, 2, 3, 0}, var{25.0 / 12, 1, 1, 1};
    for (std::size_t k = 0; k < 4; ++k) {
      CAPTURE(k);
      CHECK(std::fabs(sum[k] / n - mean[k]) < 4.892 * std::sqrt(var[k] / n));
    }
    // the median of the exponential: a binomial(n, 1/2) count
    CHECK(std::fabs(exp_tail - n / 2) < 4.892 * std::sqrt(n / 4));
    // the normal's variance: the sample variance has standard error sqrt(2 / n)
    const double v = sum_sq[3] / n - (sum[3] / n) * (sum[3] / n);
    CHECK(std::fabs(v - 1) < 4.892 * std::sqrt(2 / n));
  }
}
