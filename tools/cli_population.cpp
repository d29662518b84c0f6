// dprl population | bench data-release, and `dprl run` on pipeline files (paper 000).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/core/networks.hpp"
#include "algos/expert_level/data_release.hpp"
#include "algos/run/pipeline.hpp"
#include "algos/run/population.hpp"
#include "engine/cpu_time.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/limits.hpp"
#include "engine/rng.hpp"
#include "engine/thread_pool.hpp"
#include "privacy/noise_source.hpp"
#include "tools/cli.hpp"
#include "tools/mpi_sweep.hpp"

namespace dprl::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

algos::PopulationSpec load_population(const std::string& file) {
  const Node root = load_yaml_file(file);
  const Node* inner = root.is_map() ? root.find("population") : nullptr;
  return algos::parse_population(inner ? *inner : root, "population");
}

void report(const algos::PopulationSpec& spec, const algos::PopulationResult& r, double wall) {
  const double per_hour =
      r.trained > 0 && r.train_wall_s > 0 ? 3600.0 * r.trained / r.train_wall_s : 0.0;
  fmt::print("population {}: {} experts ({} training runs now, {:.1f} s; demonstrations {})\n",
             spec.name, r.experts, r.trained, r.train_wall_s,
             r.reused ? "reused" : fmt::format("collected in {:.1f} s", r.demos_wall_s));
  const auto train = read_params<algos::TrainParams>(spec.train_params, "population.ppo.train");
  const double steps = static_cast<double>(r.trained * train.steps);
  const double steps_per_s = r.train_wall_s > 0 ? steps / r.train_wall_s : 0.0;
  const double cpu_per_run = r.trained > 0 ? r.train_cpu_s / static_cast<double>(r.trained) : 0.0;
  const double steps_per_cpu_s = r.train_cpu_s > 0 ? steps / r.train_cpu_s : 0.0;
  if (r.trained > 0)
    fmt::print("training throughput: {:.0f} runs per hour, {:.0f} env steps per second (wall){}\n",
               per_hour, steps_per_s,
               r.train_cpu_s > 0 ? fmt::format("; {:.2f} CPU s per run, {:.0f} env steps per "
                                               "CPU second",
                                               cpu_per_run, steps_per_cpu_s)
                                 : std::string());
  fmt::print("experts: {}\ndataset: {}\n", r.manifest.string(), r.dataset.string());
  nlohmann::ordered_json t;
  t["wall_time_s"] = wall;
  t["train_wall_s"] = r.train_wall_s;
  t["train_cpu_s"] = r.train_cpu_s;
  t["runs_trained"] = r.trained;
  t["runs_per_hour"] = per_hour;
  t["env_steps_per_s"] = steps_per_s;
  t["cpu_s_per_run"] = cpu_per_run;
  t["env_steps_per_cpu_s"] = steps_per_cpu_s;
  t["demos_wall_s"] = r.demos_wall_s;
  write_file_atomic(spec.out / "timing.json", t.dump(2) + "\n");
}

struct PopOpts {
  std::string file;
  int jobs = 0;
  bool quiet = false;
};

void cmd_population(const PopOpts& o) {
  const int jobs = o.jobs > 0 ? o.jobs : hardware_threads();
  const auto start = Clock::now();
#ifdef DPRL_MPI
  if (launch_size() > 1) {
    MpiWorld world;
    std::optional<algos::PopulationSpec> spec;
    std::optional<algos::SweepPlan> plan;
    std::string error;
    try {
      spec = load_population(o.file);
      plan = algos::plan_population(*spec);
    } catch (const Error& e) {
      error = e.what();
    }
    bool root_ready = false, same_plan = false;
    if (!world.agree(plan.has_value(), plan ? plan_digest(*plan) : std::string(), root_ready,
                     same_plan)) {
      if (world.rank() == 0 && !plan) fmt::print(stderr, "dprl: {}\n", printable(error));
      if (world.rank() > 0 && root_ready && plan && !same_plan)
        fmt::print(stderr, "dprl: rank {}: the population plan differs from rank 0's\n",
                   world.rank());
      throw ExitStatus{2};
    }
    algos::SweepOptions so;
    so.jobs = jobs;
    so.quiet = o.quiet;
    const auto t0 = Clock::now();
    const auto result = run_sweep_mpi(world, *plan, so);
    if (!result) return;  // ranks > 0
    algos::PopulationOptions po{jobs, o.quiet};
    auto r = algos::finish_population(*spec, *plan, result->outcomes, po);
    r.train_wall_s = seconds_since(t0);
    report(*spec, r, seconds_since(start));
    return;
  }
#endif
  const auto spec = load_population(o.file);
  const auto r = algos::build_population(spec, {jobs, o.quiet});
  report(spec, r, seconds_since(start));
}

