#include "algos/core/collect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "algos/core/floored_policy.hpp"
#include "algos/core/policies.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

namespace dprl::algos {
namespace {

// A Minari dataset-name component: [-_A-Za-z0-9] only.
std::string id_part(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return out.empty() ? "data" : out;
}

}  // namespace

Dataset collect(Env& env, Policy& policy, std::string_view policy_name, const CollectParams& p) {
  CollectParams checked = p;
  validate_params(checked, "collect");
  const EnvSpec& spec = env.spec();
  const bool discrete = spec.action.is_discrete();
  if (discrete && p.action_floor > 0) check_action_floor(p.action_floor, spec.action.n);
  if (!discrete && p.action_floor > 0)
    throw ParamError(
        fmt::format("collect.action_floor: env '{}' has continuous actions ({}); use "
                    "action_noise",
                    spec.id, spec.action.describe()));
  if (discrete && p.action_noise > 0)
    throw ParamError(
        fmt::format("collect.action_noise: env '{}' has discrete actions ({}); use "
                    "action_floor",
                    spec.id, spec.action.describe()));

  DatasetInfo info;
  info.env_id = spec.id;
  info.env_params = env.params();
  info.observation_space = spec.observation;
  info.action_space = spec.action;
  const std::string pname =
      std::filesystem::path(std::string(policy_name)).filename().replace_extension().string();
  info.dataset_id = p.dataset_id.empty()
                        ? fmt::format("dprl/{}/{}-v0", id_part(spec.id), id_part(pname))
                        : p.dataset_id;
  nlohmann::ordered_json meta;
  meta["policy"] = std::string(policy_name);
  meta["episodes"] = p.episodes;
  meta["seed"] = p.seed;
  meta["user_id"] = p.user_id;
  meta["action_floor"] = p.action_floor;
  meta["action_noise"] = p.action_noise;
  info.metadata_json = nlohmann::ordered_json{{"collect", meta}}.dump();
  Dataset data(std::move(info));

  const std::size_t od = spec.observation.dim(), ad = spec.action.dim();
  std::vector<float> obs_buf, act_buf, rew_buf;
  std::vector<std::uint8_t> term_buf, trunc_buf;
  std::vector<float> obs(od);
  std::vector<std::uint8_t> mask(discrete ? static_cast<std::size_t>(spec.action.n) : 0);
  std::vector<double> action(discrete ? 0 : ad);
  const auto user = static_cast<std::uint64_t>(p.user_id);
  for (std::int64_t e = 0; e < p.episodes; ++e) {
    const auto ue = static_cast<std::uint64_t>(e);
    const std::uint64_t reset_seed = derive_seed(p.seed, Domain::kDataset, user, ue, 0) >> 1;
    Rng rng(derive_seed(p.seed, Domain::kDataset, user, ue, 2));
    obs_buf.clear(), act_buf.clear(), rew_buf.clear(), term_buf.clear(), trunc_buf.clear();
    env.reset(reset_seed, obs);
    policy.begin_episode(derive_seed(p.seed, Domain::kDataset, user, ue, 1));
    obs_buf.insert(obs_buf.end(), obs.begin(), obs.end());
    for (;;) {
      StepResult r;
      if (discrete) {
        if (spec.has_action_mask) env.action_mask(mask);
        std::int64_t a =
            policy.act_discrete(obs, spec.has_action_mask ? std::span<const std::uint8_t>(mask)
                                                          : std::span<const std::uint8_t>());
        if (p.action_floor > 0) a = floored_action(a, spec.action.n, p.action_floor, rng.uniform());
        act_buf.push_back(static_cast<float>(a));
        r = env.step(a, obs);
      } else {
        policy.act_continuous(obs, action);
        for (std::size_t i = 0; i < ad; ++i) {
          double x = action[i];
          if (p.action_noise > 0) {
            x += p.action_noise * rng.normal();
            x = std::clamp(x, spec.action.low[i], spec.action.high[i]);
          }
          // the env sees exactly the float32 value the dataset stores
          const auto f = static_cast<float>(x);
          action[i] = f;
          act_buf.push_back(f);
        }
        r = env.step(std::span<const double>(action), obs);
      }
      obs_buf.insert(obs_buf.end(), obs.begin(), obs.end());
      rew_buf.push_back(static_cast<float>(r.reward));
      term_buf.push_back(r.terminated ? 1 : 0);
      trunc_buf.push_back(r.truncated ? 1 : 0);
      if (r.terminated || r.truncated) break;
    }
    data.add_episode(obs_buf, act_buf, rew_buf, term_buf, trunc_buf, p.user_id,
                     static_cast<std::int64_t>(reset_seed));
  }
  return data;
}

Dataset collect(std::string_view env_id, const ParamMap& env_params, std::string_view policy,
                const CollectParams& p) {
  auto env = envs::make_env(env_id, env_params);
  auto pol = make_policy(policy, *env);
  return collect(*env, *pol, policy, p);
}

}  // namespace dprl::algos
