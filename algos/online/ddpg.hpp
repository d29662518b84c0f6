// Deep Deterministic Policy Gradient (Lillicrap et al. 2016) following CleanRL's
// ddpg_continuous_action.py: deterministic actor obs -> 256 -> 256 -> tanh, scaled to the action
// bounds; critic Q(obs, action) 256-256; Gaussian exploration noise of std
// exploration_noise * action_scale, actions clipped to the bounds; uniform random actions before
// learning_starts; critic updated every step towards r + gamma Q'(s', mu'(s')); actor (ascending
// Q(s, mu(s))) and both Polyak targets every policy_frequency steps. PyTorch-default init.
//
// | param             | default | meaning                                      |
// |-------------------|---------|----------------------------------------------|
// | learning_rate     | 3e-4    | Adam step size (actor and critic)            |
// | buffer_size       | 1e6     | replay capacity                              |
// | gamma             | 0.99    | discount                                     |
// | tau               | 0.005   | target smoothing                             |
// | batch_size        | 256     | replay minibatch                             |
// | exploration_noise | 0.1     | action noise std (fraction of action scale)  |
// | learning_starts   | 25000   | random-action steps before learning          |
// | policy_frequency  | 2       | critic steps per actor step                  |
// | hidden_sizes      | 256,256 | hidden widths                                |
#pragma once

#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

struct DdpgParams {
  double learning_rate = 3e-4;
  int buffer_size = 1000000;
  double gamma = 0.99;
  double tau = 0.005;
  int batch_size = 256;
  double exploration_noise = 0.1;
  int learning_starts = 25000;
  int policy_frequency = 2;
  std::string hidden_sizes = "256,256";

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate, Range::positive(), "Adam step size");
    v("buffer_size", buffer_size, Range::closed(1, 1e8), "replay capacity");
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("tau", tau, Range::left_open(0, 1), "target smoothing coefficient");
    v("batch_size", batch_size, Range::closed(1, 1e6), "replay minibatch size");
    v("exploration_noise", exploration_noise, Range::non_negative(),
      "exploration noise std as a fraction of the action scale");
    v("learning_starts", learning_starts, Range::closed(0, 1e9), "random-action steps first");
    v("policy_frequency", policy_frequency, Range::closed(1, 1000), "critic steps per actor step");
    v("hidden_sizes", hidden_sizes, Choices{}, "comma-separated hidden widths");
  }
  void check() const;
};

class Ddpg final : public Algorithm {
 public:
  using Params = DdpgParams;
  explicit Ddpg(const Params& p);
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  std::string policy_file() const override { return "policy.bin"; }
  ParamMap params() const override { return dump_params(p_); }
  std::int64_t train_episodes() const override { return episodes_; }
  bool resumable() const override { return true; }

 private:
  Params p_;
  std::string env_id_;
  int act_dim_ = 0;
  nn::Mlp actor_;
  std::vector<float> low_, high_;
  std::int64_t episodes_ = 0;
};

}  // namespace dprl::algos
