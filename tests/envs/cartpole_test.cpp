#include "envs/cartpole.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/error.hpp"
#include "envs/register_envs.hpp"

using dprl::envs::CartPole;
using dprl::envs::make_env;

TEST_SUITE("unit") {
  TEST_CASE("cartpole: Gymnasium ids limits and thresholds") {
    auto v1 = make_env("CartPole-v1");
    CHECK(v1->spec().id == "cartpole");
    CHECK(v1->spec().max_episode_steps == 500);
    CHECK(v1->spec().reward_threshold == 475.0);
    auto v0 = make_env("CartPole-v0");
    CHECK(v0->spec().max_episode_steps == 200);
    CHECK(v0->spec().reward_threshold == 195.0);
    // user parameters override the alias preset
    auto v0_long = make_env("CartPole-v0", {{"max_episode_steps", {"300", "test"}}});
    CHECK(v0_long->spec().max_episode_steps == 300);
    // observation bounds: float32 of [4.8, inf, 2 * 12 * 2 pi / 360, inf]
    const auto& obs = v1->spec().observation;
    CHECK(obs.high[0] == static_cast<double>(4.8f));
    CHECK(std::isinf(obs.high[1]));
    CHECK(obs.high[2] == static_cast<double>(static_cast<float>(0.41887902047863906)));
    CHECK(obs.low[2] == -obs.high[2]);
    CHECK(v1->spec().action.n == 2);
  }

  TEST_CASE("cartpole: reset draws each component uniformly from -0.05 to 0.05") {
    CartPole env;
    std::vector<float> obs(4);
    for (std::uint64_t seed = 0; seed < 2000; ++seed) {
      env.reset(seed, obs);
      const auto s = env.state();
      for (int i = 0; i < 4; ++i) {
        REQUIRE(s[i] >= -0.05);
        REQUIRE(s[i] < 0.05);
        REQUIRE(obs[i] == static_cast<float>(s[i]));
      }
    }
  }

  TEST_CASE("cartpole: one Euler step by the equations") {
    CartPole env;
    std::vector<float> obs(4);
    env.reset(0, obs);
    const std::vector<double> s0{0.01, -0.02, 0.03, 0.04};
    env.set_state(s0);
    env.step(1, obs);
    // positions advance with the old velocities (explicit Euler)
    const auto s1 = env.state();
    CHECK(s1[0] == s0[0] + 0.02 * s0[1]);
    CHECK(s1[2] == s0[2] + 0.02 * s0[3]);
    const double temp = (10.0 + 0.05 * (0.04 * 0.04) * std::sin(0.03)) / 1.1;
    const double thetaacc = (9.8 * std::sin(0.03) - std::cos(0.03) * temp) /
                            (0.5 * (4.0 / 3.0 - 0.1 * (std::cos(0.03) * std::cos(0.03)) / 1.1));
    CHECK(s1[3] == s0[3] + 0.02 * thetaacc);

    // semi-implicit: positions advance with the new velocities
    CartPole semi({.kinematics_integrator = "semi-implicit"});
    semi.reset(0, obs);
    semi.set_state(s0);
    semi.step(1, obs);
    const auto s2 = semi.state();
    CHECK(s2[1] == s1[1]);
    CHECK(s2[0] == s0[0] + 0.02 * s2[1]);
    CHECK(s2[2] == s0[2] + 0.02 * s2[3]);
  }

  TEST_CASE(
      "cartpole: reward 1 on the terminating step and 0 after it as in steps_beyond_terminated") {
    CartPole env;
    std::vector<float> obs(4);
    env.reset(0, obs);
    env.set_state(std::vector<double>{2.39, 2.0, 0.0, 0.0});
    auto r = env.step(1, obs);
    CHECK(r.terminated);
    CHECK(r.reward == 1.0);
    for (int i = 0; i < 3; ++i) {
      r = env.step(1, obs);
      CHECK(r.terminated);
      CHECK(r.reward == 0.0);
    }
    // set_state forgets the earlier termination, like a fresh Gymnasium state
    env.set_state(std::vector<double>{2.39, 2.0, 0.0, 0.0});
    CHECK(env.step(1, obs).reward == 1.0);
    // a reset too
    env.reset(3, obs);
    CHECK(env.step(1, obs).reward == 1.0);
  }

  TEST_CASE("cartpole: Sutton-Barto rewards") {
    CartPole env({.sutton_barto_reward = true});
    CHECK(env.spec().reward_threshold == 0.0);
    std::vector<float> obs(4);
    env.reset(0, obs);
    auto r = env.step(0, obs);
    CHECK_FALSE(r.terminated);
    CHECK(r.reward == 0.0);
    env.set_state(std::vector<double>{0.0, 0.0, 0.2, 3.0});
    r = env.step(1, obs);
    CHECK(r.terminated);
    CHECK(r.reward == -1.0);
    r = env.step(1, obs);
    CHECK(r.reward == -1.0);
  }

  TEST_CASE("cartpole: the angle threshold terminates in both directions") {
    CartPole env;
    std::vector<float> obs(4);
    env.reset(0, obs);
    env.set_state(std::vector<double>{0.0, 0.0, -0.2094, -1.0});
    CHECK(env.step(0, obs).terminated);
    env.set_state(std::vector<double>{0.0, 0.0, 0.0, 0.0});
    CHECK_FALSE(env.step(0, obs).terminated);
  }

  TEST_CASE("cartpole: cross-field parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(make_env("cartpole", {{"masspole", {"-1", "test"}}}),
                         doctest::Contains("cartpole.masspole"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(make_env("cartpole", {{"kinematics_integrator", {"rk4", "test"}}}),
                         doctest::Contains("euler, semi-implicit"), dprl::ParamError);
  }

}  // TEST_SUITE
