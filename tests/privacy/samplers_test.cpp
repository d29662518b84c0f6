// Deterministic statistical tests of the samplers: fixed seeds, large n, critical values at
// p = 1e-6 (two-sided normal quantile z = 4.892; one-sided 4.753), so they cannot flake.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"
#include "privacy/special_math.hpp"
#include "tests/test_util.hpp"

using namespace dprl::privacy;

namespace {

constexpr double kZ = 4.892;  // two-sided p = 1e-6 standard normal quantile

using test_util::chi2_crit;

// Kolmogorov-Smirnov statistic sup |F_n - F| of the sample against the CDF F.
template <class Cdf>
double ks_statistic(std::vector<double> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  const double n = double(x.size());
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  return d;
}

// One-sample KS critical value at p = 1e-6: P(sqrt(n) D > c) ~ 2 exp(-2 c^2) (Kolmogorov's
// limit, its first term an upper bound), so c = sqrt(ln(2e6) / 2) = 2.6934.
double ks_crit(std::size_t n) { return 2.6934 / std::sqrt(double(n)); }

struct Moments {
  double mean = 0, var = 0;
};
template <class F>
Moments moments(F f, int n) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = f();
    s += x;
    s2 += x * x;
  }
  Moments m;
  m.mean = s / n;
  m.var = s2 / n - m.mean * m.mean;
  return m;
}

}  // namespace

