// Discrete behaviour cloning: a classifier pi(a|s) = softmax(f(s)) fitted to the dataset's actions,
// as d3rlpy 2.8.1's DiscreteBC (d3rlpy/algos/qlearning/bc.py, torch/bc_impl.py,
// models/torch/imitators.py compute_discrete_imitation_loss):
//   L = mean_i [-log softmax(f(s_i))_{a_i}] + beta mean_{i,a} f(s_i)_a^2
// One network obs-256-256-actions (ReLU, PyTorch-default init); the policy is the most likely
// action (saved as an nn_policy in argmax mode). No target network, no discount.
//
// | param         | default | source                         |
// |---------------|---------|--------------------------------|
// | learning_rate | 1e-3    | d3rlpy DiscreteBCConfig        |
// | batch_size    | 100     | d3rlpy DiscreteBCConfig        |
// | beta          | 0.5     | d3rlpy DiscreteBCConfig        |
// | hidden_sizes  | 256,256 | d3rlpy VectorEncoderFactory    |
// plus the shared offline and user-level DP parameters (algos/offline/offline_learner.hpp).
#pragma once

#include "algos/offline/offline_learner.hpp"

namespace dprl::algos {

struct BcParams {
  OfflineCommonParams common{1e-3, 100};
  double beta = 0.5;
  UserDpParams dp;

  template <class V>
  void visit(V& v) {
    common.visit(v);
    v("beta", beta, Range::non_negative(), "weight of the mean squared logits");
    dp.visit(v);
  }
  void check() const;
};

class Bc final : public OfflineLearner {
 public:
  using Params = BcParams;
  explicit Bc(const Params& p);
  std::unique_ptr<Policy> policy() const override;
  void released_outputs(const nn::Mat& obs, nn::Mat& out) const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }
  const nn::Mlp& net() const { return net_; }

 protected:
  void build(int obs_dim, int actions, std::uint64_t seed) override;
  std::vector<TrainedNet> trained() override { return {{&net_, &cache_}}; }
  double compute_errors(const OfflineBatch& b, float dout_scale) override;

 private:
  Params p_;
  nn::Mlp net_;
  nn::MlpCache cache_;
  nn::Mat dout_;
};

// Per-example gradient of NLL(a | logits) + beta mean_a logits_a^2 with respect to the logits of
// column i, times scale, into dout(:, i); returns the example's loss. Shared with discrete_bcq.
double imitation_errors(const nn::Mat& logits, int i, int action, double beta, float scale,
                        nn::Mat& dout);

}  // namespace dprl::algos
