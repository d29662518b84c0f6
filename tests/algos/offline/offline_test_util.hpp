// Offline datasets built in-process for the offline learner tests: rollouts of a policy with an
// action floor (every action has probability at least `floor`, as paper 000's data).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algos/offline/offline_batch.hpp"
#include "engine/data/dataset.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

namespace dprl::testing {

// Greedy action of a state (observation span).
using Greedy = std::function<int(std::span<const float>)>;

// A CartPole controller that balances for 500 steps from Gymnasium's start states.
inline int cartpole_expert(std::span<const float> s) {
  return s[2] + 0.6f * s[3] + 0.05f * s[0] + 0.1f * s[1] > 0.0f ? 1 : 0;
}

// `episodes` episodes of `greedy` with action floor `floor` in env `id`; episode e belongs to user
// e % users.
inline Dataset rollout_dataset(const std::string& id, const Greedy& greedy, int episodes, int users,
                               double floor, std::uint64_t seed) {
  auto env = envs::make_env(id);
  const EnvSpec& spec = env->spec();
  DatasetInfo info;
  info.dataset_id = "test/" + id;
  info.env_id = spec.id;
  info.observation_space = spec.observation;
  info.action_space = spec.action;
  Dataset ds(info);
  const int A = static_cast<int>(spec.action.n);
  const std::size_t D = spec.observation.dim();
  Rng rng(derive_seed(seed, Domain::kAlgo, 99));
  std::vector<float> obs(D), next(D), o, a, r;
  std::vector<std::uint8_t> term, trunc;
  for (int e = 0; e < episodes; ++e) {
    o.clear();
    a.clear();
    r.clear();
    term.clear();
    trunc.clear();
    env->reset(derive_seed(seed, Domain::kEnvReset, 0, static_cast<std::uint64_t>(e)), obs);
    o.insert(o.end(), obs.begin(), obs.end());
    for (;;) {
      int act = greedy(obs);
      if (rng.uniform() < floor * A) act = static_cast<int>(rng.below(A));
      const StepResult res = env->step(static_cast<std::int64_t>(act), next);
      a.push_back(static_cast<float>(act));
      r.push_back(static_cast<float>(res.reward));
      term.push_back(res.terminated ? 1 : 0);
      trunc.push_back(res.truncated ? 1 : 0);
      o.insert(o.end(), next.begin(), next.end());
      obs = next;
      if (res.terminated || res.truncated) break;
    }
    ds.add_episode(o, a, r, term, trunc, e % users);
  }
  return ds;
}

}  // namespace dprl::testing