TEST_SUITE("statistical") {
  TEST_CASE("seeded Gaussian and Laplace: mean and variance within p = 1e-6 bounds") {
    for (bool secure : {false, true}) {
      auto noise = make_seeded_noise(42, 1, 2, secure);
      const int n = 400000;
      // mean of N(0, 4): sd of the mean 2 / sqrt(n); variance: sd of sample variance
      // sigma^2 sqrt(2 / n) for the Gaussian, b^2 sqrt(20 / n) for Laplace (kurtosis 6).
      auto g = moments([&] { return noise->gaussian(2.0); }, n);
      CHECK(std::fabs(g.mean) < kZ * 2.0 / std::sqrt(n));
      CHECK(std::fabs(g.var - 4.0) < kZ * 4.0 * std::sqrt(2.0 / n) + (secure ? 4.0 * 5e-4 : 0.0));
      auto l = moments([&] { return noise->laplace(1.5); }, n);
      CHECK(std::fabs(l.mean) < kZ * std::sqrt(2.0 * 2.25 / n));
      // secure mode rounds the scale up by < 2^-12 relative: variance up to 1e-3 larger
      CHECK(std::fabs(l.var - 2 * 2.25) <
            kZ * 2.25 * std::sqrt(20.0 / n) + (secure ? 4.5 * 1e-3 : 0));
    }
  }

  TEST_CASE("seeded Gaussian and Laplace samplers have the right shape (Kolmogorov-Smirnov)") {
    // n = 100000: D < 0.0085 at p = 1e-6. A wrong shape with the right variance fails by far
    // (uniform vs normal: D = 0.03; normal vs Laplace: D = 0.05). The secure samplers are
    // discrete on a grid of 2^-12 of the scale (scale rounded up by < 2^-12): their CDF is within
    // ~1e-4 of the continuous one, far inside the critical value.
    const std::size_t n = 100000;
    for (bool secure : {false, true}) {
      CAPTURE(secure);
      auto noise = make_seeded_noise(43, 1, 2, secure);
      std::vector<double> g(n), l(n);
      for (double& v : g) v = noise->gaussian(2.0);
      for (double& v : l) v = noise->laplace(1.5);
      CHECK(ks_statistic(g, [](double x) { return 0.5 * std::erfc(-x / (2.0 * std::sqrt(2.0))); }) <
            ks_crit(n));
      CHECK(ks_statistic(l, [](double x) {
              return x < 0 ? 0.5 * std::exp(x / 1.5) : 1.0 - 0.5 * std::exp(-x / 1.5);
            }) < ks_crit(n));
      // and the test's power: each sample against the other's shape at equal variance
      CHECK(ks_statistic(g, [](double x) {
              const double b = 2.0 / std::sqrt(2.0);
              return x < 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b);
            }) > ks_crit(n));
    }
  }

  TEST_CASE("discrete Gaussian at s = 2^20 (128-bit arithmetic) has the normal shape (KS)") {
    // for s >> 1 the discrete Gaussian's CDF at integer k is Phi((k + 1/2) / s) up to
    // O(e^(-2 pi^2 s^2)) (Poisson summation); n = 50000, D < 0.012 at p = 1e-6
    auto noise = make_seeded_noise(44, 0, 0);
    BitSource bits = [&] { return noise->next_u64(); };
    const double s = 0x1p20;
    std::vector<double> y(50000);
    for (double& v : y) v = double(discrete_gaussian(std::uint64_t{1} << 20, bits));
    CHECK(ks_statistic(y, [&](double k) {
            return 0.5 * std::erfc(-(k + 0.5) / (s * std::sqrt(2.0)));
          }) < ks_crit(y.size()));
    // near 2^28 as well (the largest s the sampler takes)
    std::vector<double> z(20000);
    for (double& v : z) v = double(discrete_gaussian((std::uint64_t{1} << 28) - 1, bits));
    const double s2 = double((std::uint64_t{1} << 28) - 1);
    CHECK(ks_statistic(z, [&](double k) {
            return 0.5 * std::erfc(-(k + 0.5) / (s2 * std::sqrt(2.0)));
          }) < ks_crit(z.size()));
  }

  TEST_CASE("discrete Laplace matches its pmf (chi-square - p = 1e-6)") {
    auto noise = make_seeded_noise(7, 0, 0);
    BitSource bits = [&] { return noise->next_u64(); };
    const std::uint64_t t = 3;
    const int n = 300000, k = 12;  // bins -5..5 and the tail
    std::vector<double> counts(k + 1, 0.0);
    for (int i = 0; i < n; ++i) {
      const auto y = discrete_laplace(t, bits);
      counts[std::abs(y) <= 5 ? y + 5 : 11] += 1;
    }
    const double r = std::exp(-1.0 / t), norm = (1 - r) / (1 + r);
    double chi2 = 0.0, tail = 1.0;
    for (int y = -5; y <= 5; ++y) {
      const double p = norm * std::pow(r, std::abs(y));
      tail -= p;
      chi2 += std::pow(counts[y + 5] - n * p, 2) / (n * p);
    }
    chi2 += std::pow(counts[11] - n * tail, 2) / (n * tail);
    CHECK(chi2 < chi2_crit(11));
  }

  TEST_CASE("discrete Gaussian matches its pmf (chi-square - p = 1e-6)") {
    auto noise = make_seeded_noise(8, 0, 0);
    BitSource bits = [&] { return noise->next_u64(); };
    const std::uint64_t s = 2;
    const int n = 200000;
    std::vector<double> counts(17, 0.0);  // -7..7 and a tail bin
    for (int i = 0; i < n; ++i) {
      const auto y = discrete_gaussian(s, bits);
      counts[std::abs(y) <= 7 ? y + 7 : 15] += 1;
    }
    double z = 0.0;
    for (int y = -60; y <= 60; ++y) z += std::exp(-y * y / 8.0);
    double chi2 = 0.0, tail = 1.0;
    for (int y = -7; y <= 7; ++y) {
      const double p = std::exp(-y * y / 8.0) / z;
      tail -= p;
      chi2 += std::pow(counts[y + 7] - n * p, 2) / (n * p);
    }
    chi2 += std::pow(counts[15] - n * tail, 2) / (n * tail);  // expected n * tail ~ 33
    CHECK(chi2 < chi2_crit(15));
  }

  TEST_CASE("Bernoulli(exp(-n/d)) is exact") {
    auto noise = make_seeded_noise(9, 0, 0);
    BitSource bits = [&] { return noise->next_u64(); };
    const int n = 400000;
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += bernoulli_exp(5, 3, bits);
    const double p = std::exp(-5.0 / 3.0);
    CHECK(std::fabs(hits / double(n) - p) < kZ * std::sqrt(p * (1 - p) / n));
  }

  TEST_CASE("gamma and Dirichlet samplers: means within p = 1e-6 bounds") {
    auto noise = make_seeded_noise(10, 0, 0);
    const int n = 200000;
    for (double k : {0.3, 1.0, 4.5}) {
      auto m = moments([&] { return noise->gamma(k); }, n);
      CHECK(std::fabs(m.mean - k) < kZ * std::sqrt(k / n));
    }
    std::vector<double> alpha{0.5, 2.0, 7.5}, x(3), sum(3, 0.0);
    for (int i = 0; i < n; ++i) {
      noise->dirichlet(alpha, x);
      for (int j = 0; j < 3; ++j) sum[j] += x[j];
    }
    for (int j = 0; j < 3; ++j) {
      const double m = alpha[j] / 10.0, var = m * (1 - m) / 11.0;
      CHECK(std::fabs(sum[j] / n - m) < kZ * std::sqrt(var / n));
    }
  }
}

