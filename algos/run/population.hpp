// Expert populations for expert-level DP offline RL (Sharma et al., "Preserving Expert-Level
// Privacy in Offline Reinforcement Learning", TMLR, sec. 6 "Dataset Generation" and App. B.1):
// PPO experts trained on variants of an env, the best of each variant kept, floored, and their
// demonstrations on the default env collected into one Dataset whose user_id is the expert.
//
// File (the `population:` section of a pipeline config, or a file of its own):
//   name: cartpole                      # used in dataset ids
//   seed: 1                             # root of every derived seed
//   out: runs/paper000/cartpole/population
//   env: {id: cartpole, params: {}}     # the default env (demonstrations; variants start here)
//   variants:
//     params: {}                        # fixed params of every variant (e.g. enable_wind: true)
//     grid:                             # key -> list of values or "linspace(a, b, n)" (endpoints
//       gravity: linspace(8.75, 11.0, 10)   # included); "k1+k2" sets both keys to one value;
//       masscart: [0.8, 1.0]            # settings = the product, first key slowest
//   runs_per_setting: 3                 # PPO runs per setting (run r of setting s has seed
//                                       # derive_seed(seed, kSweep, s, r) >> 2)
//   ppo: {algo: ppo_layers, params: {hidden_sizes: "64,64"}, train: {steps: 100000,
//         eval_every: 0, eval_episodes: 10}}   # each run is an experiment of this learner on its
//                                       # variant; its final evaluation (seeded episodes on the
//                                       # variant) is the run's score
//   select: {rule: top_k, k: 3}         # per setting the k best scores (ties: lower run index);
//                                       # {rule: hiv, extra: 1000}: the best run of every setting
//                                       # plus the `extra` best second-placed runs
//   action_floor: 0.02                  # p_min: argmax 1 - (|A|-1) p_min, others p_min
//   demos: {episodes: 20, max_steps: 200}   # N episodes per expert on the default env, capped
//                                       # (the env's max_episode_steps is set to the cap)
// Outputs in out/:
//   train/<setting label>/r<run>/       one experiment run per (setting, run), executed by the
//                                       sweep runner (algos/run/sweep.hpp: local threads, or MPI
//                                       ranks through tools/mpi_sweep.hpp), resumable by config
//                                       hash; train/sweep.csv lists every run and its score
//   experts/expert_<i>.bin              the selected policies (hard links where possible)
//   manifest.json                       per expert: id, setting, params, run, seed, score, file
//   demos/                              the Minari dataset (user_id = expert id, 0..m-1)
//   population.json                     completion record: the digest of the config and of every
//                                       selected run's summary; a rerun with the same digest
//                                       reuses the experts and the demonstrations
// Expert ids follow setting order, then rank within the setting. Collection: expert i's episode e
// resets with derive_seed(derive_seed(seed, kDataset), kDataset, i, e, 0) >> 1
// (algos/core/collect.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "algos/run/sweep.hpp"
#include "engine/config.hpp"
#include "engine/data/dataset.hpp"
#include "engine/params.hpp"

namespace dprl::algos {

struct PopulationSpec {
  std::string name;
  std::uint64_t seed = 0;
  std::filesystem::path out;
  std::string env_id;
  ParamMap env_params;      // the default env
  ParamMap variant_params;  // fixed on every variant
  std::vector<std::string> grid_keys;
  std::vector<std::vector<std::string>> grid_values;
  int runs_per_setting = 3;
  std::string algo = "ppo_layers";
  ParamMap algo_params;
  ParamMap train_params;
  std::string rule = "top_k";
  int k = 3;
  std::int64_t extra = 0;
  double action_floor = 0.02;
  std::int64_t episodes = 20;
  std::int64_t max_steps = 200;
  std::string digest;  // SHA-256 of the resolved population description

  std::size_t settings() const;
  // The number of experts the selection keeps (m).
  std::int64_t experts() const;
};

// Parses and validates a population node (`what` names it in messages, e.g. "population");
// relative `out` paths are kept as written. ConfigError / ParamError naming file:line and key.
PopulationSpec parse_population(const Node& node, std::string_view what);
// "linspace(a, b, n)" or a YAML list into value texts; ConfigError naming where.
std::vector<std::string> parse_grid_values(const Node& node, const std::string& key);

// The training runs as a sweep plan (run index = setting * runs_per_setting + run).
SweepPlan plan_population(const PopulationSpec& spec);

// The selection from every run's score (index setting * runs_per_setting + run): per setting the
// runs best first (ties: the lower run index), then top_k or the hiv rule; in expert id order.
struct Chosen {
  std::size_t setting;
  int run;
  int rank;  // 0: the best of its setting
  double score;
};
std::vector<Chosen> select_experts(const PopulationSpec& spec, const std::vector<double>& score);

struct PopulationResult {
  std::filesystem::path dataset;   // out/demos
  std::filesystem::path manifest;  // out/manifest.json
  std::int64_t experts = 0;
  std::int64_t trained = 0;  // runs executed now (0 when everything was reused)
  bool reused = false;       // selection and demonstrations reused
  double train_wall_s = 0, demos_wall_s = 0;
  double train_cpu_s = 0;  // CPU time of this process's training runs (MPI: rank 0's only)
};

struct PopulationOptions {
  int jobs = 1;
  bool quiet = false;
};

// After the training runs are complete (outcomes from the sweep runner, plan order): selection,
// experts folder, manifest and demonstrations, or their reuse. Throws DataError when a run failed.
PopulationResult finish_population(const PopulationSpec& spec, const SweepPlan& plan,
                                   const std::vector<RunOutcome>& outcomes,
                                   const PopulationOptions& opts);

// The whole stage in this process: training runs on opts.jobs threads, then finish_population.
PopulationResult build_population(const PopulationSpec& spec, const PopulationOptions& opts);

// Reads the experts of a finished population: the policy files in expert id order and the
// manifest's action floor; DataError when the folder does not match the dataset's user ids.
struct ExpertsFolder {
  std::vector<std::filesystem::path> policies;
  double action_floor = 0;
  std::string env_id;
};
ExpertsFolder read_experts(const std::filesystem::path& population_out);

}  // namespace dprl::algos
