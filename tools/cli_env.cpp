// dprl envs | env replay | bench env | eval
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "algos/core/policies.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/limits.hpp"
#include "engine/nn/nn_timing.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "tools/cli.hpp"
#include "tools/cli_util.hpp"

namespace dprl::cli {
namespace {

using nlohmann::ordered_json;

ordered_json space_json(const Space& s) {
  ordered_json j;
  j["type"] = s.is_discrete() ? "Discrete" : "Box";
  j["repr"] = s.describe();
  if (s.is_discrete()) {
    j["n"] = s.n;
  } else {
    auto bound = [](double v) {
      return std::isfinite(v) ? ordered_json(v) : ordered_json(format_param(v));
    };
    ordered_json lo = ordered_json::array(), hi = ordered_json::array();
    for (double v : s.low) lo.push_back(bound(v));
    for (double v : s.high) hi.push_back(bound(v));
    j["shape"] = {s.low.size()};
    j["low"] = lo;
    j["high"] = hi;
  }
  return j;
}

void cmd_envs(bool json) {
  const auto& reg = envs::env_registry();
  ordered_json out = ordered_json::array();
  for (const auto& e : reg.entries()) {
    auto env = e.make({});
    const EnvSpec& spec = env->spec();
    ordered_json j;
    j["id"] = e.name;
    j["summary"] = e.summary;
    j["reference"] = e.reference;
    j["observation_space"] = space_json(spec.observation);
    j["action_space"] = space_json(spec.action);
    j["max_episode_steps"] = spec.max_episode_steps;
    j["action_mask"] = spec.has_action_mask;
    j["tabular_model"] = env->tabular_model() != nullptr;
    ordered_json params = ordered_json::array();
    for (const auto& p : e.describe())
      params.push_back({{"name", p.name},
                        {"type", p.type},
                        {"default", p.value},
                        {"range", p.range},
                        {"doc", p.doc}});
    j["params"] = params;
    ordered_json aliases = ordered_json::array();
    for (const auto& a : reg.aliases()) {
      if (a.target != e.name) continue;
      ordered_json preset = ordered_json::object();
      for (const auto& [k, v] : a.preset) preset[k] = v.text;
      aliases.push_back({{"name", a.name}, {"preset", preset}});
    }
    j["aliases"] = aliases;
    out.push_back(j);
  }
  if (json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& j : out) {
    std::vector<std::string> alias_names;
    for (const auto& a : j["aliases"]) alias_names.push_back(a["name"].get<std::string>());
    fmt::print("{}  ({})\n", j["id"].get<std::string>(), j["summary"].get<std::string>());
    if (!alias_names.empty()) fmt::print("  aliases: {}\n", fmt::join(alias_names, ", "));
    fmt::print("  observation: {}\n  action: {}\n  max_episode_steps: {}\n",
               j["observation_space"]["repr"].get<std::string>(),
               j["action_space"]["repr"].get<std::string>(), j["max_episode_steps"].get<int>());
    for (const auto& p : j["params"])
      fmt::print("    {:<22} {:<6} {:<10} {:<20} {}\n", p["name"].get<std::string>(),
                 p["type"].get<std::string>(), p["default"].get<std::string>(),
                 p["range"].get<std::string>(), p["doc"].get<std::string>());
  }
}

}  // namespace

std::string replay_case(const std::string& text, const std::string& file) {
  nlohmann::json c;
  try {
    c = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: invalid JSON: {}", file, e.what()));
  }
  if (!c.is_object()) throw DataError(fmt::format("{}: expected a JSON object", file));
  for (auto it = c.begin(); it != c.end(); ++it) {
    const auto& k = it.key();
    if (k != "env" && k != "params" && k != "state" && k != "actions" && k != "expected" &&
        k != "comment")
      throw DataError(
          fmt::format("{}: unknown key '{}'; valid: env, params, state, actions", file, k));
  }
  if (!c.contains("env") || !c["env"].is_string())
    throw DataError(fmt::format("{}: 'env' must be a string naming an env", file));
  ParamMap params;
  if (c.contains("params")) {
    if (!c["params"].is_object())
      throw DataError(fmt::format("{}: 'params' must be an object", file));
    for (auto it = c["params"].begin(); it != c["params"].end(); ++it) {
      const auto& v = it.value();
      std::string t = v.is_string() ? v.get<std::string>() : v.dump();
      params.push_back({it.key(), {t, file + ": params." + it.key()}});
    }
  }
  auto env = envs::make_env(c["env"].get<std::string>(), params);
  const EnvSpec& spec = env->spec();
  if (!c.contains("state") || !c["state"].is_array())
    throw DataError(fmt::format("{}: 'state' must be an array of numbers", file));
  std::vector<double> state;
  for (std::size_t i = 0; i < c["state"].size(); ++i) {
    const auto& v = c["state"][i];
    if (!v.is_number()) throw DataError(fmt::format("{}: state[{}] is not a number", file, i));
    state.push_back(v.get<double>());
  }
  if (!c.contains("actions") || !c["actions"].is_array())
    throw DataError(fmt::format("{}: 'actions' must be an array", file));
  // validate every action before stepping, so nothing is printed for a bad case
  const auto& acts = c["actions"];
  std::vector<std::int64_t> discrete;
  std::vector<std::vector<double>> continuous;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const auto& a = acts[i];
    if (spec.action.is_discrete()) {
      if (!a.is_number_integer() || !spec.action.contains(a.get<std::int64_t>()))
        throw InvalidAction(fmt::format("{}: actions[{}] = {} is not in {}", file, i, a.dump(),
                                        spec.action.describe()));
      discrete.push_back(a.get<std::int64_t>());
    } else {
      std::vector<double> v;
      if (a.is_number())
        v.push_back(a.get<double>());
      else if (a.is_array())
        for (const auto& x : a) v.push_back(x.is_number() ? x.get<double>() : NAN);
      if (v.size() != spec.action.dim())
        throw InvalidAction(fmt::format("{}: actions[{}] = {} must have {} numbers for {}", file, i,
                                        a.dump(), spec.action.dim(), spec.action.describe()));
      for (double x : v)
        if (!std::isfinite(x))
          throw InvalidAction(
              fmt::format("{}: actions[{}] = {} is not a finite number", file, i, a.dump()));
      continuous.push_back(std::move(v));
    }
  }
  std::vector<float> obs(spec.observation.dim());
  env->reset(0, obs);
  env->set_state(state);
  ordered_json steps = ordered_json::array();
  const std::size_t n = spec.action.is_discrete() ? discrete.size() : continuous.size();
  for (std::size_t i = 0; i < n; ++i) {
    const StepResult r = spec.action.is_discrete()
                             ? env->step(discrete[i], obs)
                             : env->step(std::span<const double>(continuous[i]), obs);
    ordered_json o = ordered_json::array();
    for (float x : obs) o.push_back(static_cast<double>(x));
    steps.push_back({{"obs", o},
                     {"reward", r.reward},
                     {"terminated", r.terminated},
                     {"truncated", r.truncated}});
    if (r.terminated || r.truncated) break;
  }
  ordered_json out;
  out["steps"] = steps;
  return out.dump();
}

