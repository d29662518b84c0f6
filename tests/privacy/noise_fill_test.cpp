#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "privacy/noise_source.hpp"

// Fixed seeds, n = 1e6, two-sided critical values at p = 1e-6 (z = 4.89), so a correct sampler
// fails a check with probability about 1e-6 and the seeds make every run identical.
TEST_SUITE("statistical") {
TEST_CASE("add_gaussian adds N(0 sigma^2) noise in bulk for seeded and secure sources") {
  for (bool secure : {false, true}) {
    auto noise = dprl::privacy::make_seeded_noise(21, 1, 2, secure);
    const int n = secure ? 200000 : 1000000;
    const double sigma = 1.5;
    std::vector<double> x(n, 10.0);
    noise->add_gaussian(x, sigma);
    double s = 0, s2 = 0;
    int beyond = 0;
    for (double v : x) {
      const double e = v - 10.0;
      s += e;
      s2 += e * e;
      beyond += std::fabs(e) > 2 * sigma ? 1 : 0;
    }
    const double z = 4.89;
    CHECK(std::fabs(s / n) < z * sigma / std::sqrt(n));
    // E[e^2] = sigma^2 with variance 2 sigma^4
    CHECK(std::fabs(s2 / n - sigma * sigma) < z * std::sqrt(2.0) * sigma * sigma / std::sqrt(n));
    // P(|e| > 2 sigma) = 0.0455003 for a normal; binomial standard error sqrt(p (1 - p) / n)
    const double p = 0.04550026;
    CHECK(std::fabs(static_cast<double>(beyond) / n - p) < z * std::sqrt(p * (1 - p) / n));
  }
}

TEST_CASE("add_gaussian is reproducible for a seed and differs across seeds") {
  std::vector<double> a(1001, 0.0), b(1001, 0.0), c(1001, 0.0);
  dprl::privacy::make_seeded_noise(5)->add_gaussian(a, 1.0);
  dprl::privacy::make_seeded_noise(5)->add_gaussian(b, 1.0);
  dprl::privacy::make_seeded_noise(6)->add_gaussian(c, 1.0);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.back() != 0.0);  // odd lengths fill the last element too
}
}
