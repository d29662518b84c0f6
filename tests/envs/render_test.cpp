// Tests of the env renderers (envs/render.hpp): well-formed pictures along seeded random
// rollouts, and trajectories left untouched by rendering.
#include "envs/render.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/policy.hpp"
#include "engine/rng.hpp"
#include "envs/lunar_lander.hpp"
#include "envs/register_envs.hpp"
#include "tests/test_util.hpp"

using dprl::envs::make_env;
using dprl::envs::render_scene;

namespace {

// One seeded random step of env (uniform discrete action or uniform box action).
dprl::StepResult render_test_random_step(dprl::Env& env, dprl::Rng& rng, std::vector<float>& obs) {
  const auto& a = env.spec().action;
  if (a.is_discrete())
    return env.step(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(a.n))), obs);
  std::vector<double> u(a.dim());
  for (std::size_t k = 0; k < u.size(); ++k) u[k] = rng.uniform(a.low[k], a.high[k]);
  return env.step(std::span<const double>(u), obs);
}

// Draws every state evaluate() passes through and, from max_steps on, ends the episode.
class RenderTestObserver final : public dprl::EpisodeObserver {
 public:
  explicit RenderTestObserver(std::int64_t max_steps) : max_steps_(max_steps) {}
  void on_reset(const dprl::Env& env, int) override {
    frames += render_scene(env).has_value();
    ++resets;
  }
  bool on_step(const dprl::Env& env, int, std::int64_t step, const dprl::StepResult&,
               double) override {
    frames += render_scene(env).has_value();
    return step < max_steps_;
  }
  int frames = 0, resets = 0;

 private:
  std::int64_t max_steps_;
};

