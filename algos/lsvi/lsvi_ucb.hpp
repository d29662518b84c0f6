// algos/lsvi/: paper 002, LSVI-UCB and LSVI-UCB+ with their joint-DP releases, its audit;
// docs/architecture.md.
//
// LSVI-UCB and LSVI-UCB+ for linear MDPs, non-private and joint-DP (paper 002, the talk
// "Towards optimal differentially private regret bounds in linear MDPs"; docs/paper002.md).
//
// variant "lsvi_ucb" is the talk's Algorithm 1 (Jin et al. 2020): at a policy update, for
// h = H .. 1,
//   Lambda_h = sum_tau phi_tau phi_tau^T + lambda I,   u_h = sum_tau phi_tau [r_tau +
//   V_{h+1}(x'_tau)] w_h = Lambda_h^-1 u_h,   Q_h = min{ w_h^T phi + beta ||phi||_{Lambda_h^-1}, H
//   }, V_h(s) = max_a Q_h(s, a)
// and the agent acts greedily on Q_h. variant "lsvi_ucb_plus" is LSVI-UCB+ (Hu et al. 2022):
// the same with weighted ridge regression (weights 1 / sigma_bar^2 from estimated variances of
// V_{h+1}) and lambda = 1 / (H^2 sqrt(d)) by default; algos/lsvi/lsvi_ucb.cpp and docs/paper002.md
// state the variance estimator used.
//
// Policy updates (`batching`): "none" updates before every episode (Algorithm 1 as written);
// "static" updates at the start of B equal batches of episodes (Luyo et al. 2021); "adaptive"
// updates when det(Lambda_h) has grown by switch_ratio (2: determinant doubling) for some h since
// the last update (Wang et al. 2021, Ngo et al. 2022). Statistics are accumulated incrementally
// (Lambda_h^-1 by Sherman-Morrison, log det by the matrix determinant lemma, the regression
// targets aggregated by next state, which is exact because the state set is finite), and values
// are recomputed only at updates, so the cost follows the number of updates.
//
// Privacy (private: true) is joint DP (Kearns et al. 2014) with one user = one episode.
// Neighbouring relation (`neighbouring`): "replace" (default, the usual joint-DP relation: the user
// sequences differ in one user's whole episode) or "add-remove" (one user's episode present or
// absent); the sensitivities follow the relation (replace: x2 for the targets, x sqrt(2) for the
// Gram matrices). Every update releases, for every h, Lambda_h (binary-tree mechanism) and the
// regression targets plus Gaussian noise; the policy every other user follows is a function of
// those releases only, so by the billboard lemma (Hsu et al. 2014) the actions recommended to all
// other users are (epsilon, delta)-DP in user k. Validity: features of norm <= 1 and rewards in
// [0, 1] (LinearMdpModel::validate); every private path clamps the value tables into [0, H]. Noise
// (`noise`): os-entropy (default; snapped releases, exact discrete samples) or seeded
// (reproducible, warned, never formal). The guarantee record (privacy()) states relation, unit,
// sensitivities, covered outputs and whether the run is formal. Details:
// algos/lsvi/lsvi_ucb_private.hpp and docs/paper002.md.
//
// | param          | default  | meaning                                                        |
// |----------------|----------|----------------------------------------------------------------|
// | variant        | lsvi_ucb | lsvi_ucb (Jin et al. 2020) or lsvi_ucb_plus (Hu et al. 2022)    |
// | episodes       | 0        | K; 0: train.steps / H                                          |
// | lambda         | 0        | ridge lambda; 0: 1 (lsvi_ucb) or 1 / (H^2 sqrt(d)) (plus)       |
// | beta           | 1        | bonus multiplier                                               |
// | beta_bar       | 1        | plus: pessimistic bonus / variance correction radius           |
// | beta_tilde     | 1        | plus: second-moment correction radius                          |
// | variance_coeff | 1        | plus: scale of the d^3 H^2 terms of sigma_bar (1: He et al.)   |
// | clip           | horizon  | Q_h <= H (Algorithm 1) or Q_h <= H - h + 1 ("remaining")        |
// | batching       | none     | none, static or adaptive                                       |
// | batches        | 0        | static: B batches; 0: ceil(K^(2/5)) (Luyo et al. 2021)           |
// | switch_ratio   | 2        | adaptive: update when det Lambda_h grows by this factor         |
// | max_updates    | 0        | adaptive cap on updates; 0: d H log2(1 + K / (d lambda)) + 1     |
// | private        | false    | joint-DP releases of the statistics                            |
// | epsilon        | 1        | privacy budget of the whole run                                |
// | delta          | 1e-5     | privacy delta                                                  |
// | accountant     | pld      | a registered accountant (rdp, pld, best): composes releases    |
// | failure_prob   | 0.05     | p of the positive-definite shift of the private Gram matrices  |
// | neighbouring   | replace  | replace or add-remove one user's episode                       |
// | noise          | os-entropy | os-entropy (secure) or seeded (reproducible, not formal)     |
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "engine/eigen_abi.hpp"
#include "engine/neighbouring.hpp"
#include "envs/linear_mdp.hpp"
#include "privacy/accountant.hpp"

