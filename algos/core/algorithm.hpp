// algos/core/: the plumbing no learner owns (this interface, checkpoints, networks, replay,
// policy files, rollout collection, the private-noise choice); docs/architecture.md.
//
// The learner interface and the training context every learner runs in.
//
// A learner is built from its params (validated at construction), then check(plan) validates it
// against the env and train settings, and acquires what must exist before training (a privacy
// ledger), so a bad config fails before any run directory is written; then train(ctx) runs it
// against envs made by ctx.make_env. The
// context owns evaluation: eval_due(step) says when, evaluate(policy, step, episodes) runs the
// seeded evaluation episodes and appends a metrics.csv row
// (step, episodes, return_mean, return_std, return_min, return_max, length_mean[, epsilon]).
// Offline learners read the experiment's dataset (the `data:` section) from the context, and
// count `steps` in gradient steps (their metrics' step column is named gradient_step).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "algos/core/checkpoint.hpp"
#include "engine/data/dataset.hpp"
#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/policy.hpp"
#include "engine/progress.hpp"
#include "engine/registry.hpp"
#include "engine/run_dir.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {

// Settings every run shares (the `train` section of an experiment file).
struct TrainParams {
  std::int64_t steps = 100000;      // env steps of training (offline learners: gradient steps)
  std::int64_t eval_every = 10000;  // env steps between evaluations (0: only at the end)
  int eval_episodes = 20;           // episodes per evaluation
  bool checkpoint = true;           // write the final policy into the run directory
  bool until_budget = false;        // private learners: train until the budget is spent
  std::int64_t checkpoint_every = 50000;  // steps between resume checkpoints (0: none)
  int noise_threads = -1;  // private learners: threads drawing noise ahead (-1: auto)

  template <class V>
  void visit(V& v) {
    v("steps", steps, Range::closed(1, 1e13), "env steps of training");
    v("eval_every", eval_every, Range::closed(0, 1e13),
      "env steps between evaluations (0: only at the end)");
    v("eval_episodes", eval_episodes, Range::closed(1, 1e7), "episodes per evaluation");
    v("checkpoint", checkpoint, "write the final policy into the run directory");
    v("until_budget", until_budget,
      "private learners: train for the largest step count the privacy budget affords (steps "
      "ignored)");
    v("checkpoint_every", checkpoint_every, Range::closed(0, 1e13),
      "env steps (offline learners: gradient steps) between the checkpoints a killed run resumes "
      "from (0: none)");
    v("noise_threads", noise_threads, Range::closed(-1, 1),
      "private learners with DP-SGD: threads drawing the next step's noise while the gradient is "
      "computed (0 or 1; -1: 1 when the process has a CPU beyond the runs it makes at once); "
      "results do not depend on it");
  }
  // noise_threads with -1 resolved for this machine
  int resolved_noise_threads() const;
};

// What a learner can see before the run directory exists (Algorithm::check).
struct RunPlan {
  const Env& env;  // a probe env of the experiment's id and params
  const TrainParams& train;
  std::uint64_t seed;
  std::optional<std::filesystem::path> run_dir;  // where the run will write; none: no run dir
  const Dataset* dataset = nullptr;              // the experiment's `data:` (offline learners)
  // `--resume` (or a sweep continuing a run): the run directory holds this config's unfinished
  // run, whose ledger charges a private learner may find again (see algos/core/checkpoint.hpp)
  bool resuming = false;
  // RunOptions::force: the run may replace what it writes outside its directory (PriMORL's
  // data_export) when that exists already
  bool force = false;
};

// One evaluation, as a host's callback sees it (RunOptions::on_eval): the step it was taken at
// (env steps, or gradient steps for the offline learners: step_column says which), its figures,
// and the epsilon spent so far (NaN when the run is not private).
struct EvalReport {
  std::int64_t step = 0;
  std::string step_column;
  EvalStats stats;
  double epsilon = 0;
};