TEST_SUITE("unit") {
  TEST_CASE("bit reader: bits in order, k-bit integers across word boundaries") {
    std::vector<std::uint64_t> words{0x0123456789abcdefULL, 0xfedcba9876543210ULL, ~0ULL};
    std::size_t next = 0;
    const BitSource src = [&] { return words[next++]; };
    BitReader r(src);
    CHECK(r.bits(4) == 0xf);
    CHECK(r.bits(56) == 0x123456789abcdeULL);
    CHECK(r.bits(8) == 0x00);  // the last 4 bits of word 0, then the low 4 of word 1
    CHECK(r.bit() == true);    // bit 4 of word 1 (0x...10)
    CHECK(r.bits(64) == ((0xfedcba9876543210ULL >> 5) | (~0ULL << 59)));
    CHECK(next == 3);
  }

  TEST_CASE("Bernoulli(n/d) by digit comparison is exact: all 2^16 bit strings") {
    // Every 16-bit prefix is equally likely; a prefix decides the trial unless it matches n/d's
    // first 16 digits (one prefix). So the count of true over all prefixes is within 1 of
    // 2^16 n / d, whatever the later bits. A trial that read the digits wrongly misses by far.
    using u128 = unsigned __int128;
    const u128 big = (u128{1} << 126) + 12345;
    struct Case {
      u128 n, d;
    };
    for (const Case c :
         {Case{1, 3}, Case{2, 3}, Case{5, 7}, Case{0, 9}, Case{9, 9}, Case{1, 1u << 20},
          Case{big / 3, big}, Case{big - 1, big}, Case{777, 1000}}) {
      std::uint64_t hits = 0;
      for (std::uint64_t prefix = 0; prefix < (1u << 16); ++prefix) {
        const BitSource src = [prefix] { return prefix; };  // later words repeat it: any tail
        BitReader r(src);
        hits += bernoulli_ratio(c.n, c.d, r) ? 1 : 0;
      }
      const double expect = 65536.0 * static_cast<double>(c.n) / static_cast<double>(c.d);
      CAPTURE(static_cast<double>(c.n));
      CAPTURE(static_cast<double>(c.d));
      CHECK(std::fabs(static_cast<double>(hits) - expect) <= 1.0);
    }
  }

  TEST_CASE("uniform below n from bits: every value equally often over all bit strings") {
    for (std::uint64_t n : {1u, 2u, 3u, 5u, 6u, 7u, 8u, 11u}) {
      // n <= 2^k values from k bits per try; over all 2^(2k) two-try prefixes the accepted
      // values are exactly balanced (each try's accepted values are)
      const int k = n == 1 ? 0 : 64 - __builtin_clzll(n - 1);
      std::vector<int> count(n, 0);
      int decided = 0;
      for (std::uint64_t w = 0; w < (std::uint64_t{1} << (2 * k)); ++w) {
        const BitSource src = [w] { return w; };
        BitReader r(src);
        const std::uint64_t first = k == 0 ? 0 : (w & ((1u << k) - 1));
        const std::uint64_t second = k == 0 ? 0 : (w >> k) & ((1u << k) - 1);
        if (first >= n && second >= n) continue;  // needs a third try: not enumerated
        ++count[uniform_below(n, r)];
        ++decided;
      }
      CAPTURE(n);
      for (int c : count) CHECK(c * static_cast<int>(n) == decided);
    }
  }

  TEST_CASE("noise sources: names - reproducibility - zero and scripted doubles") {
    auto a = make_seeded_noise(1, 2, 3), b = make_seeded_noise(1, 2, 3),
         c = make_seeded_noise(1, 2, 4);
    CHECK(a->name() == "seeded(root=1, a=2, b=3, stream=2)");
    const double x = a->gaussian(1.0);
    CHECK(x == b->gaussian(1.0));
    CHECK(x != c->gaussian(1.0));
    auto os = make_os_entropy_noise();
    CHECK(os->name() == "os_entropy(secure, chacha20)");
    CHECK(os->next_u64() != os->next_u64());
    auto z = make_zero_noise();
    CHECK(z->gaussian(5.0) == 0.0);
    CHECK(z->laplace(5.0) == 0.0);
    auto s = make_scripted_noise({0.5, -1.0});
    CHECK(s->gaussian(1.0) == 0.5);
    CHECK(s->laplace(1.0) == -1.0);
    CHECK_THROWS_AS(s->gaussian(1.0), dprl::DataError);
  }

  TEST_CASE("secure noise lands on the power-of-two grid") {
    auto noise = make_seeded_noise(3, 0, 0, true);
    const double g = secure_grid(1.7);
    CHECK(g == std::ldexp(1.0, -12));
    for (int i = 0; i < 100; ++i) {
      const double v = noise->gaussian(1.7);
      CHECK(v / g == std::nearbyint(v / g));
    }
  }
}
