// Population files and the training plan (see population.hpp).
#include "algos/run/population.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "algos/core/algorithm.hpp"
#include "algos/run/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/limits.hpp"
#include "engine/rng.hpp"
#include "engine/sha256.hpp"
#include "envs/register_envs.hpp"
#include "algos/run/sweep.hpp"

namespace dprl::algos {
namespace {

// training runs of one population (the variants grid times runs_per_setting), as a sweep's runs
constexpr long long kMaxPopulationRuns = 1000000;

std::vector<std::string> split_plus(const std::string& key) {
  std::vector<std::string> out;
  std::size_t a = 0;
  for (std::size_t b; (b = key.find('+', a)) != std::string::npos; a = b + 1)
    out.push_back(key.substr(a, b - a));
  out.push_back(key.substr(a));
  return out;
}

ParamMap param_section(const Node* n, const std::string& what) {
  return n ? n->to_param_map(what) : ParamMap{};
}

void read_ppo(const Node& node, PopulationSpec& s) {
  const Node& ppo = node.expect_map("population.ppo");
  ppo.check_keys({"algo", "params", "train"}, "population.ppo");
  if (const Node* a = ppo.find("algo")) s.algo = a->as_string("population.ppo.algo");
  s.algo_params = param_section(ppo.find("params"), "population.ppo.params");
  s.train_params = param_section(ppo.find("train"), "population.ppo.train");
  read_params<TrainParams>(s.train_params, "population.ppo.train");  // validates
}

void read_select(const Node& node, PopulationSpec& s) {
  const Node& sel = node.expect_map("population.select");
  sel.check_keys({"rule", "k", "extra"}, "population.select");
  if (const Node* r = sel.find("rule")) s.rule = r->as_string("population.select.rule");
  if (s.rule != "top_k" && s.rule != "hiv")
    throw ConfigError(fmt::format("{}: population.select.rule must be top_k or hiv, not '{}'",
                                  sel.find("rule")->where(), s.rule));
  if (const Node* k = sel.find("k")) {
    const auto v = k->as_int("population.select.k");
    if (v < 1 || v > kMaxPopulationRuns)  // checked before the narrowing to int
      throw ParamError(fmt::format("{}: population.select.k = {} must be in [1, {}]", k->where(), v,
                                   kMaxPopulationRuns));
    s.k = static_cast<int>(v);
  }
  if (const Node* e = sel.find("extra")) s.extra = e->as_int("population.select.extra");
}

void check_spec(const PopulationSpec& s, const Node& where) {
  auto fail = [&](const std::string& msg) {
    throw ParamError(fmt::format("{}: {}", where.where(), msg));
  };
  if (s.runs_per_setting < 1) fail("population.runs_per_setting must be >= 1");
  if (s.rule == "top_k" && (s.k < 1 || s.k > s.runs_per_setting))
    fail(fmt::format("population.select.k = {} must be in [1, runs_per_setting = {}]", s.k,
                     s.runs_per_setting));
  if (s.rule == "hiv" &&
      (s.runs_per_setting < 2 || s.extra < 0 || s.extra > static_cast<std::int64_t>(s.settings())))
    fail(
        fmt::format("population.select: rule hiv needs runs_per_setting >= 2 and extra in [0, "
                    "settings = {}]",
                    s.settings()));
  if (s.episodes < 1) fail("population.demos.episodes must be >= 1");
  if (s.max_steps < 1) fail("population.demos.max_steps must be >= 1");
  // an out: that cannot be created is refused before any run, not once per run
  if (const std::string problem = dir_problem(s.out); !problem.empty())
    fail(fmt::format("population.out = '{}': {}", s.out.string(), problem));
  // the default env: discrete actions, a valid floor, a settable episode cap
  const auto env = envs::make_env(s.env_id, s.env_params);
  const Space& a = env->spec().action;
  if (!a.is_discrete())
    fail(
        fmt::format("population.env: '{}' has continuous actions ({}); expert-level release "
                    "needs a discrete action space",
                    s.env_id, a.describe()));
  if (!(s.action_floor > 0.0 && s.action_floor < 1.0 / static_cast<double>(a.n)))
    fail(fmt::format("population.action_floor = {} must be in (0, 1/|A|) = (0, {:.6g})",
                     s.action_floor, 1.0 / static_cast<double>(a.n)));
  ParamMap demo = s.env_params;
  param_map_set(demo, "max_episode_steps", {std::to_string(s.max_steps), "population.demos"});
  envs::make_env(s.env_id, demo);
  // the demonstrations are one dataset in memory: experts x episodes x max_steps transitions of
  // float32 observations (twice, with the successor) and actions
  const double steps = static_cast<double>(s.experts()) * static_cast<double>(s.episodes) *
                       static_cast<double>(s.max_steps);
  const double row = 4.0 * (2.0 * static_cast<double>(env->spec().observation.dim()) +
                            static_cast<double>(a.dim()) + 2.0);
  check_memory(fmt::format("{}: population.demos: {} experts x {} episodes x {} steps",
                           where.where(), s.experts(), s.episodes, s.max_steps),
               steps * row);
}

std::string canonical(const PopulationSpec& s) {
  std::string t = fmt::format("name={}\nseed={}\nenv={}\n", s.name, s.seed, s.env_id);
  for (const auto& [k, v] : s.env_params) t += fmt::format("env.{}={}\n", k, v.text);
  for (const auto& [k, v] : s.variant_params) t += fmt::format("variant.{}={}\n", k, v.text);
  for (std::size_t i = 0; i < s.grid_keys.size(); ++i)
    t += fmt::format("grid.{}={}\n", s.grid_keys[i], fmt::join(s.grid_values[i], ","));
  t += fmt::format("runs={}\nalgo={}\n", s.runs_per_setting, s.algo);
  for (const auto& [k, v] : s.algo_params) t += fmt::format("algo.{}={}\n", k, v.text);
  for (const auto& [k, v] : s.train_params) t += fmt::format("train.{}={}\n", k, v.text);
  t += fmt::format("select={},{},{}\nfloor={}\ndemos={},{}\n", s.rule, s.k, s.extra,
                   format_param(s.action_floor), s.episodes, s.max_steps);
  return t;
}

}  // namespace

std::size_t PopulationSpec::settings() const {
  std::size_t n = 1;
  for (const auto& v : grid_values) n *= v.size();
  return n;
}

std::int64_t PopulationSpec::experts() const {
  const auto n = static_cast<std::int64_t>(settings());
  return rule == "hiv" ? n + extra : n * k;
}

std::vector<std::string> parse_grid_values(const Node& node, const std::string& key) {
  const std::string what = "population.variants.grid." + key;
  std::vector<std::string> out;
  if (node.is_seq()) {
    for (const auto& e : node.elements()) out.push_back(e.as_string(what));
  } else {
    static const std::regex re(
        R"(\s*linspace\(\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*,\s*([0-9]+)\s*\)\s*)");
    std::smatch m;
    const std::string text = node.as_string(what);
    if (!std::regex_match(text, m, re))
      throw ConfigError(
          fmt::format("{}: {} must be a list of values or linspace(a, b, n), not "
                      "'{}'",
                      node.where(), what, text));
    // parsed without exceptions of the standard library: "1e999" or a 20-digit n are refused
    // by name, not reported as std::out_of_range
    const double a = std::strtod(m[1].str().c_str(), nullptr);
    const double b = std::strtod(m[2].str().c_str(), nullptr);
    const std::string ns = m[3].str();
    const long long n = ns.size() > 9 ? kMaxPopulationRuns + 1 : std::stoll(ns);
    if (n < 1 || n > kMaxPopulationRuns || !std::isfinite(a) || !std::isfinite(b))
      throw ConfigError(fmt::format("{}: {}: linspace needs finite ends and n in [1, {}], not '{}'",
                                    node.where(), what, kMaxPopulationRuns, text));
    // numpy.linspace: a + i step with step = (b - a) / (n - 1), the last value exactly b
    const double step = n > 1 ? (b - a) / (n - 1) : 0.0;
    for (int i = 0; i < n; ++i) out.push_back(format_param(n > 1 && i + 1 == n ? b : a + i * step));
  }
  if (out.empty()) throw ConfigError(fmt::format("{}: {} has no values", node.where(), what));
  return out;
}

PopulationSpec parse_population(const Node& node, std::string_view what) {
  const Node& top = node.expect_map(what);
  top.check_keys({"name", "seed", "out", "env", "variants", "runs_per_setting", "ppo", "select",
                  "action_floor", "demos"},
                 what);
  PopulationSpec s;
  auto need = [&](const char* key) -> const Node& {
    const Node* n = top.find(key);
    if (!n) throw ConfigError(fmt::format("{}: missing key '{}' in {}", top.where(), key, what));
    return *n;
  };
  s.name = need("name").as_string("population.name");
  const auto seed = need("seed").as_int("population.seed");
  if (seed < 0) throw ConfigError(fmt::format("{}: population.seed must be >= 0", top.where()));
  s.seed = static_cast<std::uint64_t>(seed);
  s.out = need("out").as_string("population.out");
  const Node& env = need("env").expect_map("population.env");
  env.check_keys({"id", "params"}, "population.env");
  if (!env.find("id"))
    throw ConfigError(fmt::format("{}: missing key 'id' in population.env", env.where()));
  s.env_id = env.find("id")->as_string("population.env.id");
  s.env_params = param_section(env.find("params"), "population.env.params");
  if (const Node* v = top.find("variants")) {
    const Node& vm = v->expect_map("population.variants");
    vm.check_keys({"params", "grid"}, "population.variants");
    s.variant_params = param_section(vm.find("params"), "population.variants.params");
    if (const Node* g = vm.find("grid"))
      for (const auto& [k, val] : g->expect_map("population.variants.grid").items()) {
        s.grid_keys.push_back(k);
        s.grid_values.push_back(parse_grid_values(val, k));
      }
  }
  if (const Node* r = top.find("runs_per_setting")) {
    const auto v = r->as_int("population.runs_per_setting");
    if (v < 1 || v > kMaxPopulationRuns)  // checked before the narrowing to int
      throw ParamError(fmt::format("{}: population.runs_per_setting = {} must be in [1, {}]",
                                   r->where(), v, kMaxPopulationRuns));
    s.runs_per_setting = static_cast<int>(v);
  }
  read_ppo(need("ppo"), s);
  if (const Node* sel = top.find("select")) read_select(*sel, s);
  s.action_floor = need("action_floor").as_double("population.action_floor");
  if (const Node* d = top.find("demos")) {
    const Node& dm = d->expect_map("population.demos");
    dm.check_keys({"episodes", "max_steps"}, "population.demos");
    if (const Node* e = dm.find("episodes")) s.episodes = e->as_int("population.demos.episodes");
    if (const Node* m = dm.find("max_steps")) s.max_steps = m->as_int("population.demos.max_steps");
  }
  // every run is planned (and its config resolved) up front, as a sweep's: bounded likewise
  double runs = static_cast<double>(s.runs_per_setting);
  for (const auto& v : s.grid_values) runs *= static_cast<double>(v.size());
  if (runs > kMaxPopulationRuns)
    throw ConfigError(fmt::format(
        "{}: population: the variants grid times runs_per_setting is {:g} training runs; at most "
        "{}",
        top.where(), runs, kMaxPopulationRuns));
  check_spec(s, top);
  s.digest = sha256_hex(canonical(s));
  return s;
}

SweepPlan plan_population(const PopulationSpec& spec) {
  SweepPlan plan;
  plan.out = spec.out / "train";
  plan.keys = spec.grid_keys;
  const std::size_t settings = spec.settings();
  for (std::size_t s = 0; s < settings; ++s) {
    std::vector<std::size_t> digit(spec.grid_values.size());
    std::size_t rest = s;
    for (std::size_t k = digit.size(); k-- > 0;) {
      digit[k] = rest % spec.grid_values[k].size();
      rest /= spec.grid_values[k].size();
    }
    ParamMap env = spec.env_params;
    for (const auto& [k, v] : spec.variant_params) param_map_set(env, k, v);
    std::vector<std::pair<std::string, std::string>> values;
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < digit.size(); ++k) {
      const std::string& v = spec.grid_values[k][digit[k]];
      for (const auto& key : split_plus(spec.grid_keys[k]))
        param_map_set(env, key, {v, "population.variants.grid"});
      values.emplace_back(spec.grid_keys[k], v);
      parts.push_back(spec.grid_keys[k] + "=" + v);
    }
    const std::string label =
        parts.empty() ? "default" : run_label(fmt::format("{}", fmt::join(parts, ",")));
    for (int r = 0; r < spec.runs_per_setting; ++r) {
      SweepRun run;
      run.index = plan.runs.size();
      run.label = label;
      run.name = fmt::format("{}-s{}-r{}", spec.name, s, r);
      run.seed = derive_seed(spec.seed, Domain::kSweep, s, static_cast<std::uint64_t>(r)) >> 2;
      run.values = values;
      run.out = plan.out / label / fmt::format("r{}", r);
      Node cfg = Node::map("population");
      cfg.set("name", Node::scalar(run.name, ""));
      Node env_node = Node::map("population.env");
      env_node.set("id", Node::scalar(spec.env_id, ""));
      env_node.set("params", param_map_to_node(env));
      cfg.set("env", std::move(env_node));
      Node algo = Node::map("population.ppo");
      algo.set("id", Node::scalar(spec.algo, ""));
      algo.set("params", param_map_to_node(spec.algo_params));
      cfg.set("algo", std::move(algo));
      cfg.set("train", param_map_to_node(spec.train_params));
      run.config = std::move(cfg);
      RunOptions opts;
      opts.seed = run.seed;
      opts.out = run.out;
      run.config_sha256 = sha256_hex(to_yaml(resolve_experiment(run.config, run.name, opts)));
      plan.runs.push_back(std::move(run));
    }
  }
  return plan;
}

}  // namespace dprl::algos
