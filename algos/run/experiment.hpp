// algos/run/: experiment files (this file), sweeps, populations and pipelines, the registration
// of every learner and audit dispatch: the only folder that knows every learner;
// docs/architecture.md.
//
// Running an experiment file: validate everything, then train, evaluate and write the run dir.
//
// Schema (every key is checked; unknown keys are errors naming file:line:column and the valid
// keys):
//
//   name: quickstart          # optional, default: the file's stem
//   seed: 1                   # root of every derived random stream (--seed overrides)
//   out: runs/quickstart      # optional run directory (--out overrides; default runs/<name>)
//   env:
//     id: taxi                # a registered env or Gymnasium alias
//     params: {}              # env parameters (see `dprl envs`)
//   algo:
//     id: q_learning          # a registered algorithm
//     params: {}              # algorithm parameters
//   train:                    # algos::TrainParams
//     steps: 200000           # offline learners: gradient steps
//     eval_every: 20000
//     eval_episodes: 100
//     checkpoint: true
//     until_budget: false     # private learners: the largest step count the budget affords
//     checkpoint_every: 50000 # steps between the checkpoints --resume continues from (0: none)
//   data:                     # offline learners only (then required)
//     path: data/cartpole     # a Minari dataset folder or a D4RL .hdf5 file
//     format: auto            # auto | minari | d4rl
//   audit:                    # optional: privacy audit after training (every private learner;
//     canaries: 1000          # algos/run/audit_dispatch.hpp, keys in audit_report.hpp); writes
//     white_box: false        # <out>/audit.json and summary.json "audit"
//
// Everything is checked before the run directory is created: the schema, the env and learner
// parameters, the dataset (loaded, validated and checked against the env's spaces: a bad file or
// mismatch is one DataError line naming the file and key), and the learner's own checks against
// the env, train settings and dataset (Algorithm::check). Then the resolved config (all defaults
// filled in) is written to <out>/config.yaml and training starts.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "algos/audit/audit_report.hpp"
#include "algos/core/algorithm.hpp"
#include "engine/config.hpp"
#include "engine/progress.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos {

struct RunOptions {
  std::optional<std::uint64_t> seed;         // overrides the file's seed
  std::optional<std::filesystem::path> out;  // overrides the file's out
  std::vector<std::string> overrides;        // "a.b.c=value"
  Progress::Mode progress = Progress::Mode::kAuto;
  bool write = true;  // false: validate and train without a run dir
  // Continue a killed run in <out> from its last checkpoint (algos/core/checkpoint.hpp): <out> must
  // hold the same resolved config and no summary.json; with no checkpoint yet the run starts at
  // step 0 (with a note on stderr). Learners without checkpoints are refused.
  bool resume = false;
  // Check only: everything a run checks before training (the config, env, learner, data set,
  // budget against a fresh ledger, resume) and return the summary's name, env, algo and seed,
  // without training and without touching the run directory.
  bool check_only = false;
  // Replace a finished run of another config: when <out> holds a summary.json and a config.yaml
  // that differs from this run's resolved config, the run is refused (ConfigError) unless force
  // is set. A finished run of the same config is run again in place.
  bool force = false;
  // Hooks for a host program (the CLI sets none). on_eval: called after every evaluation, on the
  // training thread, with its step, figures and the epsilon spent. stop: a request ends the run
  // at its next safe point (after saving a checkpoint when it has checkpoints) and
  // run_experiment throws RunStopped (algos/core/algorithm.hpp); the run directory is left as a
  // killed run leaves it, so the same call with resume = true continues it. log: receives the
  // run's notes and warnings, one line each, instead of stderr (the progress line stays on a
  // terminal's stderr: set progress = kOff).
  std::function<void(const EvalReport&)> on_eval;
  std::stop_token stop;
  std::function<void(std::string_view)> log;
};

struct Experiment;

// Parses and validates a config tree (overrides already applied); throws on any problem.
// Returns the resolved config.
Node resolve_experiment(const Node& config, const std::string& default_name,
                        const RunOptions& opts);

// Loads a file, applies overrides, resolves, trains and writes the run directory.
RunSummary run_experiment_file(const std::filesystem::path& file, const RunOptions& opts);
// Resumes the run in a run directory from its config.yaml (RunOptions::resume); the config's out
// must name that directory.
RunSummary resume_run_dir(const std::filesystem::path& dir, const RunOptions& opts);
// Same from an in-memory tree (name used when the tree has no name).
RunSummary run_experiment(Node config, const std::string& default_name, const RunOptions& opts);

// The privacy audit of the experiment's private learner with its `audit:` section (defaults when
// absent; opts.overrides are applied to `config` first): a separate training of the same
// configuration with canaries, or for ppo_kickstart a mechanism audit of one query
// (algos/run/audit_dispatch.hpp). epsilon_reported is the run's figure (NaN: none). Writes
// nothing.
AuditReport audit_experiment(Node config, const std::string& default_name, const RunOptions& opts,
                             double epsilon_reported = NAN);

}  // namespace dprl::algos
