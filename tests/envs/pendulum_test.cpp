#include "envs/pendulum.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

using dprl::envs::make_env;
using dprl::envs::Pendulum;

namespace {
}

TEST_SUITE("unit") {
  TEST_CASE("pendulum: Gymnasium id and spaces") {
    auto env = make_env("Pendulum-v1");
    CHECK(env->spec().id == "pendulum");
    CHECK(env->spec().max_episode_steps == 200);
    CHECK_FALSE(env->spec().action.is_discrete());
    CHECK(env->spec().action.low == std::vector<double>{-2.0});
    CHECK(env->spec().action.high == std::vector<double>{2.0});
    CHECK(env->spec().observation.high == std::vector<double>{1.0, 1.0, 8.0});
  }

  TEST_CASE(
      "pendulum: angle_normalize is Python's floored modulo into -pi to pi with pi mapped to -pi") {
    CHECK(Pendulum::angle_normalize(std::numbers::pi) == -std::numbers::pi);
    CHECK(Pendulum::angle_normalize(-std::numbers::pi) == -std::numbers::pi);
    CHECK(Pendulum::angle_normalize(0.0) == 0.0);
    CHECK(Pendulum::angle_normalize(-3 * std::numbers::pi) == -std::numbers::pi);
    // C's fmod would keep the sign of the dividend here
    CHECK(Pendulum::angle_normalize(-4.0) == doctest::Approx(2 * std::numbers::pi - 4.0).epsilon(1e-15));
    dprl::Rng rng(1);
    for (int i = 0; i < 100000; ++i) {
      const double x = rng.uniform(-100, 100);
      const double y = Pendulum::angle_normalize(x);
      REQUIRE(y >= -std::numbers::pi);
      REQUIRE(y <= std::numbers::pi);  // == pi only when the modulo rounds up to 2 pi, as in NumPy
      REQUIRE(std::fabs(std::remainder(x - y, 2 * std::numbers::pi)) < 1e-12);
    }
  }

  TEST_CASE("pendulum: torques are clipped like the reference and NaN is rejected") {
    Pendulum a, b;
    std::vector<float> oa(3), ob(3);
    const double inf = std::numeric_limits<double>::infinity();
    for (auto [u, clipped] : {std::pair{5.0, 2.0}, {-7.0, -2.0}, {inf, 2.0}, {-inf, -2.0}}) {
      a.reset(3, oa);
      b.reset(3, ob);
      const auto ra = a.step(std::vector<double>{u}, oa);
      const auto rb = b.step(std::vector<double>{clipped}, ob);
      CHECK(oa == ob);
      CHECK(ra.reward == rb.reward);
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(a.step(std::vector<double>{nan}, oa), dprl::InvalidAction);
  }

  TEST_CASE("pendulum: cost on the state before the update and reward between -16.2736044 and 0") {
    Pendulum env;
    std::vector<float> obs(3);
    env.reset(0, obs);
    env.set_state(std::vector<double>{1.0, 2.0});
    const auto r = env.step(std::vector<double>{1.5}, obs);
    CHECK(r.reward == doctest::Approx(-(1.0 + 0.1 * 4.0 + 0.001 * 2.25)).epsilon(1e-15));
    // upright and still with no torque: zero cost, nothing moves
    env.set_state(std::vector<double>{0.0, 0.0});
    const auto r0 = env.step(std::vector<double>{0.0}, obs);
    CHECK(r0.reward == 0.0);
    CHECK(obs == std::vector<float>{1.0f, 0.0f, 0.0f});
    dprl::Rng rng(2);
    env.reset(1, obs);
    for (int i = 0; i < 5000; ++i) {
      const auto ri = env.step(std::vector<double>{rng.uniform(-2, 2)}, obs);
      REQUIRE(ri.reward <= 0.0);
      REQUIRE(ri.reward >= -16.2736044);
      if (ri.truncated) env.reset(i, obs);
    }
  }

  TEST_CASE(
      "pendulum: theta is never wrapped and reset draws theta in -pi to pi and theta_dot in -1 to "
      "1") {
    Pendulum env;
    std::vector<float> obs(3);
    env.reset(0, obs);
    env.set_state(std::vector<double>{0.0, 8.0});
    for (int i = 0; i < 100; ++i) env.step(std::vector<double>{2.0}, obs);
    CHECK(env.state()[0] > 10 * std::numbers::pi);
    for (std::uint64_t seed = 0; seed < 1000; ++seed) {
      env.reset(seed, obs);
      const auto s = env.state();
      REQUIRE(s[0] >= -std::numbers::pi);
      REQUIRE(s[0] < std::numbers::pi);
      REQUIRE(s[1] >= -1.0);
      REQUIRE(s[1] < 1.0);
    }
  }

}  // TEST_SUITE
