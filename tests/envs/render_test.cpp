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
    CHECK_FALSE(dprl::envs::has_renderer("lunar_lander"));
    CHECK_FALSE(render_scene(*make_env("hiv")).has_value());
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
}
