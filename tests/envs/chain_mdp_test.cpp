#include "envs/chain_mdp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "envs/register_envs.hpp"

using dprl::envs::ChainMdp;
using dprl::envs::make_env;

TEST_SUITE("unit") {
  TEST_CASE("chain_mdp: MDP-100 defaults") {
    auto env = make_env("MDP-100");
    CHECK(env->spec().id == "chain_mdp");
    CHECK(env->spec().observation.n == 100);
    CHECK(env->spec().action.n == 2);
    CHECK(env->spec().max_episode_steps == 1000);
    std::vector<float> obs(1);
    env->reset(123, obs);
    CHECK(obs[0] == 0.0f);
    CHECK(env->state() == std::vector<double>{0.0});
  }

  TEST_CASE("chain_mdp: with p = 1 always moving right reaches the end in n - 1 steps") {
    ChainMdp env({.n = 100, .p = 1.0});
    std::vector<float> obs(1);
    env.reset(0, obs);
    double ret = 0;
    int steps = 0;
    for (;;) {
      const auto r = env.step(1, obs);
      ret += r.reward;
      ++steps;
      REQUIRE(obs[0] == float(steps));
      if (r.terminated) break;
    }
    CHECK(steps == 99);
    CHECK(ret == -98.0 + 1.0);
  }

  TEST_CASE("chain_mdp: stay costs -1 and keeps the state and the end state is absorbing") {
    ChainMdp env;
    std::vector<float> obs(1);
    env.reset(0, obs);
    env.set_state(std::vector<double>{17});
    auto r = env.step(0, obs);
    CHECK(r.reward == -1.0);
    CHECK(obs[0] == 17.0f);
    CHECK_FALSE(r.terminated);
    env.set_state(std::vector<double>{99});
    for (int a = 0; a < 2; ++a) {
      r = env.step(a, obs);
      CHECK(r.reward == 0.0);
      CHECK(r.terminated);
      CHECK(obs[0] == 99.0f);
    }
    ChainMdp sure({.p = 1.0});
    sure.reset(0, obs);
    sure.set_state(std::vector<double>{98});
    r = sure.step(1, obs);
    CHECK(r.reward == 1.0);
    CHECK(r.terminated);
  }

  TEST_CASE("chain_mdp: the step randomness comes from the episode seed") {
    ChainMdp a, b;
    std::vector<float> oa(1), ob(1);
    auto trace = [](ChainMdp& env, std::uint64_t seed, std::vector<float>& obs) {
      env.reset(seed, obs);
      std::vector<float> out;
      for (int i = 0; i < 60; ++i) {
        env.step(1, obs);
        out.push_back(obs[0]);
      }
      return out;
    };
    CHECK(trace(a, 1, oa) == trace(b, 1, ob));
    CHECK(trace(a, 1, oa) != trace(b, 2, ob));
  }

  TEST_CASE("chain_mdp: the model evaluates 'always right' to -(99 / p) + 2") {
    // E[steps] = 99 / p; every step earns -1 except the last, which earns +1
    ChainMdp env;
    const auto* m = env.tabular_model();
    std::vector<double> v(100, 0.0);
    for (int it = 0; it < 20000; ++it) {
      for (int s = 98; s >= 0; --s) {
        double q = 0;
        for (const auto& o : m->at(s, 1))
          q += o.prob * (o.reward + (o.terminal ? 0.0 : v[o.next_state]));
        v[s] = q;
      }
    }
    CHECK(v[0] == doctest::Approx(-99.0 / 0.9 + 2.0).epsilon(1e-9));
    CHECK(m->initial[0] == 1.0);
    CHECK(m->absorbing[99]);
    CHECK_FALSE(m->absorbing[98]);
  }

  TEST_CASE("chain_mdp: truncated at the time limit") {
    ChainMdp env({.n = 10, .max_episode_steps = 7});
    std::vector<float> obs(1);
    env.reset(0, obs);
    for (int t = 1; t <= 7; ++t) {
      const auto r = env.step(0, obs);
      CHECK(r.truncated == (t == 7));
    }
  }

}  // TEST_SUITE

TEST_SUITE("statistical") {
  TEST_CASE("chain_mdp: move right succeeds with probability p") {
    // 200000 Bernoulli(0.9) trials: mean 180000, sd sqrt(200000 * 0.09) = 134.2. The two-sided
    // normal tail beyond z = 4.89 is 1e-6, so |count - 180000| < 4.89 * 134.2 = 656 at p = 1e-6.
    ChainMdp env;
    std::vector<float> obs(1);
    env.reset(2024, obs);
    const int n = 200000;
    int successes = 0;
    for (int i = 0; i < n; ++i) {
      env.set_state(std::vector<double>{5});
      env.step(1, obs);
      successes += obs[0] == 6.0f;
    }
    CHECK(std::abs(successes - 180000) < 656);
  }

}  // TEST_SUITE
