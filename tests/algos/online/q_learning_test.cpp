#include "algos/online/q_learning.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "algos/core/policies.hpp"
#include "algos/core/tabular_policy.hpp"
#include "algos/run/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  // per process: test runs of other checkouts share the temporary directory
  auto d =
      fs::temp_directory_path() / ("dprl_algos_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

dprl::Node taxi_config(int steps) {
  return dprl::parse_yaml(
      "seed: 5\nenv: {id: taxi}\nalgo: {id: q_learning, params: {learning_rate: 0.5}}\n"
      "train: {steps: " +
          std::to_string(steps) + ", eval_every: 20000, eval_episodes: 50}\n",
      "inline");
}

dprl::algos::RunOptions quiet(fs::path out) {
  dprl::algos::RunOptions o;
  o.out = out;
  o.progress = dprl::Progress::Mode::kOff;
  return o;
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("same seed gives byte-identical metrics and config and policy") {
    const auto a = temp_dir("golden_a"), b = temp_dir("golden_b");
    dprl::algos::run_experiment(taxi_config(60000), "t", quiet(a));
    dprl::algos::run_experiment(taxi_config(60000), "t", quiet(b));
    CHECK(dprl::read_file(a / "metrics.csv") == dprl::read_file(b / "metrics.csv"));
    CHECK(dprl::read_file(a / "policy.json") == dprl::read_file(b / "policy.json"));
    auto c = temp_dir("golden_c");
    auto opts = quiet(c);
    opts.seed = 6;
    dprl::algos::run_experiment(taxi_config(60000), "t", opts);
    CHECK(dprl::read_file(a / "metrics.csv") != dprl::read_file(c / "metrics.csv"));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("q-learning learns taxi to near the optimum") {
    const auto d = temp_dir("learn");
    const auto s = dprl::algos::run_experiment(taxi_config(300000), "t", quiet(d));
    CHECK(s.env_steps == 300000);
    CHECK(s.final_eval.episodes == 50);
    // optimum is about 7.9 averaged over Taxi's reset distribution; random play is about -770
    CHECK(s.final_eval.return_mean >= 7.0);
    // the saved greedy policy evaluates to the same figure through the CLI's loader
    auto env = dprl::envs::make_env("taxi");
    auto pol = dprl::algos::make_policy((d / "policy.json").string(), *env);
    const auto again = dprl::evaluate(*env, *pol, 50, 5, 0);
    CHECK(again.return_mean >= 7.0);
  }

  TEST_CASE("corrupt or mismatched policy files are data errors") {
    const auto d = temp_dir("corrupt");
    dprl::algos::run_experiment(taxi_config(20000), "t", quiet(d));
    std::string text = dprl::read_file(d / "policy.json");
    const auto pos = text.find("\"q\":[") + 5;
    text[pos] = text[pos] == '1' ? '2' : '1';
    dprl::write_file_atomic(d / "bad.json", text);
    auto env = dprl::envs::make_env("taxi");
    CHECK_THROWS_WITH_AS(dprl::algos::make_policy((d / "bad.json").string(), *env),
                         doctest::Contains("checksum mismatch"), dprl::DataError);
    dprl::write_file_atomic(d / "trunc.json", dprl::read_file(d / "policy.json").substr(0, 100));
    CHECK_THROWS_AS(dprl::algos::make_policy((d / "trunc.json").string(), *env), dprl::DataError);
    auto cart = dprl::envs::make_env("cartpole");
    CHECK_THROWS_WITH_AS(dprl::algos::make_policy((d / "policy.json").string(), *cart),
                         doctest::Contains("500 states x 6 actions"), dprl::DataError);
    CHECK_THROWS_WITH_AS(dprl::algos::make_policy("no_such_policy", *env),
                         doctest::Contains("neither a built-in policy (random"), dprl::UnknownName);
  }

  TEST_CASE("bad experiments fail before writing anything") {
    const auto d = temp_dir("bad");
    auto run = [&](const std::string& yaml) {
      dprl::algos::run_experiment(dprl::parse_yaml(yaml, "e.yaml"), "e", quiet(d));
    };
    CHECK_THROWS_WITH_AS(run("seed: 1\nenv: {id: taxx}\nalgo: {id: q_learning}\n"),
                         doctest::Contains("unknown env 'taxx'; valid: "), dprl::UnknownName);
    CHECK_THROWS_WITH_AS(
        run("seed: 1\nenv: {id: taxi}\nalgo: {id: q_learning, params: {alpha: 0.1}}\n"),
        doctest::Contains("unknown parameter 'alpha' (at e.yaml:3:40); valid: learning_rate"),
        dprl::ParamError);
    CHECK_THROWS_WITH_AS(
        run("seed: 1\nenv: {id: taxi}\nalgo: {id: q_learning, params: {gamma: 2}}\n"),
        doctest::Contains("q_learning.gamma = 2: must be in [0, 1]"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(run("env: {id: taxi}\nalgo: {id: q_learning}\n"),
                         doctest::Contains("missing key 'seed'"), dprl::ConfigError);
    CHECK_THROWS_WITH_AS(run("seed: 1\nenv: {id: taxi}\nalgo: {id: q_learning}\ntrian: {}\n"),
                         doctest::Contains("e.yaml:4:8: unknown key 'trian' in the experiment"),
                         dprl::ConfigError);
    CHECK_THROWS_WITH_AS(run("seed: 1\nenv: {id: cartpole}\nalgo: {id: q_learning}\n"
                             "train: {steps: 10}\n"),
                         doctest::Contains("q_learning needs discrete observations"),
                         dprl::ParamError);
    // every error above, the learner's check against the env included, happened before the run
    // directory was created
    CHECK_FALSE(fs::exists(d));
  }
}