struct BenchOpts {
  int experts = 3000;
  int trajectories = 60000;
  int length = 200;
  int examined = 25;
  double epsilon1 = 7.5;
  std::string hidden = "64,64";
  std::string agreement = "identical";
  int jobs = 0;
  std::uint64_t seed = 1;
};

// DataRelease over synthetic data: m experts with random tanh networks (4 inputs, 2 actions);
// trajectories of `length` Gaussian states whose logged action is expert 0's greedy one, so with
// identical experts every expert agrees at every step (the longest prefixes: the worst case).
void cmd_bench_release(const BenchOpts& o) {
  const int jobs = o.jobs > 0 ? o.jobs : hardware_threads();
  const auto hidden = algos::parse_hidden_sizes(o.hidden, "--hidden");
  // what is allocated together, checked before any of it is: the experts' networks and the
  // synthetic trajectories (float32 states of 4, actions, rewards, two flags per step)
  std::vector<int> all{4};
  all.insert(all.end(), hidden.begin(), hidden.end());
  all.push_back(2);
  double params = 0;
  for (std::size_t i = 1; i < all.size(); ++i) params += (all[i - 1] + 1.0) * all[i];
  check_memory(fmt::format("--experts {} x --hidden {}", o.experts, o.hidden),
               2.0 * 4.0 * o.experts * params);
  check_memory(fmt::format("--trajectories {} x --length {}", o.trajectories, o.length),
               static_cast<double>(o.trajectories) * (o.length + 1.0) * (4 * 4 + 4 + 4 + 2));
  if (o.examined > o.trajectories)
    throw ParamError(fmt::format("--examined = {} must be at most --trajectories = {}", o.examined,
                                 o.trajectories));
  std::vector<int> sizes{4};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(2);
  auto t0 = Clock::now();
  std::vector<algos::NetExperts::Expert> experts(o.experts);
  for (int i = 0; i < o.experts; ++i) {
    experts[i].actor = nn::Mlp(nn::MlpShape(sizes, nn::Act::kTanh));
    const bool same = o.agreement == "identical";
    Rng r(derive_seed(o.seed, Domain::kBench, same ? 0 : static_cast<std::uint64_t>(i)));
    nn::init_orthogonal(experts[i].actor.shape(), experts[i].actor.data(), r, std::sqrt(2.0), 1.0);
  }
  algos::NetExperts first({experts[0]}, 2, 1);  // logs the actions (the panel's own path)
  algos::NetExperts panel(std::move(experts), 2, jobs);
  DatasetInfo info;
  info.dataset_id = "bench/release";
  info.observation_space = Space::box(4, -1e9, 1e9);
  info.action_space = Space::discrete(2);
  DatasetArrays a;
  const std::size_t n = static_cast<std::size_t>(o.trajectories), L = o.length;
  a.observations.resize(n * (L + 1) * 4);
  Rng rng(derive_seed(o.seed, Domain::kBench, 1ULL << 40));
  for (auto& x : a.observations) x = static_cast<float>(rng.normal());
  a.actions.resize(n * L);
  a.rewards.assign(n * L, 1.0f);
  a.terminations.assign(n * L, 0);
  a.truncations.assign(n * L, 0);
  std::vector<std::int32_t> g(L);
  for (std::size_t e = 0; e < n; ++e) {
    first.greedy(&a.observations[e * (L + 1) * 4], static_cast<int>(L), g);
    for (std::size_t t = 0; t < L; ++t) a.actions[e * L + t] = static_cast<float>(g[t]);
    a.truncations[e * L + L - 1] = 1;
    a.episode_starts.push_back((e + 1) * L);
    a.user_ids.push_back(static_cast<std::int64_t>(e % o.experts));
    a.seeds.push_back(-1);
  }
  const Dataset data = Dataset::from_arrays(info, std::move(a), "bench");
  const double gen_s = seconds_since(t0);
  algos::DataReleaseParams p;
  p.epsilon1 = o.epsilon1;
  p.delta1 = 0.9 / o.experts;
  p.trajectories = o.examined;
  p.max_length = o.length;
  auto noise = privacy::make_seeded_noise(o.seed, 3);
  t0 = Clock::now();
  const double cpu0 = process_cpu_seconds();
  const auto r = algos::data_release(data, panel, p, *noise);
  const double release_s = seconds_since(t0), release_cpu = process_cpu_seconds() - cpu0;
  t0 = Clock::now();
  const auto parts = algos::split_release(data, r.stable_length);
  const double split_s = seconds_since(t0);
  nlohmann::ordered_json j;
  j["experts"] = o.experts;
  j["trajectories"] = o.trajectories;
  j["length"] = o.length;
  j["hidden"] = o.hidden;
  j["agreement"] = o.agreement;
  j["examined"] = o.examined;
  j["jobs"] = jobs;
  j["queries"] = r.queries;
  j["stable_prefixes"] = r.stable_prefixes;
  j["stable_transitions"] = r.stable_transitions;
  j["rechecked_states"] = panel.rechecked();
  j["data_generation_s"] = gen_s;
  j["release_s"] = release_s;
  j["release_cpu_s"] = release_cpu;
  j["split_s"] = split_s;
  j["release_and_split_s"] = release_s + split_s;
  j["expert_state_evaluations_per_s"] =
      static_cast<double>(r.queries) * o.experts / std::max(release_s, 1e-9);
  j["unstable_transitions"] = parts.unstable.num_transitions();
  fmt::print("{}\n", j.dump(2));
}

