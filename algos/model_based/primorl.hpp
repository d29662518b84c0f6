// algos/model_based/: paper 004, probabilistic ensembles, DP-FedAvg training, the model env,
// MOPO and PriMORL (this file), its audit; docs/architecture.md.
//
// PriMORL: trajectory-level DP model-based offline RL, and its MOPO baseline, as one pipeline.
//
// Source: "Differentially Private Deep Model-Based Reinforcement Learning" (PriMORL; Algorithms
// 1-4, Tables 7-8, App. D and H); MOPO (Yu et al. 2020, NeurIPS) for the baseline.
// Stages (timing.json records each): (1) data: every training episode of seeded DDPG runs, one
// user per trajectory (collect.hpp), optionally cached, or the experiment's `data:` section (a
// Minari folder or D4RL file whose users are the privacy units; D4RL: one per episode), then
// optionally exported as a Minari folder (data_export); a public test split of test_fraction of
// the units; (2) model: the probabilistic ensemble (prob_ensemble.hpp) trained by TDP
// MODEL ENSEMBLE TRAINING (variant tdp; no_noise, no_clip) or pooled non-privately (mopo), the
// input normaliser fitted on the public split; the private table is then released (PriMORL
// variants); (3) policy: SAC in the penalised model (mb_sac.hpp) for train.steps updates,
// evaluated in the real env after every epoch (metrics.csv).
//
// Guarantee (variant tdp): (epsilon, delta)-DP under add/remove of one trajectory for the model
// (every round's release) and, by post-processing, the policy and everything the run publishes
// (metrics.csv, summary.json, policy.bin): PriMORL Thm. 4.2 and 4.5. epsilon is the RDP ledger's
// (dp_accounting's 156 orders, CKS conversion) at the rounds actually run; PLD is in the details.
// K (training trajectories) is treated as public, as in PriMORL and DP-FedAvg: here it follows
// from the public collection settings. Nothing after model training reads the private data.
// Not covered: hyper-parameter tuning (as in the paper); report_data (data return statistics)
// and seeded noise make the run not formal. Variants no_noise, no_clip and mopo have no finite
// epsilon.
//
// Parameters: see visit() (defaults: Pendulum, Tables 7-8, with our reduced data scale).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/model_data.hpp"
#include "engine/data/dataset.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

class SacLearner;

struct PrimorlParams {
  // data
  int data_runs = 6;
  std::int64_t data_steps_per_run = 100000;
  std::string data_hidden = "64,64";
  int data_learning_starts = 1000;
  double data_exploration_noise = 0.1;
  std::int64_t data_seed = 1;
  std::string data_cache;
  double test_fraction = 0.01;
  bool report_data = false;
  std::string data_export;
  // model
  int members = 3;
  std::string model_hidden = "64,64";
  std::string weight_decay = "2.5e-5,5e-5,1e-4";
  bool learn_logvar_bounds = true;
  std::string normalizer = "space";
  // model training
  std::string variant = "tdp";
  double q = 0.01;
  std::int64_t public_trajectories = 0;
  double z = 0.52;
  double clip_norm = 1.0;
  std::string clipping = "per_layer";
  std::int64_t rounds = 7000;
  int local_epochs = 1;
  int local_batch_size = 16;
  double local_lr = 1e-3;
  std::string local_optimizer = "sgd";
  std::int64_t model_eval_every = 100;
  double delta = 1e-5;
  double budget_epsilon = 0.0;
  std::string noise = "os-entropy";
  int threads = 1;
  int pooled_batch_size = 256;
  double pooled_lr = 1e-3;
  int pooled_max_epochs = 200;
  int pooled_patience = 5;
  // policy
  std::string penalty = "mpd";
  double penalty_lambda = 2.0;
  bool mpd_with_reward = false;
  std::string sac_hidden = "256,256";
  double actor_lr = 3e-4;
  double critic_lr = 3e-4;
  double alpha_lr = 3e-4;
  double target_entropy = -3.0;
  double gamma = 0.99;
  double tau = 0.005;
  int sac_batch_size = 256;
  int steps_per_epoch = 1000;
  int rollout_freq = 1000;
  int rollout_batch = 5000;
  int horizon = 30;
  int retain_epochs = 5;
  double real_ratio = 0.0;
  double start_reset = 0.5;
  bool start_from_data = false;
  int final_window = 10;

