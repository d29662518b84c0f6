// `dprl collect` and `dprl dataset info|validate|merge`.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algos/core/collect.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "tools/cli.hpp"
#include "tools/cli_dataset_report.hpp"
#include "tools/cli_util.hpp"

namespace dprl::cli {
namespace {

struct CollectOpts {
  std::string env, policy, out, dataset_id;
  std::vector<std::string> params;
  std::int64_t episodes = 1;
  std::uint64_t seed = 0;
  std::int64_t user_id = 0;
  double action_floor = 0;
  double action_noise = 0;
  bool overwrite = false;
  bool json = false;
};

// Writes data as the Minari folder `out`, then prints its JSON summary (json) or line(summary).
template <class Line>
void write_dataset(const Dataset& data, const std::string& out, bool overwrite, bool json,
                   Line line) {
  SaveOptions so;
  so.overwrite = overwrite;
  save_minari(data, out, so);
  const DatasetSummary s = summarize(data);
  if (json) {
    nlohmann::ordered_json j = summary_json(data, s);
    j["out"] = out;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}\n", line(s));
  }
}

void cmd_collect(const CollectOpts& o) {
  algos::CollectParams p;
  p.episodes = o.episodes;
  p.seed = o.seed;
  p.user_id = o.user_id;
  p.action_floor = o.action_floor;
  p.action_noise = o.action_noise;
  p.dataset_id = o.dataset_id;
  const Dataset data = algos::collect(o.env, parse_param_flags(o.params, "--param"), o.policy, p);
  write_dataset(data, o.out, o.overwrite, o.json, [&](const DatasetSummary& s) {
    return fmt::format(
        "{}: {} episodes, {} transitions, return mean {:.4f} min {:.4f} max {:.4f} -> {}",
        data.info().dataset_id, data.num_episodes(), data.num_transitions(), s.return_mean,
        s.return_min, s.return_max, o.out);
  });
}

struct DatasetOpts {
  std::string path, format = "auto", env, user_key;
  std::vector<std::string> params;
  bool json = false;
};

Dataset load(const DatasetOpts& o) {
  LoadOptions opt;
  opt.format = parse_dataset_format(o.format);
  opt.d4rl.user_id_key = o.user_key;
  return load_dataset(o.path, opt);
}

void cmd_info(const DatasetOpts& o) {
  const Dataset data = load(o);
  const DatasetSummary s = summarize(data);
  if (o.json) {
    nlohmann::ordered_json j = summary_json(data, s);
    j["path"] = o.path;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}", summary_text(data, s, o.path));
  }
}

void cmd_validate(const DatasetOpts& o) {
  const Dataset data = load(o);
  validate_dataset(data, o.path, o.env, parse_param_flags(o.params, "--param"));
  fmt::print("{}: valid ({} episodes, {} transitions, {} users{})\n", o.path, data.num_episodes(),
             data.num_transitions(), data.users().size(),
             o.env.empty() ? "" : ", spaces match " + o.env);
}

struct MergeOpts {
  std::vector<std::string> inputs;
  std::string out, users = "offset", dataset_id;
  bool overwrite = false;
  bool json = false;
};

void cmd_merge(const MergeOpts& o) {
  const MergeUsers users = parse_merge_users(o.users, "--users");
  std::vector<Dataset> parts;
  parts.reserve(o.inputs.size());
  for (const auto& in : o.inputs) parts.push_back(load_dataset(in));
  const Dataset data = merge_datasets(parts, o.inputs, users, o.dataset_id);
  parts.clear();
  write_dataset(data, o.out, o.overwrite, o.json, [&](const DatasetSummary& s) {
    return fmt::format("{}: {} datasets, {} episodes, {} transitions, {} users -> {}",
                       data.info().dataset_id, o.inputs.size(), data.num_episodes(),
                       data.num_transitions(), s.users, o.out);
  });
}

void add_dataset_opts(CLI::App* cmd, const std::shared_ptr<DatasetOpts>& o) {
  cmd->add_option("path", o->path, "Minari dataset folder or D4RL .hdf5 file")->required();
  cmd->add_option("--format", o->format, "minari, d4rl or auto (default: from the path)");
  cmd->add_option("--user-key", o->user_key,
                  "D4RL: per-row dataset of user ids (default: one user per episode)");
}

}  // namespace

void add_dataset_bench_command(CLI::App& app);  // tools/cli_dataset_bench.cpp

void add_dataset_commands(CLI::App& app) {
  add_dataset_bench_command(app);
  auto* collect = app.add_subcommand("collect", "run a policy and write a Minari dataset folder");
  auto co = std::make_shared<CollectOpts>();
  collect->add_option("--env", co->env, "env id")->required();
  collect->add_option("--param", co->params, "env parameter k=v (repeatable)");
  collect->add_option("--policy", co->policy, "built-in policy name or policy file")->required();
  collect->add_option("--episodes", co->episodes, "episodes (default 1)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000000}));
  collect->add_option("--seed", co->seed, "root seed (default 0)")->check(CLI::NonNegativeNumber);
  collect->add_option("--out", co->out, "dataset folder to write")->required();
  collect->add_option("--user-id", co->user_id, "privacy unit of every episode (default 0)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 62));
  collect->add_option("--action-floor", co->action_floor,
                      "discrete: every action gets probability >= P, P in [0, 1/|A|)");
  collect->add_option("--action-noise", co->action_noise,
                      "continuous: Gaussian noise std added to actions (then clipped)");
  collect->add_option("--dataset-id", co->dataset_id,
                      "Minari dataset id (default dprl/<env>/<policy>-v0)");
  collect->add_flag("--overwrite", co->overwrite, "replace an existing dataset folder");
  collect->add_flag("--json", co->json, "print a JSON summary");
  collect->callback([co] { cmd_collect(*co); });

  auto* dataset = app.add_subcommand("dataset", "dataset tools");
  dataset->require_subcommand(1);
  auto* info = dataset->add_subcommand("info", "counts, users, spaces, returns and lengths");
  auto io = std::make_shared<DatasetOpts>();
  add_dataset_opts(info, io);
  info->add_flag("--json", io->json, "print JSON");
  info->callback([io] { cmd_info(*io); });

  auto* validate = dataset->add_subcommand(
      "validate", "check shapes, finite values, actions and observations inside their spaces");
  auto vo = std::make_shared<DatasetOpts>();
  add_dataset_opts(validate, vo);
  validate->add_option("--env", vo->env, "also require the spaces of this env (id)");
  validate->add_option("--param", vo->params, "env parameter k=v for --env (repeatable)");
  validate->callback([vo] { cmd_validate(*vo); });

  auto* merge = dataset->add_subcommand(
      "merge", "concatenate datasets of one env into one Minari folder (e.g. medium + expert)");
  auto mo = std::make_shared<MergeOpts>();
  merge->add_option("inputs", mo->inputs, "Minari folders or D4RL .hdf5 files, in order")
      ->required();
  merge->add_option("--out", mo->out, "dataset folder to write")->required();
  merge->add_option("--users", mo->users,
                    "privacy units: offset (each input's users stay distinct, default), keep "
                    "(equal ids are one user) or episode (one user per episode)");
  merge->add_option("--dataset-id", mo->dataset_id, "Minari dataset id (default: the first's)");
  merge->add_flag("--overwrite", mo->overwrite, "replace an existing dataset folder");
  merge->add_flag("--json", mo->json, "print a JSON summary");
  merge->callback([mo] { cmd_merge(*mo); });
}

}  // namespace dprl::cli