// the point of a polygon farthest along +y
std::pair<double, double> render_test_top(const dprl::envs::Shape& sh) {
  std::pair<double, double> top{0, -1e300};
  for (std::size_t i = 0; i + 1 < sh.v.size(); i += 2)
    if (sh.v[i + 1] > top.second) top = {sh.v[i], sh.v[i + 1]};
  return top;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("render: every rendered env draws well-formed SVG along a seeded random rollout") {
    for (const auto& id : dprl::envs::rendered_env_ids()) {
      CAPTURE(id);
      auto env = make_env(id);
      std::vector<float> obs(env->obs_dim());
      dprl::Rng rng(7);
      env->reset(11, obs);
      for (int t = 0; t < 60; ++t) {
        const auto scene = render_scene(*env);
        REQUIRE(scene.has_value());
        CHECK(scene->width > 0);
        CHECK(scene->height > 0);
        CHECK(!scene->shapes.empty());
        const std::string svg = dprl::envs::scene_svg(*scene);
        REQUIRE(test_util::well_formed(svg));
        CHECK(svg.find("nan") == std::string::npos);
        CHECK(svg.find("inf") == std::string::npos);
        const auto r = render_test_random_step(*env, rng, obs);
        if (r.terminated || r.truncated) env->reset(12 + t, obs);
      }
    }
  }

  TEST_CASE("render: rendering after every step leaves the trajectory byte-identical") {
    for (const auto& id : dprl::envs::rendered_env_ids()) {
      CAPTURE(id);
      auto plain = make_env(id), drawn = make_env(id);
      std::vector<float> obs_a(plain->obs_dim()), obs_b(drawn->obs_dim());
      dprl::Rng rng_a(3), rng_b(3);
      plain->reset(5, obs_a);
      drawn->reset(5, obs_b);
      std::size_t drawn_shapes = 0;
      for (int t = 0; t < 300; ++t) {
        const auto ra = render_test_random_step(*plain, rng_a, obs_a);
        const auto rb = render_test_random_step(*drawn, rng_b, obs_b);
        drawn_shapes += render_scene(*drawn)->shapes.size();
        REQUIRE(std::memcmp(obs_a.data(), obs_b.data(), obs_a.size() * sizeof(float)) == 0);
        REQUIRE(std::memcmp(&ra.reward, &rb.reward, sizeof(double)) == 0);
        REQUIRE(ra.terminated == rb.terminated);
        REQUIRE(ra.truncated == rb.truncated);
        if (ra.terminated || ra.truncated) {
          plain->reset(100 + t, obs_a);
          drawn->reset(100 + t, obs_b);
        }
      }
      CHECK(plain->state() == drawn->state());
      CHECK(drawn_shapes > 0);
    }
  }

  TEST_CASE("render: aliases render by their env id and unrendered envs give nullopt") {
    CHECK(render_scene(*make_env("CartPole-v0")).has_value());
    CHECK(dprl::envs::has_renderer("taxi"));
    CHECK(dprl::envs::has_renderer("lunar_lander"));
    CHECK(render_scene(*make_env("LunarLanderContinuous-v3")).has_value());
    CHECK_FALSE(dprl::envs::has_renderer("no_such_env"));
    CHECK(render_scene(*make_env("HalfCheetah-v5")).has_value());
  }

  TEST_CASE("render: cartpole follows Gymnasium's geometry and the pole length parameter") {
    auto env = make_env("cartpole", {{"length", {"1.0", "test"}}});
    std::vector<float> obs(4);
    env->reset(0, obs);
    const std::vector<double> upright = {1.2, 0, 0, 0};
    env->set_state(upright);
    const auto sc = *render_scene(*env);
    CHECK(sc.width == doctest::Approx(4.8));
    CHECK(sc.height == doctest::Approx(3.2));
    // the pole polygon: 2 length long above the axle, 7.5 px (0.06 m) above the cart's centre
    bool found = false;
    for (const auto& sh : sc.shapes) {
      if (sh.kind != dprl::envs::Shape::Kind::kPolygon) continue;
      found = true;
      double top = -1e9;
      for (std::size_t i = 1; i < sh.v.size(); i += 2) top = std::max(top, sh.v[i]);
      CHECK(top == doctest::Approx(0.8 + 0.06 + 2.0 - 0.04));
      CHECK(sh.v[0] == doctest::Approx(1.2 - 0.04));
    }
    CHECK(found);
  }

  TEST_CASE("render: taxi and chain draw their discrete state") {
    auto taxi = make_env("taxi");
    std::vector<float> obs(1);
    taxi->reset(0, obs);
    // taxi at (2, 2) carrying the passenger to B
    taxi->set_state(std::vector<double>{static_cast<double>(((2 * 5 + 2) * 5 + 4) * 4 + 3)});
    const std::string svg = dprl::envs::scene_svg(*render_scene(*taxi));
    CHECK(svg.find("#2ca02c") != std::string::npos);  // the taxi with the passenger aboard
    CHECK(test_util::count(svg, "<text ") == 4);      // R, G, Y, B

    auto chain = make_env("chain_mdp", {{"n", {"1000", "test"}}});
    chain->reset(0, obs);
    chain->set_state(std::vector<double>{537});
    const std::string strip = dprl::envs::scene_svg(*render_scene(*chain));
    CHECK(strip.find("state 537 (goal 999), cells 500-599 of 1000") != std::string::npos);
  }

  TEST_CASE(
      "render: evaluate with a drawing observer gives eval's statistics and may cut episodes") {
    for (const auto& id : dprl::envs::rendered_env_ids()) {
      CAPTURE(id);
      auto env = make_env(id);
      dprl::RandomPolicy policy(env->spec());
      const auto plain = dprl::evaluate(*env, policy, 3, 17);
      RenderTestObserver all(1 << 30);
      const auto drawn = dprl::evaluate(*env, policy, 3, 17, 0, &all);
      CHECK(std::memcmp(&plain.return_mean, &drawn.return_mean, sizeof(double)) == 0);
      CHECK(plain.return_std == drawn.return_std);
      CHECK(plain.length_mean == drawn.length_mean);
      CHECK(all.resets == 3);
      CHECK(all.frames == 3 + static_cast<int>(3 * plain.length_mean + 0.5));
      RenderTestObserver cut(5);
      const auto short_run = dprl::evaluate(*env, policy, 3, 17, 0, &cut);
      CHECK(short_run.length_mean <= 5);
      CHECK(cut.frames == 3 + static_cast<int>(3 * short_run.length_mean + 0.5));
    }
  }

  TEST_CASE("render: acrobot and pendulum follow Gymnasium's geometry") {
    std::vector<float> obs(6);
    auto acrobot = make_env("acrobot");
    acrobot->reset(0, obs);
    // both links straight up: link 2's far end at height 2, above the goal line at 1
    acrobot->set_state(std::vector<double>{M_PI, 0, 0, 0});
    const auto a = *render_scene(*acrobot);
    CHECK(a.width == doctest::Approx(4.4));
    std::vector<std::pair<double, double>> tops;
    for (const auto& sh : a.shapes)
      if (sh.kind == dprl::envs::Shape::Kind::kPolygon) tops.push_back(render_test_top(sh));
    REQUIRE(tops.size() == 2);
    CHECK(std::abs(tops[0].first) < 0.11);
    CHECK(tops[0].second == doctest::Approx(1.0));
    CHECK(tops[1].second == doctest::Approx(2.0));
    CHECK(a.shapes.front().kind == dprl::envs::Shape::Kind::kLine);  // the goal line
    CHECK(a.shapes.front().v[1] == 1.0);

    auto pendulum = make_env("pendulum");
    obs.resize(pendulum->obs_dim());
    pendulum->reset(0, obs);
    // theta = pi / 2 turns the rod counter-clockwise from upright: its end at (-1, 0)
    pendulum->set_state(std::vector<double>{M_PI / 2, 0});
    const auto p = *render_scene(*pendulum);
    CHECK(p.width == doctest::Approx(4.4));
    bool end_disc = false;
    for (const auto& sh : p.shapes)
      if (sh.kind == dprl::envs::Shape::Kind::kCircle && std::abs(sh.v[0] + 1) < 1e-12 &&
          std::abs(sh.v[1]) < 1e-12)
        end_disc = true;
    CHECK(end_disc);
  }

  TEST_CASE("render: lunar_lander draws the hull at its Box2D pose, flames and wind from state") {
    using dprl::envs::LunarLander;
    LunarLander::Params lp;
    lp.enable_wind = true;
    LunarLander env(lp);
    std::vector<float> obs(LunarLander::kObsDim);
    env.reset(3, obs);
    dprl::Rng rng(9);
    for (int t = 0; t < 40; ++t) env.step(static_cast<std::int64_t>(rng.below(4)), obs);
    env.step(std::int64_t{2}, obs);  // main engine last
    const auto v = env.view();
    // the pose is the observed one: x_obs = (x - W/2) / (W/2), y_obs = (y - (H/4 + 18/30)) / (H/2)
    const double w = 600.0 / 30, h = 400.0 / 30;
    CHECK(v.width == doctest::Approx(w));
    CHECK(v.height == doctest::Approx(h));
    CHECK(obs[0] == doctest::Approx((v.hull.x - w / 2) / (w / 2)).epsilon(1e-5));
    CHECK(obs[1] == doctest::Approx((v.hull.y - (h / 4 + 18.0 / 30)) / (h / 2)).epsilon(1e-5));
    CHECK(obs[4] == doctest::Approx(v.hull.angle).epsilon(1e-5));
    REQUIRE(v.terrain.size() == 22);
    // the middle chunk: Gymnasium smooths the helipad height by 0.33 x 3
    CHECK(v.terrain[11] == doctest::Approx(0.99 * h / 4));
    CHECK(v.helipad_x1 < w / 2);
    CHECK(v.helipad_x2 > w / 2);
    // a copy rebuilt from state() sees the same world (the path of non-LunarLander envs)
    LunarLander copy(lp);
    copy.set_state(env.state());
    const auto cv = copy.view();
    CHECK(cv.terrain == v.terrain);
    CHECK(cv.hull.x == v.hull.x);
    CHECK(cv.hull.angle == v.hull.angle);
    CHECK(cv.legs[1].y == v.legs[1].y);
    CHECK(cv.wind_force == v.wind_force);

    const auto sc = *render_scene(env);
    CHECK(sc.width == doctest::Approx(w));
    // the hull: LANDER_POLY / 30 turned by the angle about the body origin; its first vertex
    // (-14, 17) and the mean of its six vertices (0, 14/6) / 30
    const dprl::envs::Shape* hull = nullptr;
    int flames = 0, texts = 0;
    for (const auto& sh : sc.shapes) {
      if (sh.kind == dprl::envs::Shape::Kind::kPolygon && sh.v.size() == 12) hull = &sh;
      if (sh.fill == "#ff8c1a") ++flames;
      if (sh.kind == dprl::envs::Shape::Kind::kText) {
        ++texts;
        CHECK(sh.text.rfind("wind ", 0) == 0);
      }
    }
    REQUIRE(hull != nullptr);
    const double c = std::cos(v.hull.angle), s = std::sin(v.hull.angle);
    CHECK(hull->v[0] == doctest::Approx(v.hull.x + (-14 * c - 17 * s) / 30));
    CHECK(hull->v[1] == doctest::Approx(v.hull.y + (-14 * s + 17 * c) / 30));
    double mx = 0, my = 0;
    for (int i = 0; i < 6; ++i) {
      mx += hull->v[2 * i] / 6;
      my += hull->v[2 * i + 1] / 6;
    }
    CHECK(mx == doctest::Approx(v.hull.x - s * 14.0 / 6 / 30));
    CHECK(my == doctest::Approx(v.hull.y + c * 14.0 / 6 / 30));
    CHECK(flames == 1);  // the main engine only
    CHECK(texts == 1);   // the wind label
    // a no-op last: no flame; without wind: no wind label
    env.step(std::int64_t{0}, obs);
    const auto idle = *render_scene(env);
    for (const auto& sh : idle.shapes) CHECK(sh.fill != "#ff8c1a");
    LunarLander calm;
    calm.reset(3, obs);
    calm.step(std::int64_t{1}, obs);  // a side engine
    int calm_flames = 0;
    const auto calm_scene = *render_scene(calm);
    for (const auto& sh : calm_scene.shapes) {
      CHECK(sh.kind != dprl::envs::Shape::Kind::kText);
      calm_flames += sh.fill == "#ff8c1a";
    }
    CHECK(calm_flames == 1);
  }

  TEST_CASE("render: hiv draws six bars monotone in the log10 of the state") {
    auto env = make_env("hiv");
    std::vector<float> obs(env->obs_dim());
    env->reset(1, obs);
    // a state with the six values 10^0.5 .. 10^5.5 in increasing order, then reversed
    for (const bool up : {true, false}) {
      std::vector<double> st(6);
      for (int i = 0; i < 6; ++i) st[i] = std::pow(10.0, 0.5 + (up ? i : 5 - i));
      env->set_state(st);
      const auto sc = *render_scene(*env);
      std::vector<const dprl::envs::Shape*> bars;
      for (const auto& sh : sc.shapes)
        if (sh.kind == dprl::envs::Shape::Kind::kRect) bars.push_back(&sh);
      REQUIRE(bars.size() == 6);
      for (int i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(bars[i]->v[0] == 0);  // from log10 = 0
        CHECK(bars[i]->v[2] == doctest::Approx(std::log10(st[i])));
        CHECK(bars[i]->v[1] > (i + 1 < 6 ? bars[i + 1]->v[1] : -1));  // T1 on top
      }
      bool labelled = false;
      for (const auto& sh : sc.shapes) labelled |= sh.text == "T2*";
      CHECK(labelled);
    }
    // values beyond the axis are clipped to [-1, 8]
    env->set_state(std::vector<double>{1e12, 1e-3, 1, 1, 1, 1});
    const auto sc = *render_scene(*env);
    std::vector<const dprl::envs::Shape*> bars;
    for (const auto& sh : sc.shapes)
      if (sh.kind == dprl::envs::Shape::Kind::kRect) bars.push_back(&sh);
    REQUIRE(bars.size() == 6);
    CHECK(bars[0]->v[2] == doctest::Approx(8));
    CHECK(bars[1]->v[0] == doctest::Approx(-1));
    CHECK(bars[1]->v[2] == doctest::Approx(1));
  }

  TEST_CASE("render: linear_mdp draws its states as a strip with the current one") {
    auto env = make_env("linear_mdp", {{"kind", {"tabular", "test"}},
                                         {"num_states", {"250", "test"}},
                                         {"num_actions", {"2", "test"}},
                                         {"horizon", {"2", "test"}}});
    std::vector<float> obs(env->obs_dim());
    env->reset(2, obs);
    env->set_state(std::vector<double>{137});
    const auto sc = *render_scene(*env);
    CHECK(sc.width == 102);  // 100 cells shown and a margin of one on each side
    bool current = false, label = false;
    for (const auto& sh : sc.shapes) {
      if (sh.kind == dprl::envs::Shape::Kind::kRect && sh.fill == "#1f77b4")
        current = sh.v[0] == 37 && sh.v[2] == 1;
      if (sh.text == "state 137 of 250 (tabular), cells 100-199 of 250") label = true;
      CHECK(sh.fill != "#98df8a");  // no goal cell but for the chain instance
    }
    CHECK(current);
    CHECK(label);
    auto chain = make_env("linear_mdp", {{"kind", {"chain", "test"}}, {"chain_n", {"12", "test"}}});
    chain->reset(2, obs);
    int goal = 0;
    const auto chain_scene = *render_scene(*chain);
    for (const auto& sh : chain_scene.shapes)
      if (sh.fill == "#98df8a") goal += sh.v[0] == 11;
    CHECK(goal == 1);
  }

  TEST_CASE("render: dmc_cartpole draws the cart at the slider and the pole turned by the hinge") {
    auto env = make_env("dmc_cartpole");
    std::vector<float> obs(env->obs_dim());
    env->reset(4, obs);
    env->set_state(std::vector<double>{0.5, M_PI / 2, 0, 0});  // the pole level, toward +x
    const auto sc = *render_scene(*env);
    bool cart = false, tip = false;
    for (const auto& sh : sc.shapes) {
      if (sh.kind == dprl::envs::Shape::Kind::kRect && sh.fill == "#cc8033")
        cart = sh.v[0] == doctest::Approx(0.3) && sh.v[1] == doctest::Approx(0.9);
      if (sh.kind == dprl::envs::Shape::Kind::kCircle && std::abs(sh.v[0] - 1.5) < 1e-12 &&
          std::abs(sh.v[1] - 1) < 1e-12)
        tip = true;
    }
    CHECK(cart);
    CHECK(tip);
  }

  TEST_CASE("render: half_cheetah places its capsules by planar kinematics from qpos") {
    auto env = make_env("half_cheetah");
    std::vector<float> obs(env->obs_dim());
    env->reset(4, obs);
    std::vector<double> st(18, 0.0);
    st[0] = 3;  // rootx: the view follows the torso
    env->set_state(st);
    const auto sc = *render_scene(*env);
    CHECK(sc.x0 == doctest::Approx(1));
    // the torso's ends (-0.5, 0) and (0.5, 0) from (rootx, 0.7): the first two discs
    std::vector<std::pair<double, double>> discs;
    for (const auto& sh : sc.shapes)
      if (sh.kind == dprl::envs::Shape::Kind::kCircle) discs.emplace_back(sh.v[0], sh.v[1]);
    REQUIRE(discs.size() == 16);  // 8 capsules, 2 ends each
    CHECK(discs[0].first == doctest::Approx(2.5));
    CHECK(discs[0].second == doctest::Approx(0.7));
    CHECK(discs[1].first == doctest::Approx(3.5));
    // the back foot's centre at qpos = 0: body origins (-0.5, 0) + (0.16, -0.25) + (-0.28, -0.14)
    // then its geom pos (0.03, -0.097)
    const double fx = (discs[8].first + discs[9].first) / 2;
    const double fz = (discs[8].second + discs[9].second) / 2;
    CHECK(fx == doctest::Approx(3 - 0.5 + 0.16 - 0.28 + 0.03));
    CHECK(fz == doctest::Approx(0.7 - 0.25 - 0.14 - 0.097));
    // rooty turns the whole body about y: the torso's front end goes down for a positive angle
    st[2] = 0.3;
    env->set_state(st);
    const auto turned = *render_scene(*env);
    std::vector<std::pair<double, double>> tdiscs;
    for (const auto& sh : turned.shapes)
      if (sh.kind == dprl::envs::Shape::Kind::kCircle) tdiscs.emplace_back(sh.v[0], sh.v[1]);
    REQUIRE(tdiscs.size() == 16);
    CHECK(tdiscs[1].first == doctest::Approx(3 + 0.5 * std::cos(0.3)));
    CHECK(tdiscs[1].second == doctest::Approx(0.7 - 0.5 * std::sin(0.3)));
  }
}
