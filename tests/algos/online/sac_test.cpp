// SAC and DDPG: tiny runs are deterministic, tune the temperature, and save loadable policies.
#include "algos/online/sac.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "algos/core/nn_policy.hpp"
#include "algos/core/policies.hpp"
#include "algos/run/experiment.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"

namespace fs = std::filesystem;

namespace {

fs::path run_small(const std::string& algo, const std::string& name) {
  auto d = fs::temp_directory_path() / ("dprl_sac_test_" + name);
  fs::remove_all(d);
  dprl::algos::RunOptions o;
  o.out = d;
  o.progress = dprl::Progress::Mode::kOff;
  dprl::algos::run_experiment(
      dprl::parse_yaml("seed: 8\nenv: {id: pendulum}\nalgo: {id: " + algo +
                           ", params: {learning_starts: 200, batch_size: 32, "
                           "hidden_sizes: '32,32'}}\n"
                           "train: {steps: 600, eval_every: 300, eval_episodes: 2}\n",
                       "inline"),
      "t", o);
  return d;
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("sac and ddpg same seed gives identical metrics and policies") {
    for (const std::string algo : {"sac", "ddpg"}) {
      const auto a = run_small(algo, algo + "_a"), b = run_small(algo, algo + "_b");
      CHECK(dprl::read_file(a / "metrics.csv") == dprl::read_file(b / "metrics.csv"));
      CHECK(dprl::read_file(a / "policy.bin") == dprl::read_file(b / "policy.bin"));
      auto env = dprl::envs::make_env("pendulum");
      auto pol = dprl::algos::make_policy((a / "policy.bin").string(), *env);
      std::vector<float> obs(3);
      env->reset(1, obs);
      double act[1];
      pol->act_continuous(obs, act);
      CHECK(std::abs(act[0]) <= 2.0);
    }
  }
}

TEST_SUITE("unit") {
  TEST_CASE("sac tunes its temperature away from the initial value") {
    dprl::algos::SacParams p;
    p.learning_starts = 100;
    p.batch_size = 16;
    p.hidden_sizes = "16,16";
    dprl::algos::Sac sac(p);
    dprl::algos::TrainParams t;
    t.steps = 400;
    t.eval_every = 0;
    t.eval_episodes = 1;
    dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("pendulum"); }, 1, t, nullptr,
                                  nullptr);
    sac.train(ctx);
    // alpha starts at exp(0) = 1; 300 Adam steps of size 1e-3 on log alpha move it by up to 0.3
    CHECK(sac.alpha() != 1.0);
    CHECK(sac.alpha() > 0.7);
    CHECK(sac.alpha() < 1.4);
  }
}
