#include "envs/dmc_cartpole.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

using dprl::envs::DmcCartpole;
using dprl::envs::make_env;

namespace {

constexpr double kPi = std::numbers::pi;

struct CartpoleTrace {
  std::vector<float> obs;
  std::vector<double> rewards;
  bool operator==(const CartpoleTrace&) const = default;
};

CartpoleTrace rollout(DmcCartpole& env, std::uint64_t action_seed, int n) {
  CartpoleTrace t;
  std::vector<float> obs(5);
  std::vector<double> a(1);
  dprl::Rng rng(action_seed);
  for (int i = 0; i < n; ++i) {
    a[0] = rng.uniform(-1.0, 1.0);
    t.rewards.push_back(env.step(a, obs).reward);
    t.obs.insert(t.obs.end(), obs.begin(), obs.end());
  }
  return t;
}

// dm_control rewards.tolerance(x, bounds=(0, 0), margin, sigmoid) written out independently
double gaussian(double x, double margin) {
  if (x == 0) return 1.0;
  const double d = std::fabs(x) / margin;
  return std::pow(0.1, d * d);  // exp(-0.5 d^2 (-2 ln 0.1)) = 0.1^(d^2)
}
double quadratic(double x, double margin) {
  const double d = std::fabs(x) / margin;
  return d < 1 ? 1 - d * d : 0.0;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("dmc_cartpole: ids and spaces") {
    auto balance = make_env("cartpole-balance");
    auto swingup = make_env("cartpole-swingup");
    CHECK(balance->spec().id == "dmc_cartpole");
    CHECK(swingup->spec().id == "dmc_cartpole");
    CHECK(balance->spec().max_episode_steps == 1000);
    CHECK(balance->obs_dim() == 5);
    CHECK(balance->spec().action.low == std::vector<double>{-1.0});
    CHECK(balance->spec().action.high == std::vector<double>{1.0});
    CHECK(balance->state().size() == 2 + 2 + 1 + 1 + 2);
    bool found = false;
    for (const auto& [k, v] : swingup->params())
      found = found || (k == "task" && v.text == "swingup");
    CHECK(found);
  }

  TEST_CASE("dmc_cartpole: the built-in model is envs/assets/dmc_cartpole.xml byte for byte") {
    const std::string file =
        dprl::read_file(std::string(DPRL_SOURCE_DIR) + "/envs/assets/dmc_cartpole.xml");
    REQUIRE(!file.empty());
    CHECK(DmcCartpole::builtin_xml() == file);
  }

  TEST_CASE("dmc_cartpole: tolerance and the smooth reward follow dm_control's formulas") {
    CHECK(DmcCartpole::tolerance_gaussian(0.0, 2) == 1.0);
    CHECK(DmcCartpole::tolerance_gaussian(-0.0, 2) == 1.0);
    // value_at_margin 0.1 at distance = margin, either side
    CHECK(DmcCartpole::tolerance_gaussian(2.0, 2) == doctest::Approx(0.1).epsilon(1e-14));
    CHECK(DmcCartpole::tolerance_gaussian(-5.0, 5) == doctest::Approx(0.1).epsilon(1e-14));
    CHECK(DmcCartpole::tolerance_quadratic(0.5, 1) == 0.75);
    CHECK(DmcCartpole::tolerance_quadratic(-1.0, 1) == 0.0);
    CHECK(DmcCartpole::tolerance_quadratic(3.0, 1) == 0.0);
    // upright, centred, still, no force: the maximum 1
    CHECK(DmcCartpole::smooth_reward(0, 1, 0, 0) == 1.0);
    // hanging down: upright = 0
    CHECK(DmcCartpole::smooth_reward(0, -1, 0, 0) == 0.0);
    dprl::Rng rng(4);
    for (int i = 0; i < 10000; ++i) {
      const double x = rng.uniform(-2, 2), th = rng.uniform(-kPi, kPi), u = rng.uniform(-1.5, 1.5),
                   w = rng.uniform(-20, 20);
      const double r = DmcCartpole::smooth_reward(x, std::cos(th), u, w);
      const double expected = (std::cos(th) + 1) / 2 * ((4 + quadratic(u, 1)) / 5) *
                              ((1 + gaussian(w, 5)) / 2) * ((1 + gaussian(x, 2)) / 2);
      REQUIRE(r >= 0.0);
      REQUIRE(r <= 1.0);
      REQUIRE(r == doctest::Approx(expected).epsilon(1e-13));
    }
    CHECK(DmcCartpole::sparse_reward(0.25, 0.995) == 1.0);
    CHECK(DmcCartpole::sparse_reward(0.26, 1.0) == 0.0);
    CHECK(DmcCartpole::sparse_reward(0.0, 0.99) == 0.0);
  }

  TEST_CASE("dmc_cartpole: a step's reward is the formula on the new state and the raw control") {
    DmcCartpole env;
    std::vector<float> obs(5);
    env.reset(0, obs);
    env.set_state(std::vector<double>{0.3, 0.2, -0.1, 0.5});
    const auto r = env.step(std::vector<double>{1.5}, obs);  // clamped to 1 by MuJoCo
    CHECK(r.reward ==
          DmcCartpole::smooth_reward(env.qpos()[0], env.pole_cos(), 1.5, env.qvel()[1]));
    CHECK(env.pole_cos() == doctest::Approx(std::cos(env.qpos()[1])).epsilon(1e-14));
    CHECK(env.pole_sin() == doctest::Approx(std::sin(env.qpos()[1])).epsilon(1e-14));
    CHECK(obs[0] == static_cast<float>(env.qpos()[0]));
    CHECK(obs[1] == static_cast<float>(env.pole_cos()));
    CHECK(obs[2] == static_cast<float>(env.pole_sin()));
    CHECK(obs[3] == static_cast<float>(env.qvel()[0]));
    CHECK(obs[4] == static_cast<float>(env.qvel()[1]));
    // the same physics as a force of exactly 1
    DmcCartpole b;
    b.reset(0, obs);
    b.set_state(std::vector<double>{0.3, 0.2, -0.1, 0.5});
    b.step(std::vector<double>{1.0}, obs);
    CHECK(b.state() != env.state());      // ctrl differs (1.5 vs 1) ...
    CHECK(b.qpos()[0] == env.qpos()[0]);  // ... the motion does not
    CHECK(b.qvel()[1] == env.qvel()[1]);
    DmcCartpole sparse({.sparse = true});
    sparse.reset(0, obs);
    sparse.set_state(std::vector<double>{0.0, 0.0, 0.0, 0.0});
    CHECK(sparse.step(std::vector<double>{0.0}, obs).reward == 1.0);
  }

  TEST_CASE("dmc_cartpole: rewards stay within 0 and 1 under random actions in both tasks") {
    for (const char* task : {"balance", "swingup"}) {
      CAPTURE(task);
      DmcCartpole env({.task = task});
      std::vector<float> obs(5);
      env.reset(1, obs);
      const CartpoleTrace t = rollout(env, 2, 1000);
      for (double r : t.rewards) {
        REQUIRE(r >= 0.0);
        REQUIRE(r <= 1.0);
      }
    }
  }

  TEST_CASE("dmc_cartpole: initial states follow the suite's distributions") {
    DmcCartpole balance, swingup({.task = "swingup"});
    std::vector<float> obs(5);
    double max_x = 0, max_th = 0, sum_sw_th = 0, sum_sw_x2 = 0;
    const int n = 4000;
    for (int e = 0; e < n; ++e) {
      balance.reset(e, obs);
      max_x = std::max(max_x, std::fabs(balance.qpos()[0]));
      max_th = std::max(max_th, std::fabs(balance.qpos()[1]));
      swingup.reset(e, obs);
      sum_sw_th += swingup.qpos()[1] - kPi;
      sum_sw_x2 += swingup.qpos()[0] * swingup.qpos()[0];
      CHECK(obs[1] < -0.99f);  // hanging down
    }
    CHECK(max_x <= 0.1);
    CHECK(max_x > 0.099);
    CHECK(max_th <= 0.034);
    CHECK(max_th > 0.0335);
    // mean of 0.01 N(0, 1) over 4000 draws: sd 1.6e-4; 1e-3 is over 6 sd
    CHECK(std::fabs(sum_sw_th / n) < 1e-3);
    // E[x^2] = 1e-4, sample-mean sd 1e-4 sqrt(2 / 4000) = 2.2e-6; 1.5e-5 is over 6 sd
    CHECK(std::fabs(sum_sw_x2 / n - 1e-4) < 1.5e-5);
  }

  TEST_CASE("dmc_cartpole: the same seed gives identical bytes") {
    for (const char* task : {"balance", "swingup"}) {
      DmcCartpole a({.task = task}), b({.task = task});
      std::vector<float> oa(5), ob(5);
      a.reset(42, oa);
      b.reset(42, ob);
      CHECK(std::memcmp(oa.data(), ob.data(), sizeof(float) * 5) == 0);
      const CartpoleTrace ta = rollout(a, 7, 1000), tb = rollout(b, 7, 1000);
      CHECK(std::memcmp(ta.obs.data(), tb.obs.data(), ta.obs.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(ta.rewards.data(), tb.rewards.data(), ta.rewards.size() * sizeof(double)) ==
            0);
    }
  }

  TEST_CASE("dmc_cartpole: exact state round trip reproduces the trajectory bit for bit") {
    DmcCartpole a({.task = "swingup"}), b({.task = "swingup"});
    std::vector<float> oa(5), ob(5);
    a.reset(5, oa);
    rollout(a, 1, 300);
    const auto s = a.state();
    const CartpoleTrace ta = rollout(a, 2, 700);
    b.reset(6, ob);
    b.set_state(s);
    CHECK(b.state() == s);
    CHECK(b.elapsed_steps() == 0);
    CHECK(rollout(b, 2, 700) == ta);
    // [qpos, qvel] form: a function of the 4 values
    a.set_state(std::vector<double>{0.1, 3.0, 0.0, -1.0});
    b.set_state(std::vector<double>{0.1, 3.0, 0.0, -1.0});
    CHECK(a.state() == b.state());
    CHECK(rollout(a, 3, 100) == rollout(b, 3, 100));
    // snapshot adds the counter
    const auto snap = a.snapshot();
    b.restore(snap);
    CHECK(b.elapsed_steps() == 100);
  }

  TEST_CASE("dmc_cartpole: the slider stops at its +-1.8 m limit") {
    DmcCartpole env;
    std::vector<float> obs(5);
    env.reset(0, obs);
    double max_x = 0;
    for (int i = 0; i < 500; ++i) {
      env.step(std::vector<double>{1.0}, obs);
      max_x = std::max(max_x, env.qpos()[0]);
    }
    CHECK(max_x > 1.75);
    CHECK(max_x < 2.0);  // a soft limit (solref 0.08): 10 N pushes it about 0.16 m past
  }

  TEST_CASE("dmc_cartpole: bad input") {
    DmcCartpole env;
    std::vector<float> obs(5);
    env.reset(0, obs);
    CHECK_THROWS_AS(env.step(std::vector<double>{std::nan("")}, obs), dprl::InvalidAction);
    CHECK_THROWS_AS(env.step(std::vector<double>{1e11}, obs), dprl::InvalidAction);
    CHECK_THROWS_AS(env.step(std::vector<double>{0.0, 0.0}, obs), dprl::InvalidAction);
    CHECK(env.elapsed_steps() == 0);
    CHECK_THROWS_AS(make_env("dmc_cartpole", {{"task", {"swing", "test"}}}), dprl::ParamError);
    CHECK_THROWS_AS(make_env("dmc_cartpole", {{"max_episode_steps", {"0", "test"}}}),
                    dprl::ParamError);
    CHECK_THROWS_AS(make_env("dmc_cartpole", {{"sparse", {"2", "test"}}}), dprl::ParamError);
    const std::string missing = std::string(DPRL_BINARY_DIR) + "/test_tmp/no_cartpole.xml";
    try {
      make_env("cartpole-swingup", {{"xml_file", {missing, "test"}}});
      FAIL("no error");
    } catch (const dprl::ModelLoadError& e) {
      CHECK(std::string(e.what()).find(missing) != std::string::npos);
    }
    // the cheetah's model has other joints
    const std::string cheetah = std::string(DPRL_SOURCE_DIR) + "/envs/assets/half_cheetah.xml";
    CHECK_THROWS_AS(make_env("dmc_cartpole", {{"xml_file", {cheetah, "test"}}}),
                    dprl::ModelLoadError);
  }

}  // TEST_SUITE

TEST_SUITE("golden") {
  TEST_CASE("dmc_cartpole: balance with no force keeps a high return for a while") {
    // started within 0.034 rad of upright with zero force, the pole falls within about 2 s; the
    // first 100 steps (1 s) earn close to 1 each
    DmcCartpole env;
    std::vector<float> obs(5);
    env.reset(3, obs);
    double first = 0, total = 0;
    for (int t = 0; t < 1000; ++t) {
      const double r = env.step(std::vector<double>{0.0}, obs).reward;
      if (t < 100) first += r;
      total += r;
    }
    CHECK(first > 90.0);
    CHECK(total < 900.0);  // fallen and swinging by the end
  }

  TEST_CASE("dmc_cartpole: a PD controller balances for the whole episode") {
    // u = clip(k_th sin(theta) + k_w omega + k_x x + k_v v): a stabilising linear feedback
    DmcCartpole env;
    std::vector<float> obs(5);
    env.reset(11, obs);
    double total = 0;
    std::vector<double> u(1);
    for (int t = 0; t < 1000; ++t) {
      const double sin_th = obs[2], w = obs[4], x = obs[0], v = obs[3];
      u[0] = std::clamp(10.0 * sin_th + 1.0 * w + 0.5 * x + 1.0 * v, -1.0, 1.0);
      total += env.step(u, obs).reward;
    }
    CHECK(total > 900.0);  // measured here: 999.02
  }

}  // TEST_SUITE
