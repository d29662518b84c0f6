#include "envs/half_cheetah.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
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

using dprl::envs::HalfCheetah;
using dprl::envs::make_env;

namespace {

// a throwaway file under the build tree
std::string temp_path(const char* name) {
  const auto dir = std::filesystem::path(DPRL_BINARY_DIR) / "test_tmp";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

struct CheetahTrace {
  std::vector<float> obs;
  std::vector<double> rewards;
  bool operator==(const CheetahTrace&) const = default;
};

// n steps of uniformly random actions drawn from action_seed
CheetahTrace rollout(HalfCheetah& env, std::uint64_t action_seed, int n) {
  CheetahTrace t;
  std::vector<float> obs(env.obs_dim());
  std::vector<double> a(6);
  dprl::Rng rng(action_seed);
  for (int i = 0; i < n; ++i) {
    for (double& x : a) x = rng.uniform(-1.0, 1.0);
    t.rewards.push_back(env.step(a, obs).reward);
    t.obs.insert(t.obs.end(), obs.begin(), obs.end());
  }
  return t;
}

// a fixed open-loop gait: thighs in antiphase, shins a quarter period ahead, period 0.8 s
std::vector<double> gait(int t) {
  const double w = 2 * std::numbers::pi * 0.05 / 0.8;  // 0.05 s per env step
  const double s = std::sin(w * t), c = std::cos(w * t);
  return {s, c, s, -s, c, s};
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("half_cheetah: Gymnasium id and spaces") {
    auto env = make_env("HalfCheetah-v5");
    const auto& spec = env->spec();
    CHECK(spec.id == "half_cheetah");
    CHECK(spec.max_episode_steps == 1000);
    CHECK(spec.observation.dim() == 17);
    CHECK(spec.action.low == std::vector<double>(6, -1.0));
    CHECK(spec.action.high == std::vector<double>(6, 1.0));
    CHECK(make_env("half_cheetah", {{"exclude_current_positions_from_observation", {"false", "t"}}})
              ->obs_dim() == 18);
    HalfCheetah hc;
    CHECK(hc.timestep() == 0.01);
    CHECK(hc.dt() == 0.01 * 5);
    CHECK(hc.state().size() == 9 + 9 + 6 + 1 + 9);
  }

  TEST_CASE("half_cheetah: the built-in model is envs/assets/half_cheetah.xml byte for byte") {
    const std::string file =
        dprl::read_file(std::string(DPRL_SOURCE_DIR) + "/envs/assets/half_cheetah.xml");
    REQUIRE(!file.empty());
    CHECK(HalfCheetah::builtin_xml() == file);
    // and loading the file gives the same env as the built-in text
    HalfCheetah a, b({.xml_file = std::string(DPRL_SOURCE_DIR) + "/envs/assets/half_cheetah.xml"});
    std::vector<float> oa(17), ob(17);
    a.reset(5, oa);
    b.reset(5, ob);
    CHECK(rollout(a, 1, 50) == rollout(b, 1, 50));
  }

  TEST_CASE("half_cheetah: compiled body masses are the MuJoCo 2.2.2 facts (total 14)") {
    // ENV_FACTS.md section 6, 8 significant digits: world, torso, bthigh, bshin, bfoot, fthigh,
    // fshin, ffoot
    const std::vector<double> facts{0,         6.2502092, 1.5435146, 1.5874477,
                                    1.0953975, 1.4380753, 1.2008368, 0.8845188};
    HalfCheetah env;
    const auto m = env.body_masses();
    REQUIRE(m.size() == facts.size());
    double total = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      CHECK(std::fabs(m[i] - facts[i]) < 5e-8);  // half a unit in the 8th digit
      total += m[i];
    }
    CHECK(total == doctest::Approx(14.0).epsilon(1e-12));
  }

  TEST_CASE("half_cheetah: reward and observation of a hand-built step") {
    HalfCheetah env;
    std::vector<float> obs(17);
    env.reset(0, obs);
    std::vector<double> s(18, 0.0);
    s[2] = 0.05;  // rooty
    s[9] = 0.3;   // rootx velocity
    env.set_state(s);
    const double x_before = env.qpos()[0];
    const std::vector<double> a{0.5, -0.25, 1.0, -1.0, 0.125, 0.75};
    const auto r = env.step(a, obs);
    const double x_after = env.qpos()[0];
    double sum_sq = 0;
    for (double x : a) sum_sq += x * x;
    CHECK(r.reward == (x_after - x_before) / 0.05 - 0.1 * sum_sq);
    CHECK(!r.terminated);
    CHECK(!r.truncated);
    for (int i = 1; i < 9; ++i) CHECK(obs[i - 1] == static_cast<float>(env.qpos()[i]));
    for (int i = 0; i < 9; ++i) CHECK(obs[8 + i] == static_cast<float>(env.qvel()[i]));
    // the weights are parameters
    HalfCheetah w({.forward_reward_weight = 2.0, .ctrl_cost_weight = 0.5});
    w.reset(0, obs);
    w.set_state(s);
    const auto rw = w.step(a, obs);
    CHECK(rw.reward == 2.0 * ((w.qpos()[0] - x_before) / 0.05) - 0.5 * sum_sq);
  }

  TEST_CASE("half_cheetah: frame_skip 5 is five frame_skip 1 steps with the same action") {
    HalfCheetah five, one({.frame_skip = 1, .exclude_current_positions_from_observation = false});
    CHECK(one.dt() == 0.01);
    std::vector<float> o5(17), o1(18);
    five.reset(4, o5);
    one.reset(4, o1);
    CHECK(o1[0] == static_cast<float>(one.qpos()[0]));  // rootx included
    for (int i = 0; i < 17; ++i) CHECK(o1[i + 1] == o5[i]);
    const std::vector<double> a{0.3, -0.6, 0.9, 0.1, -0.2, 0.4};
    const double x0 = five.qpos()[0];
    const double r5 = five.step(a, o5).reward;
    for (int k = 0; k < 5; ++k) one.step(a, o1);
    CHECK(five.state() == one.state());
    for (int i = 0; i < 17; ++i) CHECK(o1[i + 1] == o5[i]);
    double sum_sq = 0;
    for (double x : a) sum_sq += x * x;
    CHECK(r5 == (five.qpos()[0] - x0) / 0.05 - 0.1 * sum_sq);
  }

  TEST_CASE("half_cheetah: MuJoCo clamps ctrl but ctrl_cost charges the raw action") {
    HalfCheetah a, b;
    std::vector<float> oa(17), ob(17);
    a.reset(3, oa);
    b.reset(3, ob);
    const auto ra = a.step(std::vector<double>(6, 2.0), oa);
    const auto rb = b.step(std::vector<double>(6, 1.0), ob);
    CHECK(oa == ob);
    CHECK(ra.reward == doctest::Approx(rb.reward - 0.1 * (24.0 - 6.0)).epsilon(1e-12));
  }

  TEST_CASE("half_cheetah: invalid actions throw InvalidAction and change nothing") {
    HalfCheetah env;
    std::vector<float> obs(17);
    env.reset(1, obs);
    const auto before = env.state();
    std::vector<double> a(6, 0.0);
    a[3] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(env.step(a, obs), dprl::InvalidAction);
    a[3] = 2e10;  // MuJoCo would flag it as a bad control and zero all controls
    CHECK_THROWS_AS(env.step(a, obs), dprl::InvalidAction);
    CHECK_THROWS_AS(env.step(std::vector<double>(5, 0.0), obs), dprl::InvalidAction);
    CHECK(env.elapsed_steps() == 0);
    CHECK(env.state() == before);
  }

  TEST_CASE("half_cheetah: the same seed gives identical bytes") {
    HalfCheetah a, b;
    std::vector<float> oa(17), ob(17);
    a.reset(42, oa);
    b.reset(42, ob);
    CHECK(std::memcmp(oa.data(), ob.data(), oa.size() * sizeof(float)) == 0);
    const CheetahTrace ta = rollout(a, 9, 300), tb = rollout(b, 9, 300);
    CHECK(std::memcmp(ta.obs.data(), tb.obs.data(), ta.obs.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(ta.rewards.data(), tb.rewards.data(), ta.rewards.size() * sizeof(double)) ==
          0);
    a.reset(43, oa);
    b.reset(42, ob);
    CHECK(oa != ob);
  }

  TEST_CASE("half_cheetah: reset noise is uniform on qpos and scaled normal on qvel") {
    HalfCheetah env;
    std::vector<float> obs(17);
    double max_q = 0, sum_v2 = 0;
    const int episodes = 2000;
    for (int e = 0; e < episodes; ++e) {
      env.reset(e, obs);
      for (double q : env.qpos()) max_q = std::max(max_q, std::fabs(q));
      for (double v : env.qvel()) sum_v2 += v * v;
    }
    CHECK(max_q <= 0.1);
    CHECK(max_q > 0.099);
    // E[v^2] = 0.01; over 18000 draws the sample mean has sd 0.01 sqrt(2 / 18000) = 1.05e-4, so
    // 0.01 +- 6e-4 is beyond 5.7 sd (p < 1e-8)
    CHECK(std::fabs(sum_v2 / (episodes * 9) - 0.01) < 6e-4);
    HalfCheetah still({.reset_noise_scale = 0.0});
    still.reset(7, obs);
    CHECK(obs == std::vector<float>(17, 0.0f));
  }

  TEST_CASE("half_cheetah: exact state round trip reproduces the trajectory bit for bit") {
    HalfCheetah a, b;
    std::vector<float> oa(17), ob(17);
    a.reset(11, oa);
    rollout(a, 2, 60);  // in contact with the floor, warm start non-trivial
    const auto s = a.state();
    const CheetahTrace ta = rollout(a, 3, 200);
    b.reset(99, ob);
    rollout(b, 4, 10);
    b.set_state(s);
    CHECK(b.state() == s);
    CHECK(b.elapsed_steps() == 0);
    const CheetahTrace tb = rollout(b, 3, 200);
    CHECK(ta == tb);
  }

  TEST_CASE("half_cheetah: the 18-value Gymnasium set_state is a function of its values") {
    HalfCheetah a, b;
    std::vector<float> oa(17), ob(17);
    a.reset(1, oa);
    rollout(a, 5, 30);
    b.reset(2, ob);
    std::vector<double> s(18);
    dprl::Rng rng(8);
    for (double& x : s) x = rng.uniform(-0.1, 0.1);
    a.set_state(s);
    b.set_state(s);
    CHECK(a.state() == b.state());
    for (int i = 0; i < 9; ++i) {
      CHECK(a.qpos()[i] == s[i]);
      CHECK(a.qvel()[i] == s[9 + i]);
    }
    CHECK(rollout(a, 6, 100) == rollout(b, 6, 100));
  }

  TEST_CASE("half_cheetah: snapshot carries the RNG and the step counter") {
    HalfCheetah a, b;
    std::vector<float> oa(17), ob(17);
    a.reset(21, oa);
    rollout(a, 1, 7);
    const auto snap = a.snapshot();
    b.restore(snap);
    CHECK(b.elapsed_steps() == 7);
    CHECK(b.state() == a.state());
    CHECK(rollout(a, 2, 20) == rollout(b, 2, 20));
  }

  TEST_CASE("half_cheetah: missing and corrupt assets are ModelLoadErrors naming the path") {
    const std::string missing = temp_path("no_such_model.xml");
    std::filesystem::remove(missing);
    try {
      make_env("half_cheetah", {{"xml_file", {missing, "test"}}});
      FAIL("no error");
    } catch (const dprl::ModelLoadError& e) {
      CHECK(std::string(e.what()).find(missing) != std::string::npos);
    }
    const std::string corrupt = temp_path("corrupt_model.xml");
    std::ofstream(corrupt) << "<mujoco><worldbody><body><geom type=\"capsule\"";
    try {
      make_env("half_cheetah", {{"xml_file", {corrupt, "test"}}});
      FAIL("no error");
    } catch (const dprl::ModelLoadError& e) {
      CHECK(std::string(e.what()).find(corrupt) != std::string::npos);
    }
    // a valid model with other joints
    const std::string other = temp_path("pendulum_model.xml");
    std::ofstream(other) << "<mujoco><worldbody><body><joint type=\"hinge\"/>"
                            "<geom type=\"sphere\" size=\"0.1\"/></body></worldbody></mujoco>";
    try {
      make_env("half_cheetah", {{"xml_file", {other, "test"}}});
      FAIL("no error");
    } catch (const dprl::ModelLoadError& e) {
      CHECK(std::string(e.what()).find("nq=1") != std::string::npos);
    }
  }

  TEST_CASE("half_cheetah: out-of-range parameters throw ParamError") {
    for (auto [k, v] : {std::pair{"frame_skip", "0"},
                        {"frame_skip", "1001"},
                        {"ctrl_cost_weight", "-0.1"},
                        {"reset_noise_scale", "-1"},
                        {"reset_noise_scale", "11"},
                        {"forward_reward_weight", "inf"},
                        {"max_episode_steps", "0"},
                        {"exclude_current_positions_from_observation", "maybe"}}) {
      CAPTURE(k);
      CHECK_THROWS_AS(make_env("half_cheetah", {{k, {v, "test"}}}), dprl::ParamError);
    }
  }

  TEST_CASE("half_cheetah: an exploding state is a DataError and reset recovers") {
    HalfCheetah env;
    std::vector<float> obs(17);
    env.reset(0, obs);
    std::vector<double> s(18, 0.0);
    s[12] = 1e9;  // bfoot spinning at 1e9 rad/s
    env.set_state(s);
    bool threw = false;
    for (int i = 0; i < 5 && !threw; ++i) {
      try {
        env.step(std::vector<double>(6, 0.0), obs);
      } catch (const dprl::DataError& e) {
        threw = true;
        CHECK(std::string(e.what()).find("half_cheetah: MuJoCo") != std::string::npos);
      }
    }
    CHECK(threw);
    env.reset(0, obs);
    CHECK_NOTHROW(env.step(std::vector<double>(6, 0.0), obs));
  }

}  // TEST_SUITE

TEST_SUITE("golden") {
  TEST_CASE("half_cheetah: standing still with zero action earns about zero") {
    HalfCheetah env({.reset_noise_scale = 0.0});
    std::vector<float> obs(17);
    env.reset(0, obs);
    const std::vector<double> zero(6, 0.0);
    double total = 0;
    for (int t = 0; t < 1000; ++t) total += env.step(zero, obs).reward;
    // it drops 0.7 m less its leg length onto the floor and settles: the return is the net
    // displacement over dt, i.e. sum(reward) * dt = x_final - x_0
    CHECK(std::fabs(total * 0.05 - env.qpos()[0]) < 1e-9);
    CHECK(std::fabs(env.qpos()[0]) < 0.05);
    // at rest at the end
    for (double v : env.qvel()) CHECK(std::fabs(v) < 1e-3);
  }

  TEST_CASE("half_cheetah: an open-loop gait runs forward") {
    HalfCheetah env({.reset_noise_scale = 0.0});
    std::vector<float> obs(17);
    env.reset(0, obs);
    double total = 0;
    for (int t = 0; t < 1000; ++t) total += env.step(gait(t), obs).reward;
    // measured here: x = 49.15 m and return 683.1 (20 s at about 2.5 m/s)
    CHECK(env.qpos()[0] > 40.0);
    CHECK(total > 500.0);
  }

}  // TEST_SUITE
