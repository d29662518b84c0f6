// Proximal Policy Optimisation (Schulman et al. 2017) with GAE (Schulman et al. 2016), following
// CleanRL's ppo.py (discrete) and ppo_continuous_action.py (continuous) (Huang et al. 2022,
// "The 37 implementation details of PPO"): separate actor and critic MLPs with orthogonal init
// (hidden gain sqrt 2, actor output 0.01, critic output 1), Adam (eps 1e-5) with linear
// annealing, per-minibatch advantage normalisation, clipped surrogate, optionally clipped value
// loss, entropy bonus, joint global-norm gradient clipping, optional early stop on approx KL.
// Continuous actions: diagonal Gaussian with a free (state-independent) log-std, actions clipped
// to the bounds only when sent to the env; optional observation / reward normalisation as
// Gymnasium's NormalizeObservation / NormalizeReward (clip 10).
// One deliberate difference: when an episode is truncated by its time limit the reward is
// bootstrapped with gamma * V(final observation) (bootstrap_truncated, default true); CleanRL
// treats truncation as termination (set false for its exact behaviour).
//
// Registered twice: "ppo" has ppo.py's defaults, "ppo_continuous" ppo_continuous_action.py's.
// | param           | ppo    | ppo_continuous | meaning                                   |
// |-----------------|--------|----------------|-------------------------------------------|
// | learning_rate   | 2.5e-4 | 3e-4           | Adam step size                            |
// | num_envs        | 4      | 1              | parallel envs                             |
// | num_steps       | 128    | 2048           | steps per env per rollout                 |
// | anneal_lr       | true   | true           | linear decay to 0                         |
// | gamma           | 0.99   | 0.99           | discount                                  |
// | gae_lambda      | 0.95   | 0.95           | GAE lambda                                |
// | num_minibatches | 4      | 32             | minibatches per epoch                     |
// | update_epochs   | 4      | 10             | epochs per rollout                        |
// | norm_adv        | true   | true           | normalise advantages per minibatch        |
// | clip_coef       | 0.2    | 0.2            | surrogate clip                            |
// | clip_vloss      | true   | true           | clipped value loss                        |
// | ent_coef        | 0.01   | 0.0            | entropy bonus                             |
// | vf_coef         | 0.5    | 0.5            | value loss weight                         |
// | max_grad_norm   | 0.5    | 0.5            | global gradient norm clip                 |
// | target_kl       | 0      | 0              | early stop threshold (0: off)             |
// | hidden_sizes    | 64     | 64             | units per hidden layer                    |
// | hidden_layers   | 2      | 2              | hidden layers                             |
// | activation      | tanh   | tanh           | hidden activation                         |
// | norm_obs        | false  | true           | observation normalisation                 |
// | norm_reward     | false  | true           | reward normalisation                      |
// | bootstrap_truncated | true | true         | bootstrap time-limit truncations          |
// | use_action_mask | false  | false          | masked categorical (Huang and Ontanon 2022) |
//
// Learners built on this class (algos/kickstart/kickstart_ppo.hpp) may add actor-loss terms through
// PpoHooks and select the Spinning Up update (PpoUpdateStyle); "ppo" and "ppo_continuous" use
// neither, and their outputs do not depend on this extension.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/core/nn_policy.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/nn/nn_running_stat.hpp"
#include "engine/vec_env.hpp"

namespace dprl::algos {

struct PpoParams {
  double learning_rate = 2.5e-4;
  int num_envs = 4;
  int num_steps = 128;
  bool anneal_lr = true;
  double gamma = 0.99;
  double gae_lambda = 0.95;
  int num_minibatches = 4;
  int update_epochs = 4;
  bool norm_adv = true;
  double clip_coef = 0.2;
  bool clip_vloss = true;
  double ent_coef = 0.01;
  double vf_coef = 0.5;
  double max_grad_norm = 0.5;
  double target_kl = 0.0;
  int hidden_size = 64;
  int hidden_layers = 2;
  std::string activation = "tanh";
  bool norm_obs = false;
  bool norm_reward = false;
  bool bootstrap_truncated = true;
  bool use_action_mask = false;
  double init_log_std = 0.0;

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate, Range::positive(), "Adam step size");
    v("num_envs", num_envs, Range::closed(1, 4096), "parallel envs");
    v("num_steps", num_steps, Range::closed(1, 1e6), "steps per env per rollout");
    v("anneal_lr", anneal_lr, "linear learning-rate decay to 0");
    v("gamma", gamma, Range::closed(0, 1), "discount");
    v("gae_lambda", gae_lambda, Range::closed(0, 1), "GAE lambda");
    v("num_minibatches", num_minibatches, Range::closed(1, 1e6), "minibatches per epoch");
    v("update_epochs", update_epochs, Range::closed(1, 1000), "epochs per rollout");
    v("norm_adv", norm_adv, "normalise advantages per minibatch");
    v("clip_coef", clip_coef, Range::positive(), "surrogate clipping coefficient");
    v("clip_vloss", clip_vloss, "clip the value loss as the surrogate");
    v("ent_coef", ent_coef, Range::non_negative(), "entropy bonus weight");
    v("vf_coef", vf_coef, Range::non_negative(), "value loss weight");
    v("max_grad_norm", max_grad_norm, Range::positive(), "global gradient norm bound");
    v("target_kl", target_kl, Range::non_negative(), "stop epochs above this approx KL (0: off)");
    v("hidden_size", hidden_size, Range::closed(1, 1e5), "units per hidden layer");
    v("hidden_layers", hidden_layers, Range::closed(1, 100), "hidden layers");
    v("activation", activation, Choices{{"tanh", "relu", "silu"}}, "hidden activation");
    v("norm_obs", norm_obs, "normalise observations with running statistics");
    v("norm_reward", norm_reward, "scale rewards by the running std of discounted returns");
    v("bootstrap_truncated", bootstrap_truncated, "bootstrap rewards at time-limit truncation");
    v("use_action_mask", use_action_mask,
      "discrete: sample and learn only among the env's allowed actions (invalid-action masking)");
    v("init_log_std", init_log_std, Range::any(), "initial log-std (continuous actions)");
  }
  void check() const;
};

