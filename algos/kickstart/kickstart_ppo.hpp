// algos/kickstart/: paper 003, kickstarted PPO, the teacher and its Dirichlet query, the loss,
// its audit; docs/architecture.md.
//
// Kickstarted PPO with a privacy-preserving teacher and a privacy-aware student: paper 003
// ("Privacy-Preserving Kickstarting Deep Reinforcement Learning with Privacy-Aware Learners",
// Gohari, Chen, Wu, Hale, Topcu), secs. 3-5.
//
// The student is discrete PPO (algos/online/ppo.hpp) whose actor loss gains w * mean_s
// phi_lambda(s, pi_t) (eqs. 15-17, algos/kickstart/kickstart_loss.hpp). At every rollout step the
// teacher (a frozen policy file, algos/kickstart/kickstart_teacher.hpp) is queried with each env's
// raw observation; the answer pi_t(s) and its k are stored with the sample and reused by every
// update epoch (never resampled: a resample would be a new query). The student acts with its own
// policy only. The critic ignores the teacher.
//
// teacher_mode: off (plain PPO, the baseline), exact (the teacher's softmax policy; k = inf, alpha
// = 0: non-private kickstarting), dirichlet (privacy/dirichlet_teacher.hpp: eta floor,
// Dirichlet(k p~), k <- decay * k after each episode (decay_on: episode; with several envs, after
// each episode any env ends) or each rollout (epoch), an input-independent answer below k_floor
// or once the optional budget is spent). lambda = 0 makes the privacy-unaware student.
//
// Guarantee (dirichlet mode; privacy() and summary.json "privacy"): per query, (eps_j, delta_j)
// from eq. 12 and eq. 6 for b-adjacent observations (||x - x'||_2 <= b) with the teacher network
// held fixed; unit "query"; totals by basic composition, flagged vacuous once sum delta_j >= 1.
// It is not DP of the teacher's training data, and it does not cover the run's outputs: the
// student's policy and metrics read the observations themselves, so formal is always false. The
// Lipschitz constant is certified (power-iteration estimate reported beside the certified upper
// bound). noise: os-entropy (default) or seeded (reproducible; anyone with the seed can regenerate
// the answers).
//
// style: cleanrl (ppo.py's update) or spinning_up (PpoUpdateStyle); the registered alias
// "ppo_kickstart_spinup" presets Spinning Up's ppo() defaults with 1000 steps per epoch, as the
// paper: 1 env, 1000 steps, full batch, 80 iterations, pi lr 3e-4, vf lr 1e-3, GAE 0.97,
// target_kl 0.01 (policy stops at 1.5x), no entropy bonus, no annealing, no clipping, (64, 64)
// tanh.
//
// Metrics: one row per rollout: step, episodes, train_return (mean return of the training
// episodes that ended in it, Spinning Up's EpRet; NaN if none), eval_return (when an evaluation
// fell in it), k (of the rollout's last answer; 0 input-independent), alpha (mean over the
// rollout's answers), phi_active and phi_mean (over every phi evaluation of the update), queries,
// epsilon_total, delta_total.
//
// Parameters beyond PpoParams (ranges checked before the run directory exists; eta < 1/m and the
// teacher's spaces are checked against the env by check_env):
// | param               | default    | meaning                                                |
// |---------------------|------------|--------------------------------------------------------|
// | style               | cleanrl    | cleanrl or spinning_up update                          |
// | vf_learning_rate    | 0          | critic step size (0: learning_rate)                    |
// | teacher_mode        | dirichlet  | off, exact, dirichlet                                  |
// | teacher             | ""         | the teacher's policy file                              |
// | teacher_train_steps | 0          | train a ppo teacher this long if the file is missing   |
// | teacher_hidden_size | 64         | its hidden units (two tanh layers)                     |
// | k0, decay, k_floor, after_floor, eta, tau, adjacency, budget_epsilon, budget_delta,       |
// | delta_samples       |            | as privacy/dirichlet_teacher.hpp (decay is c)          |
// | decay_on            | episode    | episode or epoch                                       |
// | lambda              | 0.5        | scale of the threshold alpha (eq. 15)                  |
// | beta                | 0.05       | confidence of Lemma 1's radius                         |
// | weight              | 1          | w, the imitation term's weight (the paper: 1)          |
// | noise               | os-entropy | os-entropy or seeded                                   |
#pragma once

#include <Eigen/Core>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algos/kickstart/kickstart_teacher.hpp"
#include "algos/online/ppo.hpp"
#include "privacy/dirichlet_teacher.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {

struct PpoKickstartParams : PpoParams {
  PpoKickstartParams() = default;  // not an aggregate (g++ 12 false -Wmaybe-uninitialized)
  std::string style = "cleanrl";
  double vf_learning_rate = 0;
  std::string teacher_mode = "dirichlet";
  std::string teacher;
  std::int64_t teacher_train_steps = 0;
  int teacher_hidden_size = 64;
  double k0 = 5.0;  // paper sec. 5
  double decay = 1.0;
  std::string decay_on = "episode";
  double k_floor = 0.01;
  std::string after_floor = "one_hot";
  double eta = 0.05;
  double tau = 0.001;
  double adjacency = 0.01;
  double lambda = 0.5;  // paper sec. 5
  double beta = 0.05;
  double weight = 1.0;
  double budget_epsilon = 0;
  double budget_delta = 0;
  std::string noise = "os-entropy";
  std::int64_t delta_samples = 100000;

