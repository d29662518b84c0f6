// Discrete batch-constrained Q-learning (Fujimoto, Conti, Ghavamzadeh and Pineau, "Benchmarking
// Batch Deep Reinforcement Learning Algorithms", NeurIPS 2019 Deep RL workshop), as d3rlpy
// 2.8.1's DiscreteBCQ (d3rlpy/algos/qlearning/bcq.py, torch/bcq_impl.py):
//   a*_i = the constrained greedy action at s'_i under the online Q and classifier G
//          (algos/core/bcq_policy.hpp: G(a|s) / max G > action_flexibility)
//   y_i  = r_i + gamma (1 - terminated_i) Q_target(s'_i, a*_i)
//   L    = mean_i Huber(Q(s_i, a_i) - y_i) + mean_i [-log G(a_i|s_i)] + beta mean_{i,a} logits^2
// With share_encoder (d3rlpy's default) Q and G share the obs-256-256 ReLU encoder and each has a
// linear head; otherwise G is a separate obs-256-256-actions network. One Adam over everything,
// the target (encoder + Q head) updated as in discrete_cql. Under user-level DP-SGD the per-user
// gradient spans the encoder and both heads: one joint norm, one clip factor.
//
// | param                  | default | source                                              |
// |------------------------|---------|-----------------------------------------------------|
// | learning_rate          | 6.25e-5 | d3rlpy DiscreteBCQConfig                            |
// | batch_size             | 32      | d3rlpy                                              |
// | gamma                  | 0.99    | d3rlpy                                              |
// | target_update_interval | 8000    | d3rlpy                                              |
// | tau                    | 1.0     | d3rlpy (hard copy)                                  |
// | action_flexibility     | 0.3     | d3rlpy; Fujimoto et al.'s threshold                 |
// | beta                   | 0.01    | Fujimoto et al.'s code and d3rlpy's Atari reproduction
// (d3rlpy's config default is 0.5) | | share_encoder          | true    | d3rlpy | | hidden_sizes
// | 256,256 | d3rlpy VectorEncoderFactory                         | plus the shared offline and
// user-level DP parameters (algos/offline/offline_learner.hpp).
#pragma once

#include "algos/offline/offline_learner.hpp"

namespace dprl::algos {

struct DiscreteBcqParams {
  OfflineCommonParams common{6.25e-5, 32};
  QTargetParams target;
  double action_flexibility = 0.3;
  double beta = 0.01;
  bool share_encoder = true;
  UserDpParams dp;

  template <class V>
  void visit(V& v) {
    common.visit(v);
    target.visit(v);
    v("action_flexibility", action_flexibility, Range::left_open(0, 1),
      "keep actions with G(a|s) / max G > this threshold");
    v("beta", beta, Range::non_negative(), "weight of the classifier's mean squared logits");
    v("share_encoder", share_encoder, "Q and the classifier share the hidden layers");
    dp.visit(v);
  }
  void check() const;
};

class DiscreteBcq final : public OfflineLearner {
 public:
  using Params = DiscreteBcqParams;
  explicit DiscreteBcq(const Params& p);
  std::unique_ptr<Policy> policy() const override;
  void released_outputs(const nn::Mat& obs, nn::Mat& out) const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }

 protected:
  void build(int obs_dim, int actions, std::uint64_t seed) override;
  std::vector<TrainedNet> trained() override;
  double compute_errors(const OfflineBatch& b, float dout_scale) override;
  void after_step(std::int64_t step) override;
  std::vector<nn::Mlp*> state_nets() override {
    return {&trunk_[0], &trunk_[1], &qhead_, &ghead_, &target_trunk_, &target_qhead_};
  }

 private:
  int g_trunk() const { return p_.share_encoder ? 0 : 1; }

  Params p_;
  nn::Mlp trunk_[2], qhead_, ghead_;  // trunk_[1] only without a shared encoder
  nn::Mlp target_trunk_, target_qhead_;
  nn::MlpCache c_trunk_[2], c_qh_, c_gh_;                   // s, with gradients
  nn::MlpCache n_trunk_[2], n_qh_, n_gh_, t_trunk_, t_qh_;  // s', no gradients
  nn::Mat dq_, dg_, dh_;
  std::vector<float> y_;
};

}  // namespace dprl::algos