// ppo_continuous_action.py's defaults.
struct PpoContinuousParams : PpoParams {
  PpoContinuousParams() {
    learning_rate = 3e-4;
    num_envs = 1;
    num_steps = 2048;
    num_minibatches = 32;
    update_epochs = 10;
    ent_coef = 0.0;
    norm_obs = true;
    norm_reward = true;
  }
};

// Extra actor-loss terms fed by the rollout (kickstarting). Discrete actions only.
class PpoHooks {
 public:
  virtual ~PpoHooks() = default;
  // Once, before the first rollout; batch = num_envs * num_steps samples per rollout.
  virtual void begin(TrainContext& ctx, const EnvSpec& spec, int batch) = 0;
  // Before acting at rollout step t: the raw observations (obs_dim x n, column per env); sample
  // t * n + i of the rollout belongs to env i.
  virtual void on_step(int t, std::span<const float> raw_obs, int n) = 0;
  // After each env step: the episodes that ended in it (the slot starts a new one).
  virtual void on_episodes(std::span<const EpisodeRecord> finished) = 0;
  // Adds d(extra loss)/d(logits) for batch samples ids[0..n) to dlogits (A x n); logp holds their
  // log-probabilities; the extra loss is a mean over the n samples.
  virtual void add_actor_grad(const nn::Mat& logp, const int* ids, int n, nn::Mat& dlogits) = 0;
  // After each rollout's update (step: env steps so far).
  virtual void end_iteration(TrainContext& ctx, std::int64_t step, std::int64_t episodes) = 0;
  // Checkpoints: whether the hooks can be saved and restored between rollouts, and their state.
  virtual bool resumable() const { return false; }
  virtual void sync_state(StateIo& /*io*/) {}
};

// The update rule: CleanRL's ppo.py (default) or Spinning Up's ppo.py (Achiam 2018, PyTorch):
// PyTorch-default initialisation, Adam eps 1e-8, advantages normalised over the whole rollout
// (population sd), value targets the discounted rewards-to-go (bootstrapped with V at time-limit
// truncation and at the rollout cut), no gradient clipping, and before each policy step
// approx_kl = mean(logp_old - logp) is checked: above 1.5 target_kl the policy stops for this
// rollout while the critic keeps its update_epochs steps.
struct PpoUpdateStyle {
  bool spinning_up = false;
  double vf_learning_rate = 0;  // critic step size (0: learning_rate)
};

class Ppo : public Algorithm {
 public:
  using Params = PpoParams;
  explicit Ppo(const PpoParams& p);

  TrainSteps train(TrainContext& ctx) override;
  std::unique_ptr<Policy> policy() const override;
  void save_policy(const std::filesystem::path& file) const override;
  std::string policy_file() const override { return "policy.bin"; }
  ParamMap params() const override { return dump_params(p_); }
  std::int64_t train_episodes() const override { return episodes_; }
  // Learners with hooks (kickstarting) keep state outside this class: no checkpoints.
  bool resumable() const override { return hooks_ == nullptr || hooks_->resumable(); }

 protected:
  // Hidden widths per layer for learners built on this class (algos/expert_level/ppo_layers.hpp);
  // empty (the default): hidden_layers layers of hidden_size.
  void set_hidden_widths(std::vector<int> widths) { widths_ = std::move(widths); }
  // hooks (not owned; may be null) must outlive train().
  Ppo(const PpoParams& p, PpoHooks* hooks, PpoUpdateStyle style);

 private:
  struct Run;  // the state of one train() call (ppo.cpp)

  std::unique_ptr<NnPolicy> make_policy() const;
  // train()'s steps, in the order one rollout runs them
  void init_networks(const EnvSpec& spec, int obs_dim, std::uint64_t seed);
  void observe(std::span<const float> raw, std::span<float> out, std::size_t n, bool update);
  void sync_run(Run& r, StateIo& io);
  void collect_rollout(Run& r, TrainContext& ctx);
  void sample_actions(Run& r, const nn::Mat& out, int t);
  void record_rewards(Run& r, int t);
  void compute_advantages(Run& r);
  void update(Run& r, std::uint64_t seed);
  double minibatch_step(Run& r, const int* ids);
  void gather_minibatch(Run& r, const int* ids);
  double actor_weights(Run& r, const int* ids, const nn::Mat*& out);
  void critic_gradient(Run& r, const int* ids);

  PpoParams p_;
  std::vector<int> widths_;
  PpoHooks* hooks_ = nullptr;
  PpoUpdateStyle style_;
  std::string env_id_;
  bool discrete_ = true;
  int act_dim_ = 0;
  nn::Mlp actor_, critic_;
  std::vector<float> log_std_;
  nn::RunningStat obs_stat_;
  std::vector<float> low_, high_;
  std::int64_t episodes_ = 0;
};

class PpoContinuous final : public Ppo {
 public:
  using Params = PpoContinuousParams;
  explicit PpoContinuous(const PpoContinuousParams& p) : Ppo(p) {}
};

}  // namespace dprl::algos
