// Tabular Q-learning with epsilon-greedy exploration (Watkins and Dayan 1992; Sutton and Barto
// 2018, section 6.5).
//
//   Q(s, a) <- Q(s, a) + alpha * (r + gamma * max_a' Q(s', a') * [not terminated] - Q(s, a))
//
// Truncation bootstraps (the time limit is not part of the MDP); termination does not.
// Exploration epsilon decays linearly from epsilon_start to epsilon_end over the first
// exploration_fraction of training. Needs a Discrete observation space (Taxi, chain).
//
// | param                | default | meaning                                          |
// |----------------------|---------|--------------------------------------------------|
// | learning_rate        | 0.1     | alpha                                            |
// | gamma                | 0.99    | discount                                         |
// | epsilon_start        | 1.0     | exploration at step 0                            |
// | epsilon_end          | 0.05    | exploration after the decay                      |
// | exploration_fraction | 0.5     | fraction of training over which epsilon decays   |
// | initial_q            | 0       | initial action values                            |
// | use_action_mask      | false   | explore and act only among masked-in actions     |
#pragma once

#include <vector>

#include "algos/core/algorithm.hpp"

namespace dprl::algos {

struct QLearningParams {
  double learning_rate = 0.1;
  double gamma = 0.99;
  double epsilon_start = 1.0;
  double epsilon_end = 0.05;
  double exploration_fraction = 0.5;
  double initial_q = 0.0;
  bool use_action_mask = false;

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate, Range::left_open(0, 1), "step size alpha");
    v("gamma", gamma, Range::closed(0, 1), "discount factor");
    v("epsilon_start", epsilon_start, Range::closed(0, 1), "exploration probability at step 0");
    v("epsilon_end", epsilon_end, Range::closed(0, 1), "exploration probability after decay");
    v("exploration_fraction", exploration_fraction, Range::closed(0, 1),
      "fraction of training over which epsilon decays linearly");
    v("initial_q", initial_q, Range::any(), "initial action values");
    v("use_action_mask", use_action_mask, "explore and act only among masked-in actions");
  }
};

class QLearning final : public Algorithm {
 public:
  using Params = QLearningParams;
  explicit QLearning(const Params& p) : p_(p) {}

  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }
  std::int64_t train_episodes() const override { return episodes_; }
  bool resumable() const override { return true; }

  const std::vector<double>& q() const { return q_; }

 private:
  Params p_;
  std::string env_id_;
  int num_states_ = 0;
  int num_actions_ = 0;
  std::vector<double> q_;
  std::int64_t episodes_ = 0;
};

}  // namespace dprl::algos