// Thrown at a safe point of training after a host asked the run to stop (TrainContext::Hooks):
// after the learner saved a checkpoint when the run has checkpoints, so the run directory is left
// as a killed run leaves it and resumes from there.
class RunStopped : public std::runtime_error {
 public:
  explicit RunStopped(std::int64_t step)
      : std::runtime_error("the run was asked to stop"), step_(step) {}
  std::int64_t step() const { return step_; }

 private:
  std::int64_t step_;
};

class TrainContext {
 public:
  TrainContext(std::function<std::unique_ptr<Env>()> make_env, std::uint64_t seed,
               TrainParams train, RunDir* run_dir, Progress* progress);

  // A fresh env of the experiment's id and params.
  std::unique_ptr<Env> make_env() const { return make_env_(); }
  std::uint64_t seed() const { return seed_; }
  const TrainParams& train() const { return train_; }
  Progress& progress() { return *progress_; }

  // A host's hooks (RunOptions): on_eval is called after every evaluation, on the training thread;
  // a stop request ends training at the next safe point: with checkpoints, checkpoint_due()
  // answers true and save_checkpoint() throws RunStopped after writing; without, eval_due() and
  // evaluate() throw it.
  struct Hooks {
    std::function<void(const EvalReport&)> on_eval;
    std::stop_token stop;
  };
  void set_hooks(Hooks hooks) { hooks_ = std::move(hooks); }

  // Whether an evaluation falls due at this step count (every eval_every steps).
  bool eval_due(std::int64_t step) const;
  // Runs the seeded evaluation and records it; extra columns are appended to the row.
  EvalStats evaluate(Policy& policy, std::int64_t step, std::int64_t episodes,
                     const std::vector<std::pair<std::string, double>>& extra = {});
  // The privacy spent so far, shown in metrics (set by private learners; NaN when not private).
  void set_epsilon(double eps) { epsilon_ = eps; }
  // Learners that log per episode write their own metrics rows; once they do, evaluate() records
  // its figures (last_eval) without adding rows of another shape.
  void append_metrics(const std::vector<std::pair<std::string, double>>& row);
  // The experiment's offline dataset (the `data:` section; null when it has none) and where it
  // came from (for messages).
  void set_dataset(std::shared_ptr<const Dataset> ds, std::string source);
  const Dataset* dataset() const { return dataset_.get(); }
  const std::string& dataset_source() const { return dataset_source_; }
  // Name of the step column of evaluate()'s metrics rows ("step"; offline: "gradient_step").
  void set_step_column(std::string name) { step_column_ = std::move(name); }
  // Declares up front that the learner writes its own rows (before any evaluation can).
  void use_custom_rows() { custom_rows_ = true; }
  // Another file in the run directory (ignored when the run writes no directory).
  void write_file(const std::string& name, std::string_view content) const;
  // The run directory, if the run writes one.
  std::optional<std::filesystem::path> run_dir() const;

  // Checkpoints (algos/core/checkpoint.hpp). A learner that supports them lists its state in one
  // sync function (engine/state_io.hpp) and
  //  - calls resume(sync) once, after initialising its state as for step 0: when the run resumes,
  //    this loads the checkpoint into the context and, through sync, into the learner, and returns
  //    true; the learner then continues its loop from the loaded counters;
  //  - where its loop can stop (between env steps, or between rollouts), calls
  //    checkpoint_due(step) and, when true, save_checkpoint(step, sync).
  using SyncFn = std::function<void(StateIo&)>;
  void set_checkpoints(CheckpointSetup setup);
  bool resume(const SyncFn& sync);
  bool checkpoint_due(std::int64_t step) const;
  void save_checkpoint(std::int64_t step, const SyncFn& sync);
  // For private learners whose metrics rows are made from releases: rows reach metrics.csv only
  // when a checkpoint is written and at the end of the run (RunDir::hold_metrics), so a killed
  // run published nothing its resumed run draws again.
  void hold_metrics_until_checkpoints() {
    if (run_dir_) run_dir_->hold_metrics();
    progress_->hide_returns();
  }
  // Whether resume() loaded checkpoint.prev.bin (the newest checkpoint was damaged or missing).
  bool resumed_from_previous() const { return resumed_previous_; }

