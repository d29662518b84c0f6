// `dprl bench dataset`: write a synthetic CartPole-shaped dataset, then time loading it.
//
// The data has CartPole's spaces (Box(4) float32 observations, Discrete(2) actions), episodes of
// --episode-length steps (the last one shorter), one user per --episodes-per-user episodes.
// Reported: the median wall time of --repeat full loads (load_dataset: read and validate), the
// arrays' bytes against the raw float32/uint8 payload, and the process's peak resident memory
// (which includes the generated copy; run `/usr/bin/time -v dprl dataset info DIR` for a cold
// load alone).
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/limits.hpp"
#include "engine/rng.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

struct BenchDatasetOpts {
  std::int64_t transitions = 10000000;
  std::int64_t episode_length = 200;
  std::int64_t episodes_per_user = 20;
  int repeat = 5;
  std::string dir;
  bool keep = false;
  bool overwrite = false;
  bool json = false;
};

Dataset synthetic(const BenchDatasetOpts& o) {
  DatasetInfo info;
  info.dataset_id = "dprl/bench/cartpole-synthetic-v0";
  info.env_id = "cartpole";
  info.observation_space =
      Space::box({-4.8, -INFINITY, -0.41887903, -INFINITY}, {4.8, INFINITY, 0.41887903, INFINITY});
  info.action_space = Space::discrete(2);
  Dataset d(info);
  const auto n = static_cast<std::size_t>(o.transitions);
  const auto len = static_cast<std::size_t>(o.episode_length);
  d.reserve((n + len - 1) / len, n);
  Rng rng(derive_seed(0, Domain::kBench, 1));
  std::vector<float> obs, act, rew;
  std::vector<std::uint8_t> term, trunc;
  for (std::size_t done = 0, e = 0; done < n; ++e) {
    const std::size_t t = std::min(len, n - done);
    obs.resize((t + 1) * 4);
    for (auto& v : obs) v = static_cast<float>(rng.uniform(-0.2, 0.2));
    act.resize(t);
    for (auto& v : act) v = static_cast<float>(rng.below(2));
    rew.assign(t, 1.0f);
    term.assign(t, 0);
    trunc.assign(t, 0);
    trunc.back() = 1;
    d.add_episode(obs, act, rew, term, trunc,
                  static_cast<std::int64_t>(e / static_cast<std::size_t>(o.episodes_per_user)),
                  static_cast<std::int64_t>(e));
    done += t;
  }
  return d;
}

void cmd_bench_dataset(const BenchDatasetOpts& o) {
  namespace fs = std::filesystem;
  const fs::path dir =
      o.dir.empty() ? fs::temp_directory_path() / fmt::format("dprl_bench_dataset_{}", ::getpid())
                    : fs::path(o.dir);
  // the generated copy and the loaded one are in memory at once: float32 observations (one row
  // per step plus one per episode), actions and rewards, two flag bytes, per step
  const double episodes =
      std::ceil(static_cast<double>(o.transitions) / static_cast<double>(o.episode_length));
  const double need = 2.0 * ((static_cast<double>(o.transitions) + episodes) * 4 * 4 +
                             static_cast<double>(o.transitions) * (2 * 4 + 2));
  check_memory(fmt::format("--transitions {}", o.transitions), need);
  // a folder given by --dir is never replaced without --overwrite (it may hold someone's data),
  // and never one that is not a dataset folder; it is checked before any work
  std::error_code ec;
  const bool given_exists = !o.dir.empty() && fs::exists(dir, ec);
  if (given_exists) {
    if (!o.overwrite)
      throw DataError(fmt::format(
          "--dir {}: exists; the benchmark would replace it with synthetic data (remove it, pick "
          "another folder, or pass --overwrite)",
          dir.string()));
    if (!replaceable_dataset_folder(dir))
      throw DataError(fmt::format(
          "--dir {}: exists and is not a Minari dataset folder (not replaced, even with "
          "--overwrite)",
          dir.string()));
  } else if (!o.dir.empty()) {
    if (const std::string problem = dir_problem(dir); !problem.empty())
      throw DataError(fmt::format("--dir {}: {}", dir.string(), problem));
  }
  const Dataset d = synthetic(o);
  const auto w0 = std::chrono::steady_clock::now();
  save_minari(d, dir, {.overwrite = true});
  const double write_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::vector<double> times;
  std::size_t bytes = 0, capacity = 0;
  for (int r = 0; r < o.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const Dataset back = load_dataset(dir);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (back.num_transitions() != d.num_transitions())
      throw DataError(fmt::format("{}: read back {} transitions, wrote {}", dir.string(),
                                  back.num_transitions(), d.num_transitions()));
    bytes = back.payload_bytes();
    capacity = back.memory_bytes();
  }
  const double file_mib =
      static_cast<double>(fs::file_size(dir / "data" / "main_data.hdf5")) / (1 << 20);
  if (!o.keep && !given_exists) fs::remove_all(dir);  // only a folder this command created
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  // raw payload: float32 observations (T + E rows), actions and rewards, uint8 flags
  const std::size_t n = d.num_transitions(), e = d.num_episodes();
  const std::size_t raw = (n + e) * 4 * sizeof(float) + n * (2 * sizeof(float) + 2);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  if (o.json) {
    nlohmann::ordered_json j;
    j["transitions"] = n;
    j["episodes"] = e;
    j["load_s_median"] = median;
    j["load_s_min"] = times.front();
    j["write_s"] = write_s;
    j["file_mib"] = file_mib;
    j["payload_bytes"] = bytes;
    j["memory_bytes"] = capacity;
    j["raw_bytes"] = raw;
    j["memory_over_raw"] = static_cast<double>(capacity) / static_cast<double>(raw);
    j["peak_rss_mib"] = peak_mib;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "{} transitions in {} episodes: load median {:.3f} s (min {:.3f}, {} runs), write "
        "{:.3f} s, file {:.1f} MiB; memory {:.1f} MiB = {:.4f}x the raw payload; peak RSS "
        "{:.0f} MiB\n",
        n, e, median, times.front(), o.repeat, write_s, file_mib,
        static_cast<double>(capacity) / (1 << 20),
        static_cast<double>(capacity) / static_cast<double>(raw), peak_mib);
  }
}

}  // namespace

void add_dataset_bench_command(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto* cmd = bench->add_subcommand("dataset", "write then load a synthetic CartPole dataset");
  auto o = std::make_shared<BenchDatasetOpts>();
  cmd->add_option("--transitions", o->transitions, "transitions (default 10000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 34));
  cmd->add_option("--episode-length", o->episode_length, "steps per episode (default 200)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  cmd->add_option("--episodes-per-user", o->episodes_per_user, "episodes per user (default 20)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  cmd->add_option("--repeat", o->repeat, "loads to time (default 5)")->check(CLI::Range(1, 1000));
  cmd->add_option("--dir", o->dir, "dataset folder (default: a temporary one, removed)");
  cmd->add_flag("--keep", o->keep, "keep the dataset folder");
  cmd->add_flag("--overwrite", o->overwrite,
                "replace an existing dataset folder given by --dir (never another folder)");
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] { cmd_bench_dataset(*o); });
}

}  // namespace dprl::cli
