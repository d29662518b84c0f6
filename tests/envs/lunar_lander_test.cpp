// LunarLander on Box2D 2.4 (envs/lunar_lander.hpp) and Gymnasium's heuristic controller
// (envs/lunar_lander_heuristic.hpp): determinism, replay through set_state, parameters, actions.
#include "envs/lunar_lander.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/policy.hpp"
#include "envs/lunar_lander_heuristic.hpp"
#include "envs/register_envs.hpp"

namespace {

using dprl::envs::LunarLander;
using dprl::envs::LunarLanderHeuristic;
using dprl::envs::make_env;

struct Episode {
  std::vector<float> obs;  // reset observation, then one per step
  std::vector<double> rewards;
  std::vector<std::vector<double>> actions;  // discrete: one value
  bool terminated = false;
};

// Runs the heuristic (or a fixed action when fixed >= 0) for at most n steps.
Episode run(dprl::Env& env, std::uint64_t seed, int n, int fixed = -1) {
  Episode e;
  LunarLanderHeuristic h;
  std::vector<float> obs(8);
  env.reset(seed, obs);
  e.obs = obs;
  const bool cont = !env.spec().action.is_discrete();
  for (int t = 0; t < n; ++t) {
    dprl::StepResult r;
    if (cont) {
      std::vector<double> a(2, 0.0);
      if (fixed < 0) h.act_continuous(obs, a);
      r = env.step(std::span<const double>(a), obs);
      e.actions.push_back(a);
    } else {
      const std::int64_t a = fixed >= 0 ? fixed : h.act_discrete(obs, {});
      r = env.step(a, obs);
      e.actions.push_back({double(a)});
    }
    e.obs.insert(e.obs.end(), obs.begin(), obs.end());
    e.rewards.push_back(r.reward);
    if (r.terminated || r.truncated) {
      e.terminated = r.terminated;
      break;
    }
  }
  return e;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

dprl::ParamMap param(const char* k, const char* v) { return {{k, {v, "test"}}}; }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("lunar_lander: Gymnasium ids and spaces") {
    auto d = make_env("LunarLander-v3");
    CHECK(d->spec().id == "lunar_lander");
    CHECK(d->spec().action.n == 4);
    CHECK(d->obs_dim() == 8);
    CHECK(d->spec().max_episode_steps == 1000);
    CHECK(d->spec().reward_threshold == 200);
    auto c = make_env("LunarLanderContinuous-v3");
    CHECK(!c->spec().action.is_discrete());
    CHECK(c->spec().action.dim() == 2);
    CHECK(c->spec().action.low[0] == -1);
    CHECK(c->spec().action.high[1] == 1);
    CHECK(c->spec().observation.high[6] == 1);
  }

  TEST_CASE("lunar_lander: reset starts at the top centre after one no-op step") {
    LunarLander env;
    std::vector<float> obs(8);
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      env.reset(seed, obs);
      CHECK(env.elapsed_steps() == 0);
      // x = W/2 moved by at most one step of the initial force; y = H: (13.333 - 3.933) / 6.667
      CHECK(std::fabs(obs[0]) < 0.01);
      CHECK(obs[1] == doctest::Approx(1.41).epsilon(0.01));
      CHECK(obs[6] == 0);
      CHECK(obs[7] == 0);
      // the initial force acted during that step: |F| <= 1000 N on ~5 kg for 1/50 s
      CHECK(std::fabs(obs[2]) > 0);
    }
  }

  TEST_CASE("lunar_lander: the same seed gives identical bytes and other seeds other terrain") {
    for (const char* name : {"LunarLander-v3", "LunarLanderContinuous-v3"}) {
      CAPTURE(name);
      auto a = make_env(name);
      auto b = make_env(name);
      const Episode e1 = run(*a, 1234, 1000);
      const Episode e2 = run(*b, 1234, 1000);
      CHECK(same_bytes(e1.obs, e2.obs));
      CHECK(e1.rewards == e2.rewards);
      // a used env resets to the same episode
      const Episode e3 = run(*a, 1234, 1000);
      CHECK(same_bytes(e1.obs, e3.obs));
      CHECK(!same_bytes(e1.obs, run(*a, 1235, 1000).obs));
    }
  }

