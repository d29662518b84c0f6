#include "envs/lunar_lander_heuristic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl::envs {
namespace {

struct Correction {
  double angle;
  double hover;
};

Correction heuristic_correction(std::span<const float> obs) {
  DPRL_DCHECK(obs.size() >= 8);
  const double s[8] = {obs[0], obs[1], obs[2], obs[3], obs[4], obs[5], obs[6], obs[7]};
  // angle should point towards the centre, more so when moving away from it
  double angle_targ = s[0] * 0.5 + s[2] * 1.0;
  angle_targ = std::clamp(angle_targ, -0.4, 0.4);
  const double hover_targ = 0.55 * std::fabs(s[0]);  // target height by horizontal offset
  Correction t;
  t.angle = (angle_targ - s[4]) * 0.5 - s[5] * 1.0;
  t.hover = (hover_targ - s[1]) * 0.5 - s[3] * 0.5;
  if (s[6] != 0 || s[7] != 0) {  // legs have contact
    t.angle = 0;
    t.hover = -s[3] * 0.5;  // override to reduce fall speed, that's all we need after contact
  }
  return t;
}

}  // namespace

std::int64_t LunarLanderHeuristic::act_discrete(std::span<const float> obs,
                                                std::span<const std::uint8_t>) {
  const Correction t = heuristic_correction(obs);
  if (t.hover > std::fabs(t.angle) && t.hover > 0.05) return 2;
  if (t.angle < -0.05) return 3;
  if (t.angle > +0.05) return 1;
  return 0;
}

void LunarLanderHeuristic::act_continuous(std::span<const float> obs, std::span<double> action) {
  DPRL_DCHECK(action.size() >= 2);
  const Correction t = heuristic_correction(obs);
  action[0] = std::clamp(t.hover * 20 - 1, -1.0, 1.0);
  action[1] = std::clamp(-t.angle * 20, -1.0, 1.0);
}

std::unique_ptr<Policy> make_lunar_lander_heuristic(const Env& env) {
  if (env.spec().id != "lunar_lander")
    throw ParamError(
        fmt::format("policy lunar_lander_heuristic needs lunar_lander, not {}", env.spec().id));
  return std::make_unique<LunarLanderHeuristic>();
}

}  // namespace dprl::envs
