// Episodic, time-inhomogeneous, finite-horizon linear MDPs with a known feature map (paper 002,
// the LSVI-UCB setting of Jin et al. 2020): for every step h, state s and action a,
//
//   r_h(s, a)     = phi(s, a)^T theta_h          in [0, 1]
//   P_h(s' | s, a) = phi(s, a)^T mu_h(s')         a distribution over s'
//
// with ||phi(s, a)||_2 <= 1. The state set is finite, so the whole model is explicit: optimal
// values V*_h by backward induction and the value V^pi_h of any deterministic policy are exact, and
// so is the regret sum_k V*_1(s_1^k) - V^{pi_k}_1(s_1^k).
//
// Instances (`kind`; docs/paper002.md has the constructions in full):
// - qiao_wang: the synthetic instance of the DP offline linear-MDP literature (Min et al. 2021,
//   used by Qiao and Wang 2023): 2 states, 100 actions, d = 10, H = 20. phi(s, a) is the 8-bit
//   binary code of a, then delta(s, a) = [1{s = 0} = 1{a = 0}] and 1 - delta(s, a), divided by
//   its largest L2 norm (3) so that ||phi|| <= 1 (mu_h and theta_h are scaled up by the same
//   factor, which leaves r and P unchanged); P(s' = 0 | s, a) = delta(s, a) (alpha_h = 0),
//   r_h = 0.99 delta + 0.01 (1 - delta), s_1 uniform on {0, 1}.
// - random: a random linear MDP (d, |A|, |S|, H, model_seed): phi(s, a) ~ Dirichlet(c_phi) on the
//   simplex of R^d (so ||phi||_2 <= 1 and P is a mixture of d distributions), each mu_h(., i) ~
//   Dirichlet(c_mu) over the states, theta_h ~ U[0, 1]^d.
// - tabular: a random tabular MDP (|S|, |A|, H, model_seed) with one-hot features, d = |S||A|:
//   P_h(. | s, a) ~ Dirichlet(c_mu), r_h(s, a) ~ U[0, 1].
// - chain: the chain MDP (envs/chain_mdp.hpp, n states, move right succeeds with probability p)
//   with one-hot features over (s, a), d = 2n; rewards mapped affinely from [-1, 1] to [0, 1]
//   (r + 1) / 2, which over a fixed horizon leaves every policy comparison unchanged.
// The initial state is state 0 for every instance but qiao_wang.
//
// The env `linear_mdp` plays the model: observation Discrete(|S|) (the state index), action
// Discrete(|A|), truncated after H steps, reward r_h(s, a), next state drawn from P_h(. | s, a)
// with one uniform from the episode's stream.
//
// | parameter       | default   | meaning                                                  |
// |-----------------|-----------|----------------------------------------------------------|
// | kind            | qiao_wang | qiao_wang, random, tabular or chain                      |
// | horizon         | 20        | H                                                        |
// | num_states      | 10        | |S| (random, tabular)                                    |
// | num_actions     | 100       | |A| (random, tabular; qiao_wang is 100, chain 2)          |
// | dim             | 20        | d (random)                                               |
// | model_seed      | 0         | seed of the random instance                              |
// | feature_conc    | 0.1       | Dirichlet concentration of phi (random)                  |
// | transition_conc | 1         | Dirichlet concentration of mu / P rows (random, tabular) |
// | chain_n         | 10        | chain states                                             |
// | chain_p         | 0.9       | chain move-right success probability                     |
// | max_episode_steps | 0       | time limit; 0: H (steps past H stay put with reward 0)   |
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct LinearMdpParams {
  std::string kind = "qiao_wang";
  int horizon = 20;
  int num_states = 10;
  int num_actions = 100;
  int dim = 20;
  std::int64_t model_seed = 0;
  double feature_conc = 0.1;
  double transition_conc = 1.0;
  int chain_n = 10;
  double chain_p = 0.9;
  int max_episode_steps = 0;

  template <class V>
  void visit(V& v) {
    v("kind", kind, Choices{{"qiao_wang", "random", "tabular", "chain"}}, "which instance");
    v("horizon", horizon, Range::closed(1, 10000), "episode length H");
    v("num_states", num_states, Range::closed(1, 100000), "|S| (random, tabular)");
    v("num_actions", num_actions, Range::closed(1, 100000), "|A| (random, tabular)");
    v("dim", dim, Range::closed(1, 4096), "feature dimension d (random)");
    v("model_seed", model_seed, Range::closed(0, 9.0e15), "seed of the random instance");
    v("feature_conc", feature_conc, Range::positive(),
      "Dirichlet concentration of the features (random)");
    v("transition_conc", transition_conc, Range::positive(),
      "Dirichlet concentration of transition rows (random, tabular)");
    v("chain_n", chain_n, Range::closed(2, 100000), "chain states (chain)");
    v("chain_p", chain_p, Range::closed(0, 1), "chain move-right success probability (chain)");
    v("max_episode_steps", max_episode_steps, Range::closed(0, 1e9),
      "time limit; 0: the horizon H (past H the state stays with reward 0)");
  }
};

