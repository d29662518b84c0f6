#include "envs/taxi.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "envs/register_envs.hpp"

using dprl::envs::make_env;
using dprl::envs::Taxi;

TEST_SUITE("unit") {
  TEST_CASE("taxi: Gymnasium id spaces and masks") {
    auto env = make_env("Taxi-v3");
    CHECK(env->spec().id == "taxi");
    CHECK(env->spec().max_episode_steps == 200);
    CHECK(env->spec().observation.n == 500);
    CHECK(env->spec().action.n == 6);
    CHECK(env->spec().has_action_mask);
    CHECK(env->spec().reward_threshold == 8.0);
  }

  TEST_CASE("taxi: encode and decode are inverse") {
    for (int s = 0; s < 500; ++s) {
      const auto [row, col, pass, dest] = Taxi::decode(s);
      REQUIRE(Taxi::encode(row, col, pass, dest) == s);
      REQUIRE(row < 5);
    }
    CHECK(Taxi::encode(4, 3, 4, 2) == ((4 * 5 + 3) * 5 + 4) * 4 + 2);
  }

  TEST_CASE("taxi: a mask bit is set exactly when the action changes the state") {
    Taxi env;
    std::vector<float> obs(1);
    std::vector<std::uint8_t> mask(6);
    const auto* m = env.tabular_model();
    for (int s = 0; s < 500; ++s) {
      env.reset(0, obs);
      env.set_state(std::vector<double>{double(s)});
      env.action_mask(mask);
      for (int a = 0; a < 6; ++a) REQUIRE(mask[a] == (m->at(s, a)[0].next_state != s));
    }
  }

  TEST_CASE("taxi: undiscounted optimal return from the reset distribution is 7.93") {
    // value iteration on the model; the 100 states with the passenger at the destination are the
    // ends of episodes (absorbing, value 0)
    Taxi env;
    const auto* m = env.tabular_model();
    std::vector<double> v(500, 0.0), next(500, 0.0);
    for (int it = 0; it < 100; ++it) {
      for (int s = 0; s < 500; ++s) {
        if (m->absorbing[s]) continue;
        double best = -1e9;
        for (int a = 0; a < 6; ++a) {
          const auto& o = m->at(s, a)[0];
          best = std::max(best, o.reward + (o.terminal ? 0.0 : v[o.next_state]));
        }
        next[s] = best;
      }
      v = next;
    }
    double mean = 0;
    for (int s = 0; s < 500; ++s) mean += m->initial[s] * v[s];
    CHECK(mean == doctest::Approx(7.93).epsilon(1e-12));
  }

  TEST_CASE("taxi: reward parameters reach the step and the model") {
    Taxi env({.step_reward = -2, .illegal_reward = -5, .dropoff_reward = 30});
    std::vector<float> obs(1);
    env.reset(0, obs);
    // passenger aboard at G (landmark 1) with destination G: delivery
    env.set_state(std::vector<double>{double(Taxi::encode(0, 4, 4, 1))});
    auto r = env.step(5, obs);
    CHECK(r.reward == 30);
    CHECK(r.terminated);
    CHECK(obs[0] == float(Taxi::encode(0, 4, 1, 1)));
    env.set_state(std::vector<double>{double(Taxi::encode(2, 2, 0, 1))});
    CHECK(env.step(4, obs).reward == -5);
    CHECK(env.step(0, obs).reward == -2);
    CHECK(env.tabular_model()->at(Taxi::encode(0, 4, 4, 1), 5)[0].reward == 30);
  }

}  // TEST_SUITE

TEST_SUITE("statistical") {
  TEST_CASE("taxi: resets are uniform over the 300 start states") {
    Taxi env;
    std::vector<float> obs(1);
    std::vector<int> counts(500, 0);
    const int n = 60000;
    for (int i = 0; i < n; ++i) {
      env.reset(std::uint64_t(i), obs);
      ++counts[int(obs[0])];
    }
    int support = 0;
    for (int s = 0; s < 500; ++s) {
      const auto [row, col, pass, dest] = Taxi::decode(s);
      const bool start = pass < 4 && pass != dest;
      REQUIRE((counts[s] > 0) == start);
      support += start;
      // each count is Binomial(60000, 1/300): mean 200, sd 14.1; a single cell beyond 7 sd has
      // probability below 1e-11, so over 300 cells this bound fails with probability < 1e-8
      if (start) REQUIRE(std::abs(counts[s] - 200) < 100);
    }
    CHECK(support == 300);
  }

}  // TEST_SUITE
