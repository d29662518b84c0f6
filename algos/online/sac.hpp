// Soft Actor-Critic (Haarnoja et al. 2018, "SAC: algorithms and applications", automatic entropy
// temperature) following CleanRL's sac_continuous_action.py: tanh-squashed Gaussian actor whose
// log-std is bounded to [-5, 2] through tanh, twin Q critics on (obs, action) with Polyak target
// copies, clipped double-Q targets r + gamma (min Q'(s', a') - alpha log pi(a'|s')), actor updated
// policy_frequency times every policy_frequency steps, alpha tuned towards entropy -dim(A).
// MLPs 256-256 ReLU with PyTorch-default init; uniform random actions before learning_starts.
//
// | param                    | default | meaning                                   |
// |--------------------------|---------|-------------------------------------------|
// | buffer_size              | 1e6     | replay capacity                           |
// | gamma                    | 0.99    | discount                                  |
// | tau                      | 0.005   | target smoothing                          |
// | batch_size               | 256     | replay minibatch                          |
// | learning_starts          | 5000    | random-action steps before learning       |
// | policy_lr                | 3e-4    | actor Adam step size                      |
// | q_lr                     | 1e-3    | critic and temperature Adam step size     |
// | policy_frequency         | 2       | delayed actor updates                     |
// | target_network_frequency | 1       | steps between target updates              |
// | alpha                    | 0.2     | fixed temperature when autotune is off    |
// | autotune                 | true    | learn the temperature                     |
// | hidden_sizes             | 256,256 | hidden widths (actor and critics)         |
#pragma once

#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

class SacLearner;

struct SacParams {
  int buffer_size = 1000000;
  double gamma = 0.99;
  double tau = 0.005;
  int batch_size = 256;
  int learning_starts = 5000;
  double policy_lr = 3e-4;
  double q_lr = 1e-3;
  int policy_frequency = 2;
  int target_network_frequency = 1;
  double alpha = 0.2;
  bool autotune = true;
  std::string hidden_sizes = "256,256";

  template <class V>
  void visit(V& v) {
    v("buffer_size", buffer_size, Range::closed(1, 1e8), "replay capacity");
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("tau", tau, Range::left_open(0, 1), "target smoothing coefficient");
    v("batch_size", batch_size, Range::closed(1, 1e6), "replay minibatch size");
    v("learning_starts", learning_starts, Range::closed(0, 1e9), "random-action steps first");
    v("policy_lr", policy_lr, Range::positive(), "actor Adam step size");
    v("q_lr", q_lr, Range::positive(), "critic and temperature Adam step size");
    v("policy_frequency", policy_frequency, Range::closed(1, 1000), "delayed actor updates");
    v("target_network_frequency", target_network_frequency, Range::closed(1, 1e6),
      "steps between target updates");
    v("alpha", alpha, Range::positive(), "temperature when autotune is off");
    v("autotune", autotune, "learn the temperature towards entropy -dim(A)");
    v("hidden_sizes", hidden_sizes, Choices{}, "comma-separated hidden widths");
  }
  void check() const;
};

class Sac final : public Algorithm {
 public:
  using Params = SacParams;
  explicit Sac(const Params& p);
  ~Sac() override;
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  std::string policy_file() const override { return "policy.bin"; }
  ParamMap params() const override { return dump_params(p_); }
  std::int64_t train_episodes() const override { return episodes_; }
  // The temperature (the configured alpha before training).
  double alpha() const;
  bool resumable() const override { return true; }

 private:
  Params p_;
  std::string env_id_;
  std::unique_ptr<SacLearner> learner_;  // networks and updates (algos/online/sac_learner.hpp)
  std::int64_t episodes_ = 0;
};

}  // namespace dprl::algos
