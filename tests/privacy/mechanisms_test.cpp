#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "privacy/calibration.hpp"
#include "privacy/composition.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/laplace_mechanism.hpp"
#include "privacy/noise_source.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("classical Gaussian: closed form - and only for epsilon < 1") {
    CHECK(classical_gaussian_sigma(0.5, 1e-5, 2.0) ==
          doctest::Approx(2.0 * std::sqrt(2.0 * std::log(1.25e5)) / 0.5).epsilon(1e-15));
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(1.0, 1e-5),
                         doctest::Contains("epsilon = 1 must be < 1"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(0.5, 1.5), "delta = 1.5 must be in (0, 1)",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(classical_gaussian_sigma(NAN, 1e-5), doctest::Contains("epsilon = nan"),
                         dprl::ParamError);
  }

  TEST_CASE("analytic Gaussian: exact delta at its sigma - smaller than classical - any epsilon") {
    for (double eps : {0.1, 0.5, 0.9, 2.0, 8.0}) {
      const double s = analytic_gaussian_sigma(eps, 1e-5);
      CHECK(gaussian_delta(s, eps) <= 1e-5);
      CHECK(gaussian_delta(s * (1 - 1e-9), eps) > 1e-5);
      if (eps < 1) CHECK(s < classical_gaussian_sigma(eps, 1e-5));
    }
    // Balle and Wang 2018 closed check: epsilon = 1, delta = 1e-5 gives sigma ~ 3.73
    CHECK(analytic_gaussian_sigma(1.0, 1e-5) == doctest::Approx(3.7305).epsilon(1e-3));
    // gaussian_epsilon inverts gaussian_delta
    CHECK(gaussian_epsilon(analytic_gaussian_sigma(1.0, 1e-5), 1e-5) ==
          doctest::Approx(1.0).epsilon(1e-9));
    // scale invariance
    CHECK(analytic_gaussian_sigma(1.0, 1e-5, 3.0) ==
          doctest::Approx(3.0 * analytic_gaussian_sigma(1.0, 1e-5)));
  }

  TEST_CASE("q = 1 - T = 1 calibration under PLD equals the analytic Gaussian sigma") {
    const double z = calibrate_noise_multiplier(1.0, 1.0, 1, 1e-5, "pld", 1e-8);
    CHECK(z == doctest::Approx(analytic_gaussian_sigma(1.0, 1e-5)).epsilon(2e-3));
  }

  TEST_CASE("calibration returns the smallest z meeting the target") {
    const double z = calibrate_noise_multiplier(2.0, 0.01, 1000, 1e-5, "rdp");
    CHECK(dpsgd_epsilon(z, 0.01, 1000, 1e-5, "rdp") <= 2.0);
    CHECK(dpsgd_epsilon(z * (1 - 1e-9), 0.01, 1000, 1e-5, "rdp") > 2.0);
    CHECK(calibrate_noise_multiplier(2.0, 0.01, 1000, 1e-5, "pld") < z);
    CHECK_THROWS_WITH_AS(calibrate_noise_multiplier(-1.0, 0.01, 10, 1e-5),
                         "target epsilon = -1 must be finite and > 0", dprl::ParamError);
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

  TEST_CASE("basic and advanced composition closed forms (Dwork and Roth Thm 3.16 - 3.20)") {
    const auto b = basic_composition(0.1, 1e-6, 100);
    CHECK(b.epsilon == doctest::Approx(10.0));
    CHECK(b.delta == doctest::Approx(1e-4));
    const auto a = advanced_composition(0.1, 1e-6, 100, 1e-5);
    CHECK(a.epsilon ==
          doctest::Approx(std::sqrt(200 * std::log(1e5)) * 0.1 + 100 * 0.1 * std::expm1(0.1)));
    CHECK(a.delta == doctest::Approx(1e-4 + 1e-5));
    const double e0 = advanced_composition_inverse(1.0, 100, 1e-5);
    CHECK(advanced_composition(e0, 0.0, 100, 1e-5).epsilon == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(advanced_composition_inverse_dr(1.0, 100, 1e-5) <= e0);
    CHECK_THROWS_WITH_AS(advanced_composition(0.1, 0.0, 0, 1e-5), "count k = 0 must be >= 1",
                         dprl::ParamError);
  }

  TEST_CASE("zCDP conversions: CKS is tighter than Bun-Steinke and matches the Gaussian's RDP") {
    for (double rho : {0.01, 0.5, 3.0}) {
      const double bs = zcdp_to_epsilon_bun_steinke(rho, 1e-5);
      const double cks = zcdp_to_epsilon_cks(rho, 1e-5);
      CHECK(bs == doctest::Approx(rho + 2 * std::sqrt(rho * std::log(1e5))));
      CHECK(cks < bs);
    }
    // gaussian(z) is 1/(2 z^2)-zCDP: the CKS conversion over a continuous order range is at most
    // the RDP accountant's (grid) value
    const double rdp = dpsgd_epsilon(2.0, 1.0, 1, 1e-5, "rdp");
    CHECK(zcdp_to_epsilon_cks(1.0 / 8.0, 1e-5) <= rdp + 1e-12);
    CHECK(zcdp_to_epsilon_cks(1.0 / 8.0, 1e-5) == doctest::Approx(rdp).epsilon(0.01));
  }
}
