// The determinism statement for sweeps: every file of every run (config.yaml, metrics.csv,
// summary.json, policy, run.json) and the sweep's sweep.csv and summary.md are the same bytes at
// any --jobs and on a rerun; wall-clock figures live in timing.json only.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/tools/sweep_test_util.hpp"

using namespace sweep_test;

namespace {

// One sweep file (out: out) and its base config in dir.
// Runs the sweep at --jobs 1 and 2 in separate directories and compares every byte; returns the
// folder (j1/ and j2/ in it).
fs::path check_jobs_invariant(const std::string& name, const std::string& base,
                          const std::string& sweep, int runs) {
  const auto d = scratch(name);
  for (const char* sub : {"j1", "j2"}) {
    fs::create_directories(d / sub);
    write_sweep(d / sub, base, sweep);
  }
  REQUIRE(run_in(d / "j1", "sweep sweep.yaml --jobs 1").code == 0);
  REQUIRE(run_in(d / "j2", "sweep sweep.yaml --jobs 2").code == 0);
  // per run: config.yaml, metrics.csv, summary.json, the policy, run.json; plus the two tables
  CHECK(check_same_tree(d / "j1" / "out", d / "j2" / "out") == 5 * runs + 2);
  for (const auto& f : files_under(d / "j1" / "out")) {
    if (f.filename() != "summary.json") continue;
    const auto s = nlohmann::json::parse(dprl::read_file(d / "j1" / "out" / f));
    CHECK_FALSE(s.contains("wall_time_s"));
    const auto t =
        nlohmann::json::parse(dprl::read_file(d / "j1" / "out" / f.parent_path() / "timing.json"));
    CHECK(t["wall_time_s"].get<double>() >= 0);
  }
  CHECK(dprl::read_file(d / "j1" / "out" / "sweep.csv").find("wall") == std::string::npos);
  const auto t = nlohmann::json::parse(dprl::read_file(d / "j2" / "out" / "timing.json"));
  CHECK(t["jobs"] == 2);
  CHECK(t["runs"].size() == static_cast<std::size_t>(runs));
  // a forced rerun in place gives the same bytes again
  const std::string csv = dprl::read_file(d / "j1" / "out" / "sweep.csv");
  const std::string summary = dprl::read_file(d / "j1" / "out" / "base" / "seed2" / "summary.json");
  REQUIRE(run_in(d / "j1", "sweep sweep.yaml --jobs 2 --force --quiet").code == 0);
  CHECK(dprl::read_file(d / "j1" / "out" / "sweep.csv") == csv);
  CHECK(dprl::read_file(d / "j1" / "out" / "base" / "seed2" / "summary.json") == summary);
  return d;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a PPO sweep is byte-identical at --jobs 1 and 2") {
    check_jobs_invariant("ppo",
                         "env: {id: cartpole}\n"
                         "algo: {id: ppo, params: {num_envs: 4, num_steps: 128}}\n"
                         "train: {steps: 4096, eval_every: 2048, eval_episodes: 5}\n",
                         "seeds: [1, 2, 3]\n", 3);
  }

  TEST_CASE("a private actor-critic sweep with seeded noise is byte-identical at --jobs 1 and 2") {
    const auto d = check_jobs_invariant(
        "private",
        "env: {id: MDP-100}\n"
        "algo: {id: actor_critic, params: {dp: both, noise: seeded, episodes: 20}}\n"
        "train: {steps: 100000000, eval_every: 0, eval_episodes: 5}\n",
        "seeds: [1, 2, 3]\n", 3);
    // the runs really are private: the guarantee and the noise are in summary.json
    const auto s = nlohmann::json::parse(dprl::read_file(
        d / "j2" / "out" / "base" / "seed1" / "summary.json"));
    CHECK(s["privacy"]["epsilon"].get<double>() > 0);
    CHECK(s["privacy"]["noise_source"].get<std::string>().rfind("seeded", 0) == 0);
    const std::string csv =
        dprl::read_file(d / "j2" / "out" / "sweep.csv");
    CHECK(csv.find(",epsilon,") != std::string::npos);
  }
}
