// Dormand-Prince 5(4) (envs/ode.hpp) against closed-form solutions.
#include "envs/ode.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <numbers>

using dprl::envs::ode::dopri5;
using dprl::envs::ode::DopriOptions;

TEST_SUITE("unit") {
  TEST_CASE("ode: exponential decay y' = -k y matches exp(-k t)") {
    for (double k : {0.1, 1.0, 13.0}) {
      CAPTURE(k);
      std::array<double, 1> y{2.0};
      const auto f = [k](double, const std::array<double, 1>& s, std::array<double, 1>& d) {
        d[0] = -k * s[0];
      };
      DopriOptions o;
      o.rtol = 1e-10;
      o.atol = 1e-14;
      const auto r = dopri5(f, 0.0, 5.0, y, o);
      REQUIRE(r.ok);
      const double exact = 2.0 * std::exp(-k * 5.0);
      // global error: a few hundred times rtol relative, or atol-sized once y has decayed below it
      CHECK(std::fabs(y[0] - exact) <= 1e-7 * exact + 1e-13);
      CHECK(r.evaluations == 2 + 6 * (r.accepted + r.rejected));
    }
  }

  TEST_CASE("ode: harmonic oscillator keeps phase and amplitude over 10 periods") {
    const double w = 2.0;
    std::array<double, 2> y{1.0, 0.0};  // x, v
    const auto f = [w](double, const std::array<double, 2>& s, std::array<double, 2>& d) {
      d[0] = s[1];
      d[1] = -w * w * s[0];
    };
    DopriOptions o;
    o.rtol = 1e-11;
    o.atol = 1e-12;
    const double t1 = 10 * 2 * std::numbers::pi / w;
    const auto r = dopri5(f, 0.0, t1, y, o);
    REQUIRE(r.ok);
    CHECK(std::fabs(y[0] - std::cos(w * t1)) <= 1e-8);
    CHECK(std::fabs(y[1] + w * std::sin(w * t1)) <= 2e-8);
  }

  TEST_CASE("ode: tighter tolerances give smaller errors and more steps") {
    // y' = y cos t, y(0) = 1: y = exp(sin t)
    const auto f = [](double t, const std::array<double, 1>& s, std::array<double, 1>& d) {
      d[0] = s[0] * std::cos(t);
    };
    double prev_err = 1;
    int prev_steps = 0;
    for (double tol : {1e-4, 1e-7, 1e-10}) {
      CAPTURE(tol);
      std::array<double, 1> y{1.0};
      DopriOptions o;
      o.rtol = tol;
      o.atol = tol;
      const auto r = dopri5(f, 0.0, 20.0, y, o);
      REQUIRE(r.ok);
      const double err = std::fabs(y[0] - std::exp(std::sin(20.0)));
      CHECK(err < prev_err);
      CHECK(err <= 100 * tol);
      CHECK(r.accepted > prev_steps);
      prev_err = err;
      prev_steps = r.accepted;
    }
  }

  TEST_CASE("ode: a time-dependent right-hand side is integrated exactly at order 5") {
    // y' = t^4 has y = t^5 / 5: a 5th-order method is exact up to rounding
    std::array<double, 1> y{0.0};
    const auto f = [](double t, const std::array<double, 1>&, std::array<double, 1>& d) {
      d[0] = t * t * t * t;
    };
    const auto r = dopri5(f, 0.0, 2.0, y);
    REQUIRE(r.ok);
    CHECK(y[0] == doctest::Approx(32.0 / 5).epsilon(1e-13));
  }

  TEST_CASE("ode: the step-size factor power x^(-1/10) holds 2e-4 over the whole range") {
    using dprl::envs::ode::detail::pow_minus_tenth;
    for (double x = 1e-30; x < 1e300; x *= 3.7) {
      CAPTURE(x);
      REQUIRE(pow_minus_tenth(x) == doctest::Approx(std::pow(x, -0.1)).epsilon(2e-4));
    }
  }

  TEST_CASE("ode: blow-up and exhausted step budgets report failure") {
    // y' = y^2, y(0) = 1 blows up at t = 1
    std::array<double, 1> y{1.0};
    const auto f = [](double, const std::array<double, 1>& s, std::array<double, 1>& d) {
      d[0] = s[0] * s[0];
    };
    CHECK_FALSE(dopri5(f, 0.0, 2.0, y).ok);
    std::array<double, 1> z{1.0};
    DopriOptions o;
    o.max_steps = 3;
    const auto g = [](double t, const std::array<double, 1>&, std::array<double, 1>& d) {
      d[0] = std::cos(50 * t);
    };
    CHECK_FALSE(dopri5(g, 0.0, 100.0, z, o).ok);
    // an empty interval is a no-op
    std::array<double, 1> w{3.0};
    CHECK(dopri5(g, 1.0, 1.0, w).ok);
    CHECK(w[0] == 3.0);
  }

}  // TEST_SUITE
