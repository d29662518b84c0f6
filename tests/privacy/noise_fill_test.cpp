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

  TEST_CASE("the bulk sampler's distribution: binned chi-squared and the ziggurat's tail") {
    auto noise = dprl::privacy::make_seeded_noise(33);
    const int n = 2000000;
    std::vector<double> x(n, 0.0);
    noise->add_gaussian(x, 1.0);
    // 16 bins with edges at the normal quantiles of k/16, so each has probability 1/16
    // (scipy.stats.norm.ppf(k / 16), k = 1..15)
    const double edges[15] = {
        -1.5341205443525463, -1.1503493803760079, -0.887146559018876,  -0.6744897501960817,
        -0.4887764111146695, -0.3186393639643752, -0.1573106846101707, 0.0,
        0.1573106846101707,  0.3186393639643752,  0.4887764111146695,  0.6744897501960817,
        0.887146559018876,   1.1503493803760079,  1.5341205443525463};
    std::vector<int> counts(16, 0);
    int tail = 0;
    for (double v : x) {
      int b = 0;
      while (b < 15 && v >= edges[b]) ++b;
      ++counts[b];
      tail += std::fabs(v) > 3.5 ? 1 : 0;
    }
    double chi = 0;
    for (int c : counts) chi += (c - n / 16.0) * (c - n / 16.0) / (n / 16.0);
    // chi-squared with 15 degrees of freedom: P(X > 56.49) = 1e-6 (scipy chi2.isf(1e-6, 15))
    CHECK(chi < 56.49);
    // beyond the ziggurat's base layer (R = 3.44): P(|X| > 3.5) = 4.6525816e-4
    const double p = 4.6525816e-4;
    CHECK(std::fabs(static_cast<double>(tail) / n - p) < 4.89 * std::sqrt(p * (1 - p) / n));
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
