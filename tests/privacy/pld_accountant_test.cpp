#include "privacy/pld_accountant.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/error.hpp"
#include "privacy/calibration.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/rdp_accountant.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE(
      "a single-step PLD is a probability distribution matching the exact delta on the grid") {
    for (bool remove : {true, false}) {
      const Pld p = pld_subsampled_gaussian(0.01, 1.0, remove, 1e-4);
      double sum = p.infinity_mass;
      for (double m : p.mass) sum += m;
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-9));
    }
    // remove direction at eps = 0.1: 7.290646618980e-05 by 30-digit mpmath quadrature
    const Pld p = pld_subsampled_gaussian(0.01, 1.0, true, 1e-4);
    CHECK(p.delta(0.1) == doctest::Approx(7.290646618980e-05).epsilon(1e-4));
  }

  TEST_CASE("q = 1 matches the exact Gaussian epsilon (Balle-Wang) - from above") {
    for (double z : {0.8, 2.0}) {
      PldAccountant acc;
      acc.compose(DpEvent::gaussian(z), 4);
      // 4 compositions of N(0, z^2) = one Gaussian with z / 2
      const double exact = gaussian_epsilon(z / 2.0, 1e-5);
      const double pld = acc.epsilon(1e-5);
      CHECK(pld >= exact * (1 - 1e-9));
      CHECK(pld == doctest::Approx(exact).epsilon(1e-3));
    }
  }

  TEST_CASE("Laplace PLD gives the pure epsilon 1/b at tiny delta") {
    PldAccountant acc;
    acc.compose(DpEvent::laplace(2.0));
    CHECK(acc.epsilon(1e-12) == doctest::Approx(0.5).epsilon(1e-3));
    CHECK(acc.epsilon(1e-12) <= 0.5 + 2e-4);
  }

  TEST_CASE("PLD is tighter than RDP - and both grow with T") {
    const double pld1 = dpsgd_epsilon(1.0, 0.01, 1, 1e-5, "pld");
    const double rdp1 = dpsgd_epsilon(1.0, 0.01, 1, 1e-5, "rdp");
    CHECK(pld1 < rdp1);
    CHECK(pld1 == doctest::Approx(0.199).epsilon(0.01));  // PRIVACY_FACTS: RDP 0.956, PLD 0.199
    CHECK(rdp1 == doctest::Approx(0.956).epsilon(0.001));
    CHECK(dpsgd_epsilon(1.0, 0.01, 100, 1e-5, "pld") > pld1);
    CHECK(dpsgd_epsilon(1.0, 0.01, 100, 1e-5, "best") ==
          dpsgd_epsilon(1.0, 0.01, 100, 1e-5, "pld"));
  }

  TEST_CASE("the PLD accountant refuses unsupported events") {
    PldAccountant acc;
    CHECK_THROWS_WITH_AS(acc.compose(DpEvent::poisson_sampled(0.5, DpEvent::laplace(1.0))),
                         doctest::Contains("pld accountant does not support"), dprl::ParamError);
    CHECK_THROWS_AS(PldAccountant(0.0), dprl::ParamError);
  }
}

TEST_SUITE("golden") {
  TEST_CASE("PLD at 1e-4 agrees with dp_accounting's PLDAccountant and never exceeds RDP") {
    std::ifstream f(DPRL_SOURCE_DIR "/tests/privacy/fixtures/dp_accounting.json");
    std::stringstream ss;
    ss << f.rdbuf();
    const auto j = nlohmann::json::parse(ss.str());
    for (const auto& c : j["cases"]) {
      const double z = c["noise_multiplier"], q = c["sampling_rate"], d = c["delta"];
      const std::int64_t t = c["steps"];
      const double ours = dpsgd_epsilon(z, q, t, d, "pld");
      const double dp = c["dp_accounting_pld_epsilon"];
      CAPTURE(z);
      CAPTURE(q);
      CAPTURE(t);
      // same discretization interval and truncation: agreement to well under the 2% target
      CHECK(ours == doctest::Approx(dp).epsilon(2e-3));
      CHECK(ours <= dpsgd_epsilon(z, q, t, d, "rdp") * (1 + 1e-9));
    }
  }
}