  template <class V>
  void visit(V& v) {
    PpoParams::visit(v);
    v("style", style, Choices{{"cleanrl", "spinning_up"}}, "update rule");
    v("vf_learning_rate", vf_learning_rate, Range::non_negative(),
      "critic step size (0: learning_rate)");
    v("teacher_mode", teacher_mode, Choices{{"off", "exact", "dirichlet"}},
      "no teacher, the exact teacher policy, or Dirichlet-mechanism answers");
    v("teacher", teacher, Choices{}, "the teacher's policy file");
    v("teacher_train_steps", teacher_train_steps, Range::closed(0, 1e12),
      "train a ppo teacher for this many steps when the file is missing (0: must exist)");
    v("teacher_hidden_size", teacher_hidden_size, Range::closed(1, 1e5),
      "hidden units of a teacher trained here");
    v("k0", k0, Range::positive(), "initial Dirichlet concentration");
    v("decay", decay, Range::left_open(0, 1), "vanishing coefficient c: k <- c k");
    v("decay_on", decay_on, Choices{{"episode", "epoch"}}, "when k decays");
    v("k_floor", k_floor, Range::non_negative(), "below it the answer is input-independent");
    v("after_floor", after_floor, Choices{{"one_hot", "uniform", "dirichlet_ones", "none"}},
      "the input-independent answer");
    v("eta", eta, Range::right_open(0, 0.5), "floor of the released policy's entries, < 1/m");
    v("tau", tau, Range::left_open(0, 0.5), "output region of eq. 12, in (0, eta]");
    v("adjacency", adjacency, Range::positive(), "b: L2 distance of adjacent observations");
    v("lambda", lambda, Range::non_negative(), "threshold scale (0: privacy-unaware)");
    v("beta", beta, Range::open(0, 1), "confidence of the threshold radius");
    v("weight", weight, Range::non_negative(), "weight of the imitation term");
    v("budget_epsilon", budget_epsilon, Range::non_negative(), "total epsilon budget (0: none)");
    v("budget_delta", budget_delta, Range::right_open(0, 1), "total delta budget (0: none)");
    v("noise", noise, Choices{{"os-entropy", "seeded"}}, "noise of the teacher's answers");
    v("delta_samples", delta_samples, Range::closed(1000, 1e9),
      "Monte Carlo draws per k for delta (m > 2)");
  }
  void check() const;  // PpoParams::check, tau <= eta, a teacher file unless off
};

// The parameters of the "ppo_kickstart_spinup" alias (Spinning Up's ppo() defaults, 1000 steps
// per epoch).
ParamMap kickstart_spinning_up_preset();

class PpoKickstart final : private PpoHooks, public Ppo {
 public:
  using Params = PpoKickstartParams;
  explicit PpoKickstart(const PpoKickstartParams& p);
  ~PpoKickstart() override;

  void check_env(const EnvSpec& spec) const override;
  TrainSteps train(TrainContext& ctx) override;
  ParamMap params() const override { return dump_params(kp_); }
  std::optional<PrivacyReport> privacy() const override { return report_; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }
  const PpoKickstartParams& kickstart_params() const { return kp_; }

 private:
  void begin(TrainContext& ctx, const EnvSpec& spec, int batch) override;
  void on_step(int t, std::span<const float> raw_obs, int n) override;
  void on_episodes(std::span<const EpisodeRecord> finished) override;
  void add_actor_grad(const nn::Mat& logp, const int* ids, int n, nn::Mat& dlogits) override;
  void end_iteration(TrainContext& ctx, std::int64_t step, std::int64_t episodes) override;
  // Checkpoints between rollouts: the figures so far, the Dirichlet mechanism's schedule and
  // budget, and both noise streams (the teacher is reloaded from its file).
  bool resumable() const override { return true; }
  void sync_state(StateIo& io) override;
  void finish();

  PpoKickstartParams kp_;
  bool on_ = false;  // a teacher is queried
  int m_ = 0;
  std::optional<TeacherPolicy> teacher_;
  std::unique_ptr<privacy::NoiseSource> noise_, mc_noise_;
  std::unique_ptr<privacy::DirichletTeacher> mech_;
  Eigen::MatrixXd probs_;
  std::vector<double> answer_;
  // per rollout sample: the answer (m x batch), its threshold, whether one was given, its k
  nn::Mat answers_;
  std::vector<float> alpha_;
  std::vector<std::uint8_t> has_;
  std::vector<double> k_;
  // figures of the current rollout and update
  double ret_sum_ = 0;
  std::int64_t ret_n_ = 0, phi_n_ = 0, phi_on_ = 0, queries_ = 0;
  double phi_sum_ = 0, last_k_ = 0;
  int eval_rounds_ = 0;
  std::vector<double> epoch_returns_;
  std::optional<PrivacyReport> report_;
  std::vector<std::pair<std::string, double>> extra_;
};

}  // namespace dprl::algos
