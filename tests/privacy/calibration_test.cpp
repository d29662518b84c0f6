#include "privacy/calibration.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "tests/privacy/reference.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("q = 1 - T = 1 calibration under PLD equals the analytic Gaussian sigma") {
    // PLD at q = 1 agrees with the exact curve to ~1e-9 (pld_accountant_test): the calibrated z
    // meets mpmath's 3.7306316348159418 to 1e-7, the bisection's 1e-8 plus that
    const double z = calibrate_noise_multiplier(
        {.target_epsilon = 1.0, .delta = 1e-5, .sampling_rate = 1.0, .steps = 1}, "pld", 1e-8);
    CHECK(z == doctest::Approx(3.7306316348159418).epsilon(1e-7));
    CHECK(z >= 3.7306316348159418 * (1 - 1e-9));  // never under-noised beyond the grid's rounding
  }

  TEST_CASE("calibration returns the smallest z meeting the target") {
    const double z = calibrate_noise_multiplier(
        {.target_epsilon = 2.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 1000}, "rdp");
    CHECK(dpsgd_epsilon({.noise_multiplier = z, .sampling_rate = 0.01, .steps = 1000}, 1e-5,
                        "rdp") <= 2.0);
    CHECK(dpsgd_epsilon({.noise_multiplier = z * (1 - 1e-9), .sampling_rate = 0.01, .steps = 1000},
                        1e-5, "rdp") > 2.0);
    CHECK(calibrate_noise_multiplier(
              {.target_epsilon = 2.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 1000}, "pld") <
          z);
    CHECK_THROWS_WITH_AS(
        calibrate_noise_multiplier(
            {.target_epsilon = -1.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 10}),
        "calibration: target_epsilon = -1 must be finite and > 0", dprl::ParamError);
  }

  TEST_CASE("calibration under best: at most both accountants' z - RDP where PLD cannot help") {
    // each returns the top of a bracket within rel_tol of its boundary, and best's boundary is
    // below both others (its epsilon is their minimum)
    const double tol = 1e-4;
    const double rdp = calibrate_noise_multiplier(
        {.target_epsilon = 1.0, .delta = 1e-5, .sampling_rate = 0.05, .steps = 10}, "rdp", tol);
    const double pld = calibrate_noise_multiplier(
        {.target_epsilon = 1.0, .delta = 1e-5, .sampling_rate = 0.05, .steps = 10}, "pld", tol);
    const double best = calibrate_noise_multiplier(
        {.target_epsilon = 1.0, .delta = 1e-5, .sampling_rate = 0.05, .steps = 10}, "best", tol);
    CHECK(dpsgd_epsilon({.noise_multiplier = best, .sampling_rate = 0.05, .steps = 10}, 1e-5,
                        "best") <= 1.0);
    CHECK(best <= std::min(rdp, pld) * (1 + tol));
    CHECK(pld < rdp);
    // epsilon 2000 in one step needs z ~ 0.012, where PLD's grid puts the loss in its +inf mass:
    // best is RDP's answer (this used to abort with std::length_error inside PLD)
    const double big = calibrate_noise_multiplier(
        {.target_epsilon = 2000.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 1}, "best");
    CHECK(big ==
          doctest::Approx(
              calibrate_noise_multiplier(
                  {.target_epsilon = 2000.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 1},
                  "rdp"))
              .epsilon(1e-9));
    CHECK(dpsgd_epsilon({.noise_multiplier = big, .sampling_rate = 0.01, .steps = 1}, 1e-5,
                        "best") <= 2000.0);
    // delta = 1e-300 is below PLD's truncated tail mass at every z: best is RDP's answer again
    CHECK(
        calibrate_noise_multiplier(
            {.target_epsilon = 5.0, .delta = 1e-300, .sampling_rate = 0.01, .steps = 10}, "best") ==
        doctest::Approx(
            calibrate_noise_multiplier(
                {.target_epsilon = 5.0, .delta = 1e-300, .sampling_rate = 0.01, .steps = 10},
                "rdp"))
            .epsilon(1e-9));
  }

  TEST_CASE("steps within budget: the largest N whose epsilon fits - matches the exact GDP count") {
    const DpEvent step = DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0));
    const std::int64_t n = steps_within_budget(step, 2.0, 1e-5, "rdp");
    auto eps = [&](std::int64_t k) {
      auto acc = make_accountant("rdp");
      acc->compose(step, k);
      return acc->epsilon(1e-5);
    };
    CHECK(n > 100);
    CHECK(eps(n) <= 2.0);
    CHECK(eps(n + 1) > 2.0);
    // q = 1 under PLD: N Gaussians of noise z are sqrt(N) / z - GDP; the largest N within the
    // budget by the independent closed form (PLD agrees with it to ~1e-9 relative)
    const double z = 10.0, budget = 2.0;
    std::int64_t exact = 0;
    while (reference::gdp_epsilon(std::sqrt(double(exact + 1)) / z, 1e-5) <= budget) ++exact;
    const std::int64_t got = steps_within_budget(DpEvent::gaussian(z), budget, 1e-5, "pld");
    CHECK(got == exact);
  }

  TEST_CASE("steps within budget: what is spent counts - edges - validation") {
    const DpEvent step = DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0));
    auto spent = make_accountant("rdp");
    spent->compose(step, 500);
    const std::int64_t fresh = steps_within_budget(step, 2.0, 1e-5, "rdp");
    const std::int64_t rest = steps_within_budget(step, 2.0, 1e-5, *spent);
    CHECK(rest < fresh - 400);
    CHECK(rest > 0);
    // already over budget: no step fits; nearly free steps: the cap
    spent->compose(DpEvent::gaussian(0.1));
    CHECK(steps_within_budget(step, 2.0, 1e-5, *spent) == 0);
    CHECK(steps_within_budget(DpEvent::gaussian(1e6), 1.0, 1e-5, "rdp", 1000) == 1000);
    CHECK(steps_within_budget(DpEvent::gaussian(0.1), 1.0, 1e-5, "rdp") == 0);
    CHECK(steps_within_budget(step, 2.0, 1e-5, "rdp", 0) == 0);
    CHECK_THROWS_WITH_AS(steps_within_budget(step, 0.0, 1e-5), doctest::Contains("budget"),
                         dprl::ParamError);
    CHECK_THROWS_AS(steps_within_budget(step, 1.0, 1.0), dprl::ParamError);
    CHECK_THROWS_AS(steps_within_budget(step, 1.0, 1e-5, "rdp", -1), dprl::ParamError);
    CHECK_THROWS_AS(
        steps_within_budget(DpEvent::poisson_sampled(0.1, DpEvent::laplace(1.0)), 1.0, 1e-5),
        dprl::ParamError);
  }
}
