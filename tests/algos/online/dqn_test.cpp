// DQN: target network updates (hard and Polyak), determinism, checkpoint.
#include "algos/online/dqn.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <stop_token>
#include <string>

#include "algos/core/policies.hpp"
#include "algos/run/experiment.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"

namespace fs = std::filesystem;

namespace {

dprl::algos::TrainContext dqn_ctx(std::int64_t steps) {
  dprl::algos::TrainParams t;
  t.steps = steps;
  t.eval_every = 0;
  t.eval_episodes = 2;
  return dprl::algos::TrainContext([] { return dprl::envs::make_env("cartpole"); }, 4, t, nullptr,
                                   nullptr);
}

dprl::algos::DqnParams small_dqn() {
  dprl::algos::DqnParams p;
  p.learning_starts = 200;
  p.train_frequency = 1;
  p.target_network_frequency = 100;
  p.batch_size = 16;
  p.hidden_sizes = "16,16";
  return p;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("dqn hard target update copies the online network") {
    dprl::algos::Dqn dqn(small_dqn());
    auto ctx = dqn_ctx(1000);
    dqn.train(ctx);
    // updates at steps 300, 400, ..., 1000; the last follows the last gradient step
    CHECK(dqn.target_updates() == 8);
    CHECK(dqn.target().buffer() == dqn.q().buffer());
  }

  TEST_CASE("dqn polyak target update moves part way") {
    auto p = small_dqn();
    p.tau = 0.5;
    p.target_network_frequency = 1;
    dprl::algos::Dqn dqn(p);
    auto ctx = dqn_ctx(400);
    dqn.train(ctx);
    CHECK(dqn.target_updates() == 200);
    CHECK(dqn.target().buffer() != dqn.q().buffer());
  }

  TEST_CASE("dqn reports env steps and the gradient steps it took") {
    auto p = small_dqn();
    p.train_frequency = 4;
    dprl::algos::Dqn dqn(p);
    auto ctx = dqn_ctx(1000);
    const dprl::algos::TrainSteps done = dqn.train(ctx);
    CHECK(done.env_steps == 1000);
    CHECK(done.gradient_steps == 200);  // steps 204, 208, ..., 1000
  }

  TEST_CASE("dqn's gradient step count survives a stop and resume") {
    const auto run = [](const fs::path& d, const dprl::algos::RunOptions& o) {
      return dprl::algos::run_experiment(
          dprl::parse_yaml("seed: 2\nout: " + d.string() +
                               "\nenv: {id: cartpole}\nalgo: {id: dqn, params: "
                               "{learning_starts: 500, train_frequency: 4, hidden_sizes: '16'}}\n"
                               "train: {steps: 3000, eval_every: 1000, eval_episodes: 2, "
                               "checkpoint_every: 1000}\n",
                               "inline"),
          "t", o);
    };
    dprl::algos::RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    const auto ref = fs::temp_directory_path() / "dprl_dqn_test_count_ref";
    fs::remove_all(ref);
    CHECK(run(ref, o).gradient_steps == 625);  // (3000 - 500) / 4
    const auto d = fs::temp_directory_path() / "dprl_dqn_test_count";
    fs::remove_all(d);
    std::stop_source stop;
    dprl::algos::RunOptions s = o;
    s.stop = stop.get_token();
    s.on_eval = [&](const dprl::algos::EvalReport&) { stop.request_stop(); };
    CHECK_THROWS_AS(run(d, s), dprl::algos::RunStopped);
    dprl::algos::RunOptions r = o;
    r.resume = true;
    const dprl::RunSummary resumed = run(d, r);
    CHECK(resumed.env_steps == 3000);
    CHECK(resumed.gradient_steps == 625);
  }

  TEST_CASE("dqn bad hidden sizes are parameter errors") {
    auto p = small_dqn();
    p.hidden_sizes = "16,x";
    CHECK_THROWS_AS(dprl::algos::Dqn{p}, dprl::ParamError);
  }
}

TEST_SUITE("golden") {
  TEST_CASE("dqn same seed gives identical metrics") {
    auto run = [](const std::string& name) {
      auto d = fs::temp_directory_path() / ("dprl_dqn_test_" + name);
      fs::remove_all(d);
      dprl::algos::RunOptions o;
      o.out = d;
      o.progress = dprl::Progress::Mode::kOff;
      dprl::algos::run_experiment(
          dprl::parse_yaml("seed: 2\nenv: {id: cartpole}\nalgo: {id: dqn, params: "
                           "{learning_starts: 500, hidden_sizes: '32,32'}}\n"
                           "train: {steps: 3000, eval_every: 1000, eval_episodes: 3}\n",
                           "inline"),
          "t", o);
      return d;
    };
    const auto a = run("a"), b = run("b");
    CHECK(dprl::read_file(a / "metrics.csv") == dprl::read_file(b / "metrics.csv"));
    auto env = dprl::envs::make_env("cartpole");
    CHECK(dprl::algos::make_policy((a / "policy.bin").string(), *env) != nullptr);
  }
}
