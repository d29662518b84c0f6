// The Poisson-subsampled discrete Gaussian (the secure noise of the private learners): accounted
// with Zhu and Wang's general Poisson-subsampling RDP bound (ICML 2019, Thm. 6) on the discrete
// Gaussian's proven RDP a / (2 z^2), never with the continuous Gaussian's curve; the PLD
// accountant reports that bound for it, and "best" too.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/accountant.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("subsampled discrete Gaussian: q = 1 is the discrete Gaussian's a / (2 z^2)") {
    for (double z : {0.5, 1.0, 3.0})
      for (double a : {1.5, 2.0, 10.0, 63.0, 1024.0}) {
        CAPTURE(z);
        CAPTURE(a);
        CHECK(rdp_subsampled_discrete_gaussian(1.0, z, a) == doctest::Approx(a / (2 * z * z)));
      }
    // the unsampled event composes the same curve as the continuous Gaussian (CKS 2020, Thm. 14)
    RdpAccountant d, c;
    d.compose(DpEvent::discrete_gaussian(1.3), 7);
    c.compose(DpEvent::gaussian(1.3), 7);
    CHECK(d.epsilon(1e-6) == doctest::Approx(c.epsilon(1e-6)).epsilon(1e-12));
  }

  TEST_CASE("subsampled discrete Gaussian: closed forms at orders 2 and 3") {
    // Order 2: the l = 2 term is the only one, A_2 = 1 + q^2 (e^(1/z^2) - 1), the continuous
    // Gaussian's exact value. q = 1/8, z = 1: log(1 + (e - 1) / 64) = 0.02649406565234851863
    // (40-digit mpmath).
    CHECK(rdp_subsampled_discrete_gaussian(0.125, 1.0, 2.0) ==
          doctest::Approx(0.02649406565234851863).epsilon(1e-13));
    CHECK(rdp_subsampled_discrete_gaussian(0.125, 1.0, 2.0) ==
          doctest::Approx(rdp_subsampled_gaussian(0.125, 1.0, 2.0)).epsilon(1e-13));
    // Order 3, q = 1/8, z = 1 (eps(l) = l / 2), by hand with exact fractions:
    //   (1-q)^2 (1 + 2q)          = (49/64)(5/4)         = 245/256
    //   C(3,2) q^2 (1-q) e^(eps(2)) = 3 (1/64)(7/8) e    = 21 e / 512
    //   3 C(3,3) q^3 e^(2 eps(3))   = 3 (1/512) e^3      = 3 e^3 / 512
    //   RDP(3) = log(245/256 + 21 e/512 + 3 e^3/512) / 2 = 0.08538250614333376598 (mpmath, 40
    //   digits), against the continuous Gaussian's exact 0.05116674851864501518.
    CHECK(rdp_subsampled_discrete_gaussian(0.125, 1.0, 3.0) ==
          doctest::Approx(0.08538250614333376598).epsilon(1e-13));
    CHECK(rdp_subsampled_gaussian(0.125, 1.0, 3.0) ==
          doctest::Approx(0.05116674851864501518).epsilon(1e-12));
    // a fractional order takes the next integer (Renyi divergence is non-decreasing in a)
    CHECK(rdp_subsampled_discrete_gaussian(0.125, 1.0, 2.5) ==
          rdp_subsampled_discrete_gaussian(0.125, 1.0, 3.0));
  }

  TEST_CASE("subsampled discrete Gaussian: small-q expansion a q^2 (e^(1/z^2) - 1) / 2") {
    // A_a - 1 = C(a,2) q^2 (1-q)^(a-2) (e^(1/z^2) - 1) + O(q^3), so RDP(a) = a q^2 (e^(1/z^2) - 1)
    // / 2 (1 + O(a q)) while q^(l-2) e^((l^2 - l) / (2 z^2)) stays small for l <= a; at q = 1e-6
    // the relative remainder is below 1e-4 (not at z = 0.8, a = 32, where e^(775) q^30 is not)
    for (double z : {0.8, 2.0, 5.0})
      for (double a : {2.0, 8.0, 32.0}) {
        if (z < 1.0 && a > 8.0) continue;
        CAPTURE(z);
        CAPTURE(a);
        const double q = 1e-6;
        CHECK(rdp_subsampled_discrete_gaussian(q, z, a) ==
              doctest::Approx(a * q * q * std::expm1(1.0 / (z * z)) / 2).epsilon(1e-4));
      }
  }

  TEST_CASE("subsampled discrete Gaussian: never below the continuous curve, never above q = 1") {
    // The bound holds for every mechanism with the RDP curve a / (2 z^2), the continuous Gaussian
    // among them, so it is at least the continuous subsampled Gaussian's exact RDP.
    for (double q : {1e-3, 0.01, 0.125, 0.5, 0.9})
      for (double z : {0.5, 1.0, 4.0})
        for (double a : {2.0, 3.0, 5.0, 12.0, 40.0}) {
          CAPTURE(q);
          CAPTURE(z);
          CAPTURE(a);
          const double d = rdp_subsampled_discrete_gaussian(q, z, a);
          CHECK(d >= rdp_subsampled_gaussian(q, z, a) * (1 - 1e-12));
          CHECK(d <= a / (2 * z * z));
        }
    CHECK(std::isinf(rdp_subsampled_discrete_gaussian(0.1, 0.0, 2.0)));
    CHECK_THROWS_AS(rdp_subsampled_discrete_gaussian(0.0, 1.0, 2.0), dprl::ParamError);
    CHECK_THROWS_AS(rdp_subsampled_discrete_gaussian(0.1, 1.0, 1.0), dprl::ParamError);
  }

  TEST_CASE("discrete_gaussian events: JSON, description, validation") {
    const DpEvent e = dpsgd_event(
        {.noise_multiplier = 1.0, .sampling_rate = 0.125, .steps = 1000, .discrete = true});
    CHECK(e.describe() == "poisson(q=0.125, discrete_gaussian(z=1)) x 1000");
    CHECK(DpEvent::from_json(e.to_json()) == e);
    CHECK_FALSE(DpEvent::from_json(
                    dpsgd_event({.noise_multiplier = 1.0, .sampling_rate = 0.125, .steps = 1000})
                        .to_json()) == e);
    CHECK(contains_discrete_gaussian(e));
    CHECK_FALSE(contains_discrete_gaussian(
        dpsgd_event({.noise_multiplier = 1.0, .sampling_rate = 0.125, .steps = 1000})));
    CHECK_THROWS_AS(DpEvent::discrete_gaussian(-1.0), dprl::ParamError);
  }
}

