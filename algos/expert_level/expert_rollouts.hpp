// Fresh rollouts of the experts' policies for DataRelease's `policies` source (Sharma, Vinod,
// Thakurta, Agarwal, Balle, Dann, Raghuveer, "Preserving Expert-Level Privacy in Offline
// Reinforcement Learning", TMLR; the model of Thm. 5.3: A1 samples an expert uniformly and a
// trajectory from its policy).
//
// Each of the T rollouts: an expert i uniform in [0, m) (independent draws, with replacement),
// the env reset with a seed of 63 bits from the noise source, the expert's greedy action floored
// as in the collection (play it with probability 1 - (|A|-1) p_min, every other action with
// p_min; algos/core/floored_policy.hpp) with one uniform per step from the noise source, until the
// env terminates or truncates (its max_episode_steps is the public cap L). Every random choice
// comes from `noise`: with the OS-entropy source nobody can regenerate the rollouts, which is what
// the release's guarantee needs (the rollouts are drawn inside the mechanism). The dataset's
// user_id is the drawn expert (internal: DataRelease needs it only through its counts and never
// publishes it) and no episode seed is recorded.
// Parameters: T >= 1, p_min in [0, 1/|A|) (ParamError), at least one policy file, a discrete
// action space (ParamError naming it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/env.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {

Dataset draw_expert_rollouts(const std::function<std::unique_ptr<Env>()>& make_env,
                             const std::vector<std::filesystem::path>& policies,
                             std::int64_t trajectories, double p_min, privacy::NoiseSource& noise);

}  // namespace dprl::algos
