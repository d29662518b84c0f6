#include "privacy/root_finding.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/error.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("bisection finds a monotone test's boundary - the bracket keeps its sides") {
    // x^2 >= 2 switches at sqrt(2)
    int calls = 0;
    auto f = [&](double x) {
      ++calls;
      return x * x >= 2.0 ? -1.0 : 1.0;
    };
    const Bracket b = find_boundary(f, 1.0, 2.0, {1e-14});
    CHECK(b.lo < std::sqrt(2.0));
    CHECK(b.hi >= std::sqrt(2.0));
    CHECK(b.hi - b.lo <= 1e-14 * b.hi);
    CHECK(calls <= 2 + 50);  // the two ends, then one halving per step
    // absolute tolerance
    const Bracket a = find_boundary(f, 0.0, 8.0, {0.0, 1e-3});
    CHECK(a.hi - a.lo <= 1e-3);
    CHECK(a.hi == doctest::Approx(std::sqrt(2.0)).epsilon(1e-3));
  }

  TEST_CASE("Illinois steps reach the tolerance in fewer evaluations than bisection") {
    // a smooth residual: log(x) - 1 switches at e
    int calls = 0;
    auto f = [&](double x) {
      ++calls;
      return 1.0 - std::log(x);
    };
    RootOptions o;
    o.rel_tol = 1e-12;
    o.illinois = true;
    const Bracket b = find_boundary(f, 1.0, 10.0, o);
    CHECK(b.hi >= std::exp(1.0));
    CHECK(b.lo < std::exp(1.0));
    CHECK(b.hi == doctest::Approx(std::exp(1.0)).epsilon(1e-12));
    CHECK(calls < 25);  // bisection needs ~43
  }

  TEST_CASE("NaN counts as not there yet - integers - bad brackets refused") {
    // NaN below 3, switch at 5: the search never stops on the NaN side
    auto f = [](double x) { return x < 3.0 ? NAN : (x >= 5.0 ? -1.0 : 1.0); };
    const Bracket b = find_boundary(f, 0.0, 10.0, {1e-12});
    CHECK(b.hi == doctest::Approx(5.0));
    CHECK(b.hi >= 5.0);
    RootOptions ints;
    ints.integers = true;
    const Bracket n =
        find_boundary([](double x) { return x >= 37.0 ? -1.0 : 1.0; }, 0.0, 1000.0, ints);
    CHECK(n.lo == 36.0);
    CHECK(n.hi == 37.0);
    CHECK_THROWS_WITH_AS(find_boundary([](double) { return 1.0; }, 0.0, 1.0),
                         doctest::Contains("no sign change"), dprl::ParamError);
    CHECK_THROWS_AS(find_boundary([](double x) { return -x; }, 1.0, 0.0), dprl::ParamError);
    CHECK_THROWS_AS(find_boundary([](double x) { return -x; }, 0.5, 3.0, ints), dprl::ParamError);
  }

  TEST_CASE("geometric bracketing up and down - and its two ways to fail") {
    auto test = [](double x) { return x >= 37.0; };
    const auto up = bracket_geometric(test, 1.0, 1e-6, 1e6);
    REQUIRE(up);
    CHECK(up->lo == 32.0);
    CHECK(up->hi == 64.0);
    const auto down = bracket_geometric([](double x) { return x >= 0.01; }, 1.0, 1e-6, 1e6);
    REQUIRE(down);
    CHECK(down->lo == 0.0078125);
    CHECK(down->hi == 0.015625);
    CHECK_FALSE(bracket_geometric(test, 1.0, 1e-6, 10.0));
    const auto all = bracket_geometric([](double) { return true; }, 1.0, 0.2, 10.0);
    REQUIRE(all);
    CHECK(all->lo == 0.0);
    CHECK(all->hi == 0.25);
    CHECK_THROWS_AS(bracket_geometric(test, 0.0, 1e-6, 1.0), dprl::ParamError);
  }
}