namespace {

void cmd_replay(const std::string& file) { fmt::print("{}\n", replay_case(read_file(file), file)); }

void cmd_bench_env(const std::string& id, const std::vector<std::string>& param_flags,
                   std::int64_t steps, bool json) {
  auto env = envs::make_env(id, parse_param_flags(param_flags, "--param"));
  const EnvSpec& spec = env->spec();
  std::vector<float> obs(spec.observation.dim());
  std::vector<double> act(spec.action.is_discrete() ? 0 : spec.action.dim());
  Rng rng(derive_seed(0, Domain::kBench, 0));
  std::uint64_t episode = 0;
  env->reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  const auto n = static_cast<std::uint64_t>(spec.action.n);
  double checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < steps; ++i) {
    StepResult r;
    if (spec.action.is_discrete()) {
      r = env->step(static_cast<std::int64_t>(rng.below(n)), obs);
    } else {
      for (std::size_t k = 0; k < act.size(); ++k)
        act[k] = rng.uniform(spec.action.low[k], spec.action.high[k]);
      r = env->step(std::span<const double>(act), obs);
    }
    checksum += r.reward;
    if (r.terminated || r.truncated)
      env->reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double ns = secs * 1e9 / static_cast<double>(steps);
  if (json) {
    ordered_json j;
    j["env"] = id;
    j["steps"] = steps;
    j["episodes"] = episode;
    j["ns_per_step"] = ns;
    j["steps_per_s"] = static_cast<double>(steps) / secs;
    j["reward_sum"] = checksum;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{}: {} steps ({} episodes) in {:.3f} s: {:.1f} ns/step, {:.3g} steps/s\n", id,
               steps, episode, secs, ns, static_cast<double>(steps) / secs);
  }
}

