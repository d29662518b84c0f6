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
// plan_sweep() expands the grid (first key slowest) times the seeds into an ordered list of runs;
// run k writes <out>/<label>/seed<S>/. run_sweep() executes the plan on a local thread pool; every
// run derives its randomness from its own seed only, so the results are identical for any number
// of jobs. The plan is the unit a distributed (MPI) launcher would partition by rank.
// <out>/sweep.csv lists every run with its grid values and final figures (learner extras too), in
// plan order; <out>/summary.md has mean +- sd across seeds per configuration and names the best.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos {

struct SweepRun {
  std::size_t index = 0;
  std::string label;  // "learning_rate=0.1,steps=20000" or "base"
  std::uint64_t seed = 0;
  std::vector<std::pair<std::string, std::string>> values;  // grid key -> value text
  Node config;                                              // the experiment with values applied
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

struct SweepResult {
  std::vector<RunSummary> summaries;  // plan order
  std::string table_csv;              // what sweep.csv holds
  std::string summary_md;             // what summary.md holds: mean +- sd across seeds per label
  std::string best_label;             // the label with the best mean final evaluation return
};

// Runs the plan with `jobs` local threads (>= 1).
SweepResult run_sweep(const SweepPlan& plan, int jobs, bool verbose);

}  // namespace dprl::algos
