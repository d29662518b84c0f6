// algos/actor_critic/: paper 001, the GTD(lambda) actor-critic and its DP variants, feature
// maps, its audit; docs/architecture.md.
//
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
//   clip = fixed: C = clip_norm, a data-independent scale.
//
// Guarantee, stated exactly (docs/privacy.md, "What each guarantee covers"):
//   - Neighbouring relation: replace one individual's trajectory (episode), under the
//     conservative assumption that it may influence every later update. Unit: trajectory.
//   - Sensitivity: every released vector has norm exactly C whatever the data, so a neighbouring
//     run releases another vector of norm C: L2 sensitivity 2C per release (not C). The noise
//     N(0, sigma^2 C^2) is the paper's, so each release is a Gaussian mechanism with noise
//     multiplier sigma / 2. With secure noise (os-entropy) the vector is snapped to the sampler's
//     grid g first, which adds sqrt(n) g to the sensitivity of an n-element vector, and the
//     noise is widened to sigma C (1 + sqrt(n) g / 2C), by at most 2^-12, then to the next
//     table sampler's width, by at most 2^-7 more (privacy/secure_release.hpp,
//     VaryingGaussianRelease; the record's delta adds the sampler's distance, sampler_delta):
//     the multiplier stays at least sigma / 2. We keep the paper's
//     arithmetic (normalise to C, noise sigma C) and correct the accounting, rather than clip to
//     C/2, so the learning curves stay those of the paper's algorithm.
//   - Per update, the paper's figure is (epsilon, delta) from the classical calibration above,
//     for sensitivity C; that theorem needs epsilon < 1. We report per_update_epsilon_exact, the
//     exact epsilon at delta of one release (noise multiplier sigma / 2, analytic Gaussian,
//     Balle and Wang 2018), which is what the noise buys under the relation above.
//   - Whole run: the accountant composes every release (adaptive composition).
//   - Covered: only the sequence of noised vectors (g + noise, d_v + noise), which the run does
//     not write. NOT covered: the policy (policy.json), metrics.csv, the training returns and
//     trace similarities in summary.json. The paper's updates multiply the noised trace by the
//     raw TD error delta (reward and critic) and the importance ratio rho, and the critic (w, and
//     v under DP-Actor) and the actor under DP-Critic use raw data, so none of these is
//     post-processing of the releases. Since the vectors have norm C whatever the data, the
//     releases would be equally private against replacing every trajectory: the figure says
//     nothing about the outputs. summary.json therefore always has formal: false; clip = median
//     also makes C itself data-dependent (no a priori sensitivity).
//   - Budget (budget_epsilon > 0): a persistent ledger (privacy/ledger.hpp) in the run directory,
//     or at `ledger` (a file several runs on the same data can share), locked for the run. Steps
//     are paid for in blocks of charge_block steps (every step's releases), charged and made
//     durable before the first release they pay for (charge -> durable -> release); the last
//     block is cut to what the budget affords, and training stops before the first unpaid
//     step. A crash or a finished run leaves the unused rest of its block spent; a rerun that
//     names the same ledger continues from what is spent and is refused if nothing is left.
//   - Noise: os-entropy by default (secure, not reproducible); seeded is reproducible and marks
//     the run reproducible_noise, with a warning (algos/core/private_noise.hpp).
//   - metrics.csv's epsilon column is the configured accountant's whole-run epsilon so far: every
//     episode for rdp; for pld and best (seconds per evaluation on long runs) at the episodes
//     where the release count has doubled since the last value and at the last episode, empty
//     otherwise.
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
// | features         | one_hot        | feature map (algos/actor_critic/features.hpp)            |
// | dp               | none           | none, actor, critic or both                              |
// | epsilon, delta   | 10, 1e-6       | per-update budget of the paper's calibration             |
// | clip             | median         | median (paper) or fixed                                  |
// | median_over      | support        | support or all (see above)                               |
// | clip_norm        | 1              | C when clip = fixed                                      |
// | episodes         | 500            | stop after this many episodes (0: train.steps only)      |
// | trace_similarity | false          | run a paired non-DP twin and log trace cosine similarity |
// | accountant       | rdp            | whole-run accountant (registered: rdp, pld, best)        |
// | budget_epsilon   | 0              | whole-run budget at delta (0: none); training stops      |
// |                  |                | before the first step the budget cannot pay for          |
// | ledger           | ""             | budget ledger file ("": privacy_ledger.json in the run)  |
// | charge_block     | 256            | steps paid for by one ledger charge                      |
// | noise            | os-entropy     | os-entropy (secure) or seeded (reproducible, not formal) |
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algos/actor_critic/features.hpp"
#include "algos/core/algorithm.hpp"
#include "privacy/accountant.hpp"

