// algos/offline/: BC, discrete CQL and BCQ on this shared base with user-level DP-SGD, their
// audit; docs/architecture.md.
//
// The shared half of the offline learners (bc, discrete_cql, discrete_bcq): parameters, the
// training loop over a Dataset, evaluation, and user-level DP-SGD.
//
// Training: `train.steps` counts GRADIENT steps (no env steps are taken while learning). Each
// step draws a minibatch, asks the learner for per-example output gradients of its loss, turns
// them into one gradient per trained network, and takes one Adam step per network (Adam is
// elementwise, so this equals one Adam over all parameters). Every `train.eval_every` gradient
// steps the greedy policy plays `train.eval_episodes` seeded episodes online in the env;
// metrics.csv rows are (gradient_step, episodes = 0, return_mean, return_std, return_min,
// return_max, length_mean, epsilon, loss). summary_extra holds gradient_steps, the dataset's
// transitions, episodes and users, and for private runs the DP figures.
//
// Non-private steps: `batch_size` transitions uniformly with replacement, mean loss.
// Private steps (`dp: true`): user-level DP-SGD (privacy/user_dp_sgd.hpp) with the dataset's
// user_id as the unit: Poisson-sampled users at q = batch_size / m (m = `public_users`, a public
// figure; 0: the dataset's user count, declared public and published), `contribution` transitions
// per sampled user, the joint per-user norm over every trained network, clip to clip_norm, Gaussian
// noise noise_multiplier * clip_norm, divided by batch_size. Before each block of steps up to the
// next evaluation, the block is charged to a Ledger (budget `epsilon`, `delta`, `accountant`);
// `train.until_budget: true` trains for the largest N with epsilon(N) <= budget
// (steps_within_budget, privacy/calibration.hpp), otherwise a run whose train.steps the budget
// cannot afford is refused before its first step. Noise and user sampling come from OS entropy
// (`noise: os-entropy`, formal) or from the seed (`noise: seeded`: reproducible, not formal,
// warned). Target networks, the Adam state and the greedy policy are post-processing of the noised
// gradients; evaluation returns are computed from the released policy and public env episodes.
//
// | param            | default    | meaning                                                 |
// |------------------|------------|---------------------------------------------------------|
// | learning_rate    | per learner| Adam step size                                          |
// | batch_size       | per learner| minibatch (private: expected sampled users b)           |
// | hidden_sizes     | 256,256    | hidden widths (d3rlpy 2.8.1 VectorEncoderFactory)       |
// | adam_eps         | 1e-8       | Adam epsilon (d3rlpy AdamFactory default)               |
// | dp               | false      | user-level DP-SGD                                       |
// | noise_multiplier | 1.0        | sigma (noise std / clip_norm)                           |
// | clip_norm        | 1.0        | C per sampled user (paper 000 App. B.3: 1.0)            |
// | epsilon          | 0 (unset)  | privacy budget; required (> 0) when dp is true          |
// | delta            | 1e-5       | delta of the guarantee, in (0, 1)                       |
// | accountant       | pld        | a registered accountant: rdp, pld, best                 |
// | noise            | os-entropy | os-entropy (formal) or seeded (reproducible, not formal)|
// | contribution     | 1          | transitions per sampled user                            |
// | public_users     | 0          | m of q = b / m (0: the dataset's count, declared public)|
// | sum              | auto       | clipped sum in float chunks when the allowance permits,  |
// |                  |            | or always in double (user_dp_sgd.hpp, "Float sums")      |
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/offline/offline_batch.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/nn/nn_optim.hpp"
#include "privacy/accountant.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

struct OfflineCommonParams {
  double learning_rate = 1e-3;
  int batch_size = 32;
  std::string hidden_sizes = "256,256";
  double adam_eps = 1e-8;

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate, Range::positive(), "Adam step size");
    v("batch_size", batch_size, Range::closed(1, 1e6),
      "minibatch size (private runs: expected sampled users per step)");
    v("hidden_sizes", hidden_sizes, Choices{}, "comma-separated hidden widths");
    v("adam_eps", adam_eps, Range::positive(), "Adam epsilon");
  }
};

// Double-DQN target settings (discrete_cql, discrete_bcq).
struct QTargetParams {
  double gamma = 0.99;
  int target_update_interval = 8000;
  double tau = 1.0;
  double reward_scale = 1.0;

