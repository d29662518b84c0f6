// Reading and checking a pipeline config (see pipeline.hpp).
#include <fmt/format.h>

#include <cmath>

#include "algos/core/algorithm.hpp"
#include "algos/offline/offline_learner.hpp"
#include "algos/run/pipeline.hpp"
#include "engine/error.hpp"
#include "engine/sha256.hpp"
#include "envs/register_envs.hpp"
#include "privacy/calibration.hpp"

namespace dprl::algos {
namespace {

namespace fs = std::filesystem;

const Node& population_node(const Node& top, const fs::path& base_dir, Node& holder) {
  const Node* p = top.find("population");
  if (!p)
    throw ConfigError(fmt::format("{}: missing key 'population' in the pipeline", top.where()));
  if (!p->is_scalar()) return *p;
  holder = load_yaml_file(base_dir / p->as_string("population"));
  if (const Node* inner = holder.is_map() ? holder.find("population") : nullptr) return *inner;
  return holder;
}

double number_or_auto(const Node* n, const char* key, double automatic) {
  if (!n || n->text() == "auto") return automatic;
  return n->as_double(key);
}

// The budget split (privacy section) into spec.
void read_privacy(const Node* node, PipelineSpec& s) {
  const std::int64_t m = s.experts;
  if (s.mode == "non_private") {
    if (node) node->expect_map("privacy").check_keys({"noise"}, "privacy (mode non_private)");
    return;
  }
  if (!node)
    throw ConfigError(fmt::format("the pipeline: mode {} needs a privacy section", s.mode));
  const Node& p = node->expect_map("privacy");
  p.check_keys({"epsilon", "delta", "epsilon1_fraction", "delta1_fraction", "epsilon1", "epsilon2",
                "delta1", "delta2", "noise"},
               "privacy");
  const Node* eps = p.find("epsilon");
  if (!eps) throw ConfigError(fmt::format("{}: missing key 'epsilon' in privacy", p.where()));
  s.epsilon = eps->as_double("privacy.epsilon");
  if (!(s.epsilon > 0.0) || !std::isfinite(s.epsilon))
    throw ParamError(
        fmt::format("{}: privacy.epsilon = {} must be finite and > 0", eps->where(), s.epsilon));
  // auto: 1/(10 m) (pipeline.hpp explains the choice); an explicit delta >= 1/m is allowed (the
  // paper uses 1/m) but warned: (0, 1/m)-DP admits publishing one random expert's whole data
  s.delta =
      number_or_auto(p.find("delta"), "privacy.delta", kAutoDeltaFactor / static_cast<double>(m));
  if (!(s.delta > 0.0 && s.delta < 1.0))
    throw ParamError(fmt::format("{}: privacy.delta = {} must be in (0, 1)", p.where(), s.delta));
  if (s.delta >= 1.0 / static_cast<double>(m))
    fmt::print(stderr,
               "dprl: warning: {}: privacy.delta = {:.6g} >= 1/m = {:.6g} (m = {} experts): a "
               "mechanism that publishes one random expert's whole data meets such a delta; "
               "use delta well below 1/m (auto: 1/(10 m))\n",
               p.find("delta")->where(), s.delta, 1.0 / static_cast<double>(m), m);
  if (const Node* n = p.find("noise")) s.noise = n->as_string("privacy.noise");
  if (s.noise != "os-entropy" && s.noise != "seeded")
    throw ParamError(fmt::format("{}: privacy.noise must be os-entropy or seeded, not '{}'",
                                 p.find("noise")->where(), s.noise));
  if (s.mode == "dp_sgd") {
    for (const char* k : {"epsilon1", "delta1", "epsilon1_fraction", "delta1_fraction"})
      if (p.find(k))
        throw ConfigError(
            fmt::format("{}: privacy.{}: mode dp_sgd spends the whole budget on "
                        "DP-SGD (no release)",
                        p.find(k)->where(), k));
    s.epsilon2 = s.epsilon;
    s.delta2 = s.delta;
    return;
  }
  const double fe = p.find("epsilon1_fraction")
                        ? p.find("epsilon1_fraction")->as_double("privacy.epsilon1_fraction")
                        : 0.75;
  const double fd = p.find("delta1_fraction")
                        ? p.find("delta1_fraction")->as_double("privacy.delta1_fraction")
                        : 0.9;
  if (!(fe >= 0 && fe <= 1) || !(fd >= 0 && fd <= 1))
    throw ParamError(
        fmt::format("{}: privacy.epsilon1_fraction and delta1_fraction must be in "
                    "[0, 1]",
                    p.where()));
  s.epsilon1 =
      p.find("epsilon1") ? p.find("epsilon1")->as_double("privacy.epsilon1") : fe * s.epsilon;
  s.epsilon2 = p.find("epsilon2") ? p.find("epsilon2")->as_double("privacy.epsilon2")
                                  : s.epsilon - s.epsilon1;
  // the delta split follows the epsilon split unless given: no release (eps1 = 0) needs no
  // delta1, no DP-SGD (eps2 = 0) no delta2 (paper App. B.3; spec item 10)
  const double fd_eff = s.epsilon1 == 0 ? 0.0 : (s.epsilon2 == 0 ? 1.0 : fd);
  s.delta1 = p.find("delta1") ? p.find("delta1")->as_double("privacy.delta1") : fd_eff * s.delta;
  s.delta2 = p.find("delta2") ? p.find("delta2")->as_double("privacy.delta2") : s.delta - s.delta1;
  if (s.epsilon1 > s.epsilon * (1 + 1e-12) || s.epsilon2 > s.epsilon * (1 + 1e-12))
    throw ParamError(
        fmt::format("{}: privacy: epsilon1 = {} and epsilon2 = {} must each be at most "
                    "epsilon = {} (and sum to at most it): the budget split exceeds "
                    "epsilon",
                    p.where(), s.epsilon1, s.epsilon2, s.epsilon));
  if (s.delta1 > s.delta * (1 + 1e-12) || s.delta2 > s.delta * (1 + 1e-12))
    throw ParamError(
        fmt::format("{}: privacy: delta1 = {:.6g} and delta2 = {:.6g} must each be at "
                    "most delta = {:.6g}: the budget split exceeds delta",
                    p.where(), s.delta1, s.delta2, s.delta));
  if (s.epsilon1 + s.epsilon2 > s.epsilon * (1 + 1e-12))
    throw ParamError(fmt::format("{}: privacy: epsilon1 + epsilon2 = {} exceeds epsilon = {}",
                                 p.where(), s.epsilon1 + s.epsilon2, s.epsilon));
  if (s.delta1 + s.delta2 > s.delta * (1 + 1e-12))
    throw ParamError(fmt::format("{}: privacy: delta1 + delta2 = {:.6g} exceeds delta = {:.6g}",
                                 p.where(), s.delta1 + s.delta2, s.delta));
  if (s.epsilon1 < 0 || s.epsilon2 < 0 || s.delta1 < 0 || s.delta2 < 0)
    throw ParamError(
        fmt::format("{}: privacy: every part must be >= 0 (epsilon1 {}, epsilon2 {}, "
                    "delta1 {}, delta2 {})",
                    p.where(), s.epsilon1, s.epsilon2, s.delta1, s.delta2));
  if (s.epsilon1 > 0 && !(s.delta1 > 0))
    throw ParamError(
        fmt::format("{}: privacy: a release (epsilon1 > 0) needs delta1 > 0", p.where()));
}

void read_release(const Node* node, PipelineSpec& s) {
  ParamMap m = node ? node->to_param_map("release") : ParamMap{};
  for (const char* k : {"epsilon1", "delta1", "p_min"})
    for (const auto& [key, v] : m)
      if (key == k)
        throw ConfigError(
            fmt::format("{}: release.{} is set from privacy and the population's "
                        "action_floor",
                        v.where, k));
  if (s.mode == "selective" && s.epsilon1 <= 0) return;  // no release: the section is unused
  if (s.mode != "selective") {
    if (node && !m.empty())
      throw ConfigError(fmt::format("{}: a release section needs mode selective", node->where()));
    return;
  }
  param_map_set(m, "epsilon1", {format_param(s.epsilon1), "privacy"});
  param_map_set(m, "delta1", {format_param(s.delta1), "privacy"});
  param_map_set(m, "p_min", {format_param(s.population.action_floor), "population.action_floor"});
  bool has_len = false;
  for (const auto& [key, v] : m) has_len = has_len || key == "max_length";
  if (!has_len)
    param_map_set(m, "max_length", {std::to_string(s.population.max_steps), "population.demos"});
  s.release = read_params<DataReleaseParams>(m, "release");
  if (s.release.max_length < s.population.max_steps)
    throw ParamError(
        fmt::format("release.max_length = {} must be at least the demonstrations' cap "
                    "population.demos.max_steps = {}",
                    s.release.max_length, s.population.max_steps));
  const std::int64_t episodes = s.experts * s.population.episodes;
  if (s.release.source == "recorded" && s.release.trajectories > episodes)
    throw ParamError(
        fmt::format("release.trajectories = {} exceeds the {} demonstration episodes "
                    "(release.source: recorded)",
                    s.release.trajectories, episodes));
  release_constants(s.release);  // the exact composition must stay within epsilon1
}

// batch: the learner's batch size b (for the calibration's q).
void read_selective(const Node* node, PipelineSpec& s, int batch) {
  ParamMap all = node ? node->to_param_map("selective") : ParamMap{};
  ParamMap m;
  for (auto& [key, v] : all) {
    if (key != "calibrate_steps") {
      m.emplace_back(key, v);
      continue;
    }
    s.calibrate_steps = detail::parse_int(v, "selective", "calibrate_steps");
    if (s.calibrate_steps < 1)
      throw ParamError(fmt::format("{}: selective.calibrate_steps = {} must be >= 1", v.where,
                                   s.calibrate_steps));
  }
  for (const auto& [key, v] : m)
    if (key == "epsilon2" || key == "delta2" || key == "noise" || key == "stable_steps")
      throw ConfigError(
          fmt::format("{}: selective.{} is set from privacy and train", v.where, key));
  param_map_set(m, "epsilon2", {format_param(s.epsilon2), "privacy"});
  param_map_set(m, "delta2", {format_param(s.delta2), "privacy"});
  param_map_set(m, "noise", {s.noise, "privacy.noise"});
  for (const auto& [key, v] : m)
    if (key == "p" && s.mode != "selective")
      throw ConfigError(fmt::format("{}: selective.p is fixed by mode {} ({})", v.where, s.mode,
                                    s.mode == "dp_sgd" ? 1 : 0));
  if (s.mode == "dp_sgd") param_map_set(m, "p", {"1", "mode"});
  if (s.mode == "non_private") param_map_set(m, "p", {"0", "mode"});
  s.selective = read_params<SelectiveDpSgdParams>(m, "selective");
  if (s.calibrate_steps > 0 && s.selective.p > 0) {
    // the noise multiplier whose budget is spent after calibrate_steps accounted steps (sound:
    // noisy steps at q0 = b/m; paper: iterations at p b/m)
    const double q0 = static_cast<double>(batch) / static_cast<double>(s.experts);
    if (!(q0 > 0 && q0 <= 1))
      throw ParamError(
          fmt::format("learner batch_size = {} must be at most the {} experts", batch, s.experts));
    const double q = s.selective.accounting == "paper" ? s.selective.p * q0 : q0;
    s.selective.noise_multiplier =
        privacy::calibrate_noise_multiplier({.target_epsilon = s.selective.epsilon2,
                                             .delta = s.selective.delta2,
                                             .sampling_rate = q,
                                             .steps = s.calibrate_steps},
                                            s.selective.accountant, 1e-6);
  }
}

void read_train(const Node* node, PipelineSpec& s) {
  if (!node) return;
  const Node& t = node->expect_map("train");
  t.check_keys({"stable_steps", "eval_every", "eval_episodes", "eval_max_steps"}, "train");
  if (const Node* n = t.find("stable_steps"))
    s.selective.stable_steps = n->as_int("train.stable_steps");
  if (const Node* n = t.find("eval_every")) s.eval_every = n->as_int("train.eval_every");
  if (const Node* n = t.find("eval_episodes"))
    s.eval_episodes = static_cast<int>(n->as_int("train.eval_episodes"));
  if (const Node* n = t.find("eval_max_steps"))
    s.eval_max_steps = n->as_int("train.eval_max_steps");
  if (s.selective.stable_steps < 0 || s.eval_every < 0 || s.eval_episodes < 1 ||
      s.eval_max_steps < 0)
    throw ParamError(
        fmt::format("{}: train: stable_steps, eval_every, eval_max_steps must be >= 0 "
                    "and eval_episodes >= 1",
                    t.where()));
}

Node resolved_tree(const PipelineSpec& s, const Algorithm& learner) {
  Node root = Node::map("");
  auto put = [](Node& n, const char* k, const std::string& v) { n.set(k, Node::scalar(v, "")); };
  put(root, "pipeline", "expert_level");
  put(root, "name", s.name);
  put(root, "seed", fmt::format("{}", s.seed));
  put(root, "out", s.out.string());
  Node pop = Node::map("");
  put(pop, "name", s.population.name);
  put(pop, "out", s.population.out.string());
  put(pop, "experts", fmt::format("{}", s.population.experts()));
  put(root, "experts", fmt::format("{}", s.experts));
  put(pop, "digest", s.population.digest);
  root.set("population", std::move(pop));
  put(root, "mode", s.mode);
  Node priv = Node::map("");
  for (auto [k, v] : {std::pair{"epsilon", s.epsilon},
                      {"delta", s.delta},
                      {"epsilon1", s.epsilon1},
                      {"delta1", s.delta1},
                      {"epsilon2", s.epsilon2},
                      {"delta2", s.delta2}})
    put(priv, k, format_param(v));
  put(priv, "noise", s.noise);
  root.set("privacy", std::move(priv));
  if (s.mode == "selective" && s.epsilon1 > 0)
    root.set("release", param_map_to_node(dump_params(s.release)));
  Node sel = param_map_to_node(dump_params(s.selective));
  if (s.calibrate_steps > 0) put(sel, "calibrate_steps", fmt::format("{}", s.calibrate_steps));
  root.set("selective", std::move(sel));
  Node l = Node::map("");
  put(l, "id", s.learner_id);
  l.set("params", param_map_to_node(learner.params()));
  root.set("learner", std::move(l));
  Node t = Node::map("");
  put(t, "eval_every", fmt::format("{}", s.eval_every));
  put(t, "eval_episodes", fmt::format("{}", s.eval_episodes));
  put(t, "eval_max_steps", fmt::format("{}", s.eval_max_steps));
  root.set("train", std::move(t));
  if (s.audit) root.set("audit", param_map_to_node(dump_params(*s.audit)));
  return root;
}

}  // namespace

bool is_pipeline(const Node& root) { return root.is_map() && root.find("pipeline") != nullptr; }

PipelineSpec parse_pipeline(const Node& config, const std::string& default_name,
                            const fs::path& base_dir, const RunOptions& opts) {
  Node root = config;
  for (const auto& o : opts.overrides) apply_override(root, o);
  const Node& top = root.expect_map("the pipeline");
  top.check_keys({"pipeline", "name", "seed", "out", "population", "experts", "mode", "privacy",
                  "release", "selective", "learner", "train", "audit"},
                 "the pipeline");
  if (top.find("pipeline")->as_string("pipeline") != "expert_level")
    throw ConfigError(
        fmt::format("{}: pipeline must be expert_level", top.find("pipeline")->where()));
  PipelineSpec s;
  s.name = top.find("name") ? top.find("name")->as_string("name") : default_name;
  if (opts.seed) {
    s.seed = *opts.seed;
  } else if (const Node* n = top.find("seed")) {
    const auto v = n->as_int("seed");
    if (v < 0) throw ConfigError(fmt::format("{}: seed must be >= 0", n->where()));
    s.seed = static_cast<std::uint64_t>(v);
  } else {
    throw ConfigError(
        fmt::format("{}: missing key 'seed' in the pipeline (or pass --seed)", top.where()));
  }
  s.out = opts.out ? *opts.out
                   : (top.find("out") ? fs::path(top.find("out")->as_string("out"))
                                      : fs::path("runs") / s.name);
  Node holder;
  s.population = parse_population(population_node(top, base_dir, holder), "population");
  s.experts = s.population.experts();
  s.population_experts = s.experts;
  if (const Node* e = top.find("experts")) {
    s.experts = e->as_int("experts");
    if (s.experts < 1 || s.experts > s.population.experts())
      throw ParamError(fmt::format("{}: experts = {} must be in [1, {}] (the population's experts)",
                                   e->where(), s.experts, s.population.experts()));
  }
  if (const Node* m = top.find("mode")) s.mode = m->as_string("mode");
  if (s.mode != "selective" && s.mode != "dp_sgd" && s.mode != "non_private")
    throw ConfigError(fmt::format("{}: mode must be selective, dp_sgd or non_private, not '{}'",
                                  top.find("mode")->where(), s.mode));
  read_privacy(top.find("privacy"), s);
  read_release(top.find("release"), s);
  const Node* l = top.find("learner");
  if (!l) throw ConfigError(fmt::format("{}: missing key 'learner' in the pipeline", top.where()));
  const Node& lm = l->expect_map("learner");
  lm.check_keys({"id", "params"}, "learner");
  if (!lm.find("id")) throw ConfigError(fmt::format("{}: missing key 'id' in learner", l->where()));
  s.learner_id = lm.find("id")->as_string("learner.id");
  if (const Node* p = lm.find("params")) s.learner_params = p->to_param_map("learner.params");
  if (!dynamic_cast<OfflineLearner*>(algo_registry().make(s.learner_id, {}).get()))
    throw ParamError(
        fmt::format("learner.id = '{}' is not an offline learner (discrete_cql, "
                    "discrete_bcq, bc)",
                    s.learner_id));
  const auto learner = algo_registry().make(s.learner_id, s.learner_params);
  int batch = 0;
  for (const auto& [k, v] : learner->params())
    if (k == "batch_size") batch = std::stoi(v.text);
  // the train stage samples b of the m experts (q = b/m): a batch beyond the experts is refused
  // here, not after the population was trained and the release drawn
  if (batch > s.experts)
    throw ParamError(fmt::format(
        "learner.params.batch_size = {} must be at most the {} experts the pipeline trains on "
        "(experts, or the population's selected experts)",
        batch, s.experts));
  read_selective(top.find("selective"), s, batch);
  read_train(top.find("train"), s);
  if (const Node* a = top.find("audit")) {
    s.audit =
        read_params<AuditParams>(a->is_null() ? ParamMap{} : a->to_param_map("audit"), "audit");
    if (s.audit->guesses > s.audit->canaries)
      throw ConfigError(fmt::format("{}: audit.guesses = {} must be <= audit.canaries = {}",
                                    a->where(), s.audit->guesses, s.audit->canaries));
    if (s.mode == "non_private")
      throw ConfigError(fmt::format(
          "{}: audit: mode non_private makes no private release: there is no claim to audit",
          a->where()));
  }
  if (s.selective.p == 0.0 && s.selective.stable_steps < 1)
    throw ParamError("train.stable_steps must be >= 1 when no DP step runs (p = 0)");
  ParamMap eval = s.population.env_params;
  if (s.eval_max_steps > 0)
    param_map_set(eval, "max_episode_steps", {std::to_string(s.eval_max_steps), "train"});
  envs::make_env(s.population.env_id, eval);  // the evaluation env exists
  plan_population(s.population);              // every training run resolves
  s.resolved = resolved_tree(s, *learner);
  s.digest = sha256_hex(to_yaml(s.resolved));
  return s;
}

PipelineSpec pipeline_spec_of_run(const fs::path& run_dir,
                                  const std::vector<std::string>& overrides) {
  const fs::path file = run_dir / "config.yaml";
  Node root = load_yaml_file(file);
  for (const auto& o : overrides) apply_override(root, o);
  const Node& top = root.expect_map("the pipeline");
  auto need = [&](const Node& n, const char* key) -> const Node& {
    const Node* v = n.find(key);
    if (!v)
      throw DataError(fmt::format("{}: missing key '{}' (not a pipeline's resolved config)",
                                  file.string(), key));
    return *v;
  };
  PipelineSpec s;
  s.name = need(top, "name").as_string("name");
  s.seed = static_cast<std::uint64_t>(need(top, "seed").as_int("seed"));
  s.out = run_dir;
  const Node& pop = need(top, "population").expect_map("population");
  s.population.name = need(pop, "name").as_string("population.name");
  s.population.out = need(pop, "out").as_string("population.out");
  s.population.digest = need(pop, "digest").as_string("population.digest");
  s.population_experts = need(pop, "experts").as_int("population.experts");
  s.experts = need(top, "experts").as_int("experts");
  s.mode = need(top, "mode").as_string("mode");
  const Node& priv = need(top, "privacy").expect_map("privacy");
  s.epsilon = need(priv, "epsilon").as_double("privacy.epsilon");
  s.delta = need(priv, "delta").as_double("privacy.delta");
  s.epsilon1 = need(priv, "epsilon1").as_double("privacy.epsilon1");
  s.delta1 = need(priv, "delta1").as_double("privacy.delta1");
  s.epsilon2 = need(priv, "epsilon2").as_double("privacy.epsilon2");
  s.delta2 = need(priv, "delta2").as_double("privacy.delta2");
  s.noise = need(priv, "noise").as_string("privacy.noise");
  if (const Node* r = top.find("release"))
    s.release = read_params<DataReleaseParams>(r->to_param_map("release"), "release");
  ParamMap sel = need(top, "selective").to_param_map("selective");
  std::erase_if(sel, [](const auto& kv) { return kv.first == "calibrate_steps"; });
  s.selective = read_params<SelectiveDpSgdParams>(sel, "selective");
  const Node& l = need(top, "learner").expect_map("learner");
  s.learner_id = need(l, "id").as_string("learner.id");
  if (const Node* p = l.find("params")) s.learner_params = p->to_param_map("learner.params");
  const Node& t = need(top, "train").expect_map("train");
  s.eval_max_steps = need(t, "eval_max_steps").as_int("train.eval_max_steps");
  if (const Node* a = top.find("audit")) {
    s.audit =
        read_params<AuditParams>(a->is_null() ? ParamMap{} : a->to_param_map("audit"), "audit");
    check_audit_params(*s.audit);
  }
  const ExpertsFolder folder = read_experts(s.population.out);
  s.population.env_id = folder.env_id;
  s.population.action_floor = folder.action_floor;
  s.population_on_disk = true;
  s.resolved = root;
  s.digest = sha256_hex(to_yaml(root));
  return s;
}

}  // namespace dprl::algos
