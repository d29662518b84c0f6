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
#include "tests/privacy/reference.hpp"

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

  TEST_CASE("the Laplace PLD: a distribution with the exact delta at 0 and none beyond 1 / b") {
    // Laplace noise of scale b = 1 on sensitivity 1: the privacy loss lies in [-1, 1]; at
    // epsilon = 0 delta is the total variation distance 1 - e^(-1/2) = 0.3934693402873666, which
    // connect-the-dots over-states by at most the grid's first-order error (h = 1e-4)
    const Pld p = pld_laplace(1.0, 1e-4);
    double sum = p.infinity_mass;
    for (double m : p.mass) sum += m;
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(p.delta(0.0) >= 0.3934693402873666);
    CHECK(p.delta(0.0) == doctest::Approx(0.3934693402873666).epsilon(1e-3));
    CHECK(p.delta(1.0 + 2e-4) <= 1e-12);
  }

  TEST_CASE("q = 1 matches the exact Gaussian epsilon (GDP, computed independently) - from above") {
    // T compositions of N(0, z^2) are sqrt(T) / z - GDP; PLD agrees to <= 4e-9 relative
    // (measured) and is never below it. z = 0.2 has a loss range of 96 nats and used to start
    // at log1p(expm1(-60.5)) = -inf (an undefined float-to-int conversion).
    struct Case {
      double z;
      std::int64_t t;
    };
    for (Case c : {Case{0.2, 1}, Case{0.8, 1}, Case{0.8, 4}, Case{2.0, 1}, Case{2.0, 4}}) {
      {
        const double z = c.z;
        const std::int64_t t = c.t;
        CAPTURE(z);
        CAPTURE(t);
        PldAccountant acc;
        acc.compose(DpEvent::gaussian(z), t);
        const double exact = reference::gdp_epsilon(std::sqrt(double(t)) / z, 1e-5);
        const double pld = acc.epsilon(1e-5);
        CHECK(pld >= exact * (1 - 1e-12));
        CHECK(pld == doctest::Approx(exact).epsilon(1e-8));
      }
    }
  }

  TEST_CASE("tiny noise: PLD is +inf where its grid cannot hold the loss - no overflow, no throw") {
    // z <= ~0.03 at q = 0.01 used to overflow the grid size (std::length_error). The loss beyond
    // the 2^22-point window (419 nats) goes to the +inf mass, which here is about q > delta.
    for (double z : {0.03, 0.02, 0.01, 1e-3, 1e-160}) {
      CAPTURE(z);
      CHECK(std::isinf(
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 1}, 1e-5, "pld")));
      CHECK(std::isinf(
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 1.0, .steps = 1}, 1e-5, "pld")));
      // best reports RDP's finite bound there (+inf only where RDP is +inf too)
      CHECK(
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 3}, 1e-5, "best") ==
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 3}, 1e-5, "rdp"));
    }
    // where the +inf mass is below delta the answer is finite and above the exact lower bound of
    // one test set, S = {x > 1/2}: log((P(S) - delta) / Q(S)) ~ 1 / (8 z^2) + log q
    const double z = 0.1, ls = reference::log_normal_sf(0.5 / z);
    const double bound = std::log(0.01 * (1 - std::exp(ls)) + 0.99 * std::exp(ls) - 1e-5) - ls;
    const double e =
        dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 1}, 1e-5, "pld");
    CHECK(std::isfinite(e));
    CHECK(e >= bound);
  }

  TEST_CASE("huge noise and counts: PLD stays finite and tiny - or refuses beyond its limits") {
    for (double z : {1e3, 1e6, 1e200}) {
      const double e =
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 10}, 1e-5, "pld");
      CHECK(e >= 0.0);
      CHECK(e <= 1e-3);  // the grid's pessimism: at most h = 1e-4 per composed step
    }
    PldAccountant acc;
    acc.compose(dpsgd_event(
        {.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = std::int64_t{1} << 60}));
    CHECK_THROWS_WITH_AS(acc.epsilon(1e-5), doctest::Contains("pld:"), dprl::ParamError);
  }

  TEST_CASE("Laplace PLD gives the pure epsilon 1/b at tiny delta") {
    PldAccountant acc;
    acc.compose(DpEvent::laplace(2.0));
    CHECK(acc.epsilon(1e-12) == doctest::Approx(0.5).epsilon(1e-3));
    CHECK(acc.epsilon(1e-12) <= 0.5 + 2e-4);
  }

  TEST_CASE("PLD is tighter than RDP - and both grow with T") {
    const double pld1 =
        dpsgd_epsilon({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 1}, 1e-5, "pld");
    const double rdp1 =
        dpsgd_epsilon({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 1}, 1e-5, "rdp");
    CHECK(pld1 < rdp1);
    // dp_accounting 0.6.0 (tests/privacy/fixtures/dp_accounting.json): PLD 0.19945, RDP 0.95555
    CHECK(pld1 == doctest::Approx(0.199450473472).epsilon(1e-7));
    CHECK(rdp1 == doctest::Approx(0.955549148).epsilon(1e-8));
    CHECK(dpsgd_epsilon({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 100}, 1e-5,
                        "pld") > pld1);
    CHECK(
        dpsgd_epsilon({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 100}, 1e-5,
                      "best") ==
        dpsgd_epsilon({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 100}, 1e-5, "pld"));
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
      const double ours =
          dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = q, .steps = t}, d, "pld");
      const double dp = c["dp_accounting_pld_epsilon"];
      CAPTURE(z);
      CAPTURE(q);
      CAPTURE(t);
      // same discretization (connect the dots, h = 1e-4, pessimistic) and truncation: the
      // measured agreement is 4e-8 relative or better (FFT rounding); 1e-7 allows for platforms
      CHECK(ours == doctest::Approx(dp).epsilon(1e-7));
      CHECK(ours <=
            dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = q, .steps = t}, d, "rdp") *
                (1 + 1e-9));
    }
  }
}
