// Discrete conservative Q-learning (Kumar, Zhou, Tucker and Levine, "Conservative Q-Learning for
// Offline Reinforcement Learning", NeurIPS 2020, the CQL(H) objective for discrete actions), as
// d3rlpy 2.8.1's DiscreteCQL (d3rlpy/algos/qlearning/cql.py, torch/cql_impl.py, dqn_impl.py):
//   y_i  = r_i + gamma (1 - terminated_i) Q_target(s'_i, argmax_a Q(s'_i, a))   (double DQN)
//   L    = mean_i Huber(Q(s_i, a_i) - y_i) + alpha mean_i [logsumexp_a Q(s_i, a) - Q(s_i, a_i)]
// Huber with beta = 1; one Q-network obs-256-256-actions (ReLU, PyTorch-default init) and a target
// copy, updated after the optimiser step of every gradient step k with (k - 1) % interval == 0
// (d3rlpy's 0-based grad_step % target_update_interval == 0) by Polyak rate tau (1: hard copy).
// The policy is greedy in Q (saved as an nn_policy in argmax mode).
//
// | param                  | default | source                                    |
// |------------------------|---------|-------------------------------------------|
// | learning_rate          | 6.25e-5 | d3rlpy DiscreteCQLConfig                  |
// | batch_size             | 32      | d3rlpy DiscreteCQLConfig                  |
// | gamma                  | 0.99    | d3rlpy                                    |
// | target_update_interval | 8000    | d3rlpy                                    |
// | tau                    | 1.0     | d3rlpy (hard copy)                        |
// | alpha                  | 1.0     | d3rlpy                                    |
// | hidden_sizes           | 256,256 | d3rlpy VectorEncoderFactory               |
// plus the shared offline and user-level DP parameters (algos/offline/offline_learner.hpp).
#pragma once

#include "algos/offline/offline_learner.hpp"

namespace dprl::algos {

struct DiscreteCqlParams {
  OfflineCommonParams common{6.25e-5, 32};
  QTargetParams target;
  double alpha = 1.0;
  UserDpParams dp;

  template <class V>
  void visit(V& v) {
    common.visit(v);
    target.visit(v);
    v("alpha", alpha, Range::non_negative(), "weight of the conservative term");
    dp.visit(v);
  }
  void check() const;
};

class DiscreteCql final : public OfflineLearner {
 public:
  using Params = DiscreteCqlParams;
  explicit DiscreteCql(const Params& p);
  std::unique_ptr<Policy> policy() const override;
  void released_outputs(const nn::Mat& obs, nn::Mat& out) const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }

  const nn::Mlp& q() const { return q_; }
  const nn::Mlp& target() const { return target_; }

 protected:
  void build(int obs_dim, int actions, std::uint64_t seed) override;
  std::vector<TrainedNet> trained() override { return {{&q_, &cq_}}; }
  double compute_errors(const OfflineBatch& b, float dout_scale) override;
  void after_step(std::int64_t step) override;
  std::vector<nn::Mlp*> state_nets() override { return {&q_, &target_}; }

 private:
  Params p_;
  nn::Mlp q_, target_;
  nn::MlpCache cq_, cn_, ct_;
  nn::Mat dout_;
  std::vector<float> y_;
};

}  // namespace dprl::algos