// The explicit model. Index conventions (h is 0-based, 0 .. H-1):
//   features     [(s * A + a) * d + i]
//   theta        [h * d + i]
//   mu           [(h * d + i) * S + s']
//   rewards      [(h * S + s) * A + a]
//   transitions  [((h * S + s) * A + a) * S + s']
struct LinearMdpModel {
  int num_states = 0;
  int num_actions = 0;
  int horizon = 0;
  int dim = 0;
  std::vector<double> features;
  std::vector<double> theta;
  std::vector<double> mu;
  std::vector<double> rewards;
  std::vector<double> transitions;
  std::vector<double> initial;  // distribution of s_1
  std::string description;

  std::span<const double> phi(int s, int a) const {
    return {features.data() + (static_cast<std::size_t>(s) * num_actions + a) * dim,
            static_cast<std::size_t>(dim)};
  }
  double reward(int h, int s, int a) const {
    return rewards[(static_cast<std::size_t>(h) * num_states + s) * num_actions + a];
  }
  std::span<const double> next(int h, int s, int a) const {
    return {transitions.data() +
                ((static_cast<std::size_t>(h) * num_states + s) * num_actions + a) * num_states,
            static_cast<std::size_t>(num_states)};
  }

  // Fills rewards and transitions from features, theta and mu.
  void derive_from_linear();
  // Throws ParamError unless: sizes match, ||phi|| <= 1 (+1e-9), rewards in [0, 1], every
  // P_h(. | s, a) is a distribution (entries >= -1e-12, sum within 1e-9 of 1), the initial
  // distribution is one, and rewards / transitions equal phi^T theta / phi^T mu to 1e-9.
  void validate() const;
};

LinearMdpModel make_linear_mdp(const LinearMdpParams& p);

// Values by backward induction. v has (H + 1) * S entries ([h * S + s], v[H * S + s] = 0), q has
// H * S * A entries ([(h * S + s) * A + a]).
struct MdpValues {
  std::vector<double> v;
  std::vector<double> q;
};
// Optimal values V*, Q*; greedy (if given, resized to H * S) receives an optimal action per
// (h, s), the lowest index among ties.
MdpValues optimal_values(const LinearMdpModel& m, std::vector<std::int32_t>* greedy = nullptr);
// V^pi of the deterministic policy pi[h * S + s]; returns (H + 1) * S values. Throws ParamError
// on a wrong size or an action out of range.
std::vector<double> policy_values(const LinearMdpModel& m, std::span<const std::int32_t> pi);
// E_{s ~ initial} v[s] of a value table's first step.
double initial_value(const LinearMdpModel& m, std::span<const double> v);

class LinearMdp final : public Env {
 public:
  using Params = LinearMdpParams;
  explicit LinearMdp(const Params& p = Params{});

  std::vector<double> state() const override { return {static_cast<double>(s_)}; }
  ParamMap params() const override { return dump_params(p_); }

  const LinearMdpModel& model() const { return model_; }

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  Params p_;
  LinearMdpModel model_;
  int s_ = 0;
  Rng rng_;
};

}  // namespace dprl::envs
