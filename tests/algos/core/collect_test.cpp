// Collection: seeded, replayable episodes with env id, resolved params, user id and seeds; the
// action floor's probabilities (statistical); parameter checks.
#include "algos/core/collect.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "algos/core/floored_policy.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"

namespace {

using dprl::Dataset;
using dprl::algos::CollectParams;

// Always the same discrete action.
class ConstantPolicy final : public dprl::Policy {
 public:
  explicit ConstantPolicy(std::int64_t a) : a_(a) {}
  std::string name() const override { return "constant"; }
  std::int64_t act_discrete(std::span<const float>, std::span<const std::uint8_t>) override {
    return a_;
  }

 private:
  std::int64_t a_;
};

bool same(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// Replays every episode from its stored seed and actions; the observations and rewards must
// match bit for bit.
void check_replay(const Dataset& d) {
  auto env = dprl::envs::make_env(d.info().env_id, d.info().env_params);
  std::vector<float> obs(d.obs_dim());
  std::vector<double> act(d.act_dim());
  for (std::size_t e = 0; e < d.num_episodes(); ++e) {
    env->reset(static_cast<std::uint64_t>(d.episode_seed(e)), obs);
    const std::size_t t0 = d.episode_start(e);
    REQUIRE(same(obs, d.obs(t0, e)));
    for (std::size_t t = t0; t < t0 + d.episode_length(e); ++t) {
      dprl::StepResult r;
      if (d.info().action_space.is_discrete()) {
        r = env->step(d.discrete_action(t), obs);
      } else {
        for (std::size_t i = 0; i < act.size(); ++i) act[i] = d.action(t)[i];
        r = env->step(std::span<const double>(act), obs);
      }
      REQUIRE(same(obs, d.next_obs(t, e)));
      CHECK(static_cast<float>(r.reward) == d.reward(t));
      CHECK(r.terminated == d.terminated(t));
      CHECK(r.truncated == d.truncated(t));
    }
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("collect records env id, resolved params, spaces, user id and replayable seeds") {
    CollectParams p;
    p.episodes = 6;
    p.seed = 42;
    p.user_id = 17;
    p.action_floor = 0.05;
    dprl::ParamMap params = {{"gravity", {"9.0", "--param"}}};
    const Dataset d = dprl::algos::collect("CartPole-v0", params, "random", p);
    CHECK(d.num_episodes() == 6);
    CHECK(d.info().env_id == "cartpole");
    CHECK(d.info().dataset_id == "dprl/cartpole/random-v0");
    bool saw_gravity = false, saw_limit = false;
    for (const auto& [k, v] : d.info().env_params) {
      saw_gravity = saw_gravity || (k == "gravity" && v.text == "9");
      saw_limit = saw_limit || (k == "max_episode_steps" && v.text == "200");
    }
    CHECK(saw_gravity);
    CHECK(saw_limit);
    CHECK(d.info().action_space.n == 2);
    CHECK(d.users() == std::vector<std::int64_t>{17});
    for (std::size_t e = 0; e < d.num_episodes(); ++e) CHECK(d.episode_seed(e) >= 0);
    CHECK(d.info().metadata_json.find("\"action_floor\":0.05") != std::string::npos);
    d.validate("collected");
    check_replay(d);
    // same inputs, same bytes; another user id, other episodes
    const Dataset again = dprl::algos::collect("CartPole-v0", params, "random", p);
    CHECK(same(d.observations(), again.observations()));
    CHECK(same(d.actions(), again.actions()));
    p.user_id = 18;
    const Dataset other = dprl::algos::collect("CartPole-v0", params, "random", p);
    CHECK(other.episode_seed(0) != d.episode_seed(0));
  }

  TEST_CASE("continuous envs: Gaussian action noise stays in the bounds and replays exactly") {
    CollectParams p;
    p.episodes = 2;
    p.seed = 1;
    p.action_noise = 1.5;
    const Dataset d = dprl::algos::collect("pendulum", {}, "random", p);
    CHECK(d.num_transitions() == 400);
    for (std::size_t t = 0; t < d.num_transitions(); ++t) CHECK(std::fabs(d.action(t)[0]) <= 2.0f);
    d.validate("collected");
    check_replay(d);
  }

  TEST_CASE("the floor and the noise must fit the action space") {
    CollectParams p;
    p.action_floor = 0.5;
    CHECK_THROWS_WITH_AS(dprl::algos::collect("cartpole", {}, "random", p),
                         doctest::Contains("must lie in [0, 1/|A|) = [0, 0.5)"), dprl::ParamError);
    p.action_floor = 0.1;
    CHECK_THROWS_WITH_AS(dprl::algos::collect("pendulum", {}, "random", p),
                         doctest::Contains("continuous actions"), dprl::ParamError);
    p.action_floor = 0;
    p.action_noise = 0.1;
    CHECK_THROWS_WITH_AS(dprl::algos::collect("cartpole", {}, "random", p),
                         doctest::Contains("discrete actions"), dprl::ParamError);
    p.action_noise = 0;
    p.episodes = 0;
    CHECK_THROWS_AS(dprl::algos::collect("cartpole", {}, "random", p), dprl::ParamError);
    p.episodes = 1;
    CHECK_THROWS_AS(dprl::algos::collect("cartpole", {}, "no_such_policy", p), dprl::UnknownName);
  }

  TEST_CASE("floored_action maps u to the other actions in order, then to a*") {
    using dprl::algos::floored_action;
    // n = 4, P = 0.02, a* = 2: [0, .02) -> 0, [.02, .04) -> 1, [.04, .06) -> 3, else 2
    CHECK(floored_action(2, 4, 0.02, 0.0) == 0);
    CHECK(floored_action(2, 4, 0.02, 0.019) == 0);
    CHECK(floored_action(2, 4, 0.02, 0.021) == 1);
    CHECK(floored_action(2, 4, 0.02, 0.05) == 3);
    CHECK(floored_action(2, 4, 0.02, 0.061) == 2);
    CHECK(floored_action(2, 4, 0.02, 0.999) == 2);
    CHECK(floored_action(0, 2, 0.0, 0.0) == 0);
    dprl::algos::FlooredPolicy fp(std::make_unique<ConstantPolicy>(1), 3, 0.1);
    CHECK(fp.probability(1, 1) == doctest::Approx(0.8));
    CHECK(fp.probability(1, 0) == doctest::Approx(0.1));
    CHECK_THROWS_AS(dprl::algos::FlooredPolicy(std::make_unique<ConstantPolicy>(0), 3, 0.34),
                    dprl::ParamError);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("with floor P every other action has probability P (LunarLander, 4 actions)") {
    auto env = dprl::envs::make_env("lunar_lander");
    ConstantPolicy base(2);
    CollectParams p;
    p.episodes = 300;
    p.seed = 9;
    p.action_floor = 0.05;
    const Dataset d = dprl::algos::collect(*env, base, "constant", p);
    std::vector<double> count(4, 0);
    for (std::size_t t = 0; t < d.num_transitions(); ++t) ++count[d.discrete_action(t)];
    const double n = static_cast<double>(d.num_transitions());
    REQUIRE(n > 5000);
    // each other action ~ Binomial(n, 0.05) (steps are independent draws given the history):
    // p = 1e-6 / 4 two-sided: |z| < 5.1
    const double sd = std::sqrt(n * 0.05 * 0.95);
    for (int a : {0, 1, 3}) CHECK(std::fabs(count[a] - 0.05 * n) < 5.1 * sd);
    CHECK(std::fabs(count[2] - 0.85 * n) < 5.1 * std::sqrt(n * 0.85 * 0.15));
  }
}