  template <class V>
  void visit(V& v) {
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("target_update_interval", target_update_interval, Range::closed(1, 1e9),
      "gradient steps between target updates (d3rlpy: 8000)");
    v("tau", tau, Range::left_open(0, 1),
      "target update rate at each update (1: hard copy; < 1: Polyak)");
    v("reward_scale", reward_scale, Range::positive(),
      "rewards are multiplied by this in the TD target (d3rlpy's MultiplyRewardScaler)");
  }
};

struct UserDpParams {
  bool dp = false;
  double noise_multiplier = 1.0;
  double clip_norm = 1.0;
  double epsilon = 0.0;
  double delta = 1e-5;
  std::string accountant = "pld";
  std::string noise = "os-entropy";
  int contribution = 1;
  std::int64_t public_users = 0;
  std::string sum = "auto";

  template <class V>
  void visit(V& v) {
    v("dp", dp, "user-level DP-SGD (privacy unit: the dataset's user_id)");
    v("noise_multiplier", noise_multiplier, Range::left_open(0, 1e6), "noise std / clip_norm");
    v("clip_norm", clip_norm, Range::positive(), "L2 bound on each sampled user's gradient");
    v("epsilon", epsilon, Range::non_negative(), "privacy budget (required > 0 when dp is true)");
    v("delta", delta, Range::open(0, 1), "delta of the guarantee");
    v("accountant", accountant, privacy::accountant_choices(), "privacy accountant");
    v("noise", noise, Choices{{"os-entropy", "seeded"}},
      "noise and user-sampling randomness (seeded: reproducible, not formal)");
    v("contribution", contribution, Range::closed(1, 1e6), "transitions per sampled user");
    v("public_users", public_users, Range::closed(0, 1e15),
      "m of q = batch_size / m, a public figure (0: the dataset's user count, which is then "
      "declared public and published)");
    v("sum", sum, Choices{{"auto", "double"}},
      "arithmetic of the clipped sum: auto (float chunks while their rounding allowance stays "
      "within 0.5% of clip_norm, else double) or double");
  }
  // Throws ParamError naming <owner>.epsilon when dp is on without a budget.
  void check(const char* owner) const;
};

// A trained network and the cache its forward/backward pass fills.
struct TrainedNet {
  nn::Mlp* net;
  nn::MlpCache* cache;
};

class OfflineLearner : public Algorithm {
 public:
  OfflineLearner(const OfflineLearner&) = delete;
  OfflineLearner& operator=(const OfflineLearner&) = delete;
  ~OfflineLearner() override;
  // Before the run directory exists: the dataset against the env and settings, and for private
  // runs the DP configuration, the noise scale, the step count the budget affords and the ledger
  // (opened, and locked, in the run directory).
  void check(const RunPlan& plan) override;
  TrainSteps train(TrainContext& ctx) final;
  std::string policy_file() const override { return "policy.bin"; }
  bool needs_dataset() const override { return true; }
  // Private runs too: they save before every evaluation and find their ledger charges again on
  // resume (algos/core/checkpoint.hpp, "Private runs").
  bool resumable() const override { return true; }
  std::optional<PrivacyReport> privacy() const override { return privacy_; }
  std::vector<std::pair<std::string, double>> summary_extra() const override { return extra_; }

  // The pieces train() is made of, for tests and benchmarks. setup() builds the networks and
  // the optimiser state; step() is one non-private gradient step on b (mean loss, Adam, target
  // update) and returns the mean loss; dp_step() is one user-level DP-SGD step on b (b.users
  // sampled users with cfg.contribution columns each; b.users = 0 allowed).
  void setup(int obs_dim, int actions, std::uint64_t seed);
  // The mean-loss gradient of b into last_grad() (no update); returns the mean loss.
  double gradient(const OfflineBatch& b);
  double step(const OfflineBatch& b);
  void dp_step(const OfflineBatch& b, const privacy::UserDpSgdConfig& cfg,
               privacy::NoiseSource& noise);
  // The same with a given release rule and noise std on the sum (train() uses
  // privacy/prefetched_release.hpp), and optionally a helper thread that shares the step's double
  // products (the values do not depend on it).
  void dp_step(const OfflineBatch& b, const privacy::UserDpSgdConfig& cfg, double noise_sd,
               const privacy::GaussianRelease& release, HelperThread* helper = nullptr);
  std::int64_t steps_taken() const { return steps_; }
  // Saves or loads the networks, the optimiser state and the step count (the checkpoints of a
  // loop that drives step() and dp_step() itself: algos/expert_level/selective_dp_sgd.cpp).
  void sync_model_state(StateIo& io);
  // The gradient of trained network i from the last step (tests).
  const nn::Buffer& last_grad(std::size_t i) const { return grad_[i]; }
  std::vector<TrainedNet> trained_nets() { return trained(); }
  const OfflineCommonParams& common_params() const { return common_; }
  const UserDpParams& dp_params() const { return dp_; }
  // The released model's per-action outputs on the columns of obs (obs_dim x n) into out
  // (actions x n): bc's logits, discrete_cql's Q-values, discrete_bcq's imitation logits. The
  // black-box privacy audit scores canaries with them (algos/offline/offline_audit.hpp).
  virtual void released_outputs(const nn::Mat& obs, nn::Mat& out) const = 0;

