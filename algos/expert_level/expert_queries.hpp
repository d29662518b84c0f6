// Expert policy queries for expert-level DP offline RL: pi_i(a|s) of m floored-argmax experts
// (Sharma, Vinod, Thakurta, Agarwal, Balle, Dann, Raghuveer, "Preserving Expert-Level Privacy in
// Offline Reinforcement Learning", TMLR; Assumption 3.5 and the count function of sec. 4).
//
// Every expert i is the floor modification of a greedy policy (App. B.1): at state s it plays its
// greedy action g_i(s) with probability hi = 1 - (|A| - 1) p_min and every other action with
// probability p_min. So pi_i(a|s) takes only two values, and the count of a prefix
// tau_{1:k} = (s_1, a_1, ..., s_k, a_k),
//   count(tau_{1:k}) = sum_i prod_{j <= k} pi_i(a_j | s_j) = sum_i hi^{n_i} p_min^{k - n_i},
// depends only on each expert's agreement count n_i = #{j <= k : g_i(s_j) = a_j}.
//
// ExpertPanel: the greedy actions of all m experts for a batch of states.
//   NetExperts       nn_policy files in argmax mode (what PPO experts save); batched forward per
//                    expert (one matrix product per layer over the batch), experts spread over a
//                    thread pool. The collecting policy (NnPolicy::act_discrete) evaluates one
//                    state at a time, whose float rounding can differ from the batched product in
//                    the last bits; wherever the top two outputs of the batched pass lie within
//                    kTieMargin (1 + |top|) of each other the state is recomputed through the
//                    collector's own single-state path, so queries return the collector's greedy
//                    action (the two paths differ by ~1e-6 relative, far below the margin).
//                    Ties go to the lowest action index, as NnPolicy.
//   FunctionExperts  a callable (expert, observation) -> greedy action (tests, benchmarks).
// PrefixCounter: the count of a growing prefix, O(m) per step: each expert's agreement count
// is kept, and log count = k log p_min + a_max d + log sum_i exp(-(a_max - n_i) d), with
// d = log(hi / p_min) > 0 and a_max the largest agreement count (every term of the sum lies in
// (0, 1], the a_max term is 1, so the sum is in [1, m]: no overflow or underflow at any length).
// exp(-j d) comes from a table.
//
// Parameters (ParamError naming the parameter and rule): num_actions >= 2,
// p_min in (0, 1/|A|], max_length >= 1; greedy actions must lie in [0, |A|).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/nn/nn_mlp.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::algos {

class ExpertPanel {
 public:
  virtual ~ExpertPanel() = default;
  virtual int num_experts() const = 0;
  virtual int num_actions() const = 0;
  virtual int obs_dim() const = 0;
  // out[i * n + j] = expert i's greedy action at state j; obs is obs_dim x n, column-major.
  virtual void greedy(const float* obs, int n, std::span<std::int32_t> out) = 0;
};

class NetExperts final : public ExpertPanel {
 public:
  static constexpr float kTieMargin = 1e-3f;

  struct Expert {
    nn::Mlp actor;
    std::vector<float> obs_mean, obs_var;  // empty: no observation normalisation
  };
  // threads >= 1 participants (the caller included).
  NetExperts(std::vector<Expert> experts, int num_actions, int threads);
  // Loads nn_policy files (argmax mode, same observation size and action count); DataError naming
  // the file otherwise.
  static std::unique_ptr<NetExperts> load(const std::vector<std::filesystem::path>& files,
                                          int threads);

  int num_experts() const override { return static_cast<int>(experts_.size()); }
  int num_actions() const override { return actions_; }
  int obs_dim() const override { return obs_dim_; }
  void greedy(const float* obs, int n, std::span<std::int32_t> out) override;
  // States recomputed through the single-state path so far (near ties).
  std::int64_t rechecked() const { return rechecked_; }

 private:
  std::vector<Expert> experts_;
  int actions_;
  int obs_dim_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::int64_t> rechecks_;  // per expert
  std::int64_t rechecked_ = 0;
};

class FunctionExperts final : public ExpertPanel {
 public:
  using Greedy = std::function<int(int expert, std::span<const float> obs)>;
  FunctionExperts(int m, int num_actions, int obs_dim, Greedy g);
  int num_experts() const override { return m_; }
  int num_actions() const override { return actions_; }
  int obs_dim() const override { return obs_dim_; }
  void greedy(const float* obs, int n, std::span<std::int32_t> out) override;

 private:
  int m_, actions_, obs_dim_;
  Greedy g_;
};

class PrefixCounter {
 public:
  // m experts, |A| actions, floor p_min in (0, 1/|A|], prefixes up to max_length steps.
  PrefixCounter(int m, int num_actions, double p_min, int max_length);
  // The empty prefix (count = m).
  void reset();
  // Extends the prefix by one step whose logged action is `action`, given every expert's greedy
  // action there (size m); returns the log count of the extended prefix.
  double extend(std::span<const std::int32_t> greedy, std::int32_t action);
  int length() const { return k_; }
  double log_count() const { return log_count_; }
  double count() const;  // exp(log_count()) (0 when it underflows)

 private:
  int m_;
  int max_length_;
  double log_hi_, log_lo_;
  std::vector<double> decay_;  // exp(-j d), j = 0..max_length
  std::vector<std::int32_t> agree_;
  std::int32_t a_max_ = 0;
  int k_ = 0;
  double log_count_ = 0;
};

}  // namespace dprl::algos
