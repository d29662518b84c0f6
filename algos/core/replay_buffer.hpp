// Uniform experience replay (Lin 1992; Mnih et al. 2015) for the off-policy learners.
//
// A ring of `capacity` transitions (obs, action, reward, next_obs, terminated), float columns.
// Only termination stops bootstrapping: a time-limit truncation stores the final observation as
// next_obs with terminated = 0 (CleanRL's handle_timeout_termination). sample() draws indices
// uniformly with replacement from rng and gathers them into (dim x batch) matrices.
#pragma once

#include <span>
#include <vector>

#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {

struct ReplayBatch {
  nn::Mat obs, next_obs, actions;  // (obs_dim | act_dim) x batch
  std::vector<float> rewards, terminated;
};

class ReplayBuffer {
 public:
  ReplayBuffer(std::size_t capacity, int obs_dim, int act_dim);
  void add(std::span<const float> obs, std::span<const float> action, double reward,
           std::span<const float> next_obs, bool terminated);
  std::size_t size() const { return size_; }
  void sample(int batch, Rng& rng, ReplayBatch& out) const;
  // Saves or loads the stored transitions (only the filled part) and the write position. With
  // discrete_actions = n > 0 (DQN's one action column), a load requires every stored action to be
  // an index in [0, n) (DataError otherwise: the learner indexes its Q-values with it).
  void sync_state(StateIo& io, int discrete_actions = 0);

 private:
  std::size_t capacity_;
  int obs_dim_, act_dim_;
  std::size_t pos_ = 0, size_ = 0;
  std::vector<float> obs_, next_obs_, act_, rew_, term_;
};

}  // namespace dprl::algos
