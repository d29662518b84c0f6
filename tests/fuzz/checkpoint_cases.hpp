// Shared by the checkpoint fuzz target and its seed generator (make_seeds.cpp): small runs of each
// learner that writes run checkpoints (algos/core/checkpoint.hpp), and one function that trains one
// of them, optionally resuming from a checkpoint payload, the way `dprl run --resume` does after
// reading checkpoint.bin. The runs are tiny (a few hundred env steps, 8-unit networks) so that a
// resumed run finishes in milliseconds under the sanitizers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/core/checkpoint.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/run_dir.hpp"
#include "engine/state_io.hpp"
#include "envs/register_envs.hpp"

#ifndef DPRL_SOURCE_DIR
#error "DPRL_SOURCE_DIR names the source tree (the Minari fixture of the offline case)"
#endif

namespace dprl::fuzz {

struct CheckpointCase {
  const char* name;  // seed file name
  const char* algo;
  const char* env;
  std::vector<std::pair<std::string, std::string>> params;
  std::int64_t steps;
  std::int64_t every;  // checkpoint_every for the seed run
  bool offline = false;
};

// The learners of algos/ that checkpoint, each on an env it supports; the index is the first byte
// of a fuzz input.
inline const std::vector<CheckpointCase>& checkpoint_cases() {
  // a tiny PPO (two envs, 16-step rollouts, one 8-unit layer), on CartPole and on LunarLander
  const std::vector<std::pair<std::string, std::string>> small_ppo = {
      {"num_envs", "2"},      {"num_steps", "16"},   {"num_minibatches", "2"},
      {"update_epochs", "1"}, {"hidden_size", "8"}, {"hidden_layers", "1"}};
  static const std::vector<CheckpointCase> cases = {
      {"q_learning_taxi", "q_learning", "taxi", {}, 300, 200},
      {"dqn_cartpole",
       "dqn",
       "cartpole",
       {{"buffer_size", "64"},
        {"learning_starts", "40"},
        {"batch_size", "8"},
        {"hidden_sizes", "8"},
        {"target_network_frequency", "20"}},
       120,
       80},
      {"ppo_cartpole",
       "ppo",
       "cartpole",
       small_ppo,
       96,
       40},
      {"ppo_continuous_pendulum",
       "ppo_continuous",
       "pendulum",
       {{"num_steps", "32"},
        {"num_minibatches", "2"},
        {"update_epochs", "1"},
        {"hidden_size", "8"},
        {"hidden_layers", "1"}},
       96,
       40},
      {"sac_pendulum",
       "sac",
       "pendulum",
       {{"buffer_size", "64"},
        {"learning_starts", "30"},
        {"batch_size", "8"},
        {"hidden_sizes", "8"}},
       90,
       60},
      {"ddpg_pendulum",
       "ddpg",
       "pendulum",
       {{"buffer_size", "64"},
        {"learning_starts", "30"},
        {"batch_size", "8"},
        {"hidden_sizes", "8"}},
       90,
       60},
      {"discrete_cql_cartpole",
       "discrete_cql",
       "cartpole",
       {{"batch_size", "4"}, {"hidden_sizes", "8"}},
       20,
       12,
       true},
      // private learners and the replay-recipe env, appended (the first byte picks the index)
      {"actor_critic_taxi_private",
       "actor_critic",
       "taxi",
       {{"dp", "both"},
        {"noise", "seeded"},
        {"epsilon", "0.5"},
        {"trace_similarity", "true"}},  // no budget: the run directory holds no ledger
       400,
       200},
      {"lsvi_ucb_private",
       "lsvi_ucb",
       "linear_mdp",
       {{"private", "true"}, {"noise", "seeded"}, {"epsilon", "5"}, {"accountant", "rdp"}},
       200,
       60},
      {"ppo_lunar_lander",
       "ppo",
       "lunar_lander",
       small_ppo,
       96,
       40},
  };
  return cases;
}

// Trains case c in dir (emptied first). With a payload, the run resumes from it as `dprl run
// --resume` does: the payload is written as dir/checkpoint.bin and read back through
// read_run_checkpoint. every > 0 makes the run write checkpoints (as a resumed run does); the last
// one's payload is returned (empty when none was written). Bad checkpoints throw dprl::Error.
inline std::string run_checkpoint_case(const CheckpointCase& c, const std::filesystem::path& dir,
                                       const std::optional<std::string>& payload,
                                       std::int64_t every) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ParamMap params;
  for (const auto& [k, v] : c.params) params.push_back({k, ParamText{v, "fuzz"}});
  auto algo = algos::algo_registry().make(c.algo, params);
  algos::TrainParams train;
  train.steps = c.steps;
  train.eval_every = c.steps / 2;
  train.eval_episodes = 1;
  train.checkpoint_every = every;
  algos::CheckpointSetup setup;
  setup.dir = dir;
  setup.config_sha256 = "0123456789abcdef";
  setup.algo = c.algo;
  setup.every = every;
  if (payload) {
    algos::write_run_checkpoint(dir, *payload);
    auto loaded = algos::read_run_checkpoint(dir);
    setup.resume_file = loaded->file;
    setup.resume_payload = std::move(loaded->payload);
  }
  {
    RunDir run(dir);
    const std::string env_id = c.env;
    algos::TrainContext ctx([env_id] { return envs::make_env(env_id); }, 1, train, &run, nullptr);
    if (c.offline) {
      const auto fixture =
          std::filesystem::path(DPRL_SOURCE_DIR) / "tests/engine/fixtures/minari_discrete";
      static const auto data = std::make_shared<const Dataset>(load_minari(fixture, false));
      ctx.set_dataset(data, fixture.string());
    }
    ctx.set_checkpoints(std::move(setup));
    algo->train(ctx);
  }
  const auto file = dir / algos::kCheckpointFile;
  std::error_code ec;
  if (every <= 0 || !std::filesystem::exists(file, ec)) return {};
  return read_checkpoint_file(file);
}

}  // namespace dprl::fuzz