  const EvalStats& last_eval() const { return last_eval_; }
  std::int64_t last_eval_step() const { return last_eval_step_; }
  int eval_rounds() const { return rounds_; }

 private:
  std::function<std::unique_ptr<Env>()> make_env_;
  std::uint64_t seed_;
  TrainParams train_;
  RunDir* run_dir_;
  Progress* progress_;
  Progress quiet_{Progress::Mode::kOff};
  std::unique_ptr<Env> eval_env_;
  EvalStats last_eval_;
  std::int64_t last_eval_step_ = -1;
  std::int64_t next_eval_ = 0;
  int rounds_ = 0;
  double epsilon_;
  bool custom_rows_ = false;
  std::shared_ptr<const Dataset> dataset_;
  std::string dataset_source_;
  std::string step_column_ = "step";
  CheckpointSetup ckpt_;
  std::int64_t next_checkpoint_ = 0;
  std::int64_t checkpoints_written_ = 0;
  bool resumed_previous_ = false;
  Hooks hooks_;

  // a stop was asked for and the run has no checkpoints to save first
  bool stop_now() const { return hooks_.stop.stop_requested() && ckpt_.every <= 0; }

  // the context's own part of a checkpoint
  void sync_state(StateIo& io, std::int64_t& step);
};

// What a training run did. env_steps: env steps taken (0 for the learners that only read a
// dataset). gradient_steps: updates of the learned parameters, each counted once: an optimiser
// step on a minibatch (the critic's, when a minibatch also updates an actor), a per-step TD update
// of the tabular and linear learners, a gradient step of the offline learners; counted as they
// happen (PPO may stop its epochs early) and saved in checkpoints. Learners that solve for their
// parameters instead (LSVI-UCB's least squares) report 0.
struct TrainSteps {
  std::int64_t env_steps = 0;
  std::int64_t gradient_steps = 0;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // Called by the experiment runner before the run directory is created: throws the typed error
  // (ParamError, BudgetExceeded, DataError) that train() would throw for this env, train settings
  // or privacy ledger, and may acquire resources train() then uses (a locked ledger). Learners
  // that are trained without it (the C++ API) run the same checks at the start of train().
  virtual void check(const RunPlan& plan) { (void)plan; }
  // Runs training to ctx.train().steps env steps (offline learners: gradient steps).
  virtual TrainSteps train(TrainContext& ctx) = 0;
  // The learned policy for acting (greedy where the learner has one).
  virtual std::unique_ptr<Policy> policy() const = 0;
  // Writes the learned policy so `dprl eval --policy FILE` can load it.
  virtual void save_policy(const std::filesystem::path& file) const = 0;
  // The checkpoint's file name in the run directory (JSON tables: policy.json; networks: binary).
  virtual std::string policy_file() const { return "policy.json"; }
  // The resolved parameters.
  virtual ParamMap params() const = 0;
  // Checks the parameters that depend on the env (spaces, action counts) before anything is
  // written; throws ParamError naming the parameter. Most learners have none.
  virtual void check_env(const EnvSpec& /*spec*/) const {}
  // The privacy guarantee of the run, for private learners.
  virtual std::optional<PrivacyReport> privacy() const { return std::nullopt; }
  // Episodes completed in training.
  virtual std::int64_t train_episodes() const { return 0; }
  // Whether the learner reads the experiment's dataset (the `data:` section, then required).
  virtual bool needs_dataset() const { return false; }
  // Whether the learner may read a `data:` section it does not require (e.g. PriMORL, which
  // otherwise collects its own data).
  virtual bool accepts_dataset() const { return needs_dataset(); }
  // Whether train() writes checkpoints and resumes from them (TrainContext::resume); a run of a
  // learner without is refused by `--resume`.
  virtual bool resumable() const { return false; }
  // Learner-specific final figures for summary.json's "extra".
  virtual std::vector<std::pair<std::string, double>> summary_extra() const { return {}; }
};

using AlgoRegistry = Registry<Algorithm>;
AlgoRegistry& algo_registry();
void register_builtin_algos(AlgoRegistry& r);

}  // namespace dprl::algos
