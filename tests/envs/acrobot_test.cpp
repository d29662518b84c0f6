#include "envs/acrobot.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "envs/register_envs.hpp"

using dprl::envs::Acrobot;
using dprl::envs::make_env;

TEST_SUITE("unit") {
  TEST_CASE("acrobot: Gymnasium id spaces and limits") {
    auto env = make_env("Acrobot-v1");
    CHECK(env->spec().id == "acrobot");
    CHECK(env->spec().max_episode_steps == 500);
    CHECK(env->spec().reward_threshold == -100.0);
    CHECK(env->spec().action.n == 3);
    const auto& obs = env->spec().observation;
    REQUIRE(obs.dim() == 6);
    CHECK(obs.high[4] == static_cast<double>(static_cast<float>(4 * std::numbers::pi)));
    CHECK(obs.high[5] == static_cast<double>(static_cast<float>(9 * std::numbers::pi)));
  }

  TEST_CASE("acrobot: reset states are float32 values within 0.1 of zero") {
    Acrobot env;
    std::vector<float> obs(6);
    for (std::uint64_t seed = 0; seed < 1000; ++seed) {
      env.reset(seed, obs);
      for (double v : env.state()) {
        REQUIRE(v == static_cast<double>(static_cast<float>(v)));
        REQUIRE(std::fabs(v) <= 0.1);
      }
      const auto s = env.state();
      REQUIRE(obs[0] == static_cast<float>(std::cos(s[0])));
      REQUIRE(obs[5] == static_cast<float>(s[3]));
    }
  }

  TEST_CASE("acrobot: the tip above the line terminates with reward 0") {
    Acrobot env;
    std::vector<float> obs(6);
    env.reset(0, obs);
    env.set_state(std::vector<double>{std::numbers::pi, 0.0, 0.0, 0.0});
    auto r = env.step(1, obs);
    CHECK(r.terminated);
    CHECK(r.reward == 0.0);
    env.set_state(std::vector<double>{0.0, 0.0, 0.0, 0.0});
    r = env.step(1, obs);
    CHECK_FALSE(r.terminated);
    CHECK(r.reward == -1.0);
    // hanging still with no torque barely moves: cos(0 - pi/2) is 6e-17, not 0, in the reference
    for (double v : env.state()) CHECK(std::fabs(v) < 1e-14);
  }

  TEST_CASE("acrobot: velocities are clipped and angles wrapped after the step") {
    Acrobot env;
    std::vector<float> obs(6);
    env.reset(0, obs);
    env.set_state(std::vector<double>{0.0, 0.0, 100.0, -100.0});
    env.step(2, obs);
    auto s = env.state();
    CHECK(std::fabs(s[2]) == 4 * std::numbers::pi);
    CHECK(std::fabs(s[3]) == 9 * std::numbers::pi);
    for (int i = 0; i < 50; ++i) {
      env.step(2, obs);
      s = env.state();
      REQUIRE(std::fabs(s[0]) <= std::numbers::pi);
      REQUIRE(std::fabs(s[1]) <= std::numbers::pi);
    }
  }

  TEST_CASE("acrobot: book and nips dynamics differ only through the dtheta1^2 term") {
    Acrobot book;
    Acrobot nips({.book_or_nips = "nips"});
    std::vector<float> o1(6), o2(6);
    book.reset(0, o1);
    nips.reset(0, o2);
    // from rest the extra term vanishes in the first RK4 stage only, so a full step differs
    book.set_state(std::vector<double>{0.3, 0.0, 0.0, 0.0});
    nips.set_state(std::vector<double>{0.3, 0.0, 0.0, 0.0});
    book.step(0, o1);
    nips.step(0, o2);
    CHECK(book.state() != nips.state());
  }

  TEST_CASE("acrobot: torque noise comes from the episode seed") {
    Acrobot a({.torque_noise_max = 0.5});
    Acrobot b({.torque_noise_max = 0.5});
    Acrobot quiet;
    std::vector<float> oa(6), ob(6), oq(6);
    a.reset(5, oa);
    b.reset(5, ob);
    quiet.reset(5, oq);
    for (int i = 0; i < 20; ++i) {
      a.step(i % 3, oa);
      b.step(i % 3, ob);
      quiet.step(i % 3, oq);
    }
    CHECK(a.state() == b.state());
    CHECK(a.state() != quiet.state());
  }

}  // TEST_SUITE