 protected:
  OfflineLearner(std::string name, OfflineCommonParams common, UserDpParams dp);

  // Creates and initialises the networks for obs_dim inputs and `actions` actions.
  virtual void build(int obs_dim, int actions, std::uint64_t seed) = 0;
  // The networks the optimiser updates, in a fixed order (DP noise is drawn in this order).
  virtual std::vector<TrainedNet> trained() = 0;
  // Forward passes and backward_errors for batch b: every trained cache must hold the errors of
  // the per-example loss gradients times dout_scale (1/n for the mean loss, 1 for DP-SGD).
  // Returns the batch's mean loss.
  virtual double compute_errors(const OfflineBatch& b, float dout_scale) = 0;
  // After the optimiser step of gradient step `step` (1-based): target updates.
  virtual void after_step(std::int64_t step) {}
  // Every network whose parameters a checkpoint must hold (trained ones and targets), in a fixed
  // order; the default is the trained networks.
  virtual std::vector<nn::Mlp*> state_nets();

  const std::string& name() const { return name_; }
  std::vector<int> hidden() const;

  std::string env_id_;
  int obs_dim_ = 0, actions_ = 0;

 private:
  struct DpRun;  // algos/offline/offline_dp.cpp
  void check_inputs(const RunPlan& plan);
  // train()'s first and last steps: check() when the experiment runner did not call it, and the
  // summary figures and guarantee record.
  void check_in_train(const TrainContext& ctx, const Env& env);
  void finish_run(const TrainContext& ctx, std::int64_t total, const Dataset& ds,
                  std::size_t users);
  void plan_dp(const RunPlan& plan);
  void charge_block(TrainContext& ctx, std::int64_t step, std::int64_t total);
  // After a private run's checkpoint is loaded: which ledger charges are reused, and whether the
  // budget affords the rest.
  void resume_dp(const TrainContext& ctx, std::uint64_t entries_at_checkpoint,
                 std::int64_t total);
  // The evaluation of a private model (the training loss reads private batches without noise:
  // private runs do not publish it).
  void evaluate_private(TrainContext& ctx, std::int64_t step);
  void finish_dp(const TrainContext& ctx, std::int64_t steps);

  void apply(const std::vector<TrainedNet>& nets);

  std::string name_;
  OfflineCommonParams common_;
  UserDpParams dp_;
  std::vector<nn::Adam> opt_;
  std::vector<nn::Buffer> grad_;
  std::int64_t steps_ = 0;
  bool checked_ = false;
  std::int64_t planned_steps_ = 0;
  std::unique_ptr<DpRun> run_;  // private runs, from check() to the end of train()
  std::optional<PrivacyReport> privacy_;
  std::vector<std::pair<std::string, double>> extra_;
};

// The Huber loss (beta = 1) of d = q - y and its derivative: 0.5 d^2 for |d| < 1, else |d| - 0.5.
inline float huber(float d) { return std::abs(d) < 1.0f ? 0.5f * d * d : std::abs(d) - 0.5f; }
inline float huber_grad(float d) { return d < -1.0f ? -1.0f : (d > 1.0f ? 1.0f : d); }

// A network [in, hidden..., out] with ReLU hidden layers and identity output (PyTorch-default
// init from derive_seed(seed, Domain::kInit, index)).
nn::Mlp make_relu_mlp(int in, const std::vector<int>& hidden, int out, std::uint64_t seed,
                      std::uint64_t index);

}  // namespace dprl::algos