  template <class V>
  void visit(V& v) {
    v("data_runs", data_runs, Range::closed(1, 1e6), "DDPG runs whose training episodes form D");
    v("data_steps_per_run", data_steps_per_run, Range::closed(1, 1e10), "env steps per DDPG run");
    v("data_hidden", data_hidden, Choices{}, "DDPG hidden widths");
    v("data_learning_starts", data_learning_starts, Range::closed(0, 1e9),
      "random-action steps per DDPG run");
    v("data_exploration_noise", data_exploration_noise, Range::non_negative(),
      "DDPG Gaussian action noise (fraction of the action scale)");
    v("data_seed", data_seed, Range::closed(0, 4e18), "seed of the data collection");
    v("data_cache", data_cache, Choices{}, "directory caching collected datasets ('': none)");
    v("test_fraction", test_fraction, Range::open(0, 1), "public test split (trajectories)");
    v("data_export", data_export, Choices{},
      "write the dataset (collected or read) as a Minari folder here ('': no; an existing data "
      "set there is replaced only with --force or when resuming); it is the private data "
      "itself, keep it with the raw data");
    v("report_data", report_data,
      "publish data return statistics (private data: the run is then not formal)");
    v("members", members, Range::closed(1, 100), "ensemble size N");
    v("model_hidden", model_hidden, Choices{}, "model hidden widths");
    v("weight_decay", weight_decay, Choices{}, "per-layer L2 coefficients (first, middle, last)");
    v("learn_logvar_bounds", learn_logvar_bounds, "log-variance bounds are trainable");
    v("normalizer", normalizer, Choices{{"space", "public", "none"}},
      "input normaliser: the spaces' finite bounds (else the public split), the public split, "
      "or none");
    v("variant", variant, Choices{{"tdp", "no_noise", "no_clip", "mopo"}},
      "model training: TDP (clip + noise), clip only, neither, or pooled MOPO");
    v("q", q, Range::left_open(0, 1), "Poisson sampling rate of trajectories");
    v("public_trajectories", public_trajectories, Range::closed(0, 1e15),
      "K of the fixed denominator q K, a public figure (0: the training split's count, which is "
      "then declared public and published)");
    v("z", z, Range::non_negative(), "noise multiplier");
    v("clip_norm", clip_norm, Range::positive(), "C, bound on a trajectory's ensemble update");
    v("clipping", clipping, Choices{{"flat", "per_layer"}}, "ensemble clipping");
    v("rounds", rounds, Range::closed(1, 1e9), "T, DP-FedAvg rounds");
    v("local_epochs", local_epochs, Range::closed(1, 1000), "E, local epochs per trajectory");
    v("local_batch_size", local_batch_size, Range::closed(1, 1e6), "B, local batch size");
    v("local_lr", local_lr, Range::positive(), "local learning rate");
    v("local_optimizer", local_optimizer, Choices{{"sgd", "adam"}},
      "local optimiser (Adam: fresh moments per trajectory)");
    v("model_eval_every", model_eval_every, Range::closed(1, 1e9),
      "rounds between public test evaluations (best snapshot)");
    v("delta", delta, Range::open(0, 1), "target delta");
    v("budget_epsilon", budget_epsilon, Range::non_negative(),
      "stop model training before exceeding this epsilon (0: no budget)");
    v("noise", noise, Choices{{"os-entropy", "seeded"}},
      "noise and sampling source (seeded: reproducible, not formal)");
    v("threads", threads, Range::closed(1, 256),
      "threads for the DDPG data runs and the per-trajectory local training");
    v("pooled_batch_size", pooled_batch_size, Range::closed(1, 1e6), "mopo model batch size");
    v("pooled_lr", pooled_lr, Range::positive(), "mopo model Adam step size");
    v("pooled_max_epochs", pooled_max_epochs, Range::closed(1, 1e6), "mopo model epochs cap");
    v("pooled_patience", pooled_patience, Range::closed(1, 1e6), "mopo early-stop patience");
    v("penalty", penalty, Choices{{"mpd", "ma_std", "ma_variance", "none"}},
      "uncertainty estimate u");
    v("penalty_lambda", penalty_lambda, Range::non_negative(), "reward penalty lambda");
    v("mpd_with_reward", mpd_with_reward, "u_MPD also over the reward dim");
    v("sac_hidden", sac_hidden, Choices{}, "SAC hidden widths");
    v("actor_lr", actor_lr, Range::positive(), "SAC actor learning rate");
    v("critic_lr", critic_lr, Range::positive(), "SAC critic learning rate");
    v("alpha_lr", alpha_lr, Range::positive(), "SAC temperature learning rate");
    v("target_entropy", target_entropy, Range::any(), "SAC target entropy");
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("tau", tau, Range::left_open(0, 1), "target smoothing");
    v("sac_batch_size", sac_batch_size, Range::closed(1, 1e6), "SAC batch size");
    v("steps_per_epoch", steps_per_epoch, Range::closed(1, 1e9), "SAC updates per epoch");
    v("rollout_freq", rollout_freq, Range::closed(1, 1e9), "SAC updates between rollouts");
    v("rollout_batch", rollout_batch, Range::closed(1, 1e7), "start states per rollout");
    v("horizon", horizon, Range::closed(1, 10000), "rollout length h");
    v("retain_epochs", retain_epochs, Range::closed(1, 1000), "rollouts kept in the replay");
    v("real_ratio", real_ratio, Range::right_open(0, 1), "real data per SAC batch (mopo only)");
    v("start_reset", start_reset, Range::closed(0, 1), "rollout starts drawn from rho_0");
    v("start_from_data", start_from_data, "rollouts start from real states (mopo only)");
    v("final_window", final_window, Range::closed(1, 1e6), "last epochs averaged for the score");
  }
  void check() const;
};

