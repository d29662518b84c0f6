#include "envs/register_envs.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "engine/error.hpp"
#include "envs/cartpole.hpp"
#include "envs/hiv.hpp"
#include "envs/taxi.hpp"

namespace {

// the parameter text of key in an env's resolved parameters
std::string typed_param(const dprl::Env& env, const std::string& key) {
  for (const auto& [k, v] : env.params())
    if (k == key) return v.text;
  return "";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("make_env<E>: the alias's preset, then the typed parameters") {
    using dprl::envs::CartPole;
    using dprl::envs::make_env;
    CHECK(make_env<CartPole>("cartpole")->spec().max_episode_steps == 500);
    CHECK(make_env<CartPole>("CartPole-v1")->spec().max_episode_steps == 500);
    CHECK(make_env<CartPole>("CartPole-v0")->spec().max_episode_steps == 200);
    // a field left at its default keeps the preset; a field set wins
    const auto g = make_env<CartPole>("CartPole-v0", {.gravity = 9.81});
    CHECK(g->spec().max_episode_steps == 200);
    CHECK(typed_param(*g, "gravity") == "9.81");
    CHECK(make_env<CartPole>("CartPole-v0", {.max_episode_steps = 300})->spec().max_episode_steps ==
          300);
    // a preset of two fields (hiv-rlpy: 5 days per step, 200 steps)
    const auto h = make_env<dprl::envs::Hiv>("hiv-rlpy", {.drug1_penalty = 1e4});
    CHECK(typed_param(*h, "days_per_step") == "5");
    CHECK(h->spec().max_episode_steps == 200);
    CHECK(typed_param(*h, "drug1_penalty") == "10000");
    // the same env as the string route, step for step
    auto typed = make_env<CartPole>("CartPole-v0");
    auto named = make_env("CartPole-v0");
    CHECK(typed->params().size() == named->params().size());
    std::vector<float> oa(4), ob(4);
    typed->reset(3, oa);
    named->reset(3, ob);
    for (int t = 0; t < 200; ++t) {
      const auto ra = typed->step(std::int64_t{t % 2}, oa);
      const auto rb = named->step(std::int64_t{t % 2}, ob);
      REQUIRE(oa == ob);
      REQUIRE(ra.truncated == rb.truncated);
      if (ra.terminated) break;
    }
  }

  TEST_CASE("make_env<E>: ids of another class, unknown ids and bad parameters are refused") {
    using dprl::envs::CartPole;
    using dprl::envs::make_env;
    CHECK_THROWS_AS(make_env<CartPole>("Taxi-v3"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(make_env<dprl::envs::Taxi>("CartPole-v0"),
                         "make_env: 'CartPole-v0' is the env 'cartpole', not the class of 'taxi'",
                         dprl::ParamError);
    CHECK_THROWS_AS(make_env<CartPole>("no_such_env"), dprl::UnknownName);
    CHECK_THROWS_AS(make_env<CartPole>("cartpole", {.gravity = -1}), dprl::ParamError);
  }
}
