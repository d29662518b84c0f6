// dprl run | sweep
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "algos/run/experiment.hpp"
#include "algos/run/pipeline.hpp"
#include "algos/run/sweep.hpp"
#include "engine/error.hpp"
#include "engine/thread_pool.hpp"
#include "tools/cli.hpp"
#include "tools/metrics_csv.hpp"
#include "tools/mpi_sweep.hpp"

namespace dprl::cli {
namespace {

struct RunOpts {
  std::string config;
  std::int64_t seed = -1;
  std::optional<std::string> out;  // given and empty is an error, not the default
  std::vector<std::string> sets;
  bool quiet = false;
  int jobs = 0;
  bool resume = false;
  bool check = false;
  bool force = false;
};

void print_run(const RunSummary& s);

void cmd_run(const RunOpts& o) {
  algos::RunOptions opts;
  if (o.seed >= 0) opts.seed = static_cast<std::uint64_t>(o.seed);
  if (o.out) opts.out = *o.out;
  opts.overrides = o.sets;
  opts.resume = o.resume;
  opts.check_only = o.check;
  opts.force = o.force;
  if (o.quiet) opts.progress = Progress::Mode::kOff;
  // pipelines (algos/run/pipeline.hpp) are files with a top-level `pipeline` key
  const Node root = load_yaml_file(o.config);
  const bool pipeline = algos::is_pipeline(root);
  if (pipeline && o.check) {
    // every check a pipeline makes before its first stage (and the ones it makes later, moved
    // before it): no population trained, no budget charged, nothing written
    const std::filesystem::path file(o.config);
    const auto spec = algos::parse_pipeline(root, file.stem().string(), file.parent_path(), opts);
    algos::check_pipeline(spec);
    fmt::print("{}: ok: pipeline {}, {} experts, {} on {}, seed {} (checked, nothing run)\n",
               o.config, spec.name, spec.experts, spec.learner_id, spec.population.env_id,
               spec.seed);
    return;
  }
  if (o.check) {
    const RunSummary s = algos::run_experiment_file(o.config, opts);
    fmt::print("{}: ok: {}, {} on {}, seed {} (checked, nothing run)\n", o.config, s.name, s.algo,
               s.env, s.seed);
    return;
  }
  if (pipeline && o.resume)
    throw ConfigError(fmt::format(
        "{}: --resume: pipeline files need no --resume; run them again (finished populations "
        "and releases are reused, and the DP-SGD stage continues from its last checkpoint)",
        o.config));
  const RunSummary s = pipeline ? run_pipeline_command(o.config, opts, o.jobs)
                                : algos::run_experiment_file(o.config, opts);
  print_run(s);
}

void cmd_resume(const std::string& dir, bool quiet) {
  algos::RunOptions opts;
  if (quiet) opts.progress = Progress::Mode::kOff;
  print_run(algos::resume_run_dir(dir, opts));
}

namespace {

// The arguments of a first `dprl plot` of a run: y the evaluation return, else the training
// return, else the first column after the x axis (--x the first column when plot's default is
// absent); "" when metrics.csv is missing, unreadable or has fewer than two columns.
std::string plot_arguments(const std::filesystem::path& metrics) {
  if (!std::filesystem::exists(metrics)) return "";
  tools::MetricsTable t;
  try {
    t = tools::read_metrics_csv(metrics);
  } catch (const Error&) {
    return "";
  }
  if (t.columns.size() < 2) return "";
  const std::string args = t.find(t.default_x()) ? "" : "--x " + t.columns[0] + " ";
  for (const char* want : {"return_mean", "return"})
    if (t.find(want)) return args + "--y " + want;
  return args + "--y " + t.columns[1];
}

}  // namespace

void print_run(const RunSummary& s) {
  // learners that only read a dataset take no env steps
  const std::string steps = s.env_steps == 0 && s.gradient_steps > 0
                                ? fmt::format("{} gradient steps", s.gradient_steps)
                                : fmt::format("{} env steps", s.env_steps);
  fmt::print("{}: {} on {}, seed {}, {} in {:.2f} s\n", s.name, s.algo, s.env, s.seed, steps,
             s.wall_time_s);
  fmt::print("final evaluation: return {:.4f} +- {:.4f} over {} episodes\n",
             s.final_eval.return_mean, s.final_eval.return_std, s.final_eval.episodes);
  if (!s.dir.empty()) {
    fmt::print("results: {}/ (metrics.csv, summary.json, config.yaml)\n", s.dir);
    const std::string args = plot_arguments(std::filesystem::path(s.dir) / "metrics.csv");
    if (!args.empty())
      fmt::print("next: dprl plot {} {} -o {}.svg\n", s.dir, args,
                 std::filesystem::path(s.dir).filename().string());
  }
  for (const auto& [k, v] : s.extra)
    if (k == "diverged" && v > 0)
      fmt::print(stderr,
                 "dprl: warning: training diverged (non-finite weights); see summary.json\n");
  if (s.privacy)
    fmt::print("privacy: ({:.4g}, {:.3g})-DP, {} accountant, {} noise\n", s.privacy->epsilon,
               s.privacy->delta, s.privacy->accountant, s.privacy->noise_source);
  if (!s.audit_json.empty()) {
    const auto a = nlohmann::json::parse(s.audit_json);
    fmt::print("audit: epsilon_lower {:.4g} (confidence {}, {}, {} canaries) vs claimed {:.4g}\n",
               a["epsilon_lower"].get<double>(), a["confidence"].get<double>(),
               a["mode"].get<std::string>(), a["canaries"].get<std::int64_t>(),
               a["epsilon_claimed"].get<double>());
    if (s.audit_refuted) {
      std::fflush(stdout);
      fmt::print(stderr,
                 "dprl: audit REFUTES the claim: epsilon_lower = {:.4g} > epsilon_claimed = "
                 "{:.4g} (audit.json)\n",
                 a["epsilon_lower"].get<double>(), a["epsilon_claimed"].get<double>());
      throw ExitStatus{3};
    }
  }
}

struct SweepOpts {
  std::string file;
  int jobs = 1;
  bool force = false;
  bool quiet = false;
  bool check = false;
};

// rank 0 (or the only process): the tables, then failures as one exit status
void report_sweep(const algos::SweepPlan& plan, const algos::SweepResult& result) {
  fmt::print("{}", result.summary_md);
  fmt::print("tables: {} and {}\n", (plan.out / "sweep.csv").string(),
             (plan.out / "summary.md").string());
  if (result.failed == 0) return;
  std::fflush(stdout);
  fmt::print(stderr, "dprl: {} of {} runs failed (listed in {}); rerun the sweep to retry them\n",
             result.failed, plan.runs.size(), (plan.out / "failures.csv").string());
  throw ExitStatus{1};
}

#ifdef DPRL_MPI
void cmd_sweep_mpi(const SweepOpts& o, const algos::SweepOptions& opts) {
  MpiWorld world;
  std::optional<algos::SweepPlan> plan;
  std::string error;
  try {
    plan = algos::plan_sweep(o.file);
  } catch (const Error& e) {
    error = e.what();
  }
  bool root_ready = false, same_plan = false;
  const bool ready = world.agree(plan.has_value(), plan ? plan_digest(*plan) : std::string(),
                                 root_ready, same_plan);
  if (!ready) {
    // when rank 0 failed, every rank failed alike (shared files): its line is enough
    if (world.rank() == 0 && !plan) fmt::print(stderr, "dprl: {}\n", printable(error));
    if (world.rank() > 0 && root_ready && !plan)
      fmt::print(stderr, "dprl: rank {}: {}\n", world.rank(), printable(error));
    if (world.rank() > 0 && root_ready && plan && !same_plan)
      fmt::print(stderr,
                 "dprl: rank {}: the sweep plan differs from rank 0's (run directories need a "
                 "filesystem shared by all ranks)\n",
                 world.rank());
    throw ExitStatus{2};
  }
  // Open MPI binds each rank to one core when there are at most two ranks, to a socket otherwise
  if (world.rank() == 0 && hardware_threads() < opts.jobs)
    fmt::print(stderr,
               "dprl: note: rank 0 may run on {} CPU{} for --jobs {}; give each rank its CPUs with "
               "mpirun --map-by slot:PE={} (or --bind-to none)\n",
               hardware_threads(), hardware_threads() == 1 ? "" : "s", opts.jobs, opts.jobs);
  const auto result = run_sweep_mpi(world, *plan, opts);
  if (result) report_sweep(*plan, *result);
}
#endif

// --check: every run of the sweep checked as `dprl run --check` would; every failure on its own
// line, then exit status 2
void check_sweep(const SweepOpts& o) {
  const auto plan = algos::plan_sweep(o.file);
  algos::RunOptions opts;
  opts.check_only = true;
  opts.force = true;  // a sweep reruns a run of another config in its folder (with a note)
  opts.progress = Progress::Mode::kOff;
  std::size_t failed = 0;
  for (const auto& run : plan.runs) {
    opts.out = run.out;
    try {
      // a pipeline run (paper 000) is checked as `dprl run --check` checks a pipeline file
      if (algos::is_pipeline(run.config))
        algos::check_pipeline(algos::parse_pipeline(run.config, run.name, {}, opts));
      else
        algos::run_experiment(run.config, run.name, opts);
    } catch (const Error& e) {
      ++failed;
      std::fflush(stdout);
      fmt::print(stderr, "dprl: {}: run {} ({}, seed {}): {}\n", printable(o.file), run.index,
                 printable(run.label), run.seed, printable(e.what()));
    }
  }
  if (failed > 0) throw ExitStatus{2};
  fmt::print("{}: ok: {} runs checked, nothing run\n", o.file, plan.runs.size());
}

void cmd_sweep(const SweepOpts& o) {
  if (o.check) return check_sweep(o);
  algos::SweepOptions opts;
  opts.jobs = o.jobs;
  opts.force = o.force;
  opts.quiet = o.quiet;
#ifdef DPRL_MPI
  if (launch_size() > 1) return cmd_sweep_mpi(o, opts);
#endif
  const auto plan = algos::plan_sweep(o.file);
  report_sweep(plan, algos::run_sweep(plan, opts));
}

}  // namespace

void add_run_commands(CLI::App& app) {
  auto ro = std::make_shared<RunOpts>();
  auto* run = app.add_subcommand("run", "run an experiment file");
  run->add_option("config", ro->config, "experiment YAML")->required();
  run->add_option("--seed", ro->seed, "root seed (overrides the file)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 62));
  run->add_option("--out", ro->out, "run directory (overrides the file)");
  run->add_option("--set", ro->sets, "override a key: a.b.c=value (repeatable)");
  run->add_flag("--quiet", ro->quiet, "no progress line");
  run->add_option("--jobs", ro->jobs,
                  "pipelines: threads for expert training and queries (default: all CPUs)")
      ->check(CLI::Range(1, 4096));
  run->add_flag("--resume", ro->resume,
                "continue a killed run in the run directory from its last checkpoint");
  run->add_flag("--check", ro->check,
                "check the experiment as a run would (config, env, algorithm, data, budget) and "
                "exit without training or writing");
  run->add_flag("--force", ro->force,
                "replace a finished run of another config in the run directory (refused "
                "otherwise)");
  run->callback([ro] { cmd_run(*ro); });

  auto rdir = std::make_shared<std::string>();
  auto rquiet = std::make_shared<bool>(false);
  auto* resume = app.add_subcommand(
      "resume", "continue a killed run from its last checkpoint (= dprl run CONFIG --resume)");
  resume->add_option("run_dir", *rdir, "the run directory (holds config.yaml)")->required();
  resume->add_flag("--quiet", *rquiet, "no progress line");
  resume->callback([rdir, rquiet] { cmd_resume(*rdir, *rquiet); });

  auto so = std::make_shared<SweepOpts>();
  auto* sweep = app.add_subcommand(
      "sweep", "run a grid of experiments on local cores, or over MPI ranks under mpirun/srun");
  sweep->add_option("sweep", so->file, "sweep YAML")->required();
  sweep->add_option("--jobs", so->jobs, "parallel runs per process (default 1)")
      ->check(CLI::Range(1, 4096));
  sweep->add_flag("--force", so->force, "rerun runs whose directory already holds them complete");
  sweep->add_flag("--quiet", so->quiet, "no progress line and no per-run lines");
  sweep->add_flag("--check", so->check,
                  "check every run as dprl run --check would and exit without running any");
  sweep->callback([so] { cmd_sweep(*so); });
}

}  // namespace dprl::cli
