// LunarLander: land a rocket on a pad between two flags, with a main and two side engines.
//
// Matches Gymnasium 1.3 gymnasium/envs/box2d/lunar_lander.py (LunarLander-v3, dynamically the same
// as v1.2.3) wrapped in TimeLimit(1000): LunarLander-v3 (discrete) and LunarLanderContinuous-v3
// (continuous: true). The environment variants of Sharma et al., "Preserving Expert-Level
// Privacy in Offline Reinforcement Learning" (TMLR), appendix B.1 (gravity, wind power,
// turbulence) are parameters.
//
// Physics: Box2D 2.4 (Debian's libbox2d), where Gymnasium uses pybox2d 2.3.10. The scene, the
// 1/50 s step with 180 velocity and 60 position iterations, the fixtures, joints and sleep
// thresholds are the same; 2.4 differs in details (per-fixture restitution threshold, two-sided
// edge shapes set with SetTwoSided, revised joint and contact solvers), so trajectories follow
// Gymnasium's statistically, not bit for bit. The RNG is dprl::Rng seeded with the episode seed,
// drawn in Gymnasium's order: 12 terrain heights U(0, H/2), the initial force (Fx, Fy) in
// U(-1000, 1000)^2, [wind_idx, torque_idx] in [-9999, 9999) when enable_wind, then 2 dispersion
// draws U(-1, 1) every step (engines on or off). reset() performs one no-op step (Gymnasium's
// reset does) that does not count toward the time limit.
//
// Observation (float32, computed in float64 from Box2D's float32 body state):
//   [(x - W/2)/(W/2), (y - (helipad_y + LEG_DOWN/SCALE))/(H/2), vx (W/2)/FPS, vy (H/2)/FPS,
//    angle, 20 omega/FPS, leg 0 contact, leg 1 contact]. Gymnasium declares bounds +-2.5
//   (positions), +-10 (velocities), +-2 pi (angle), +-10 (angular) but never enforces them, and
//   they are exceeded (a spinning lander's unbounded Box2D angle passes 2 pi under random
//   actions), so our space leaves those six unbounded and bounds the leg flags to [0, 1].
// Actions: Discrete(4) 0 noop, 1 left engine, 2 main, 3 right engine; continuous Box(-1, 1, (2,)),
//   clipped to [-1, 1] as Gymnasium does: main engine at (clip(a0, 0, 1) + 1) / 2 when a0 > 0,
//   side engine sign(a1) at clip(|a1|, 0.5, 1) when |a1| > 0.5. NaN throws InvalidAction.
// Reward: shaping difference (distance, speed, angle, leg contacts) - 0.3 per full main-engine
// step - 0.03 per side-engine step; -100 and terminated on a lander-body contact or |x_obs| >= 1;
// +100 and terminated when Box2D puts the lander to sleep (overrides the crash).
// Wind (enable_wind, legs off the ground): force tanh(sin(0.02 k) + sin(0.01 pi k)) wind_power
// along x and torque tanh(sin(0.02 j) + sin(0.01 pi j)) turbulence_power, k and j counting up.
//
// State: Box2D 2.4 has no world snapshot, so state() is the replay recipe
//   [seed >> 32, seed & 0xffffffff, n, a_1, ..., a_n]
// (the 64-bit episode seed split into two exactly representable halves, the number of steps since
// reset, then the actions: n values when discrete, 2n clipped values when continuous), and
// set_state() rebuilds the world from the seed and re-simulates the actions, reproducing every
// observation bit for bit (Box2D is deterministic for the same sequence of calls). set_state
// costs O(n) steps and restarts the step counter at 0; later steps extend the same recipe.
// Snapshots (run checkpoints, Env::snapshot) hold the same recipe and the step counter: a restore
// re-simulates the episode so far (at most max_episode_steps Box2D steps, about a millisecond per
// hundred) and is then exact, so runs on LunarLander resume to the bytes of uninterrupted runs.
//
// Allocation: the world is rebuilt in place each reset (no operator new); bodies, fixtures and
// contacts come from Box2D's own block allocator (malloc through b2Alloc, reused after warm-up),
// and the action history has room for max_episode_steps steps (capped at 1e5) reserved up front,
// so step() and reset() call no operator new within the limit.
//
// | parameter         | default | range    | meaning                                          |
// |-------------------|---------|----------|--------------------------------------------------|
// | continuous        | false   | bool     | Box(-1, 1, (2,)) actions (LunarLanderContinuous) |
// | gravity           | -10     | (-12, 0) | vertical gravity, m/s^2 (Gymnasium asserts this) |
// | enable_wind       | false   | bool     | apply wind and turbulence while airborne         |
// | wind_power        | 15      | [0, 20]  | peak horizontal wind force                       |
// | turbulence_power  | 1.5     | [0, 2]   | peak rotational turbulence torque                |
// | max_episode_steps | 1000    | [1, 1e6] | TimeLimit                                        |
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"

namespace dprl::envs {

struct LunarLanderParams {
  // Gymnasium LunarLander.__init__ defaults and its registration
  bool continuous = false;
  double gravity = -10.0;
  bool enable_wind = false;
  double wind_power = 15.0;
  double turbulence_power = 1.5;
  int max_episode_steps = 1000;

  template <class V>
  void visit(V& v) {
    v("continuous", continuous, "2-dim Box(-1, 1) actions instead of Discrete(4)");
    v("gravity", gravity, Range::open(-12, 0), "vertical gravity (m/s^2, negative is down)");
    v("enable_wind", enable_wind, "apply wind force and turbulence torque while no leg touches");
    v("wind_power", wind_power, Range::closed(0, 20), "peak wind force on the lander (N)");
    v("turbulence_power", turbulence_power, Range::closed(0, 2),
      "peak turbulence torque on the lander (N m)");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e6),
      "time limit: truncated on this step");
  }
};

class LunarLander final : public Env {
 public:
  using Params = LunarLanderParams;
  static constexpr int kObsDim = 8;

  explicit LunarLander(const Params& p = Params{});
  ~LunarLander() override;
  LunarLander(const LunarLander&) = delete;
  LunarLander& operator=(const LunarLander&) = delete;

  std::vector<double> state() const override;
  ParamMap params() const override { return dump_params(p_); }

  // The observation of the last step (or reset / set_state).
  std::span<const float> last_observation() const;
  // Whether the lander body is awake in Box2D (asleep = landed and at rest).
  bool lander_awake() const;

  // What a picture of the current state needs (envs/lunar_lander_render.cpp), read from the
  // Box2D world that state() determines: the terrain outline, the poses of the hull and legs,
  // and the wind force of the last step. All in world units (metres, y up, x in [0, W]).
  struct Pose {
    double x = 0, y = 0, angle = 0;  // body origin and angle (radians, counter-clockwise)
  };
  struct View {
    std::vector<double> terrain;  // x y pairs of the terrain's chunk points, left to right
    double helipad_x1 = 0, helipad_x2 = 0, helipad_y = 0;
    double width = 0, height = 0;  // the viewport in world units (600 / 30, 400 / 30)
    Pose hull;
    Pose legs[2];  // Gymnasium's i = -1 (starts on the hull's +x side), then i = +1
    bool leg_contact[2] = {false, false};
    double wind_force = 0;  // the wind force applied in the last step (0 when wind is off)
  };
  // The view of the current state; before the first reset, an empty terrain.
  View view() const;

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  StepResult do_step(std::span<const double> action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  // Checkpoints: the replay recipe; a load re-simulates it.
  void do_sync_state(StateIo& io) override;

  struct Impl;

  Params p_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dprl::envs