namespace dprl::privacy {
class ReleaseTap;
}

namespace dprl::algos {

struct LsviUcbParams {
  std::string variant = "lsvi_ucb";
  std::int64_t episodes = 0;
  double lambda = 0;
  double beta = 1.0;
  double beta_bar = 1.0;
  double beta_tilde = 1.0;
  double variance_coeff = 1.0;
  std::string clip = "horizon";
  std::string batching = "none";
  std::int64_t batches = 0;
  double switch_ratio = 2.0;
  std::int64_t max_updates = 0;
  bool private_ = false;
  double epsilon = 1.0;
  double delta = 1e-5;
  std::string accountant = "pld";
  double failure_prob = 0.05;
  std::string neighbouring = "replace";
  std::string noise = "os-entropy";

  template <class V>
  void visit(V& v) {
    v("variant", variant, Choices{{"lsvi_ucb", "lsvi_ucb_plus"}},
      "lsvi_ucb (Jin et al. 2020) or lsvi_ucb_plus (Hu et al. 2022)");
    v("episodes", episodes, Range::closed(0, 1e9), "episodes K; 0: train.steps / H");
    v("lambda", lambda, Range::closed(0, 1e12),
      "ridge regularisation; 0: 1 (lsvi_ucb) or 1 / (H^2 sqrt(d)) (lsvi_ucb_plus)");
    v("beta", beta, Range::closed(0, 1e12), "exploration bonus multiplier");
    v("beta_bar", beta_bar, Range::closed(0, 1e12),
      "lsvi_ucb_plus: pessimistic bonus and variance-correction radius");
    v("beta_tilde", beta_tilde, Range::closed(0, 1e12),
      "lsvi_ucb_plus: second-moment correction radius");
    v("variance_coeff", variance_coeff, Range::closed(0, 1e12),
      "lsvi_ucb_plus: scale of the d^3 terms of the variance estimate (1: He et al. 2023)");
    v("clip", clip, Choices{{"horizon", "remaining"}},
      "clip Q_h at H (Algorithm 1) or at the remaining steps H - h + 1 (tighter, also valid)");
    v("batching", batching, Choices{{"none", "static", "adaptive"}},
      "policy updates: every episode, static batches or determinant doubling");
    v("batches", batches, Range::closed(0, 1e9), "static batches B; 0: ceil(K^(2/5))");
    v("switch_ratio", switch_ratio, Range::left_open(1, 1e12),
      "adaptive: update when det Lambda_h grew by this factor for some h");
    v("max_updates", max_updates, Range::closed(0, 1e9),
      "adaptive: cap on policy updates; 0: d H log2(1 + K / (d lambda)) + 1");
    v("private", private_, "joint-DP releases of the regression statistics");
    v("epsilon", epsilon, Range::left_open(0, 1e6), "privacy budget of the whole run");
    v("delta", delta, Range::open(0, 1), "privacy delta");
    v("accountant", accountant, privacy::accountant_choices(), "accountant composing the releases");
    v("failure_prob", failure_prob, Range::open(0, 1),
      "probability allowed for a private Gram matrix to need more than the planned shift");
    v("neighbouring", neighbouring,
      Choices{{neighbouring_name(NeighbouringRelation::kReplaceOne),
               neighbouring_name(NeighbouringRelation::kAddRemove)}},
      "neighbouring users: one user's episode replaced (joint DP) or added/removed");
    v("noise", noise, Choices{{"os-entropy", "seeded"}},
      "noise source: os-entropy (secure) or seeded (reproducible, not formally private)");
  }
};

class LsviUcb final : public Algorithm {
 public:
  using Params = LsviUcbParams;
  explicit LsviUcb(const Params& p);
  ~LsviUcb() override;

  // The env must be linear_mdp and train.steps at least one episode (ParamError otherwise).
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  ParamMap params() const override { return dump_params(p_); }
  std::optional<PrivacyReport> privacy() const override { return report_; }
  std::int64_t train_episodes() const override { return episodes_done_; }
  // Checkpoints between episodes: the exact and private statistics, the binary tree of released
  // Gram matrices, the policy, the episode RNG and the noise stream. The run's epsilon is
  // composed from the releases the resumed run makes (no ledger).
  bool resumable() const override { return true; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }

