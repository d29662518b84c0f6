// Chain MDP: n states in a row, actions stay / move right; the MDP-100 of
// Seo and Yang, "Differentially Private Actor and Its Eligibility Trace" (Electronics 9, 2020,
// 1486), section 4.1.1, after Lebensold et al. (2019).
//
// The paper fixes: n = 100 states, two actions (0 stay, 1 move right), move right succeeds with
// probability p = 0.9 and otherwise stays, reward -1 per time step and +1 in the absorbing state.
// Choices it leaves open, made here (also in docs/envs.md):
// - start: every episode starts in state 0, the left end (deterministic reset; the seed only feeds
//   the step randomness);
// - observation: the state index as one float (Discrete(n)); learners that want one-hot or other
//   features build them from the index;
// - reward: -1 (step_reward) on every transition except the one that enters the end state n - 1,
//   which earns +1 (goal_reward) instead and terminates; "stay" is a real action that costs -1;
// - absorbing end: stepping in state n - 1 (only after termination or set_state) stays there with
//   reward 0 and terminated = true; tabular_model() flags it absorbing with that self-loop;
// - time limit: max_episode_steps = 1000 (the paper states none; with p = 0.9 the optimal policy
//   needs 99 / 0.9 = 110 steps on average, a uniformly random one about 220);
// - randomness: a move right draws one uniform u from the episode's stream and succeeds when
//   u < p; "stay" draws nothing.
//
// | parameter         | default | range        | meaning                                      |
// |-------------------|---------|--------------|----------------------------------------------|
// | n                 | 100     | [2, 1e7]     | number of states                             |
// | p                 | 0.9     | [0, 1]       | probability that "move right" succeeds       |
// | step_reward       | -1      | [-1e6, 1e6]  | reward of every other transition             |
// | goal_reward       | 1       | [-1e6, 1e6]  | reward of the transition into state n - 1    |
// | max_episode_steps | 1000    | [1, 1e9]     | time limit                                   |
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct ChainMdpParams {
  // paper 001 section 4.1.1
  int n = 100;
  double p = 0.9;
  double step_reward = -1;
  double goal_reward = 1;
  int max_episode_steps = 1000;  // our choice; the paper gives no limit

  template <class V>
  void visit(V& v) {
    v("n", n, Range::closed(2, 1e7), "number of states; the last one is the absorbing goal");
    v("p", p, Range::closed(0, 1), "probability that move right succeeds (else stay)");
    v("step_reward", step_reward, Range::closed(-1e6, 1e6), "reward of every other step");
    v("goal_reward", goal_reward, Range::closed(-1e6, 1e6),
      "reward of the step that reaches the end state");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class ChainMdp final : public Env {
 public:
  using Params = ChainMdpParams;
  explicit ChainMdp(const Params& p = Params{});

  std::vector<double> state() const override { return {static_cast<double>(s_)}; }
  const TabularModel* tabular_model() const override { return &model_; }
  ParamMap params() const override { return dump_params(p_); }

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  Params p_;
  TabularModel model_;
  int s_ = 0;
  Rng rng_;
};

}  // namespace dprl::envs