  TEST_CASE("lunar_lander: set_state replays the seed and actions to identical observations") {
    for (const char* name : {"LunarLander-v3", "LunarLanderContinuous-v3"}) {
      CAPTURE(name);
      auto env = make_env(name);
      auto* ll = dynamic_cast<LunarLander*>(env.get());
      REQUIRE(ll != nullptr);
      const Episode e = run(*env, 0xfedcba9876543210ULL, 1000);  // a seed above 2^53
      const std::vector<double> full = env->state();
      const std::size_t per = e.actions[0].size();
      REQUIRE(full.size() == 3 + per * e.actions.size());
      for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{17}, e.actions.size() / 2,
                            e.actions.size()}) {
        CAPTURE(k);
        // the recipe of the first k steps
        std::vector<double> s(full.begin(), full.begin() + 3);
        s[2] = double(k);
        for (std::size_t i = 0; i < k; ++i)
          s.insert(s.end(), e.actions[i].begin(), e.actions[i].end());
        auto other = make_env(name);
        std::vector<float> obs(8);
        other->reset(99, obs);
        other->set_state(s);
        CHECK(other->elapsed_steps() == 0);
        CHECK(other->state() == s);
        auto* oll = dynamic_cast<LunarLander*>(other.get());
        const std::vector<float> now(oll->last_observation().begin(),
                                     oll->last_observation().end());
        CHECK(
            same_bytes(now, std::vector<float>(e.obs.begin() + 8 * k, e.obs.begin() + 8 * k + 8)));
        // and continues identically
        for (std::size_t i = k; i < std::min(e.actions.size(), k + 30); ++i) {
          if (per == 1)
            other->step(std::int64_t(e.actions[i][0]), obs);
          else
            other->step(std::span<const double>(e.actions[i]), obs);
          REQUIRE(same_bytes(
              obs, std::vector<float>(e.obs.begin() + 8 * (i + 1), e.obs.begin() + 8 * (i + 2))));
        }
      }
      CHECK(ll->state() == full);
    }
  }

  TEST_CASE("lunar_lander: bad states are rejected without touching the env") {
    LunarLander env;
    std::vector<float> obs(8);
    env.reset(5, obs);
    env.step(2, obs);
    const auto s = env.state();
    CHECK(s == std::vector<double>{0, 5, 1, 2});
    for (const std::vector<double>& bad : {std::vector<double>{0, 5},
                                           {0, 5, 2, 2},
                                           {0, 5, 1, 4},
                                           {0, 5, 1, 1.5},
                                           {-1, 5, 0},
                                           {4294967296.0, 5, 0},
                                           {0, 0.5, 0},
                                           {0, 5, -1}}) {
      CHECK_THROWS_AS(env.set_state(bad), dprl::ParamError);
    }
    LunarLander cont({.continuous = true});
    cont.reset(5, obs);
    CHECK_THROWS_AS(cont.set_state(std::vector<double>{0, 5, 1, 0.5}), dprl::ParamError);
    CHECK_THROWS_AS(cont.set_state(std::vector<double>{0, 5, 1, 0.5, 1.5}), dprl::ParamError);
    CHECK(env.state() == s);
  }

  TEST_CASE("lunar_lander: gravity and wind parameters change the dynamics") {
    const auto traj = [](const dprl::ParamMap& p, int action) {
      auto env = make_env("lunar_lander", p);
      return run(*env, 7, 60, action).obs;
    };
    const auto base = traj({}, 0);
    // weaker gravity: the lander has fallen less after 30 steps (y is obs[1])
    const auto low_g = traj(param("gravity", "-2"), 0);
    CHECK(low_g[8 * 30 + 1] > base[8 * 30 + 1] + 0.05);
    // wind_power and turbulence_power do nothing unless enable_wind
    CHECK(same_bytes(traj(param("wind_power", "20"), 0), base));
    // wind pushes sideways, turbulence turns
    dprl::ParamMap wind = param("enable_wind", "true");
    dprl::param_map_set(wind, "wind_power", {"20", "test"});
    dprl::param_map_set(wind, "turbulence_power", {"0", "test"});
    dprl::ParamMap calm = param("enable_wind", "true");
    dprl::param_map_set(calm, "wind_power", {"0", "test"});
    dprl::param_map_set(calm, "turbulence_power", {"0", "test"});
    dprl::ParamMap turb = param("enable_wind", "true");
    dprl::param_map_set(turb, "wind_power", {"0", "test"});
    dprl::param_map_set(turb, "turbulence_power", {"2", "test"});
    const auto w = traj(wind, 0), c = traj(calm, 0), t = traj(turb, 0);
    // enabling wind draws two more numbers at reset, so compare against calm wind, not base
    CHECK(std::fabs(w[8 * 30 + 2] - c[8 * 30 + 2]) > 0.05);  // vx
    CHECK(std::fabs(t[8 * 30 + 4] - c[8 * 30 + 4]) > 0.01);  // angle
  }

  TEST_CASE("lunar_lander: engines push the expected way") {
    const auto after = [](int action) {
      LunarLander env;
      return run(env, 3, 10, action).obs;
    };
    const auto noop = after(0), main = after(2), left = after(1), right = after(3);
    const std::size_t last = 8 * 10;
    CHECK(main[last + 3] > noop[last + 3] + 0.1);  // main engine slows the fall
    // side engines spin the lander in opposite directions (obs[5] is the angular velocity)
    CHECK((left[last + 5] - noop[last + 5]) * (right[last + 5] - noop[last + 5]) < 0);
    // continuous actions are clipped to [-1, 1] as in Gymnasium
    LunarLander a({.continuous = true}), b({.continuous = true});
    std::vector<float> oa(8), ob(8);
    a.reset(4, oa);
    b.reset(4, ob);
    const std::vector<double> big{5, -7}, unit{1, -1};
    for (int i = 0; i < 20; ++i) {
      CHECK(a.step(std::span<const double>(big), oa).reward ==
            b.step(std::span<const double>(unit), ob).reward);
      CHECK(same_bytes(oa, ob));
    }
    CHECK(a.state() == b.state());
  }

  TEST_CASE("lunar_lander: bad parameters and actions") {
    for (const auto& [k, v] :
         {std::pair{"gravity", "0"}, std::pair{"gravity", "-12"}, std::pair{"gravity", "-13"},
          std::pair{"gravity", "nan"}, std::pair{"wind_power", "25"}, std::pair{"wind_power", "-1"},
          std::pair{"turbulence_power", "2.5"}, std::pair{"continuous", "3"}}) {
      CAPTURE(k);
      CAPTURE(v);
      CHECK_THROWS_AS(make_env("lunar_lander", param(k, v)), dprl::ParamError);
    }
    CHECK_NOTHROW(make_env("lunar_lander", param("gravity", "-11.99")));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto c = make_env("LunarLanderContinuous-v3");
    std::vector<float> obs(8);
    c->reset(0, obs);
    for (const std::vector<double>& a :
         {std::vector<double>{nan, 0}, std::vector<double>{0, nan}, std::vector<double>{0}}) {
      CHECK_THROWS_AS(c->step(std::span<const double>(a), obs), dprl::InvalidAction);
    }
    CHECK_THROWS_AS(c->step(std::int64_t{2}, obs), dprl::InvalidAction);
    auto d = make_env("LunarLander-v3");
    d->reset(0, obs);
    CHECK_THROWS_AS(d->step(4, obs), dprl::InvalidAction);
    CHECK_THROWS_AS(d->step(-1, obs), dprl::InvalidAction);
    const std::vector<double> cont{0, 0};
    CHECK_THROWS_AS(d->step(std::span<const double>(cont), obs), dprl::InvalidAction);
    CHECK(d->elapsed_steps() == 0);
    CHECK(c->elapsed_steps() == 0);
    CHECK(d->state().size() == 3);
    // the heuristic refuses other envs
    CHECK_THROWS_AS(dprl::envs::make_lunar_lander_heuristic(*make_env("cartpole")),
                    dprl::ParamError);
  }

  TEST_CASE("lunar_lander: the heuristic lands and comes to rest for +100") {
    LunarLander env;
    int landed = 0;
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      const Episode e = run(env, seed, 1000);
      if (e.terminated && e.rewards.back() == 100) {
        ++landed;
        CHECK(!env.lander_awake());
        // at rest on its legs (a leg held just off the ground by its spring may read 0)
        CHECK(e.obs[e.obs.size() - 2] + e.obs[e.obs.size() - 1] >= 1);
        CHECK(std::fabs(e.obs[e.obs.size() - 5]) < 1e-3);  // vy
      }
    }
    CHECK(landed >= 8);
  }

  // Gymnasium's heuristic lands reliably (envpool's port requires a mean >= 220 over 40 episodes);
  // the issue requires a mean of at least 200 over 100 seeded episodes on the default env. About a
  // second for both action spaces, so it runs with the unit tests.
  TEST_CASE("lunar_lander: the heuristic averages at least 200 over 100 episodes") {
    for (const char* name : {"LunarLander-v3", "LunarLanderContinuous-v3"}) {
      CAPTURE(name);
      auto env = make_env(name);
      auto policy = dprl::envs::make_lunar_lander_heuristic(*env);
      const dprl::EvalStats st = dprl::evaluate(*env, *policy, 100, 2024);
      MESSAGE(std::string(name) << ": heuristic mean return " << st.return_mean << " (std "
                                << st.return_std << ", min " << st.return_min << ", mean length "
                                << st.length_mean << ")");
      CHECK(st.episodes == 100);
      CHECK(st.return_mean >= 200);
    }
  }

}  // TEST_SUITE