// The ensemble's configuration for D observation and A action dimensions.
model_based::ProbEnsembleConfig primorl_model_config(const PrimorlParams& p, int D, int A);

class Primorl final : public Algorithm {
 public:
  using Params = PrimorlParams;
  explicit Primorl(const Params& p);
  ~Primorl() override;
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  std::string policy_file() const override { return "policy.bin"; }
  ParamMap params() const override { return dump_params(p_); }
  std::optional<PrivacyReport> privacy() const override { return privacy_; }
  // the experiment's `data:` replaces the DDPG collection when present
  bool accepts_dataset() const override { return true; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }
  // Checkpoints once the model is trained and its release charged and written out, then every
  // checkpoint_every SAC updates (at epoch ends): a run killed in the policy stage resumes there
  // instead of training, and releasing, a second model. Not for runs that also learn from the
  // real data (real_ratio > 0, start_from_data): the checkpoint would have to hold the private
  // table.
  bool resumable() const override { return p_.real_ratio == 0.0 && !p_.start_from_data; }

  // The model stage exactly as train() sets it up, for the privacy audit
  // (algos/model_based/primorl_audit.hpp): the training and public tables, the initial ensemble
  // with its normaliser, the TDP settings and their seed, from the experiment's seed (the data
  // are collected, or read from data_cache). on_data sees the dataset before it is tabled.
  struct ModelStage {
    model_based::TransitionTable train, test;
    model_based::ProbEnsemble model;
    model_based::TdpConfig tdp;
    std::uint64_t tdp_seed = 0;
  };
  ModelStage model_stage(const std::function<std::unique_ptr<Env>()>& make_env, const Env& env,
                         std::uint64_t seed,
                         const std::function<void(const Dataset&)>& on_data = {});
  const Params& primorl_params() const { return p_; }

  // Test hook: called with the private training table right after model training (PriMORL
  // variants), e.g. to poison it; nothing afterwards may read it.
  void set_after_model_hook(std::function<void(model_based::TransitionTable&)> f) {
    after_model_ = std::move(f);
  }

 private:
  // The model training's own checks for K training trajectories (q K, clip set, the secure
  // release's range, one round within budget_epsilon), before anything is written.
  void check_model_training(const EnvSpec& spec, std::size_t K) const;
  Dataset obtain_data(const std::function<std::unique_ptr<Env>()>& make_env, const Env& env);

  Params p_;
  std::optional<Dataset> data_;        // loaded by check() from the cache
  const Dataset* external_ = nullptr;  // the experiment's `data:` (check() sees it)
  bool replace_export_ = false;        // check() allowed replacing an existing data_export
  std::string env_id_;
  std::unique_ptr<SacLearner> learner_;
  std::optional<PrivacyReport> privacy_;
  std::vector<std::pair<std::string, double>> extra_;
  std::function<void(model_based::TransitionTable&)> after_model_;
};

}  // namespace dprl::algos
