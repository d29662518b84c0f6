// CartPole: a pole balanced on a cart pushed left or right (Barto, Sutton and Anderson, 1983).
//
// Matches Gymnasium 1.3 gymnasium/envs/classic_control/cartpole.py (CartPoleEnv; dynamically the
// same as v1.2.3) wrapped in TimeLimit: CartPole-v1 (500 steps) and CartPole-v0 (200 steps).
// Bit-identical float64 trajectories: same operation order, glibc sin/cos, -ffp-contract=off.
//
// State (float64) [x, x_dot, theta, theta_dot]; theta = 0 is upright, positive leans toward +x.
// Observation: the state cast to float32, Box(-high, high) with
// high = [2 x_threshold, inf, 2 theta_threshold_radians, inf].
// Action: Discrete(2); 1 pushes with +force_mag, 0 with -force_mag.
// Termination: |x| > x_threshold or |theta| > theta_threshold_radians after the update.
// Reward: 1 per step including the terminating one, 0 on steps after termination
// (Gymnasium's steps_beyond_terminated); sutton_barto_reward gives 0 per step and -1 on and after
// termination. Reset: each state component ~ U(-0.05, 0.05) from the episode seed.
// set_state() restores the four numbers and forgets any earlier termination.
//
// | parameter               | default           | range          | meaning                       |
// |-------------------------|-------------------|----------------|-------------------------------|
// | gravity                 | 9.8               | (0, inf)       | m/s^2                         |
// | masscart                | 1.0               | (0, inf)       | kg                            |
// | masspole                | 0.1               | (0, inf)       | kg                            |
// | length                  | 0.5               | (0, inf)       | half the pole length, m       |
// | force_mag               | 10.0              | (0, inf)       | push force, N                 |
// | tau                     | 0.02              | (0, 1]         | seconds per step              |
// | kinematics_integrator   | euler             | euler, semi-implicit | explicit or symplectic  |
// | sutton_barto_reward     | false             | bool           | 0 per step, -1 on failure     |
// | x_threshold             | 2.4               | (0, inf)       | cart position limit, m        |
// | theta_threshold_radians | 12*2*pi/360       | (0, pi]        | pole angle limit              |
// | max_episode_steps       | 500               | [1, 1e9]       | TimeLimit                     |
#pragma once

#include <cstdint>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct CartPoleParams {
  // Gymnasium cartpole.py constants
  double gravity = 9.8;
  double masscart = 1.0;
  double masspole = 0.1;
  double length = 0.5;
  double force_mag = 10.0;
  double tau = 0.02;
  std::string kinematics_integrator = "euler";
  bool sutton_barto_reward = false;
  double x_threshold = 2.4;
  double theta_threshold_radians = 12 * 2 * std::numbers::pi / 360;
  int max_episode_steps = 500;  // CartPole-v1 registration

  template <class V>
  void visit(V& v) {
    v("gravity", gravity, Range::positive(), "gravitational acceleration (m/s^2)");
    v("masscart", masscart, Range::positive(), "cart mass (kg)");
    v("masspole", masspole, Range::positive(), "pole mass (kg)");
    v("length", length, Range::positive(), "half the pole's length (m)");
    v("force_mag", force_mag, Range::positive(), "magnitude of the push (N)");
    v("tau", tau, Range::left_open(0, 1), "seconds between state updates");
    v("kinematics_integrator", kinematics_integrator, Choices{{"euler", "semi-implicit"}},
      "euler: positions advance with the old velocities; semi-implicit: with the new ones");
    v("sutton_barto_reward", sutton_barto_reward,
      "reward 0 per step and -1 on termination instead of +1 per step");
    v("x_threshold", x_threshold, Range::positive(), "episode ends when |x| exceeds this (m)");
    v("theta_threshold_radians", theta_threshold_radians, Range::left_open(0, std::numbers::pi),
      "episode ends when |theta| exceeds this (rad)");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class CartPole final : public Env {
 public:
  using Params = CartPoleParams;
  explicit CartPole(const Params& p = Params{});

  std::vector<double> state() const override { return {x_, x_dot_, theta_, theta_dot_}; }
  ParamMap params() const override { return dump_params(p_); }

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  void store_state(double x, double x_dot, double theta, double theta_dot);
  void write_obs(std::span<float> obs) const;

  Params p_;
  bool euler_ = true;
  double total_mass_ = 0;       // masspole + masscart
  double polemass_length_ = 0;  // masspole * length
  double forces_[2] = {};       // force of action 0 and 1
  double x_ = 0, x_dot_ = 0, theta_ = 0, theta_dot_ = 0;
  int steps_beyond_terminated_ = -1;  // -1 is Gymnasium's None
  Rng rng_;
};

}  // namespace dprl::envs