void cmd_bench_nn(const std::vector<int>& layers, int batch, bool json) {
  if (layers.size() < 2)
    throw ParamError("--layers: need at least an input and an output size, e.g. 4,256,256,2");
  for (int n : layers)
    if (n < 1 || n > 65536)
      throw ParamError(fmt::format("--layers: size {} must be in [1, 65536]", n));
  // products of valid sizes: the weights between layers (the hidden-width limit of every
  // learner) and one batch's activations, refused before anything is allocated
  double weights = 0, width = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    width += layers[i];
    if (i > 0) weights += static_cast<double>(layers[i - 1]) * layers[i];
  }
  if (weights > kMaxHiddenWeights)
    throw ParamError(fmt::format("--layers {}: {:g} weights; at most {:g}", fmt::join(layers, ","),
                                 weights, kMaxHiddenWeights));
  check_memory(fmt::format("--batch {} x --layers {}", batch, fmt::join(layers, ",")),
               4.0 * 4.0 * batch * width);
  const auto t = nn::measure_step_times(layers, batch);
  if (json) {
    ordered_json j;
    j["layers"] = layers;
    j["batch"] = batch;
    j["adam_step_us"] = t.adam_step_us;
    j["dpsgd_step_us"] = t.dpsgd_step_us;
    j["dpsgd_over_adam"] = t.dpsgd_step_us / t.adam_step_us;
    j["forward1_us"] = t.forward1_us;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "MLP {} batch {}: Adam step {:.1f} us, DP-SGD step {:.1f} us ({:.2f}x), batch-1 "
        "forward {:.2f} us\n",
        fmt::join(layers, "-"), batch, t.adam_step_us, t.dpsgd_step_us,
        t.dpsgd_step_us / t.adam_step_us, t.forward1_us);
  }
}

void cmd_eval(const std::string& id, const std::vector<std::string>& param_flags,
              const std::string& policy_name, int episodes, std::uint64_t seed, bool json,
              const std::string& render, double fps) {
  auto env = envs::make_env(id, parse_param_flags(param_flags, "--param"));
  // --render: the evaluated episodes, whole, drawn as dprl render draws them (checked first)
  std::optional<EpisodeRecording> rec;
  if (!render.empty()) {
    const std::int64_t limit = env->spec().max_episode_steps;
    if (limit <= 0)
      throw ParamError(fmt::format("--render: {} has no time limit, so an episode's frames are "
                                   "unbounded; use dprl render --max-steps",
                                   id));
    rec.emplace(*env, id, episodes, limit, fps, render, "the time limit");
  }
  auto policy = algos::make_policy(policy_name, *env);
  const EvalStats s = evaluate(*env, *policy, episodes, seed, 0, rec ? &rec->observer() : nullptr);
  if (json) {
    ordered_json j;
    j["env"] = id;
    j["policy"] = policy_name;
    j["episodes"] = s.episodes;
    j["seed"] = seed;
    j["return_mean"] = s.return_mean;
    j["return_std"] = s.return_std;
    j["return_min"] = s.return_min;
    j["return_max"] = s.return_max;
    j["length_mean"] = s.length_mean;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "{} on {}: {} episodes, return mean {:.4f} std {:.4f} min {:.4f} max {:.4f}, "
        "length {:.1f}\n",
        policy_name, id, s.episodes, s.return_mean, s.return_std, s.return_min, s.return_max,
        s.length_mean);
  }
  if (rec) rec->write(fmt::format("{} on {}, seed {}", policy_name, id, seed), !json);
}

}  // namespace

