// Off-policy actor-critic with a GTD(lambda) critic and eligibility traces, and its
// differentially private variants DP-Actor, DP-Critic and DP-Both.
//
// Source: Seo and Yang, "Differentially Private Actor and Its Eligibility Trace", Electronics 2020
// (paper 001), Algorithms 1-4, after Degris, White and Sutton, "Off-Policy Actor-Critic" (2012).
// Per step, with features x_s (critic) and psi(s, a) (actor), gamma' = 0 on termination:
//   delta <- r + gamma' v.x_s' - v.x_s
//   e_v   <- rho (x_s + gamma lambda e_v)
//   v     <- v + alpha_v [delta e_v - gamma' (1 - lambda) (w.e_v) x_s']          (direction d_v)
//   w     <- w + alpha_w [delta e_v - (w.x_s) x_s]
//   e_u   <- rho [grad log pi_u(a|s) + gamma lambda e_u];  u <- u + alpha_u delta e_u
// pi_u is the linear softmax over preferences u.psi(s, a). Action selection (paper sec. 3): with
// probability 1 - explore the target policy acts (epsilon_greedy: the argmax preference; softmax:
// a draw from pi_u) and rho = 1; otherwise the uniform behaviour policy b acts and
// rho = pi_u(a|s) / b(a|s). Traces are reset at the start of every episode. Evaluation and the
// saved policy act the same way (argmax preference, uniform with probability explore): the
// purely greedy policy of this learner can stall in a state where "stay" narrowly wins.
//
// Private variants (Algorithms 2-4): the actor gradient g (DP-Actor) and/or the critic direction
// d_v (DP-Critic) is rescaled to L2 norm C and Gaussian noise N(0, sigma^2 C^2 I) is added to
// every element before use, sigma = sqrt(2 ln(1.25 / delta)) / epsilon (paper eq. 3).
//   clip = median: C = the median absolute element of the vector at that update, as the paper
//     does. median_over = support takes the median over the entries the features touch (the
//     paper's literal "all elements" is 0 for one-hot features, which silences the update; it is
//     available as median_over = all).
//   clip = fixed: C = clip_norm, a data-independent sensitivity.
//
// Guarantees, stated exactly:
//   - Per update, the paper's figure is (epsilon, delta) from the classical calibration above.
//     That theorem needs epsilon < 1; for epsilon >= 1 we also report the exact epsilon of a
//     Gaussian mechanism with noise multiplier sigma at delta (analytic Gaussian, Balle and Wang
//     2018), which is what the noise actually buys.
//   - Whole run: the accountant composes every noised release as a Gaussian mechanism with
//     noise multiplier sigma (L2 sensitivity C: a vector of norm C present or absent), under the
//     conservative relation that one individual's data (a trajectory) may influence every update.
//     This is a formal guarantee only with clip = fixed: a data-dependent C (median) has no a
//     priori sensitivity bound, and the TD error delta multiplying the noised trace is itself
//     data-dependent, so the summary marks median runs "formal": false. Only the released noised
//     vectors are covered; the parameters are post-processing only where they depend on data
//     through them.
//
// Divergence: when the weights become non-finite (noise far larger than the updates, e.g.
// epsilon 0.1 on Taxi), training stops after that episode and the summary reports diverged = 1 and
// diverged_episode; the figures of such a run describe a broken learner and are marked so.
//
// | param            | default        | meaning                                                 |
// |------------------|----------------|---------------------------------------------------------|
// | alpha_v/w/u      | 0.01/0.5/0.5   | step sizes (paper Table 2, MDP-100)                      |
// | lambda           | 0.8            | trace decay                                             |
// | gamma            | 0.99           | discount                                                |
// | explore          | 0.1            | probability that the uniform behaviour policy acts      |
// | policy           | epsilon_greedy | epsilon_greedy or softmax target action selection        |
// | features         | one_hot        | feature map (algos/features.hpp)                         |
// | dp               | none           | none, actor, critic or both                              |
// | epsilon, delta   | 10, 1e-6       | per-update budget of the paper's calibration             |
// | clip             | median         | median (paper) or fixed                                  |
// | median_over      | support        | support or all (see above)                               |
// | clip_norm        | 1              | C when clip = fixed                                      |
// | episodes         | 500            | stop after this many episodes (0: train.steps only)      |
// | trace_similarity | false          | run a paired non-DP twin and log trace cosine similarity |
// | accountant       | rdp            | whole-run accountant (rdp or pld)                        |
// | budget_epsilon   | 0              | whole-run budget at delta (0: none); training stops      |
// |                  |                | before the first release the budget cannot afford        |
// | noise            | seeded         | seeded (reproducible) or os-entropy                      |
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algos/algorithm.hpp"
#include "algos/features.hpp"

