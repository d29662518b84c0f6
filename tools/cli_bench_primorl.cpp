// `dprl bench primorl`: one DP-FedAvg round and one batched model rollout step (see
// algos/model_based/bench.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "algos/core/networks.hpp"
#include "algos/model_based/bench.hpp"
#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

// Every size, and the products of sizes that are allocated together, refused before anything
// is built: the ensemble's activations for a local batch and for the rollout states, and the
// round's trajectories.
void check_primorl_bench(const algos::model_based::PrimorlBenchConfig& c) {
  for (const auto& [flag, v] : {std::pair{"--obs", c.obs_dim}, std::pair{"--act", c.act_dim}})
    if (v < 1 || v > 65536) throw ParamError(fmt::format("{} = {} must be in [1, 65536]", flag, v));
  const std::string hidden = fmt::format("{}", fmt::join(c.hidden, ","));
  const double m = c.members;
  algos::parse_hidden_sizes(hidden, "--hidden", m * c.batch_size, "--members x --batch");
  algos::parse_hidden_sizes(hidden, "--hidden", m * c.rollout_batch, "--members x --rollout-batch");
  const double row = 4.0 * (2.0 * c.obs_dim + c.act_dim + 2.0);
  check_memory(fmt::format("--clients {} x --traj-len {}", c.clients, c.traj_len),
               static_cast<double>(c.clients) * c.traj_len * row);
}

}  // namespace

void add_primorl_bench(CLI::App& app) {
  auto* bench = app.get_subcommand("bench");
  auto* cmd = bench->add_subcommand(
      "primorl", "PriMORL: one DP-FedAvg round and one batched model rollout step (medians)");
  struct Opts {
    algos::model_based::PrimorlBenchConfig cfg;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--obs", o->cfg.obs_dim, "observation dim (default 3, Pendulum)");
  cmd->add_option("--act", o->cfg.act_dim, "action dim (default 1)");
  cmd->add_option("--hidden", o->cfg.hidden, "model hidden widths (default 64,64)")->delimiter(',');
  cmd->add_option("--members", o->cfg.members, "ensemble size (default 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--clients", o->cfg.clients, "trajectories per round, q K (default 30)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--traj-len", o->cfg.traj_len, "transitions per trajectory (default 200)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--batch", o->cfg.batch_size, "local batch size (default 16)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--clipping", o->cfg.clipping, "flat or per_layer (default per_layer)");
  cmd->add_option("--rollout-batch", o->cfg.rollout_batch, "rollout states (default 50000)")
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--penalty", o->cfg.penalty, "mpd, ma_std, ma_variance or none");
  cmd->add_option("--noise", o->cfg.noise,
                  "seeded (default) or os-entropy (the secure snapped release)")
      ->check(CLI::IsMember({"seeded", "os-entropy"}));
  cmd->add_option("--reps", o->cfg.reps, "repetitions (default 5)")->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] {
    check_primorl_bench(o->cfg);
    const auto r = algos::model_based::bench_primorl(o->cfg);
    const auto& c = o->cfg;
    if (o->json) {
      nlohmann::ordered_json j;
      j["members"] = c.members;
      j["hidden"] = c.hidden;
      j["clients"] = c.clients;
      j["traj_len"] = c.traj_len;
      j["batch"] = c.batch_size;
      j["params"] = r.params;
      j["local_steps"] = r.local_steps;
      j["noise"] = c.noise;
      j["round_ms"] = r.round_ms;
      j["rollout_batch"] = c.rollout_batch;
      j["rollout_step_ms"] = r.rollout_step_ms;
      fmt::print("{}\n", j.dump());
    } else {
      fmt::print(
          "ensemble {} x {}-{}-{} ({} floats): DP-FedAvg round of {} trajectories x {} steps "
          "({} local steps, batch {}, {}, {} noise): {:.2f} ms; rollout step of {} states ({}): "
          "{:.2f} ms\n",
          c.members, c.obs_dim + c.act_dim, fmt::join(c.hidden, "-"), 2 * (c.obs_dim + 1), r.params,
          c.clients, c.traj_len, r.local_steps, c.batch_size, c.clipping, c.noise, r.round_ms,
          c.rollout_batch, c.penalty, r.rollout_step_ms);
    }
  });
}

}  // namespace dprl::cli
