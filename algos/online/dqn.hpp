// Deep Q-learning (Mnih et al. 2015) with optional double-Q targets (van Hasselt et al. 2016),
// following CleanRL's dqn.py: Q-MLP 120-84 ReLU (PyTorch-default init), Adam, uniform replay,
// target network copied every target_network_frequency steps (tau = 1) or Polyak-averaged
// (tau < 1), linear epsilon schedule over exploration_fraction of training, MSE loss.
// One env; time-limit truncations bootstrap from the final observation.
//
// | param                    | default | meaning                                        |
// |--------------------------|---------|------------------------------------------------|
// | learning_rate            | 2.5e-4  | Adam step size                                 |
// | buffer_size              | 10000   | replay capacity                                |
// | gamma                    | 0.99    | discount                                       |
// | tau                      | 1.0     | target update rate (1: hard copy)              |
// | target_network_frequency | 500     | steps between target updates                   |
// | batch_size               | 128     | replay minibatch                               |
// | start_e, end_e           | 1, 0.05 | epsilon schedule endpoints                     |
// | exploration_fraction     | 0.5     | fraction of training to reach end_e            |
// | learning_starts          | 10000   | steps before learning                          |
// | train_frequency          | 10      | env steps per gradient step                    |
// | double_q                 | true    | double-Q targets (CleanRL: false)              |
// | hidden_sizes             | 120,84  | hidden layer widths                            |
// | loss                     | mse     | mse or huber (smooth L1)                       |
// | max_grad_norm            | 0       | global gradient clip (0: off)                  |
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

struct DqnParams {
  double learning_rate = 2.5e-4;
  int buffer_size = 10000;
  double gamma = 0.99;
  double tau = 1.0;
  int target_network_frequency = 500;
  int batch_size = 128;
  double start_e = 1.0;
  double end_e = 0.05;
  double exploration_fraction = 0.5;
  int learning_starts = 10000;
  int train_frequency = 10;
  bool double_q = true;
  std::string hidden_sizes = "120,84";
  std::string loss = "mse";
  double max_grad_norm = 0.0;

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate, Range::positive(), "Adam step size");
    v("buffer_size", buffer_size, Range::closed(1, 1e8), "replay capacity");
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("tau", tau, Range::left_open(0, 1), "target update rate (1: hard copy)");
    v("target_network_frequency", target_network_frequency, Range::closed(1, 1e9),
      "env steps between target updates");
    v("batch_size", batch_size, Range::closed(1, 1e6), "replay minibatch size");
    v("start_e", start_e, Range::closed(0, 1), "initial exploration epsilon");
    v("end_e", end_e, Range::closed(0, 1), "final exploration epsilon");
    v("exploration_fraction", exploration_fraction, Range::closed(0, 1),
      "fraction of training over which epsilon decays");
    v("learning_starts", learning_starts, Range::closed(0, 1e9), "env steps before learning");
    v("train_frequency", train_frequency, Range::closed(1, 1e6), "env steps per gradient step");
    v("double_q", double_q, "double-Q targets (online argmax, target value)");
    v("hidden_sizes", hidden_sizes, Choices{}, "comma-separated hidden widths");
    v("loss", loss, Choices{{"mse", "huber"}}, "TD loss");
    v("max_grad_norm", max_grad_norm, Range::non_negative(), "global gradient clip (0: off)");
  }
  void check() const;
};

class Dqn final : public Algorithm {
 public:
  using Params = DqnParams;
  explicit Dqn(const Params& p);
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  std::string policy_file() const override { return "policy.bin"; }
  ParamMap params() const override { return dump_params(p_); }
  std::int64_t train_episodes() const override { return episodes_; }
  bool resumable() const override { return true; }

  const nn::Mlp& q() const { return q_; }
  const nn::Mlp& target() const { return target_; }
  std::int64_t target_updates() const { return target_updates_; }

 private:
  Params p_;
  std::string env_id_;
  nn::Mlp q_, target_;
  std::int64_t episodes_ = 0, target_updates_ = 0;
};

}  // namespace dprl::algos
