#include "algos/expert_level/expert_rollouts.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "algos/core/floored_policy.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/expert_level/data_release.hpp"
#include "engine/error.hpp"

namespace dprl::algos {

Dataset draw_expert_rollouts(const std::function<std::unique_ptr<Env>()>& make_env,
                             const std::vector<std::filesystem::path>& policies,
                             std::int64_t trajectories, double p_min, privacy::NoiseSource& noise) {
  if (trajectories < 1)
    throw ParamError(fmt::format("release.trajectories = {} must be >= 1", trajectories));
  if (policies.empty()) throw ParamError("expert rollouts: no expert policies");
  auto env = make_env();
  const EnvSpec& spec = env->spec();
  if (!spec.action.is_discrete())
    throw ParamError(fmt::format("expert rollouts: env '{}' has continuous actions ({})", spec.id,
                                 spec.action.describe()));
  const std::int64_t n = spec.action.n;
  if (p_min > 0) check_action_floor(p_min, n);
  DatasetInfo info;
  info.env_id = spec.id;
  info.env_params = env->params();
  info.observation_space = spec.observation;
  info.action_space = spec.action;
  info.dataset_id = fmt::format("dprl/{}/expert-rollouts-v0", spec.id);
  info.metadata_json = nlohmann::ordered_json{{"privacy_unit", "expert"}}.dump();
  Dataset data(std::move(info));
  std::map<std::size_t, std::unique_ptr<NnPolicy>> loaded;
  const std::size_t od = spec.observation.dim();
  std::vector<float> obs(od), obs_buf, act_buf, rew_buf;
  std::vector<std::uint8_t> term_buf, trunc_buf;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < trajectories; ++t) {
    const auto i = static_cast<std::size_t>(uniform_below(noise, policies.size()));
    auto& pol = loaded[i];
    if (!pol) pol = NnPolicy::load(policies[i]);
    obs_buf.clear(), act_buf.clear(), rew_buf.clear(), term_buf.clear(), trunc_buf.clear();
    env->reset(noise.next_u64() >> 1, obs);
    pol->begin_episode(noise.next_u64());
    obs_buf.insert(obs_buf.end(), obs.begin(), obs.end());
    for (;;) {
      if (spec.has_action_mask) env->action_mask(mask);
      std::int64_t a =
          pol->act_discrete(obs, spec.has_action_mask ? std::span<const std::uint8_t>(mask)
                                                      : std::span<const std::uint8_t>());
      if (p_min > 0) a = floored_action(a, n, p_min, noise.uniform());
      act_buf.push_back(static_cast<float>(a));
      const StepResult r = env->step(a, obs);
      obs_buf.insert(obs_buf.end(), obs.begin(), obs.end());
      rew_buf.push_back(static_cast<float>(r.reward));
      term_buf.push_back(r.terminated ? 1 : 0);
      trunc_buf.push_back(r.truncated ? 1 : 0);
      if (r.terminated || r.truncated) break;
    }
    data.add_episode(obs_buf, act_buf, rew_buf, term_buf, trunc_buf, static_cast<std::int64_t>(i),
                     -1);
  }
  return data;
}

}  // namespace dprl::algos
