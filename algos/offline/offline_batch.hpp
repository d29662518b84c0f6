// Minibatches of transitions for the offline learners: the columns a learner's networks read.
//
// The transitions are chosen by the dataset samplers (engine/data/dataset_sampler.hpp:
// sample_uniform for non-private learning, PoissonUserSampler for user-level DP-SGD, whose batches
// list each sampled user's k transitions consecutively, so user u owns columns [u k, (u + 1) k)). A
// transition is (s, a, r, s', 1 - terminated): truncated episodes still bootstrap from s'.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

struct OfflineBatch {
  nn::Mat obs;                  // obs_dim x n
  nn::Mat next_obs;             // obs_dim x n
  std::vector<int> actions;     // n discrete actions
  std::vector<float> rewards;   // n
  std::vector<float> not_done;  // n: 1 - terminated
  int n = 0;                    // transitions (columns)
  int users = 0;                // user batches: sampled users (n = users * k); else n
};

// Copies transitions into batch columns (the dataset must outlive it and have Discrete actions).
class BatchGatherer {
 public:
  explicit BatchGatherer(const Dataset& ds);
  // Column i of b is transition transitions[i]; b.users is set to `users` (n when negative).
  void gather(std::span<const std::size_t> transitions, OfflineBatch& b, int users = -1) const;

 private:
  const Dataset& ds_;
  std::vector<std::uint32_t> episode_;  // episode of each transition
};

}  // namespace dprl::algos
