#include "algos/model_based/primorl.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/model_based/collect.hpp"
#include "algos/model_based/model_env.hpp"
#include "algos/model_based/prob_ensemble.hpp"
#include "algos/online/sac_learner.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

namespace mb = model_based;

namespace {

mb::CollectConfig collect_config(const PrimorlParams& p) {
  mb::CollectConfig c;
  c.runs = p.data_runs;
  c.steps_per_run = p.data_steps_per_run;
  c.hidden_sizes = p.data_hidden;
  c.learning_starts = p.data_learning_starts;
  c.exploration_noise = p.data_exploration_noise;
  return c;
}

// the expected test split (each unit joins it with probability `fraction`), for the checks
// before the run; the split itself is drawn per unit (model_data.hpp)
std::size_t test_units(std::size_t units, double fraction) {
  auto n = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(units)));
  return std::clamp<std::size_t>(n, 1, units > 1 ? units - 1 : 1);
}

std::filesystem::path cache_file(const PrimorlParams& p, const Env& env) {
  const auto key = mb::collect_key(env, collect_config(p), static_cast<std::uint64_t>(p.data_seed));
  return std::filesystem::path(p.data_cache) / (env.spec().id + "-" + key + ".bin");
}

// The dataset must have the env's Box spaces (DataError naming data_cache).
void check_spaces(const Dataset& d, const Env& env) {
  const EnvSpec& s = env.spec();
  if (d.obs_dim() != s.observation.dim() || d.act_dim() != s.action.dim() ||
      d.info().env_id != s.id)
    throw DataError(fmt::format(
        "data_cache: dataset '{}' (env {}, obs {}, act {}) does not match env {} (obs {}, act {})",
        d.info().dataset_id, d.info().env_id, d.obs_dim(), d.act_dim(), s.id, s.observation.dim(),
        s.action.dim()));
}

}  // namespace

void PrimorlParams::check() const {
  parse_hidden_sizes(data_hidden, "primorl.data_hidden");
  // every ensemble member sees each model batch and each rollout state
  const double m = members;
  parse_hidden_sizes(model_hidden, "primorl.model_hidden",
                     m * std::max(local_batch_size, pooled_batch_size),
                     "primorl.members x model batch");
  parse_hidden_sizes(model_hidden, "primorl.model_hidden", m * rollout_batch,
                     "primorl.members x rollout_batch");
  parse_hidden_sizes(sac_hidden, "primorl.sac_hidden", sac_batch_size, "primorl.sac_batch_size");
  mb::parse_weight_decay(weight_decay);
  if (penalty == "mpd" && members < 2)
    throw ParamError(fmt::format("primorl.members = {} must be >= 2 for penalty = mpd", members));
  if (variant == "tdp" && !(z > 0.0))
    throw ParamError(fmt::format("primorl.z = {} must be > 0 for variant tdp", z));
  if (variant != "mopo" && (real_ratio > 0.0 || start_from_data))
    throw ParamError(fmt::format(
        "primorl.real_ratio = {} / start_from_data = {}: only variant mopo may read real data "
        "after model training",
        real_ratio, start_from_data));
  if (rollout_freq < 1 || retain_epochs < 1) throw ParamError("primorl: rollout settings >= 1");
}

Primorl::Primorl(const Params& p) : p_(p) { validate_params(p_, "primorl"); }
Primorl::~Primorl() = default;