namespace dprl::privacy {
class Ledger;
class ReleaseTap;
}  // namespace dprl::privacy

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
  std::string ledger;
  int charge_block = 256;
  std::string noise = "os-entropy";

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
    v("accountant", accountant, privacy::accountant_choices(), "whole-run accountant");
    v("budget_epsilon", budget_epsilon, Range::non_negative(),
      "whole-run epsilon budget at delta (0: no budget); training stops before exceeding it");
    v("ledger", ledger, Choices{},
      "budget ledger file shared by runs on the same data (empty: privacy_ledger.json in the "
      "run directory)");
    v("charge_block", charge_block, Range::closed(1, 1e9), "steps paid for by one ledger charge");
    v("noise", noise, Choices{{"os-entropy", "seeded"}},
      "noise source: os-entropy (secure) or seeded (reproducible, not formally private)");
  }
};

class ActorCritic final : public Algorithm {
 public:
  using Params = ActorCriticParams;
  explicit ActorCritic(const Params& p);
  ~ActorCritic() override;

  // Validates the features against the env and, with a budget, opens and locks the ledger,
  // refusing one whose budget is already spent (BudgetExceeded naming the file).
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }
  std::optional<PrivacyReport> privacy() const override { return privacy_; }
  std::int64_t train_episodes() const override { return episodes_; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }
  // Checkpoints between episodes (weights, release counts, the running figures, the budget's
  // position and the noise stream); a resumed private run uses the ledger charges its killed
  // process made after the checkpoint instead of charging again (algos/core/checkpoint.hpp). A
  // private run with fresh (os-entropy) noise refuses to resume from checkpoint.prev.bin.
  bool resumable() const override { return true; }

  const Params& ac_params() const { return p_; }
  // A privacy audit around every release of the next train() (privacy/release_tap.hpp; see
  // GtdActorCriticLearner::tap; null: none). For audits only
  // (algos/actor_critic/actor_critic_audit.hpp).
  void set_release_tap(privacy::ReleaseTap* tap) { tap_ = tap; }

  // sigma of the paper's calibration, sqrt(2 ln(1.25 / delta)) / epsilon.
  static double paper_sigma(double epsilon, double delta);

 private:
  struct Run;  // the state of one train() call (actor_critic.cpp)

  // train()'s steps: the twin's episode k and the trace similarities (NaN without a twin), the
  // metrics row and evaluation of an episode, the greedy preferences, and the summary figures and
  // guarantee record at the end.
  std::pair<double, double> twin_similarity(Run& r, std::uint64_t k);
  void log_episode(Run& r, double ret, std::int64_t len, double cu, double cv);
  void compute_preferences(const FeatureMap& features, const std::vector<double>& u);
  void summarise(const Run& r);
  PrivacyReport privacy_record(const Run& r) const;
  // What carries from one episode to the next, for checkpoints.
  void sync_run(Run& r, StateIo& io, std::uint64_t& ledger_entries);
  // After a checkpoint is loaded: from which ledger charge on the killed run's charges are used.
  void resume_budget(Run& r, const TrainContext& ctx, std::uint64_t ledger_entries) const;

  Params p_;
  std::string env_id_;
  int num_states_ = 0, num_actions_ = 0;
  std::vector<double> preferences_;  // u.psi(s, a) for the greedy policy, state-major
  std::int64_t episodes_ = 0;
  std::optional<PrivacyReport> privacy_;
  std::vector<std::pair<std::string, double>> extra_;
  std::unique_ptr<privacy::Ledger> ledger_;  // with a budget, opened by check()
  bool ledger_in_run_dir_ = false;           // the run's own ledger, not a shared file
  bool checked_ = false;
  privacy::ReleaseTap* tap_ = nullptr;
};

}  // namespace dprl::algos
