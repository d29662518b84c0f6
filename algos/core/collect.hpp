// Data collection: a policy's seeded episodes in an env, as an offline Dataset.
//
// Episode e of user k (the --user-id) resets the env with seed
//   s_e = derive_seed(seed, Domain::kDataset, k, e, 0) >> 1   (non-negative, stored as the
//                                                              episode's seed; replays it exactly)
// and begins the policy with derive_seed(seed, Domain::kDataset, k, e, 1); the action floor (or
// the Gaussian action noise) draws from Rng(derive_seed(seed, Domain::kDataset, k, e, 2)). So
// experts collected with the same root seed but different user ids get unrelated episodes.
//
// Parameters (CollectParams):
//   episodes      [1, 1e9]        episodes to run (each to termination or the env's time limit)
//   seed          uint64          root seed (set by the run, not read from YAML params)
//   user_id       [0, 2^62]       privacy unit written on every episode
//   action_floor  [0, 1/|A|)      discrete only: a* (the policy's action) with probability
//                                 1 - (|A|-1) P, every other action with P (paper 000, App. B.1)
//   action_noise  [0, inf)        continuous only: N(0, sigma^2) added to each action component,
//                                 then clipped to the action space's finite bounds
//   dataset_id    text            "" gives "dprl/<env id>/<policy name>-v0"
// Continuous actions are rounded to float32 before the env sees them, so stored actions replay
// the stored observations bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/data/dataset.hpp"
#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/policy.hpp"

namespace dprl::algos {

struct CollectParams {
  std::int64_t episodes = 1;
  std::uint64_t seed = 0;  // the run's root seed (not a visited parameter: a run sets it)
  std::int64_t user_id = 0;
  double action_floor = 0;
  double action_noise = 0;
  std::string dataset_id;

  template <class V>
  void visit(V& v) {
    v("episodes", episodes, Range::closed(1, 1e9), "episodes to collect");
    v("user_id", user_id, Range::closed(0, 4.611686018427387904e18), "privacy unit id");
    v("action_floor", action_floor, Range::right_open(0, 1),
      "minimum probability of every discrete action (< 1/|A|)");
    v("action_noise", action_noise, Range::non_negative(),
      "std of Gaussian noise on continuous actions");
    v("dataset_id", dataset_id, Choices{}, "Minari dataset id (default dprl/<env>/<policy>-v0)");
  }
};

// Runs policy (named policy_name in the metadata) in env. Throws ParamError when the floor or
// noise does not fit the env's action space.
Dataset collect(Env& env, Policy& policy, std::string_view policy_name, const CollectParams& p);

// Makes the env (envs::make_env) and the policy (a built-in name or a policy file, as
// `dprl eval --policy` resolves it), then collects.
Dataset collect(std::string_view env_id, const ParamMap& env_params, std::string_view policy,
                const CollectParams& p);

}  // namespace dprl::algos