void Primorl::check(const RunPlan& plan) {
  const EnvSpec& s = plan.env.spec();
  if (s.observation.kind != Space::Kind::kBox || s.action.kind != Space::Kind::kBox)
    throw ParamError(fmt::format(
        "primorl: env '{}' needs Box (continuous) observation and action spaces", s.id));
  if (plan.train.steps % p_.steps_per_epoch != 0)
    throw ParamError(fmt::format(
        "train.steps = {} must be a multiple of primorl.steps_per_epoch = {} (SAC updates)",
        plan.train.steps, p_.steps_per_epoch));
  // the export never replaces a folder of something else, and replaces a data set only when
  // asked to (--force) or when a resumed run wrote it
  if (plan.force || plan.resuming) replace_export_ = true;
  if (!p_.data_export.empty() && !replaceable_dataset_folder(p_.data_export))
    throw ParamError(fmt::format(
        "primorl.data_export = '{}': exists and is not a Minari dataset folder (not replaced)",
        p_.data_export));
  if (!p_.data_export.empty() && !replace_export_ && is_dataset_folder(p_.data_export))
    throw ParamError(fmt::format(
        "primorl.data_export = '{}': holds a data set already (not replaced; choose another "
        "folder, or pass --force to replace it)",
        p_.data_export));
  // both folders are written after the data is collected: one that cannot be created is refused
  // now, before any collection
  for (const auto& [key, dir] : {std::pair{"primorl.data_export", &p_.data_export},
                                 std::pair{"primorl.data_cache", &p_.data_cache}})
    if (!dir->empty())
      if (const std::string problem = dir_problem(*dir); !problem.empty())
        throw ParamError(fmt::format("{} = '{}': {}", key, *dir, problem));
  std::size_t episodes = 0;
  external_ = plan.dataset;
  if (external_) {
    if (!p_.data_cache.empty())
      throw ParamError(fmt::format(
          "primorl.data_cache = '{}': not used with a data: section (the dataset is read from "
          "there; drop one of them)",
          p_.data_cache));
    episodes = external_->users().size();
  } else if (!p_.data_cache.empty() && std::filesystem::exists(cache_file(p_, plan.env))) {
    if (!data_) data_ = obtain_data({}, plan.env);
    episodes = data_->users().size();
  } else {
    // a lower bound: fixed-length episodes (early termination only adds episodes)
    episodes = static_cast<std::size_t>(p_.data_runs) *
               static_cast<std::size_t>(p_.data_steps_per_run / s.max_episode_steps);
  }
  if (episodes < 2)
    throw ParamError(
        external_ ? fmt::format("data: the dataset has {} user(s); PriMORL needs at least 2 (one "
                                "for the public test split)",
                                episodes)
                  : fmt::format("primorl.data_steps_per_run = {}: fewer than 2 complete "
                                "episodes of {} steps",
                                p_.data_steps_per_run, s.max_episode_steps));
  const std::size_t K = p_.public_trajectories > 0
                            ? static_cast<std::size_t>(p_.public_trajectories)
                            : episodes - test_units(episodes, p_.test_fraction);
  if (p_.variant != "mopo" && p_.q * static_cast<double>(K) < 1.0)
    throw ParamError(fmt::format(
        "primorl.q = {} times K = {} training trajectories must be >= 1 (q K is the fixed "
        "denominator)",
        p_.q, K));
  if (p_.variant != "mopo") check_model_training(s, K);
}

Dataset Primorl::obtain_data(const std::function<std::unique_ptr<Env>()>& make_env,
                             const Env& env) {
  const auto cfg = collect_config(p_);
  const auto seed = static_cast<std::uint64_t>(p_.data_seed);
  if (!p_.data_cache.empty()) {
    const auto file = cache_file(p_, env);
    if (std::filesystem::exists(file)) {
      Dataset d = mb::load_dataset_cache(file, mb::collect_key(env, cfg, seed),
                                         mb::collect_info(env, cfg, seed));
      check_spaces(d, env);
      return d;
    }
  }
  DPRL_CHECK(make_env);
  Dataset d = mb::collect_ddpg(make_env, cfg, seed, p_.threads);
  if (!p_.data_cache.empty())
    mb::save_dataset_cache(d, cache_file(p_, env), mb::collect_key(env, cfg, seed));
  return d;
}

std::unique_ptr<Policy> Primorl::policy() const {
  DPRL_CHECK(learner_);
  return learner_->policy(env_id_);
}

void Primorl::save_policy(const std::filesystem::path& file) const {
  static_cast<NnPolicy&>(*policy()).save(file);
}

}  // namespace dprl::algos
