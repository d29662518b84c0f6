// Secure release of vectors (d > 1): snapping every coordinate to the noise grid moves the
// neighbours' difference by up to one grid step per coordinate, so the mechanisms must cover
// Delta + d g (L1) or Delta + sqrt(d) g (L2). The adversarial pairs below sit just below and just
// above grid midpoints, so snapping adds almost a full step per coordinate (the review's worked
// example: Laplace, Delta = 1, epsilon = 1, d = 8192 at the old grid 2^-12 gives an L1 distance of
// about 3 after snapping).
#include "privacy/secure_release.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/error.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/laplace_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"
#include "privacy/snapped_values.hpp"

using namespace dprl::privacy;

namespace {

// The grid a secure release used, read off its output: the largest power of two dividing every
// value (with thousands of values, a coarser common divisor has probability ~2^-thousands).
double grid_of(const std::vector<double>& y) {
  int low = 4096;
  for (double v : y) {
    if (v == 0.0) continue;
    int e;
    const double m = std::frexp(std::fabs(v), &e);  // |v| = m 2^e, m in [0.5, 1)
    const auto bits = static_cast<std::uint64_t>(std::ldexp(m, 53));
    low = std::min(low, e - 53 + std::countr_zero(bits));
  }
  return std::ldexp(1.0, low);
}

// Neighbours whose coordinates 1..d-1 differ by (k + f) g, f = 2^-10, with x_i just below and
// x2_i just above a grid midpoint, so each snaps k + 1 steps apart; coordinate 0 (on the grid in
// x) takes the rest of the sensitivity budget in the given norm, so |x - x2| = delta exactly.
struct Pair {
  std::vector<double> x, x2;
};
Pair straddling_pair(std::size_t d, double g, double delta, bool l1) {
  constexpr double f = 0x1p-10;
  const double per = l1 ? delta / double(d) : delta / std::sqrt(double(d));
  const double k = std::max(0.0, std::floor(per / g - f));
  const double step = (k + f) * g;
  Pair p{std::vector<double>(d, (0.5 - f / 2) * g), {}};
  p.x2 = p.x;
  for (std::size_t i = 1; i < d; ++i) p.x2[i] += step;
  p.x[0] = 0.0;
  const double rest =
      l1 ? delta - double(d - 1) * step : std::sqrt(delta * delta - double(d - 1) * step * step);
  REQUIRE(rest >= 0.0);
  p.x2[0] = rest;
  return p;
}

double l1(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
  return s;
}
double l2(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// Releases x and x2 with the same seed: the noise draws do not depend on the input, so y - y2 is
// exactly snap(x) - snap(x2), the difference the privacy loss is made of.
template <class M>
std::pair<std::vector<double>, std::vector<double>> release_pair(const M& m, const Pair& p) {
  std::vector<double> y = p.x, y2 = p.x2;
  auto n1 = make_seeded_noise(22, 0, 0, true), n2 = make_seeded_noise(22, 0, 0, true);
  m.release(y, *n1);
  m.release(y2, *n2);
  return {y, y2};
}

}  // namespace

TEST_SUITE("statistical") {
  // The realised noise scale is estimated from the output itself (so this test runs on any
  // implementation): b from the mean absolute value of n = 8 d zero-input coordinates, sigma from
  // their root mean square. Critical values at one-sided p = 1e-6 (z = 4.753): the mean of |Lap(b)|
  // has sd b / sqrt(n), so b <= mean / (1 - 4.753 / sqrt(n)); the RMS of N(0, sigma^2) has sd
  // sigma / sqrt(2n), so sigma <= rms / (1 - 4.753 / sqrt(2n)). The discrete samplers at >= 2^12
  // steps per scale have the same moments to 1e-7. With these upper bounds on the realised
  // scale, the checked privacy loss can only be overstated, so a correct mechanism fails with
  // probability < 1e-6; a mechanism covering only Delta + g fails by a factor ~3 (Laplace) and
  // ~1.11 (Gaussian), far beyond the 1.9% and 0.93% margins.
  TEST_CASE("secure Laplace release, d = 8192: the snapped L1 distance stays within epsilon b") {
    const std::size_t d = 8192;
    const LaplaceMechanism m({1.0, 1.0});
    const std::size_t n = 8 * d;  // 8 releases of d zeros
    std::vector<double> zeros(d);
    auto noise = make_seeded_noise(21, 0, 0, true);
    double abs_sum = 0.0;
    for (int r = 0; r < 8; ++r) {
      std::fill(zeros.begin(), zeros.end(), 0.0);
      m.release(zeros, *noise);
      for (double v : zeros) abs_sum += std::fabs(v);
    }
    const double b_upper = abs_sum / double(n) / (1.0 - 4.753 / std::sqrt(double(n)));
    const double g = grid_of(zeros);
    const Pair p = straddling_pair(d, g, 1.0, true);
    CHECK(l1(p.x, p.x2) == doctest::Approx(1.0).epsilon(1e-12));
    const auto [y, y2] = release_pair(m, p);
    CHECK(grid_of(y) == g);
    const double snapped = l1(y, y2);
    CAPTURE(g);
    CAPTURE(snapped);
    // the discrete Laplace's privacy loss is exactly (snapped L1 distance) / (realised scale)
    CHECK(snapped / b_upper <= 1.0);
  }

  TEST_CASE("secure Gaussian release, d = 65536: the snapped L2 distance stays within Delta") {
    const std::size_t d = 65536;
    const GaussianMechanism m({1.0, 1.0, 1e-5, true});
    const std::size_t n = 2 * d;  // 2 releases of d zeros
    std::vector<double> zeros(d);
    auto noise = make_seeded_noise(23, 0, 0, true);
    double sq = 0.0;
    for (int r = 0; r < 2; ++r) {
      std::fill(zeros.begin(), zeros.end(), 0.0);
      m.release(zeros, *noise);
      for (double v : zeros) sq += v * v;
    }
    const double sigma_upper =
        std::sqrt(sq / double(n)) / (1.0 - 4.753 / std::sqrt(2.0 * double(n)));
    const double g = grid_of(zeros);
    const Pair p = straddling_pair(d, g, 1.0, false);
    CHECK(l2(p.x, p.x2) == doctest::Approx(1.0).epsilon(1e-12));
    const auto [y, y2] = release_pair(m, p);
    const double snapped = l2(y, y2);
    CAPTURE(g);
    CAPTURE(snapped);
    // the guarantee is that of noise multiplier sigma / Delta: the realised sigma / (snapped
    // distance) must be at least that
    CHECK(snapped / sigma_upper <= 1.0 / m.sigma());
  }
}

TEST_SUITE("unit") {
  TEST_CASE("the vectorised snap-and-add gives the scalar snap's bits, noise or integer steps") {
    // around grid midpoints (ties round to even), both signs, at and beyond 2^53 g (kept as
    // they are), subnormal-sized and zero, in lengths that leave scalar tails
    for (const double g : {0x1p-20, 0x1p-3, 1.0, 0x1p10}) {
      std::vector<double> base;
      for (const double k :
           {0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e6 + 0.5, 3.0, -7.25, 0x1p52, -0x1p52})
        base.push_back(k * g);
      for (const double u : {0x1p53, -0x1p53, 0x1p60, 0x1.8p53}) base.push_back(u * g);
      base.push_back(std::nextafter(0.5 * g, 0.0));
      base.push_back(std::nextafter(0.5 * g, 1.0));
      base.push_back(4.9e-324);
      base.push_back(0.3);
      base.push_back(-123.456);
      for (std::size_t n = 0; n <= base.size(); ++n) {
        std::vector<double> e(n), a(base.begin(), base.begin() + static_cast<long>(n)),
            b = a, c = a, d = a;
        std::vector<std::int64_t> steps(n);
        for (std::size_t i = 0; i < n; ++i) {
          e[i] = g * static_cast<double>(static_cast<std::int64_t>(i * 7919) % 1000 - 500);
          steps[i] = (i % 2 ? -1 : 1) * ((std::int64_t{1} << (i % 51)) - 1);
        }
        const double inv = 1.0 / g, big = 0x1p53 * g;
        snap_and_add(a, e.data(), g);
        snap_and_add_steps(c, steps.data(), g);
        for (std::size_t i = 0; i < n; ++i) {
          b[i] = snap_scaled(b[i], g, inv, big) + e[i];
          d[i] = snap_scaled(d[i], g, inv, big) + g * static_cast<double>(steps[i]);
          CHECK(std::bit_cast<std::uint64_t>(a[i]) == std::bit_cast<std::uint64_t>(b[i]));
          CHECK(std::bit_cast<std::uint64_t>(c[i]) == std::bit_cast<std::uint64_t>(d[i]));
        }
      }
    }
    // a NaN or an infinity anywhere is refused; the largest finite values and -0 are not
    for (std::size_t n : {1, 4, 5, 9, 33}) {
      std::vector<double> ok(n, -0.0);
      ok[0] = std::numeric_limits<double>::max();
      ok[n - 1] = -std::numeric_limits<double>::max();
      CHECK_NOTHROW(check_finite_release(ok));
      for (std::size_t at = 0; at < n; ++at)
        for (const double bad : {std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL}) {
          std::vector<double> x(n, 1.0);
          x[at] = bad;
          CHECK_THROWS_AS(check_finite_release(x), dprl::ParamError);
        }
    }
    CHECK(small_int_to_double((std::int64_t{1} << 51) - 1) == 0x1p51 - 1);
    CHECK(small_int_to_double(-(std::int64_t{1} << 51) + 1) == -0x1p51 + 1);
    CHECK(small_int_to_double(0) == 0.0);
  }

  TEST_CASE(
      "secure plan: the grid per release covers Delta + d g (L1) and Delta + sqrt(d) g (L2)") {
    for (std::size_t d :
         {std::size_t{1}, std::size_t{7}, std::size_t{8192}, std::size_t{1000000}}) {
      CAPTURE(d);
      const LaplaceMechanism lap({2.0, 0.5});
      const SecurePlan pl = lap.secure_plan(d);
      CHECK(pl.scale >= lap.scale() * (2.0 + double(d) * pl.grid) / 2.0);
      CHECK(pl.inflation <= 1.0 + 0x1p-12);
      CHECK(std::ldexp(1.0, std::ilogb(pl.grid)) == pl.grid);
      const GaussianMechanism gm({0.5, 1.0, 1e-5, true});
      const SecurePlan pg = gm.secure_plan(d);
      CHECK(pg.scale >= gm.sigma() * (0.5 + std::sqrt(double(d)) * pg.grid) / 0.5);
      CHECK(pg.inflation <= 1.0 + 0x1p-12);
      CHECK(pg.scale / pg.grid <= kMaxSecureGaussianRatio);
    }
  }

  TEST_CASE("secure release in d > 1: outputs on the plan's grid - exact loss within the claim") {
    const std::size_t d = 4096;
    const LaplaceMechanism lap({1.0, 1.0});
    const SecurePlan pl = lap.secure_plan(d);
    const Pair p = straddling_pair(d, pl.grid, 1.0, true);
    const auto [y, y2] = release_pair(lap, p);
    for (double v : y) CHECK(std::fmod(v, pl.grid) == 0.0);
    // snapped distance / (discrete Laplace scale t g >= plan.scale) <= epsilon, deterministically
    const double snapped = l1(y, y2);
    CHECK(snapped > 1.0);  // the pair does exploit the snapping
    CHECK(snapped / pl.scale <= 1.0);

    const GaussianMechanism gm({1.0, 1.0, 1e-5, true});
    const SecurePlan pg = gm.secure_plan(d);
    const Pair q = straddling_pair(d, pg.grid, 1.0, false);
    const auto [z, z2] = release_pair(gm, q);
    CHECK(l2(z, z2) > 1.0);
    CHECK(l2(z, z2) / pg.scale <= 1.0 / gm.sigma());
  }

  TEST_CASE("learners' Gaussian release plan: secure covers Delta + sqrt(n) g, seeded is z Delta") {
    // Delta = 1, so scale (1 + sqrt(n) g / Delta) and z (Delta + sqrt(n) g) are the same
    // expression: the check is exact. Sizes up to the offline learners' 69,124 noised values at
    // paper 000's noise multipliers (z up to 80).
    for (double z : {0.5, 4.0, 80.0})
      for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{69124}}) {
        CAPTURE(z);
        CAPTURE(n);
        const SecurePlan pl = gaussian_release_plan(z, 1.0, n, true);
        CHECK(pl.grid > 0.0);
        CHECK(pl.scale >= z * (1.0 + std::sqrt(double(n)) * pl.grid));
        CHECK(pl.inflation <= 1.0 + 0x1p-12);
        const SecurePlan plain = gaussian_release_plan(z, 1.0, n, false);
        CHECK(plain.grid == 0.0);
        CHECK(plain.scale == z);
      }
  }

  TEST_CASE("add_gaussian_release: grid points from a secure source, add_gaussian from another") {
    auto noise = make_seeded_noise(5, 0, 0, /*secure=*/true);
    const SecurePlan pl = gaussian_release_plan(0.7, 0.35, 5, true);
    std::vector<double> x = {0.1234567, -3.3333333, 1e-9, 2.5 * pl.grid, 0.0};
    add_gaussian_release(x, pl.scale, pl.grid, *noise);
    for (double v : x) CHECK(std::fmod(v, pl.grid) == 0.0);
    // a non-finite input is refused, never released
    std::vector<double> bad = {1.0, NAN};
    CHECK_THROWS_AS(add_gaussian_release(bad, pl.scale, pl.grid, *noise), dprl::ParamError);
    // a seeded (not secure) source adds its own Gaussian draws at the base sd, unsnapped
    auto a = make_seeded_noise(6, 0, 0), b = make_seeded_noise(6, 0, 0);
    std::vector<double> y = {0.1, 0.2, 0.3}, y2 = y;
    const SecurePlan plain = gaussian_release_plan(0.7, 0.35, 3, false);
    add_gaussian_release(y, plain.scale, plain.grid, *a);
    b->add_gaussian(y2, 0.7);
    CHECK(y == y2);
    CHECK(y[0] != 0.1);
  }

  TEST_CASE("secure plan refuses what the exact samplers cannot cover - snapping never overflows") {
    // Gaussian: sqrt(d) sigma / Delta >= 2^28 grid steps would be needed
    CHECK_THROWS_WITH_AS(
        secure_release_plan(SecureNoise::kGaussian, 4.0, 1.0, std::size_t{1} << 52),
        doctest::Contains("the exact sampler cannot cover the snapping"), dprl::ParamError);
    CHECK_THROWS_AS(secure_release_plan(SecureNoise::kLaplace, 1.0, 1.0, std::size_t{1} << 41),
                    dprl::ParamError);
    CHECK_THROWS_AS(secure_release_plan(SecureNoise::kLaplace, 0.0, 1.0, 3), dprl::ParamError);
    CHECK_THROWS_AS(secure_release_plan(SecureNoise::kLaplace, 1.0, NAN, 3), dprl::ParamError);
    // large values are multiples of the grid already
    CHECK(snap_to_grid(1e300, 0x1p-20) == 1e300);
    CHECK(snap_to_grid(3.3, 0.5) == 3.5);
  }
}