void add_env_commands(CLI::App& app) {
  auto* envs_cmd = app.add_subcommand("envs", "list every environment with spaces and parameters");
  auto envs_json = std::make_shared<bool>(false);
  envs_cmd->add_flag("--json", *envs_json, "print JSON");
  envs_cmd->callback([envs_json] { cmd_envs(*envs_json); });

  auto* env_cmd = app.add_subcommand("env", "environment tools");
  env_cmd->require_subcommand(1);
  auto* replay = env_cmd->add_subcommand("replay", "replay actions from a state (CASE.json)");
  auto replay_file = std::make_shared<std::string>();
  replay->add_option("case", *replay_file, "CASE.json")->required();
  replay->callback([replay_file] { cmd_replay(*replay_file); });

  auto* bench = app.add_subcommand("bench", "benchmarks");
  bench->require_subcommand(1);
  auto* bench_env = bench->add_subcommand("env", "single-thread env step throughput");
  struct BenchOpts {
    std::string id;
    std::vector<std::string> params;
    std::int64_t steps = 1000000;
    bool json = false;
  };
  auto bo = std::make_shared<BenchOpts>();
  bench_env->add_option("id", bo->id, "env id")->required();
  bench_env->add_option("--steps", bo->steps, "steps to time (default 1000000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  bench_env->add_option("--param", bo->params, "env parameter k=v (repeatable)");
  bench_env->add_flag("--json", bo->json, "print JSON");
  bench_env->callback([bo] { cmd_bench_env(bo->id, bo->params, bo->steps, bo->json); });

  struct NnOpts {
    std::vector<int> layers = {4, 256, 256, 2};
    int batch = 256;
    bool json = false;
  };
  auto no = std::make_shared<NnOpts>();
  auto* bench_nn = bench->add_subcommand("nn", "MLP Adam, DP-SGD and acting step times (medians)");
  bench_nn->add_option("--layers", no->layers, "layer sizes (default 4 256 256 2)")->delimiter(',');
  bench_nn->add_option("--batch", no->batch, "batch size (default 256)")
      ->check(CLI::Range(1, 1 << 20));
  bench_nn->add_flag("--json", no->json, "print JSON");
  bench_nn->callback([no] { cmd_bench_nn(no->layers, no->batch, no->json); });

  auto* eval = app.add_subcommand("eval", "evaluate a policy over seeded episodes");
  struct EvalOpts {
    std::string env, policy;
    std::vector<std::string> params;
    int episodes = 100;
    std::uint64_t seed = 0;
    bool json = false;
    std::string render;
    double fps = 30;
  };
  auto eo = std::make_shared<EvalOpts>();
  eval->add_option("--env", eo->env, "env id")->required();
  eval->add_option("--param", eo->params, "env parameter k=v (repeatable)");
  eval->add_option("--policy", eo->policy, "built-in policy name or checkpoint file")->required();
  eval->add_option("--episodes", eo->episodes, "episodes (default 100)")
      ->check(CLI::Range(1, 100000000));
  eval->add_option("--seed", eo->seed, "seed (default 0)")->check(CLI::NonNegativeNumber);
  eval->add_flag("--json", eo->json, "print JSON");
  eval->add_option("--render", eo->render,
                   "also draw the evaluated episodes as one animated SVG file, or as PNG frames "
                   "or a GIF when it ends in .png or .gif (docs/render.md)");
  eval->add_option("--fps", eo->fps, "with --render: frames per second in [1, 240] (default 30)");
  eval->callback([eo] {
    cmd_eval(eo->env, eo->params, eo->policy, eo->episodes, eo->seed, eo->json, eo->render,
             eo->fps);
  });
}

}  // namespace dprl::cli