struct PopBenchOpts {
  std::string file;
  int runs = 4;
  std::string dir;
};

// Trains `runs` of a population's runs, spread evenly over its plan, one after another in this
// thread, in a scratch directory (removed afterwards unless --dir names one), and projects the
// whole population's cost from their CPU time: the figures to quote for populations too large to
// train here (paper 000: 3000 to 6000 PPO runs per env).
void cmd_bench_population(const PopBenchOpts& o) {
  const auto spec = load_population(o.file);
  const algos::SweepPlan plan = algos::plan_population(spec);
  const std::size_t total = plan.runs.size();
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(o.runs), total);
  const fs::path dir = o.dir.empty() ? fs::temp_directory_path() /
                                           fmt::format("dprl_bench_population_{}", ::getpid())
                                     : fs::path(o.dir);
  std::vector<double> cpu, wall, ret;
  std::int64_t steps = 0;
  nlohmann::ordered_json runs = nlohmann::json::array();
  for (std::size_t k = 0; k < n; ++k) {
    algos::SweepRun run = plan.runs[k * total / n];
    run.out = dir / fmt::format("run{}", k);
    const double c0 = process_cpu_seconds();
    const algos::RunOutcome out = algos::execute_run(run, 0);
    const double c = process_cpu_seconds() - c0;
    if (out.status != algos::RunOutcome::Status::kDone)
      throw DataError(
          fmt::format("bench population: run {} ({}) failed: {}", run.index, run.label, out.error));
    const auto s = nlohmann::json::parse(out.summary);
    const std::int64_t st = s.at("env_steps").get<std::int64_t>();
    const double r = s.at("final_eval").at("return_mean").get<double>();
    steps += st;
    cpu.push_back(c);
    wall.push_back(out.wall_time_s);
    ret.push_back(r);
    nlohmann::ordered_json j;
    j["run"] = run.index;
    j["setting"] = run.label;
    j["env_steps"] = st;
    j["cpu_s"] = c;
    j["wall_s"] = out.wall_time_s;
    j["final_return"] = r;
    runs.push_back(j);
  }
  if (o.dir.empty()) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  auto mean = [](const std::vector<double>& v) {
    double t = 0;
    for (double x : v) t += x;
    return v.empty() ? 0.0 : t / static_cast<double>(v.size());
  };
  const double cpu_run = mean(cpu);
  nlohmann::ordered_json j;
  j["population"] = spec.name;
  j["env"] = spec.env_id;
  for (const auto& [k, v] : spec.algo_params)
    if (k == "hidden_sizes") j["hidden_sizes"] = v.text;
  j["env_steps_per_run"] = n > 0 ? steps / static_cast<std::int64_t>(n) : 0;
  j["runs_measured"] = n;
  j["runs"] = runs;
  j["cpu_s_per_run"] = cpu_run;
  j["wall_s_per_run"] = mean(wall);
  j["env_steps_per_cpu_s"] = cpu_run > 0 ? static_cast<double>(steps) / (cpu_run * n) : 0.0;
  j["runs_per_cpu_hour"] = cpu_run > 0 ? 3600.0 / cpu_run : 0.0;
  j["mean_final_return"] = mean(ret);
  j["population_runs"] = total;
  j["population_cpu_hours"] = cpu_run * static_cast<double>(total) / 3600.0;
  nlohmann::ordered_json proj;
  for (int r : {1, 2, 16, 64, 256})
    proj[std::to_string(r)] = cpu_run * static_cast<double>(total) / 3600.0 / r;
  j["projected_wall_hours_on_ranks"] = proj;
  fmt::print("{}\n", j.dump(2));
}

}  // namespace

