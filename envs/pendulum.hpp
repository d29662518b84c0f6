// Pendulum: swing a torque-limited pendulum up and keep it upright.
//
// Matches Gymnasium 1.3 gymnasium/envs/classic_control/pendulum.py (PendulumEnv; dynamically the
// same as v1.2.3) wrapped in TimeLimit: Pendulum-v1 (200 steps). Bit-identical float64
// trajectories for float64 actions (glibc sin/cos/pow: Python's x**2 is pow, not x*x; same
// operation order; -ffp-contract=off).
//
// State (float64) [theta, theta_dot]; theta = 0 is upright and is never wrapped.
// Observation (float32) [cos theta, sin theta, theta_dot] in Box(-high, high) with
// high = [1, 1, max_speed]. Action: Box(-max_torque, max_torque, (1,)). Like the reference, step
// clips the torque into the box itself (so +-inf is accepted and clipped); NaN and wrong sizes
// throw InvalidAction.
// Step: u = clip(a); cost = angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2 on the state
// before the update, with angle_normalize(x) = ((x + pi) mod 2 pi) - pi (floored modulo);
// theta_dot += (3 g / (2 l) sin theta + 3 / (m l^2) u) dt, clipped to +-max_speed; then
// theta += theta_dot dt (the new velocity). Reward -cost; never terminates.
// Reset: theta ~ U(-pi, pi), theta_dot ~ U(-1, 1) from the episode seed.
//
// | parameter         | default | range      | meaning                                  |
// |-------------------|---------|------------|------------------------------------------|
// | g                 | 10.0    | (0, inf)   | gravitational acceleration (m/s^2)       |
// | m                 | 1.0     | (0, inf)   | mass (kg)                                |
// | l                 | 1.0     | (0, inf)   | length (m)                               |
// | max_speed         | 8       | (0, inf)   | angular velocity clip (rad/s)            |
// | max_torque        | 2.0     | (0, inf)   | torque clip and action bound             |
// | dt                | 0.05    | (0, 1]     | seconds per step                         |
// | max_episode_steps | 200     | [1, 1e9]   | TimeLimit                                |
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct PendulumParams {
  // Gymnasium pendulum.py constants
  double g = 10.0;
  double m = 1.0;
  double l = 1.0;
  double max_speed = 8;
  double max_torque = 2.0;
  double dt = 0.05;
  int max_episode_steps = 200;  // Pendulum-v1 registration

  template <class V>
  void visit(V& v) {
    v("g", g, Range::positive(), "gravitational acceleration (m/s^2)");
    v("m", m, Range::positive(), "pendulum mass (kg)");
    v("l", l, Range::positive(), "pendulum length (m)");
    v("max_speed", max_speed, Range::positive(), "angular velocity clip (rad/s)");
    v("max_torque", max_torque, Range::positive(), "torque clip and action bound");
    v("dt", dt, Range::left_open(0, 1), "seconds per step");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class Pendulum final : public Env {
 public:
  using Params = PendulumParams;
  explicit Pendulum(const Params& p = Params{});

  std::vector<double> state() const override { return {th_, thdot_}; }
  ParamMap params() const override { return dump_params(p_); }

  // ((x + pi) mod 2 pi) - pi with Python's floored modulo: the result is in [-pi, pi).
  static double angle_normalize(double x);

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::span<const double> action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  void write_obs(std::span<float> obs);

  Params p_;
  double gain_sin_ = 0;     // 3 g / (2 l)
  double gain_torque_ = 0;  // 3 / (m l^2)
  double th_ = 0, thdot_ = 0;
  double sin_th_ = 0;  // sin(th_), computed with the observation and reused by the next step
  Rng rng_;
};

}  // namespace dprl::envs
