#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "privacy/composition.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/sparse_vector.hpp"

using namespace dprl::privacy;

namespace {

// P(X - Y > s) for independent X ~ Lap(bx), Y ~ Lap(by): Simpson's rule over y in +-60 by of
// f_Y(y) P(X > s + y), with P(X > u) = e^(-u / bx) / 2 for u >= 0, 1 - e^(u / bx) / 2 below.
double laplace_difference_sf(double bx, double by, double s) {
  auto tail = [&](double u) {
    return u >= 0 ? 0.5 * std::exp(-u / bx) : 1 - 0.5 * std::exp(u / bx);
  };
  auto f = [&](double y) { return std::exp(-std::fabs(y) / by) / (2 * by) * tail(s + y); };
  const int n = 1 << 18;
  const double lo = -60 * by, h = 120 * by / n;
  double sum = f(lo) + f(lo + n * h);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4.0 : 2.0) * f(lo + i * h);
  return sum * h / 3;
}

// log of the Beta(a, b) density at x.
double log_beta_pdf(double a, double b, double x) {
  return std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + (a - 1) * std::log(x) +
         (b - 1) * std::log1p(-x);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("svt_params: Algorithm 2's values - and the properties its lemmas need") {
    // paper 000's HIV setting (epsilon1 = 10, delta1 = 1/3000, T = L = 50, p_min = 0.02),
    // Algorithm 2 evaluated by 30-digit mpmath
    const auto h = svt_params({10.0, 1.0 / 3000, 50, 50, 0.02});
    CHECK(h.eps_prime == doctest::Approx(0.084760301783732324).epsilon(1e-13));
    CHECK(h.delta_prime == doctest::Approx(6.6666666666666667e-8).epsilon(1e-13));
    CHECK(h.c_min == doctest::Approx(12.305038439756035).epsilon(1e-12));
    CHECK(h.theta == doctest::Approx(615.25192198780175).epsilon(1e-12));
    CHECK(h.threshold_shift == doctest::Approx(779.77828824756635).epsilon(1e-12));

    const auto s = svt_params({3.0, 1e-5, 25, 500, 0.02});
    // Lemma 5.1 needs count / (count - 1) <= e^eps' for every count >= c_min: c_min is where
    // equality holds
    CHECK(s.c_min / (s.c_min - 1) == doctest::Approx(std::exp(s.eps_prime)).epsilon(1e-12));
    // Thm 5.5: per-pass 2 eps' is Dwork and Roth Cor. 3.21's per-step budget for T passes with
    // slack delta1 / 2 (an independent code path in composition.cpp)
    CHECK(s.per_trajectory_epsilon ==
          doctest::Approx(advanced_composition_inverse_dr(3.0, 25, 0.5e-5)).epsilon(1e-13));
    // Thm 5.3: L steps of delta' per pass; T passes plus the slack make delta1
    CHECK(500 * s.delta_prime == doctest::Approx(s.per_trajectory_delta));
    CHECK(25 * s.per_trajectory_delta + 0.5e-5 == doctest::Approx(1e-5));
    CHECK(s.composed_epsilon <= 3.0);
    CHECK(s.composed_delta == doctest::Approx(1e-5));
    // Lemma 5.2: a count at theta answers "stable" with probability P(Lap(4/eps') - Lap(2/eps') >
    // shift) < delta' (numerical integration: about 2 delta' / 3)
    const double p_top =
        laplace_difference_sf(s.query_noise_scale, s.threshold_noise_scale, s.threshold_shift);
    CHECK(p_top < s.delta_prime);
    CHECK(p_top > 0.5 * s.delta_prime);
    CHECK(s.query_noise_scale == doctest::Approx(2 * s.threshold_noise_scale));
    CHECK_THROWS_WITH_AS(svt_params({3.0, 1e-5, 0, 500, 0.02}), "svt queries T = 0 must be >= 1",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(svt_params({3.0, 1e-5, 5, 500, 0.0}), "svt p_min = 0 must be in (0, 1]",
                         dprl::ParamError);
  }

  TEST_CASE("prefix query and noisy threshold with scripted noise") {
    const auto s = svt_params({3.0, 1e-5, 25, 500, 0.02});
    auto noise = make_scripted_noise({0.0, 1.0, -1.0});
    const double th = noisy_threshold(s, *noise);
    CHECK(th == s.theta + s.threshold_shift);
    CHECK(prefix_query(th - 0.5, th, s, *noise));
    CHECK_FALSE(prefix_query(th + 0.5, th, s, *noise));
  }

  TEST_CASE("AboveThreshold halts once") {
    auto noise = make_scripted_noise({0.0, 0.0, 0.0});
    AboveThreshold at({1.0, 5.0, 1.0}, *noise);
    CHECK_FALSE(at.query(4.0));
    CHECK(at.query(6.0));
    CHECK_THROWS_AS(at.query(1.0), dprl::BudgetExceeded);
  }

  TEST_CASE("secure SVT noise lies on a grid no coarser than the count sensitivity") {
    // eps' = 2^-13: threshold noise Lap(2^14), query noise Lap(2^15). The default secure grid
    // 2^(floor(log2 scale) - 12) would be 4 and 8, coarser than the count's sensitivity 1, so the
    // coupling shifts (+1, +2) could not be matched; the SVT caps the grid at 1. With grid 1 a
    // discrete Laplace of scale 2^14 is odd with probability about 1/2; if every one of 2000
    // draws were a multiple of 4 (what the coarse grid gives) the grid would not be 1: that has
    // probability about 4^-2000 under grid 1.
    SvtPieces s{};
    s.theta = 0;
    s.threshold_shift = 0;
    s.threshold_noise_scale = 0x1p14;
    s.query_noise_scale = 0x1p15;
    auto noise = make_seeded_noise(5, 0, 0, /*secure=*/true);
    int off_coarse_grid = 0, off_unit_grid = 0;
    for (int i = 0; i < 2000; ++i) {
      const double x = noisy_threshold(s, *noise);
      off_coarse_grid += std::fmod(x, 4.0) != 0.0;
      off_unit_grid += std::fmod(x, 1.0) != 0.0;
    }
    CHECK(off_coarse_grid > 0);
    CHECK(off_unit_grid == 0);  // multiples of the grid 1
  }

  TEST_CASE("Dirichlet epsilon (eq. 12) - exact m = 2 delta and the Lemma 1 radius") {
    DirichletParams p{10.0, 0.05, 0.01, 3, 2.0, 0.1};
    // eq. 12 by 30-digit mpmath (loggamma)
    CHECK(dirichlet_epsilon(p) == doctest::Approx(24.636745394564306).epsilon(1e-13));
    // Theorem 1's claim, checked by brute force for m = 2: on Delta_{2,tau} the log density
    // ratio of Dir(k pi) and Dir(k pi'), pi and pi' in Delta_{2,eta} at L2 distance <= L b, is
    // linear in log(x1 / x2), so its maximum sits at x1 = tau or 1 - tau; eq. 12 must bound it
    for (DirichletParams q : {DirichletParams{10.0, 0.05, 0.01, 2, 2.0, 0.1},
                              DirichletParams{2.0, 0.25, 0.1, 2, 1.0, 0.5},
                              DirichletParams{50.0, 0.2, 0.05, 2, 1.0, 0.05}}) {
      const double d = q.lipschitz * q.adjacency / std::sqrt(2.0);  // per-coordinate move
      double worst = 0.0;
      for (double p1 = q.eta; p1 + d <= 1 - q.eta + 1e-12; p1 += 1e-3) {
        for (double x : {q.tau, 1 - q.tau}) {
          const double r = log_beta_pdf(q.k * (p1 + d), q.k * (1 - p1 - d), x) -
                           log_beta_pdf(q.k * p1, q.k * (1 - p1), x);
          worst = std::max(worst, std::fabs(r));
        }
      }
      CAPTURE(q.k);
      CHECK(worst > 0.0);
      CHECK(dirichlet_epsilon(q) >= worst);
    }
    // m = 2, k eta = 1, k (1 - eta) = 1: Beta(1, 1) is uniform, so delta = 2 tau
    CHECK(dirichlet_delta_exact_m2(2.0, 0.5, 0.1) == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(concentration_radius(9.0, std::exp(-5.0)) == doctest::Approx(0.5).epsilon(1e-15));
    CHECK_THROWS_WITH_AS(dirichlet_epsilon({10.0, 0.5, 0.01, 3, 1.0, 1.0}),
                         doctest::Contains("eta = 0.5 must be <= 1/actions"), dprl::ParamError);
    DirichletMechanism m(p);
    auto noise = make_seeded_noise(1);
    double out[3];
    const double bad[3] = {0.01, 0.49, 0.5};
    CHECK_THROWS_WITH_AS(m.release(bad, out, *noise), doctest::Contains(">= eta"),
                         dprl::ParamError);
    const double good[3] = {0.2, 0.3, 0.5};
    m.release(good, out, *noise);
    CHECK(out[0] + out[1] + out[2] == doctest::Approx(1.0));
  }
}
