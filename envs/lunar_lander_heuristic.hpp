// Gymnasium's hand-written LunarLander controller as a Policy (`lunar_lander_heuristic`).
//
// Source: gymnasium/envs/box2d/lunar_lander.py, function heuristic(env, s) (Gymnasium 1.3). On the
// observation s:
//   angle_targ = clip(0.5 s0 + s2, -0.4, 0.4); hover_targ = 0.55 |s0|
//   angle_cmd = (angle_targ - s4) 0.5 - s5;  hover_cmd = (hover_targ - s1) 0.5 - 0.5 s3
//   a leg touching (s6 or s7): angle_cmd = 0, hover_cmd = -0.5 s3
//   continuous: clip([20 hover_cmd - 1, -20 angle_cmd], -1, 1)
//   discrete:   2 if hover_cmd > |angle_cmd| and hover_cmd > 0.05, else 3 if angle_cmd < -0.05,
//               else 1 if angle_cmd > 0.05, else 0.
// Deterministic (no parameters). Works with the discrete and the continuous env.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/env.hpp"
#include "engine/policy.hpp"

namespace dprl::envs {

class LunarLanderHeuristic final : public Policy {
 public:
  std::string name() const override { return "lunar_lander_heuristic"; }
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;
  void act_continuous(std::span<const float> obs, std::span<double> action) override;
};

// The heuristic for env; throws ParamError unless env is lunar_lander (either action space).
// Built-in policy factory for algos::builtin_policies().
std::unique_ptr<Policy> make_lunar_lander_heuristic(const Env& env);

}  // namespace dprl::envs
