// Minibatch samplers over a Dataset's transitions, and train/test splits. Every random choice
// comes from the Rng the caller passes (one stream per epoch or batch: derive_seed(seed,
// Domain::kMinibatch, epoch, batch)).
//
//   sample_uniform          batch transitions uniformly with replacement
//   PoissonUserSampler      each distinct user independently with probability q (Poisson
//                           subsampling at the user level: the expert-level DP-SGD batch of paper
//                           000, Alg. 4), then per_user transitions of each sampled user: one
//                           uniformly among the user's transitions (per_user = 1), or a fixed-size
//                           contribution of k drawn without replacement (with replacement when the
//                           user has fewer than k); the batch size varies (mean q * users)
//   ShuffleInterleaveSampler  epochs in which every transition is used once: each user's
//                           transitions in a random order, batches of `batch` distinct users drawn
//                           with probability proportional to what each has left (a uniformly random
//                           interleaving), so a batch never holds two transitions of one user; the
//                           last batches are smaller once fewer than `batch` users have data left
//                           (paper 000, "Note on Implementation": how its batches were built)
//   split_by_episode / split_by_user  train/test partitions of the episodes
//
// Parameters: rate q in [0, 1]; per_user >= 1; batch >= 1; test_fraction in [0, 1].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/rng.hpp"

namespace dprl {

// out = batch transition indices drawn uniformly with replacement (num_transitions > 0).
void sample_uniform(const Dataset& data, std::size_t batch, Rng& rng,
                    std::vector<std::size_t>& out);

// The distinct users of a dataset and the transitions each owns (memory: O(episodes)).
class UserIndex {
 public:
  explicit UserIndex(const Dataset& data);
  std::size_t num_users() const { return users_.size(); }
  std::int64_t user_id(std::size_t u) const { return users_[u]; }  // ascending
  std::size_t num_transitions(std::size_t u) const { return total_[u]; }
  // The k-th transition (0 <= k < num_transitions(u)) of user u, in episode order.
  std::size_t transition(std::size_t u, std::size_t k) const;

 private:
  std::vector<std::int64_t> users_;
  std::vector<std::size_t> offset_;    // users + 1 offsets into episode_start_ / cum_
  std::vector<std::size_t> ep_start_;  // first transition of each of the user's episodes
  std::vector<std::size_t> cum_;       // transitions of the user's episodes up to and including
  std::vector<std::size_t> total_;
};

// Transitions grouped by user: user j of the batch is users[j] (an index into the UserIndex)
// and owns transitions[offsets[j] .. offsets[j + 1]).
struct UserBatch {
  std::vector<std::size_t> users;
  std::vector<std::size_t> offsets{0};
  std::vector<std::size_t> transitions;
  std::size_t num_users() const { return users.size(); }
  void clear();
};

class PoissonUserSampler {
 public:
  // Throws ParamError unless 0 <= rate <= 1 and per_user >= 1. index must outlive the sampler.
  PoissonUserSampler(const UserIndex& index, double rate, std::size_t per_user = 1);
  void sample(Rng& rng, UserBatch& out) const;
  double rate() const { return rate_; }
  std::size_t per_user() const { return per_user_; }
  // q * users: the divisor of a DP-SGD step's noisy sum.
  double expected_users() const { return rate_ * static_cast<double>(index_.num_users()); }

 private:
  const UserIndex& index_;
  double rate_;
  std::size_t per_user_;
};

class ShuffleInterleaveSampler {
 public:
  // Throws ParamError unless batch >= 1. index must outlive the sampler.
  ShuffleInterleaveSampler(const UserIndex& index, std::size_t batch);
  // Starts an epoch (every transition unused).
  void begin_epoch();
  // The next batch (at most one transition per user); false when the epoch is exhausted.
  bool next(Rng& rng, std::vector<std::size_t>& out);
  std::size_t remaining() const { return remaining_; }

 private:
  const UserIndex& index_;
  std::size_t batch_;
  std::vector<std::size_t> perm_;    // per user: its own positions 0..count-1, drawn lazily
  std::vector<std::size_t> offset_;  // users + 1 offsets into perm_
  std::vector<std::size_t> taken_;   // per user: positions drawn this epoch
  std::vector<std::pair<double, std::size_t>> keys_;
  std::size_t remaining_ = 0;
};

struct Split {
  std::vector<std::size_t> train;  // episode indices, ascending
  std::vector<std::size_t> test;
};
// round(test_fraction * episodes) episodes drawn uniformly for test.
Split split_by_episode(const Dataset& data, double test_fraction, Rng& rng);
// round(test_fraction * users) users drawn uniformly; all their episodes go to test.
Split split_by_user(const Dataset& data, double test_fraction, Rng& rng);

}  // namespace dprl
