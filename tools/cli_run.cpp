// dprl run | sweep
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "algos/experiment.hpp"
#include "algos/sweep.hpp"
#include "engine/error.hpp"
#include "engine/thread_pool.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

struct RunOpts {
  std::string config;
  std::int64_t seed = -1;
  std::string out;
  std::vector<std::string> sets;
  bool quiet = false;
};

void cmd_run(const RunOpts& o) {
  algos::RunOptions opts;
  if (o.seed >= 0) opts.seed = static_cast<std::uint64_t>(o.seed);
  if (!o.out.empty()) opts.out = o.out;
  opts.overrides = o.sets;
  if (o.quiet) opts.progress = Progress::Mode::kOff;
  const RunSummary s = algos::run_experiment_file(o.config, opts);
  std::string steps = fmt::format("{} env steps", s.env_steps);
  for (const auto& [k, v] : s.extra)
    if (k == "gradient_steps")
      steps = fmt::format("{} gradient steps", static_cast<std::int64_t>(v));
  fmt::print("{}: {} on {}, seed {}, {} in {:.2f} s\n", s.name, s.algo, s.env, s.seed, steps,
             s.wall_time_s);
  fmt::print("final evaluation: return {:.4f} +- {:.4f} over {} episodes\n",
             s.final_eval.return_mean, s.final_eval.return_std, s.final_eval.episodes);
  for (const auto& [k, v] : s.extra)
    if (k == "diverged" && v > 0)
      fmt::print(stderr,
                 "dprl: warning: training diverged (non-finite weights); see summary.json\n");
  if (s.privacy)
    fmt::print("privacy: ({:.4g}, {:.3g})-DP, {} accountant, {} noise\n", s.privacy->epsilon,
               s.privacy->delta, s.privacy->accountant, s.privacy->noise_source);
}

struct SweepOpts {
  std::string file;
  int jobs = 1;
};

void cmd_sweep(const SweepOpts& o) {
  const auto plan = algos::plan_sweep(o.file);
  fmt::print(stderr, "sweep: {} runs on {} jobs into {}\n", plan.runs.size(), o.jobs,
             plan.out.string());
  const auto result = algos::run_sweep(plan, o.jobs, true);
  fmt::print("{}", result.summary_md);
  fmt::print("tables: {} and {}\n", (plan.out / "sweep.csv").string(),
             (plan.out / "summary.md").string());
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
  run->callback([ro] { cmd_run(*ro); });

  auto so = std::make_shared<SweepOpts>();
  auto* sweep = app.add_subcommand("sweep", "run a grid of experiments on local cores");
  sweep->add_option("sweep", so->file, "sweep YAML")->required();
  sweep->add_option("--jobs", so->jobs, "parallel runs (default 1)")->check(CLI::Range(1, 4096));
  sweep->callback([so] { cmd_sweep(*so); });
}

}  // namespace dprl::cli
