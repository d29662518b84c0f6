// Offline data for PriMORL: every training episode of several seeded DDPG runs, one privacy unit
// (user id) per trajectory.
//
// Source: PriMORL ("Differentially Private Deep Model-Based Reinforcement Learning", App. D):
// "all training episodes" of independent DDPG runs are logged so that random, medium and expert
// behaviour are mixed (like D4RL's replay datasets); the paper's scale is Balance 600 runs x 50k
// steps, Swingup 150 x 200k, Pendulum 6 x 1M. DDPG here is algos/online/ddpg.hpp unchanged: a
// RecordingEnv wrapped around its training env records each step; an episode enters the dataset
// when it terminates or is truncated (the unfinished episode at the end of a run is dropped).
// Run r trains from derive_seed(seed, Domain::kDataset, r); user ids count episodes from 0 across
// runs in order; each episode keeps its reset seed (the uint64 bit pattern as int64), so it can be
// replayed.
//
// | field             | default | meaning                                               |
// |-------------------|---------|-------------------------------------------------------|
// | runs              | 6       | independent DDPG runs (Pendulum: 6, App. D)            |
// | steps_per_run     | 100000  | env steps per run (paper: 1e6 for Pendulum)            |
// | hidden_sizes      | 64,64   | DDPG widths (not given by the paper)                   |
// | learning_starts   | 1000    | random-action steps per run (not given by the paper)   |
// | exploration_noise | 0.1     | Gaussian action noise (CleanRL default)                |
//
// Cache: with a cache directory the dataset is stored as <dir>/<key>.bin, key = a hash of the
// env id, its resolved parameters, this config and the seed; a file whose header, key or
// checksum does not match is a DataError, never silently reused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "engine/data/dataset.hpp"
#include "engine/env.hpp"

namespace dprl::algos::model_based {

struct CollectConfig {
  int runs = 6;
  std::int64_t steps_per_run = 100000;
  std::string hidden_sizes = "64,64";
  int learning_starts = 1000;
  double exploration_noise = 0.1;
};

// The runs train on `threads` threads (make_env is called from them) and are joined in run
// order, so the dataset is identical at any thread count.
Dataset collect_ddpg(const std::function<std::unique_ptr<Env>()>& make_env,
                     const CollectConfig& cfg, std::uint64_t seed, int threads = 1);

// The dataset info of a collection: id dprl/<env>/ddpg-replay-v0, the env's spaces and
// parameters, and the collection settings as metadata.
DatasetInfo collect_info(const Env& env, const CollectConfig& cfg, std::uint64_t seed);

// The cache key of a collection (hex).
std::string collect_key(const Env& env, const CollectConfig& cfg, std::uint64_t seed);
// Writes and reads the cache file format (magic, key, arrays, FNV-1a checksum).
void save_dataset_cache(const Dataset& d, const std::filesystem::path& file,
                        const std::string& key);
Dataset load_dataset_cache(const std::filesystem::path& file, const std::string& key,
                           const DatasetInfo& info);

}  // namespace dprl::algos::model_based