namespace dprl::algos {

struct ActorCriticParams {
  double alpha_v = 0.01;  // paper 001 Table 2 (MDP-100)
  double alpha_w = 0.5;
  double alpha_u = 0.5;
  double lambda = 0.8;
  double gamma = 0.99;   // paper sec. 4
  double explore = 0.1;  // not given by the paper
  std::string policy = "epsilon_greedy";
  std::string features = "one_hot";
  std::string dp = "none";
  double epsilon = 10;  // paper Table 2
  double delta = 1e-6;  // paper sec. 4
  std::string clip = "median";
  std::string median_over = "support";
  double clip_norm = 1.0;
  int episodes = 500;  // paper sec. 4
  bool trace_similarity = false;
  std::string accountant = "rdp";
  double budget_epsilon = 0;
  std::string noise = "seeded";

  template <class V>
  void visit(V& v) {
    v("alpha_v", alpha_v, Range::positive(), "critic step size (v)");
    v("alpha_w", alpha_w, Range::positive(), "GTD auxiliary step size (w)");
    v("alpha_u", alpha_u, Range::positive(), "actor step size (u)");
    v("lambda", lambda, Range::closed(0, 1), "eligibility trace decay");
    v("gamma", gamma, Range::closed(0, 1), "discount factor");
    v("explore", explore, Range::closed(0, 1),
      "probability that the uniform behaviour policy acts");
    v("policy", policy, Choices{{"epsilon_greedy", "softmax"}}, "target action selection");
    v("features", features, Choices{{"one_hot"}}, "feature map");
    v("dp", dp, Choices{{"none", "actor", "critic", "both"}}, "which update is privatised");
    v("epsilon", epsilon, Range::positive(), "per-update epsilon of the paper's calibration");
    v("delta", delta, Range::open(0, 1), "per-update delta (also the whole-run delta)");
    v("clip", clip, Choices{{"median", "fixed"}}, "norm C: median element (paper) or clip_norm");
    v("median_over", median_over, Choices{{"support", "all"}}, "elements the median is taken over");
    v("clip_norm", clip_norm, Range::positive(), "C when clip = fixed");
    v("episodes", episodes, Range::closed(0, 1e9), "episodes to train (0: train.steps only)");
    v("trace_similarity", trace_similarity,
      "run a paired non-private twin and log the cosine similarity of the traces");
    v("accountant", accountant, Choices{{"rdp", "pld"}}, "whole-run accountant");
    v("budget_epsilon", budget_epsilon, Range::non_negative(),
      "whole-run epsilon budget at delta (0: no budget); training stops before exceeding it");
    v("noise", noise, Choices{{"seeded", "os-entropy"}}, "noise source");
  }
};

class ActorCritic final : public Algorithm {
 public:
  using Params = ActorCriticParams;
  explicit ActorCritic(const Params& p) : p_(p) {}
  ~ActorCritic() override;

  std::int64_t train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }
  std::optional<PrivacyReport> privacy() const override { return privacy_; }
  std::int64_t train_episodes() const override { return episodes_; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }

  // sigma of the paper's calibration, sqrt(2 ln(1.25 / delta)) / epsilon.
  static double paper_sigma(double epsilon, double delta);

 private:
  Params p_;
  std::string env_id_;
  int num_states_ = 0, num_actions_ = 0;
  std::vector<double> preferences_;  // u.psi(s, a) for the greedy policy, state-major
  std::int64_t episodes_ = 0;
  std::optional<PrivacyReport> privacy_;
  std::vector<std::pair<std::string, double>> extra_;
};

}  // namespace dprl::algos
