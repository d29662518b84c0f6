#include "envs/env_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "engine/rng.hpp"
#include "envs/pendulum.hpp"

TEST_SUITE("unit") {
  TEST_CASE("py_square equals glibc pow of x and 2 bit for bit") {
    // random signs, binades from 2^-60 to 2^60 and mantissas, plus the [-20, 20) range the envs
    // use; pow(x, 2) differs from x * x on ~0.08% of these, so the shortcut is exercised both ways
    dprl::Rng rng(5);
    long differs_from_product = 0;
    for (int i = 0; i < 2000000; ++i) {
      double x = std::ldexp(1.0 + rng.uniform(), static_cast<int>(rng.below(121)) - 60);
      if (rng.below(2)) x = -x;
      if (i % 3 == 0) x = rng.uniform(-20, 20);
      const double want = dprl::envs::opaque_pow(x, 2.0);
      REQUIRE(dprl::envs::py_square(x) == want);
      differs_from_product += want != x * x;
    }
    CHECK(differs_from_product > 100);
    const double inf = std::numeric_limits<double>::infinity();
    for (double x : {0.0, -0.0, 1.0, 2.0, 0.5, 1e-200, 1e200, inf, -inf, 1.4142135623730951})
      CHECK(dprl::envs::py_square(x) == dprl::envs::opaque_pow(x, 2.0));
    CHECK(std::isnan(dprl::envs::py_square(std::numeric_limits<double>::quiet_NaN())));
  }

  TEST_CASE("round_to_float rounds to the nearest float32") {
    dprl::Rng rng(6);
    for (int i = 0; i < 1000; ++i) {
      const double x = rng.uniform(-0.1, 0.1);
      const double y = dprl::envs::round_to_float(x);
      REQUIRE(y == static_cast<double>(static_cast<float>(x)));
      REQUIRE(static_cast<double>(static_cast<float>(y)) == y);
    }
  }

  TEST_CASE("angle_normalize's fast path agrees with the floored-modulo formula") {
    constexpr double kPi = std::numbers::pi;
    auto reference = [](double x) {
      const double a = x + kPi;
      double mod = std::fmod(a, 2 * kPi);
      if (mod != 0) {
        if (mod < 0) mod += 2 * kPi;
      } else {
        mod = 0.0;
      }
      return mod - kPi;
    };
    dprl::Rng rng(7);
    for (int i = 0; i < 1000000; ++i) {
      const double x = i % 2 ? rng.uniform(-4, 4) : rng.uniform(-1e3, 1e3);
      REQUIRE(dprl::envs::Pendulum::angle_normalize(x) == reference(x));
    }
    for (double x : {kPi, -kPi, 0.0, -0.0, 3 * kPi, -3 * kPi, std::nextafter(kPi, 0.0)})
      CHECK(dprl::envs::Pendulum::angle_normalize(x) == reference(x));
  }

}  // TEST_SUITE
