// PPO: determinism, learning on CartPole with a fixed seed, continuous actions, checkpoints.
#include "algos/online/ppo.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "algos/core/nn_policy.hpp"
#include "algos/core/policies.hpp"
#include "algos/run/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"

namespace fs = std::filesystem;

namespace {

fs::path ppo_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("dprl_ppo_test_" + name);
  fs::remove_all(d);
  return d;
}

dprl::algos::RunOptions ppo_quiet(fs::path out) {
  dprl::algos::RunOptions o;
  o.out = out;
  o.progress = dprl::Progress::Mode::kOff;
  return o;
}

dprl::Node ppo_config(const std::string& env, const std::string& algo, int steps,
                      const std::string& params = "") {
  return dprl::parse_yaml("seed: 3\nenv: {id: " + env + "}\nalgo: {id: " + algo + ", params: {" +
                              params + "}}\ntrain: {steps: " + std::to_string(steps) +
                              ", eval_every: 2048, eval_episodes: 5}\n",
                          "inline");
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("ppo same seed gives byte-identical metrics and policy") {
    const auto a = ppo_dir("golden_a"), b = ppo_dir("golden_b");
    dprl::algos::run_experiment(ppo_config("cartpole", "ppo", 4096), "t", ppo_quiet(a));
    dprl::algos::run_experiment(ppo_config("cartpole", "ppo", 4096), "t", ppo_quiet(b));
    CHECK(dprl::read_file(a / "metrics.csv") == dprl::read_file(b / "metrics.csv"));
    CHECK(dprl::read_file(a / "policy.bin") == dprl::read_file(b / "policy.bin"));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("ppo improves cartpole with a fixed seed and its checkpoint reloads") {
    const auto d = ppo_dir("learn");
    const auto s =
        dprl::algos::run_experiment(ppo_config("cartpole", "ppo", 30720), "t", ppo_quiet(d));
    // random play scores about 22; seed 3 reaches the time limit of 500 by 30k steps
    CHECK(s.final_eval.return_mean >= 150);
    auto env = dprl::envs::make_env("cartpole");
    auto pol = dprl::algos::make_policy((d / "policy.bin").string(), *env);
    const auto again = dprl::evaluate(*env, *pol, 5, 0, 0);
    CHECK(again.return_mean >= 150);
    auto pend = dprl::envs::make_env("pendulum");
    CHECK_THROWS_AS(dprl::algos::make_policy((d / "policy.bin").string(), *pend), dprl::DataError);
  }

  TEST_CASE("ppo continuous runs on pendulum with normalisation and saves a clip policy") {
    const auto d = ppo_dir("cont");
    dprl::algos::run_experiment(
        ppo_config("pendulum", "ppo_continuous", 2048, "num_steps: 512, num_minibatches: 8"), "t",
        ppo_quiet(d));
    auto pol = dprl::algos::NnPolicy::load(d / "policy.bin");
    CHECK(pol->mode() == dprl::algos::NnPolicy::Mode::kClip);
    auto env = dprl::envs::make_env("pendulum");
    auto p2 = dprl::algos::make_policy((d / "policy.bin").string(), *env);
    const auto r = dprl::evaluate(*env, *p2, 2, 0, 0);
    CHECK(r.episodes == 2);
  }

  TEST_CASE("ppo counts its minibatch steps, fewer when target_kl ends the epochs early") {
    // 4 rollouts of 4 envs x 128 steps; 4 epochs of 4 minibatches each
    const auto all = dprl::algos::run_experiment(ppo_config("cartpole", "ppo", 2048), "t",
                                                 ppo_quiet(ppo_dir("count_all")));
    CHECK(all.env_steps == 2048);
    CHECK(all.gradient_steps == 4 * 4 * 4);
    // the first minibatch of a rollout has KL 0; a tiny target_kl stops after the first epoch
    const auto kl = dprl::algos::run_experiment(
        ppo_config("cartpole", "ppo", 2048, "target_kl: 1e-9"), "t", ppo_quiet(ppo_dir("count_kl")));
    CHECK(kl.env_steps == 2048);
    CHECK(kl.gradient_steps == 4 * 4);
  }

  TEST_CASE("ppo rejects batches that do not split into minibatches") {
    dprl::algos::PpoParams p;
    p.num_envs = 3;
    p.num_steps = 5;
    p.num_minibatches = 4;
    CHECK_THROWS_AS(dprl::algos::Ppo{p}, dprl::ParamError);
  }
}