RunSummary run_pipeline_command(const std::string& file, const algos::RunOptions& opts, int jobs) {
  algos::PipelineOptions po;
  po.jobs = jobs > 0 ? jobs : hardware_threads();
  po.progress = opts.progress;
  return algos::run_pipeline_file(file, opts, po);
}

void add_population_commands(CLI::App& app) {
  auto po = std::make_shared<PopOpts>();
  auto* pop = app.add_subcommand(
      "population",
      "train an expert population (paper 000) on local cores or MPI ranks, select, collect");
  pop->add_option("file", po->file, "population YAML (or a file with a population: section)")
      ->required();
  pop->add_option("--jobs", po->jobs, "parallel runs per process (default: all CPUs)")
      ->check(CLI::Range(1, 4096));
  pop->add_flag("--quiet", po->quiet, "no progress line and no per-run lines");
  pop->callback([po] { cmd_population(*po); });

  auto* bench = app.get_subcommand("bench");
  auto bo = std::make_shared<BenchOpts>();
  auto* br = bench->add_subcommand("data-release",
                                   "time DataRelease (paper 000 Alg. 2) on synthetic experts");
  br->add_option("--experts", bo->experts, "m")->check(CLI::Range(1, 1000000));
  br->add_option("--trajectories", bo->trajectories, "episodes")->check(CLI::Range(1, 10000000));
  br->add_option("--length", bo->length, "steps per episode (= L)")->check(CLI::Range(1, 100000));
  br->add_option("--examined", bo->examined, "T")->check(CLI::Range(1, 10000000));
  br->add_option("--epsilon1", bo->epsilon1, "release epsilon");
  br->add_option("--hidden", bo->hidden, "expert hidden widths, e.g. 512,256,64");
  br->add_option("--agreement", bo->agreement, "identical (worst case) or independent experts")
      ->check(CLI::IsMember({"identical", "independent"}));
  br->add_option("--jobs", bo->jobs, "threads (default: all CPUs)")->check(CLI::Range(1, 4096));
  br->add_option("--seed", bo->seed, "seed");
  br->callback([bo] { cmd_bench_release(*bo); });

  auto pb = std::make_shared<PopBenchOpts>();
  auto* bp = bench->add_subcommand(
      "population",
      "time a few runs of an expert population (paper 000) and project the whole population");
  bp->add_option("file", pb->file, "population YAML (or a file with a population: section)")
      ->required();
  bp->add_option("--runs", pb->runs, "runs to train, spread evenly over the plan (default 4)")
      ->check(CLI::Range(1, 1000000));
  bp->add_option("--dir", pb->dir, "keep the runs in this directory (default: a scratch one)");
  bp->callback([pb] { cmd_bench_population(*pb); });
}

}  // namespace dprl::cli