  // Runs K episodes on a model directly (the C++ API; train() calls it, after check()). seed
  // drives the episode draws and, with noise = seeded, the privacy noise. Returns the cumulative
  // regret after each episode.
  std::vector<double> run(const envs::LinearMdpModel& model, std::int64_t episodes,
                          std::uint64_t seed, TrainContext* ctx = nullptr);

  // After run(): the number of policy updates, the greedy policy [h * S + s] and its Q-table
  // [(h * S + s) * A + a] of the last update, and the accounted epsilon (private runs).
  std::int64_t updates() const { return updates_; }
  const std::vector<std::int32_t>& greedy() const { return greedy_; }
  const std::vector<double>& q_table() const { return q_; }
  // The value tables of the last update, (H + 1) * S ([h * S + s], h = H is 0): optimistic V and,
  // for plus, pessimistic Vc. Private runs keep both in [0, H] (the sensitivities assume it).
  const std::vector<double>& values() const;
  const std::vector<double>& pessimistic_values() const;
  double epsilon_spent() const { return epsilon_spent_; }
  // Noise standard deviations of one release (private runs): per entry of Lambda_h and of u_h.
  double sigma_gram() const { return sigma_gram_; }
  double sigma_target() const { return sigma_target_; }
  const Params& lsvi_params() const { return p_; }
  // A privacy audit around every release of the next run() (privacy/release_tap.hpp; null:
  // none): channel 0 a Gram tree node (part h, round = the leaf that completed it), 1.. the
  // target channels of algos/lsvi/lsvi_ucb_private.hpp (part h, round = the update), sd and the
  // channel's declared L2 sensitivity (over the H steps). For audits only
  // (algos/lsvi/lsvi_ucb_audit.hpp).
  void set_release_tap(privacy::ReleaseTap* tap) { tap_ = tap; }

  // Testing and analysis: when on, run() records every step's (h, s, a, s', weight).
  struct Transition {
    int h, s, a, next;
    double weight;
  };
  void record_transitions(bool on) { record_ = on; }
  const std::vector<Transition>& transitions() const { return transitions_; }
  // Per-step inverses of the exact Gram matrices after run() (Sherman-Morrison), row-major d x d.
  std::vector<double> gram_inverse(int h) const;
  std::vector<double> gram(int h) const;
  // Private runs: the private Gram matrix last read for step h (noise and shift included), the
  // shift, the number of tree leaves completed, and the noise added to the first target channel
  // at the last update (H * d values).
  std::vector<double> private_gram(int h) const;
  double gram_shift() const { return shift_; }
  std::int64_t tree_leaves() const;
  const std::vector<double>& last_target_noise() const { return last_target_noise_; }
  // The channels' noise multipliers (private runs): gram first, then the target channels.
  const std::vector<double>& noise_multipliers() const { return noise_multipliers_; }

  struct State;  // the regression statistics (lsvi_ucb.cpp)

 private:
  // run()'s steps: the noise calibration of a private run, one episode (returns its regret
  // v*(x_1) - v_pi(x_1)), and the summary and guarantee record at the end.
  void calibrate_privacy(const envs::LinearMdpModel& m, int levels, std::int64_t max_updates,
                         double shift_per_sigma, std::uint64_t seed);
  double run_episode(const envs::LinearMdpModel& m, Rng& rng, const std::vector<double>& v_opt,
                     const std::vector<double>& v_pi);
  void summarise(const envs::LinearMdpModel& m, double v_star, double v_final, double lambda,
                 std::int64_t max_updates, int levels);

  Params p_;
  std::unique_ptr<State> st_;
  std::string env_id_;
  int horizon_ = 0, num_states_ = 0, num_actions_ = 0;
  std::vector<std::int32_t> greedy_;
  std::vector<double> q_;
  std::int64_t updates_ = 0;
  std::int64_t episodes_done_ = 0;
  double regret_ = 0;
  double epsilon_spent_ = 0;
  double sigma_gram_ = 0, sigma_target_ = 0;
  std::vector<std::pair<std::string, double>> extra_;
  std::optional<PrivacyReport> report_;
  privacy::ReleaseTap* tap_ = nullptr;
  double shift_ = 0;
  std::vector<double> last_target_noise_;
  std::vector<double> noise_multipliers_;
  bool record_ = false;
  std::vector<Transition> transitions_;
};

}  // namespace dprl::algos
