#include <doctest/doctest.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/sparse_vector.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("svt_params: the formulas of Algorithm 2 and the composed guarantee (Thm 5.5)") {
    const auto s = svt_params({3.0, 1e-5, 25, 500, 0.02});
    const double ep = 3.0 / std::sqrt(32.0 * 25 * std::log(2.0 / 1e-5));
    CHECK(s.eps_prime == doctest::Approx(ep).epsilon(1e-15));
    CHECK(s.delta_prime == doctest::Approx(1e-5 / (2.0 * 25 * 500)).epsilon(1e-15));
    CHECK(s.c_min == doctest::Approx(std::exp(ep) / (std::exp(ep) - 1)).epsilon(1e-12));
    CHECK(s.theta == doctest::Approx(s.c_min / 0.02).epsilon(1e-15));
    CHECK(s.threshold_shift ==
          doctest::Approx(4.0 / ep * std::log(1.0 / s.delta_prime)).epsilon(1e-15));
    CHECK(s.per_trajectory_epsilon == doctest::Approx(2 * ep));
    CHECK(s.composed_epsilon <= 3.0);
    CHECK(s.composed_delta == doctest::Approx(1e-5));
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

  TEST_CASE("Dirichlet epsilon (eq. 12) - exact m = 2 delta and the Lemma 1 radius") {
    DirichletParams p{10.0, 0.05, 0.01, 3, 2.0, 0.1};
    const double expect = std::sqrt(3.0) * 2.0 * 0.1 * 10.0 * std::log(100.0) +
                          2 * std::lgamma(0.5) + std::lgamma(10.0 * 0.9) -
                          3 * std::lgamma(10.0 / 3);
    CHECK(dirichlet_epsilon(p) == doctest::Approx(expect).epsilon(1e-14));
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
