// Sweeps: a grid over any config keys and/or a list of seeds, each run in its own directory.
//
//   base: quickstart.yaml              # experiment file, relative to the sweep file
//   out: runs/sweep                    # sweep directory
//   seeds: [1, 2, 3]                   # optional; default: the base file's seed
//   set:                               # optional; key path -> one value, applied to every run
//     algo.params.private: true
//   grid:                              # optional; key path -> list of values
//     algo.params.learning_rate: [0.1, 0.5]
//     train.steps: [20000, 50000]
//
// The base may also be a pipeline file (algos/run/pipeline.hpp, top-level key
// `pipeline`): its runs are whole pipelines, digested by their resolved config the same way.
// Build a pipeline's population first (`dprl population`): concurrent runs do not share it.
//
// plan_sweep() expands the grid (first key slowest) times the seeds into an ordered list of runs;
// run k writes <out>/<label>/seed<S>/. Every run derives its randomness from its own seed only, so
// a run's files do not depend on which thread, process or MPI rank executes it.
//
// Resume: a run is complete when its directory holds summary.json and run.json, run.json's
// config_sha256 is the SHA-256 of the run's resolved config (the bytes of its config.yaml) and its
// summary_sha256 that of summary.json. execute_run() deletes run.json, summary.json, timing.json
// and leftover temporary files of interrupted writes before training, and writes run.json last, so
// a run killed at any point is never taken as complete. Its rerun continues from the run's last
// checkpoint (algos/core/checkpoint.hpp) when the directory holds one for the same config
// (config.yaml has the run's digest), with a note on stderr, and ends with the bytes of an
// uninterrupted run; a corrupted checkpoint is dropped for the previous one, and without a usable
// one the run starts from step 0. `--force` always starts from step 0. A directory holding a
// complete run of another config is rerun, with a note on stderr.
//
// Execution: a SweepDispatcher owns the runs still to do (plan order) and collects one RunOutcome
// per run, from local worker threads (work_local) or from other MPI ranks (tools/mpi_sweep.cpp),
// as JSON text. finish() builds the tables from the outcomes' summary.json text in plan order, so
// the tables are the same bytes however the runs were spread, and whether a run was executed now
// or skipped as complete:
//   <out>/sweep.csv     every run with its grid values and final figures (learner extras too);
//                       a failed run's figure cells are empty
//   <out>/summary.md    mean +- sd across seeds per configuration, and the best one
//   <out>/failures.csv  run, label, seed, dir, error of each failed run (removed when none failed)
//   <out>/timing.json   wall-clock figures: the sweep's and each run's (status, rank)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.hpp"
#include "engine/progress.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos {

struct SweepRun {
  std::size_t index = 0;
  std::string label;  // "learning_rate=0.1,steps=20000" or "base"
  std::string name;   // the config's name, or the label
  std::uint64_t seed = 0;
  std::vector<std::pair<std::string, std::string>> values;  // grid key -> value text
  Node config;                                              // the experiment with values applied
  std::string config_sha256;  // SHA-256 of the resolved config's YAML (= config.yaml's bytes)
  std::filesystem::path out;
};

struct SweepPlan {
  std::filesystem::path out;
  std::vector<std::string> keys;
  std::vector<SweepRun> runs;
};

// Reads and validates a sweep file (every run's config is resolved, so errors surface before any
// run starts).
SweepPlan plan_sweep(const std::filesystem::path& file);

// A run folder name from a label ("algo.params.lr=0.1,seed=2"): every character but letters,
// digits and . - _ = , becomes '_'. Sweeps and populations name their runs with it.
std::string run_label(std::string label);

struct SweepOptions {
  int jobs = 1;        // local worker threads per process (>= 1)
  bool force = false;  // rerun complete runs too
  bool quiet = false;  // no per-run lines and no progress line
  Progress::Mode progress = Progress::Mode::kAuto;
};

struct RunOutcome {
  enum class Status { kPending, kDone, kSkipped, kFailed };
  Status status = Status::kPending;
  std::string summary;     // kDone, kSkipped: the bytes of summary.json
  std::string error;       // kFailed: one line
  double wall_time_s = 0;  // kDone, kFailed: time spent on the run in this sweep
  int rank = 0;            // which MPI rank ran it
};

// The message a rank sends for a finished run, and its inverse (DataError on malformed text).
std::string outcome_to_json(std::size_t index, const RunOutcome& o);
std::pair<std::size_t, RunOutcome> outcome_from_json(const std::string& text);

// What run's directory holds: a complete run of its config (summary = summary.json's bytes),
// nothing complete, a complete run of another config, or a summary.json that does not match the
// digest run.json recorded for it.
struct RunState {
  enum class Kind { kComplete, kMissing, kOtherConfig, kAltered };
  Kind kind = Kind::kMissing;
  std::string summary;
};
RunState run_state(const SweepRun& run);

// Executes one run (clearing its old record first), from its checkpoint when from_checkpoint and
// the directory holds a usable one of the same config; never throws: an error becomes kFailed.
RunOutcome execute_run(const SweepRun& run, int rank, bool from_checkpoint = true);

struct SweepResult {
  std::vector<RunSummary> summaries;  // plan order (a failed run's is default)
  std::vector<RunOutcome> outcomes;   // plan order
  std::string table_csv;              // what sweep.csv holds
  std::string summary_md;             // what summary.md holds: mean +- sd across seeds per label
  std::string best_label;             // the label with the best mean final evaluation return
  std::size_t ran = 0, skipped = 0, failed = 0;
};

// Hands out the runs still to do and collects their outcomes; thread-safe. The constructor checks
// every run directory (unless opts.force) and prints a note for each stale one.
class SweepDispatcher {
 public:
  SweepDispatcher(const SweepPlan& plan, const SweepOptions& opts, int ranks);
  ~SweepDispatcher();
  SweepDispatcher(const SweepDispatcher&) = delete;
  SweepDispatcher& operator=(const SweepDispatcher&) = delete;

  const SweepPlan& plan() const { return plan_; }
  // Whether runs continue from their checkpoints (not with --force).
  bool from_checkpoints() const { return !opts_.force; }
  // The next run index to execute, or none when all have been handed out.
  std::optional<std::size_t> next();
  void record(std::size_t index, RunOutcome outcome);
  // True once every handed-out run has an outcome and none is left to hand out.
  bool done() const;
  // Waits up to `timeout` for done(); refreshes the progress line meanwhile.
  bool wait_done(std::chrono::milliseconds timeout);
  // Writes the tables and timing.json (call once, after done()).
  SweepResult finish();

 private:
  const SweepPlan& plan_;
  SweepOptions opts_;
  int ranks_;
  std::vector<RunOutcome> outcomes_;
  std::vector<std::size_t> todo_;
  std::size_t next_ = 0;
  std::size_t recorded_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unique_ptr<SweepProgress> progress_;
  std::chrono::steady_clock::time_point start_;
};

// Runs dispatcher runs on `jobs` threads of this process until next() has none left.
void work_local(SweepDispatcher& d, int jobs, int rank);

// Runs the whole plan in this process.
SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& opts);

// The tables of a finished sweep; writes sweep.csv, summary.md and failures.csv (or removes it).
SweepResult write_sweep_tables(const SweepPlan& plan, std::vector<RunOutcome> outcomes);

// Mean and sample standard deviation (n - 1 in the denominator; 0 for one value) of a non-empty
// list, as the sweep tables report a configuration's seeds.
struct MeanSd {
  double mean = 0, sd = 0;
};
MeanSd mean_sd(const std::vector<double>& xs);

}  // namespace dprl::algos