TEST_SUITE("golden") {
  TEST_CASE("z 1, q 0.125, T 1000, delta 1e-5: the proven bound against the continuous curve") {
    // Independent value (mpmath, 50 digits): the Zhu-Wang sum above at every integer order, each
    // of dp_accounting's 156 orders taking ceil(order), and the CKS conversion rdp + log(1 - 1/a)
    // - (log delta + log a) / (a - 1) minimised over them: 36.62069675619886, at order 2 (where
    // the bound is exact for the continuous Gaussian too); T = 900 gives 33.97129019096400.
    const DpEvent step = DpEvent::poisson_sampled(0.125, DpEvent::discrete_gaussian(1.0));
    RdpAccountant rdp;
    rdp.compose(step, 1000);
    const auto r = rdp.epsilon_and_order(1e-5);
    CHECK(r.epsilon == doctest::Approx(36.62069675619886).epsilon(1e-11));
    CHECK(r.order == 2.0);
    RdpAccountant rdp900;
    rdp900.compose(step, 900);
    CHECK(rdp900.epsilon(1e-5) == doctest::Approx(33.97129019096400).epsilon(1e-11));

    // PLD has no proven curve for it: it reports the RDP bound of the whole composition
    PldAccountant pld;
    pld.compose(step, 300);
    pld.compose(step, 700);
    CHECK(pld.uses_rdp_bound());
    CHECK(pld.epsilon(1e-5) == doctest::Approx(r.epsilon).epsilon(1e-12));
    // ... including the continuous events composed before it
    PldAccountant mixed;
    mixed.compose(DpEvent::gaussian(3.0), 2);
    CHECK_FALSE(mixed.uses_rdp_bound());
    mixed.compose(step, 1000);
    RdpAccountant mixed_rdp;
    mixed_rdp.compose(DpEvent::gaussian(3.0), 2);
    mixed_rdp.compose(step, 1000);
    CHECK(mixed.epsilon(1e-5) == doctest::Approx(mixed_rdp.epsilon(1e-5)).epsilon(1e-12));

    BestAccountant best;
    best.compose(step, 1000);
    const auto parts = best.epsilon_parts(1e-5);
    CHECK(std::isinf(parts.pld));
    CHECK(parts.pld_error.find("discrete Gaussian") != std::string::npos);
    CHECK(best.epsilon(1e-5) == doctest::Approx(r.epsilon).epsilon(1e-12));

    // the continuous curve the formal runs used at 70c808d: PLD 33.31 (ratio 1.099)
    PldAccountant continuous;
    continuous.compose(DpEvent::poisson_sampled(0.125, DpEvent::gaussian(1.0)), 1000);
    const double c = continuous.epsilon(1e-5);
    CHECK(c == doctest::Approx(33.31).epsilon(5e-4));
    CHECK(r.epsilon / c == doctest::Approx(1.0994).epsilon(5e-4));
  }
}
