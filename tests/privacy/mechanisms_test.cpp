#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "privacy/composition.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/laplace_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "tests/privacy/reference.hpp"

using namespace dprl::privacy;

namespace {

// Exact delta(epsilon) of k-fold composition of epsilon0-DP mechanisms: randomized response is
// the worst case (Kairouz, Oh, Viswanath 2015, Thm. 3.3), whose privacy loss is (k - 2l) eps0 with
// probability C(k, l) p^(k-l) (1-p)^l, p = e^eps0 / (1 + e^eps0); delta(eps) = E[(1 -
// e^(eps - L))_+] by definition of the privacy loss distribution.
double optimal_composition_delta(double eps0, int k, double eps) {
  const double log_p = eps0 - std::log1p(std::exp(eps0)), log_1mp = -std::log1p(std::exp(eps0));
  double d = 0.0;
  for (int l = 0; l <= k; ++l) {
    const double loss = (k - 2.0 * l) * eps0;
    if (loss <= eps) continue;
    const double log_pmf = std::lgamma(k + 1.0) - std::lgamma(l + 1.0) - std::lgamma(k - l + 1.0) +
                           (k - l) * log_p + l * log_1mp;
    d += std::exp(log_pmf) * -std::expm1(eps - loss);
  }
  return d;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("classical Gaussian: its value - its guarantee (exact delta) - only for epsilon < 1") {
    // 2 sqrt(2 ln(1.25 / 1e-5)) / 0.5 at sensitivity 2, by 30-digit mpmath: 19.379221050421558
    CHECK(classical_gaussian_sigma(0.5, 1e-5, 2.0) ==
          doctest::Approx(19.379221050421558).epsilon(1e-14));
    // Dwork and Roth Thm. A.1's guarantee, checked on the exact Gaussian curve (independent GDP
    // formula, mu = Delta / sigma): delta(epsilon) <= delta
    for (double eps : {0.05, 0.3, 0.9}) {
      for (double delta : {1e-3, 1e-6, 1e-10}) {
        const double s = classical_gaussian_sigma(eps, delta);
        CHECK(reference::gdp_delta(1.0 / s, eps) <= delta);
      }
    }
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(1.0, 1e-5),
                         doctest::Contains("epsilon = 1 must be < 1"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(0.5, 1.5), "delta = 1.5 must be in (0, 1)",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(NAN, 1e-5), doctest::Contains("epsilon = nan"),
                         dprl::ParamError);
  }

  TEST_CASE("analytic Gaussian: the smallest sigma on the exact curve - smaller than classical") {
    for (double eps : {0.1, 0.5, 0.9, 2.0, 8.0}) {
      const double s = analytic_gaussian_sigma(eps, 1e-5);
      // the exact curve, computed independently (reference.hpp)
      CHECK(reference::gdp_delta(1.0 / s, eps) <= 1e-5 * (1 + 1e-9));
      CHECK(reference::gdp_delta(1.0 / (s * (1 - 1e-8)), eps) > 1e-5);
      if (eps < 1) CHECK(s < classical_gaussian_sigma(eps, 1e-5));
    }
    // Balle and Wang's equation at epsilon = 1, delta = 1e-5 solved by 30-digit mpmath
    // (findroot): sigma = 3.7306316348159418
    CHECK(analytic_gaussian_sigma(1.0, 1e-5) == doctest::Approx(3.7306316348159418).epsilon(1e-11));
    // gaussian_epsilon inverts the curve: the independent GDP epsilon at mu = 1 / sigma
    for (double z : {0.5, 1.0, 3.7306316348159418, 20.0}) {
      CHECK(gaussian_epsilon(z, 1e-5) ==
            doctest::Approx(reference::gdp_epsilon(1.0 / z, 1e-5)).epsilon(1e-10));
    }
    // scale invariance
    CHECK(analytic_gaussian_sigma(1.0, 1e-5, 3.0) ==
          doctest::Approx(3.0 * analytic_gaussian_sigma(1.0, 1e-5)));
  }

  TEST_CASE("mechanisms validate parameters and report their events") {
    CHECK_THROWS_WITH_AS(LaplaceMechanism({1.0, 0.0}), doctest::Contains("laplace"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(GaussianMechanism({1.0, 2.0, 1e-5, false}),
                         doctest::Contains("must be < 1 when analytic = false"), dprl::ParamError);
    LaplaceMechanism lap({2.0, 0.5});
    CHECK(lap.scale() == 4.0);
    CHECK(lap.event() == DpEvent::laplace(2.0));
    GaussianMechanism g({1.0, 1.0, 1e-5, true});
    CHECK(g.event().noise_multiplier() == doctest::Approx(g.sigma()));
    auto zero = make_zero_noise();
    std::vector<double> v{1.0, 2.0};
    g.release(v, *zero);
    CHECK(v[0] == 1.0);
    v[1] = NAN;
    CHECK_THROWS_AS(g.release(v, *zero), dprl::ParamError);
  }

  TEST_CASE("basic and advanced composition: values - validity against the optimal composition") {
    const auto b = basic_composition(0.1, 1e-6, 100);
    CHECK(b.epsilon == doctest::Approx(10.0));
    CHECK(b.delta == doctest::Approx(1e-4));
    // Dwork and Roth Thm. 3.20 at eps0 = 0.1, k = 100, delta' = 1e-5, by 30-digit mpmath
    const auto a = advanced_composition(0.1, 1e-6, 100, 1e-5);
    CHECK(a.epsilon == doctest::Approx(5.8502350929445575).epsilon(1e-14));
    CHECK(a.delta == doctest::Approx(1e-4 + 1e-5));
    // a valid bound: the optimal composition (Kairouz et al., computed here from randomized
    // response's loss distribution) needs at most delta' at that epsilon, and not far less
    for (double eps0 : {0.01, 0.1, 0.5}) {
      for (int k : {10, 100, 400}) {
        CAPTURE(eps0);
        CAPTURE(k);
        const double eps = advanced_composition(eps0, 0.0, k, 1e-5).epsilon;
        CHECK(optimal_composition_delta(eps0, k, eps) <= 1e-5);
      }
    }
    CHECK(optimal_composition_delta(0.1, 100, a.epsilon) > 1e-9);
    const double e0 = advanced_composition_inverse(1.0, 100, 1e-5);
    CHECK(advanced_composition(e0, 0.0, 100, 1e-5).epsilon <= 1.0);
    CHECK(advanced_composition(e0 * (1 + 1e-12), 0.0, 100, 1e-5).epsilon > 1.0);
    CHECK(advanced_composition_inverse_dr(1.0, 100, 1e-5) <= e0);
    CHECK_THROWS_WITH_AS(advanced_composition(0.1, 0.0, 0, 1e-5), "count k = 0 must be >= 1",
                         dprl::ParamError);
  }

  TEST_CASE("zCDP conversions: valid on the exact Gaussian curve - CKS tighter than Bun-Steinke") {
    // Bun and Steinke Prop. 1.3 at rho = 0.5, delta = 1e-5, by 30-digit mpmath
    CHECK(zcdp_to_epsilon_bun_steinke(0.5, 1e-5) ==
          doctest::Approx(5.2985259121880812).epsilon(1e-14));
    // N(0, z^2) noise is 1 / (2 z^2)-zCDP; both conversions must bound its exact epsilon
    // (independent GDP formula), CKS within a few percent of it
    for (double z : {0.5, 2.0, 10.0}) {
      for (double delta : {1e-3, 1e-5, 1e-9}) {
        CAPTURE(z);
        CAPTURE(delta);
        const double rho = 1.0 / (2 * z * z);
        const double exact = reference::gdp_epsilon(1.0 / z, delta);
        const double bs = zcdp_to_epsilon_bun_steinke(rho, delta);
        const double cks = zcdp_to_epsilon_cks(rho, delta);
        CHECK(cks >= exact);
        CHECK(bs >= cks);
        CHECK(cks <= exact * 1.25);
        // the golden-section minimum is the minimum: no order on a fine grid does better
        double grid_min = 1e300;
        for (double la = -15; la < 16; la += 0.01) {
          const double al = 1 + std::exp(la);
          grid_min = std::min(grid_min, rho * al + std::log1p(-1 / al) +
                                            (std::log(1 / delta) - std::log(al)) / (al - 1));
        }
        CHECK(cks <= grid_min + 1e-9);
      }
    }
  }
}
