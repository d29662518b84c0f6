// The largest DP-SGD step count within a budget: epsilon(N) <= budget < epsilon(N + 1).
#include "privacy/steps_within_budget.hpp"

#include <doctest/doctest.h>

#include "engine/error.hpp"
#include "privacy/calibration.hpp"

using dprl::privacy::dpsgd_epsilon;
using dprl::privacy::steps_within_budget;

TEST_SUITE("unit") {
  TEST_CASE("steps within budget is the largest affordable N (rdp and pld)") {
    struct Case {
      double z, q, eps, delta;
      const char* accountant;
    };
    for (const Case c : {Case{1.1, 0.01, 2.0, 1e-5, "rdp"}, Case{0.8, 0.05, 4.0, 1e-4, "rdp"},
                         Case{2.0, 0.1, 1.0, 1e-3, "pld"}}) {
      CAPTURE(c.accountant);
      CAPTURE(c.z);
      const auto r = steps_within_budget(c.z, c.q, c.eps, c.delta, c.accountant);
      REQUIRE(r.steps >= 1);
      CHECK_FALSE(r.capped);
      CHECK(r.epsilon == dpsgd_epsilon(c.z, c.q, r.steps, c.delta, c.accountant));
      CHECK(r.epsilon <= c.eps);
      CHECK(dpsgd_epsilon(c.z, c.q, r.steps + 1, c.delta, c.accountant) > c.eps);
      // about 2 log2 N evaluations
      CHECK(r.evaluations <=
            2 * (64 - __builtin_clzll(static_cast<unsigned long long>(r.steps))) + 2);
    }
  }

  TEST_CASE("a budget below one step affords none and max_steps caps") {
    const auto none = steps_within_budget(0.5, 1.0, 0.01, 1e-5, "rdp");
    CHECK(none.steps == 0);
    const auto capped = steps_within_budget(5.0, 0.001, 8.0, 1e-5, "rdp", 100);
    CHECK(capped.steps == 100);
    CHECK(capped.capped);
  }

  TEST_CASE("steps within budget validates its inputs") {
    CHECK_THROWS_WITH_AS(steps_within_budget(0.0, 0.1, 1.0, 1e-5), doctest::Contains("noise"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(steps_within_budget(1.0, 1.5, 1.0, 1e-5), doctest::Contains("q"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(steps_within_budget(1.0, 0.1, -1.0, 1e-5), doctest::Contains("epsilon"),
                         dprl::ParamError);
    CHECK_THROWS_AS(steps_within_budget(1.0, 0.1, 1.0, 1.0), dprl::ParamError);
    CHECK_THROWS_AS(steps_within_budget(1.0, 0.1, 1.0, 1e-5, "nope"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(steps_within_budget(1.0, 0.1, 1.0, 1e-5, "rdp", 0),
                         doctest::Contains("max_steps"), dprl::ParamError);
  }
}
