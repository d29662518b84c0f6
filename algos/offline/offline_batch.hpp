// Minibatches of transitions drawn from an offline Dataset, for the offline learners.
//
// Two samplers:
//   uniform        n transitions uniformly with replacement (d3rlpy 2.8.1's transition picker;
//                  the non-private learners)
//   poisson_users  each of the m distinct users (Dataset::users()) independently with
//                  probability q, then k transitions of each sampled user, uniformly with
//                  replacement among that user's transitions (user-level DP-SGD, paper 000
//                  Algorithm 4 with k = 1). Columns are user-major: user u owns columns
//                  [u k, (u + 1) k). The draws come from a NoiseSource, so a private run samples
//                  with the same secret randomness as its noise. Poisson sampling skips ahead
//                  geometrically: the gap to the next sampled user is floor(ln U / ln(1 - q)),
//                  U uniform in (0, 1), which has exactly the law of independent coin flips.
// A transition is (s, a, r, s', 1 - terminated): truncated episodes still bootstrap from s'.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/dataset.hpp"
#include "engine/nn_mlp.hpp"
#include "engine/rng.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {

struct OfflineBatch {
  nn::Mat obs;                  // obs_dim x n
  nn::Mat next_obs;             // obs_dim x n
  std::vector<int> actions;     // n discrete actions
  std::vector<float> rewards;   // n
  std::vector<float> not_done;  // n: 1 - terminated
  int n = 0;                    // transitions (columns)
  int users = 0;                // Poisson batches: sampled users (n = users * k)
};

class TransitionSampler {
 public:
  // The dataset must outlive the sampler and have Discrete actions.
  explicit TransitionSampler(const Dataset& ds);

  std::int64_t num_users() const { return static_cast<std::int64_t>(user_episodes_.size()); }
  void uniform(int n, Rng& rng, OfflineBatch& b) const;
  void poisson_users(double q, int k, privacy::NoiseSource& src, OfflineBatch& b) const;

 private:
  void resize(int n, OfflineBatch& b) const;
  void put(std::size_t t, std::size_t e, int col, OfflineBatch& b) const;

  const Dataset& ds_;
  std::vector<std::uint32_t> episode_;                   // episode of each transition
  std::vector<std::vector<std::uint32_t>> user_episodes_;  // per user, its episodes
  std::vector<std::vector<std::uint64_t>> user_cum_;       // per user, cumulative lengths
};

}  // namespace dprl::algos
