#include "envs/cartpole.hpp"

#include <cmath>
#include <limits>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {

CartPole::CartPole(const Params& p) : p_(p) {
  validate_params(p_, "cartpole");
  euler_ = p_.kinematics_integrator == "euler";
  total_mass_ = p_.masspole + p_.masscart;
  polemass_length_ = p_.masspole * p_.length;
  forces_[0] = -p_.force_mag;
  forces_[1] = p_.force_mag;

  constexpr double kInf = std::numeric_limits<double>::infinity();
  // the float32 bounds Gymnasium builds its Box from
  const double hx = round_to_float(p_.x_threshold * 2);
  const double ht = round_to_float(p_.theta_threshold_radians * 2);
  spec_.id = "cartpole";
  spec_.observation = Space::box({-hx, -kInf, -ht, -kInf}, {hx, kInf, ht, kInf});
  spec_.action = Space::discrete(2);
  spec_.max_episode_steps = p_.max_episode_steps;
  // CartPole-v1 475, CartPole-v0 195 (Gymnasium registrations); 0 under Sutton-Barto rewards
  spec_.has_reward_threshold = true;
  spec_.reward_threshold = p_.sutton_barto_reward        ? 0.0
                           : p_.max_episode_steps == 200 ? 195.0
                                                         : 475.0;
}

// Scalar stores on purpose: GCC's SLP vectorizer would otherwise pack the four values into one
// 256-bit (or two 128-bit) stores whose scalar reloads in the next step miss store forwarding
// (measured: the step took twice as long).
inline void CartPole::store_state(double x, double x_dot, double theta, double theta_dot) {
  x_ = x;
  compiler_barrier();
  x_dot_ = x_dot;
  compiler_barrier();
  theta_ = theta;
  compiler_barrier();
  theta_dot_ = theta_dot;
}

void CartPole::write_obs(std::span<float> obs) const {
  obs[0] = static_cast<float>(x_);
  obs[1] = static_cast<float>(x_dot_);
  obs[2] = static_cast<float>(theta_);
  obs[3] = static_cast<float>(theta_dot_);
}

void CartPole::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  const double x = rng_.uniform(-0.05, 0.05);
  const double x_dot = rng_.uniform(-0.05, 0.05);
  const double theta = rng_.uniform(-0.05, 0.05);
  const double theta_dot = rng_.uniform(-0.05, 0.05);
  store_state(x, x_dot, theta, theta_dot);
  steps_beyond_terminated_ = -1;
  write_obs(obs);
}

StepResult CartPole::do_step(std::int64_t action, std::span<float> obs) {
  if (action != 0 && action != 1) [[unlikely]]
    throw_bad_discrete_action(spec_, action);

  // dynamics, grouped as in the reference so that every rounding matches
  const double force = forces_[action];  // a load, not a branch on the random action
  const double costheta = std::cos(theta_);
  const double sintheta = std::sin(theta_);
  const double temp =
      (force + polemass_length_ * (theta_dot_ * theta_dot_) * sintheta) / total_mass_;
  const double thetaacc =
      (p_.gravity * sintheta - costheta * temp) /
      (p_.length * (4.0 / 3.0 - p_.masspole * (costheta * costheta) / total_mass_));
  const double xacc = temp - polemass_length_ * thetaacc * costheta / total_mass_;

  double x = x_, x_dot = x_dot_, theta = theta_, theta_dot = theta_dot_;
  if (euler_) {
    x = x + p_.tau * x_dot;
    x_dot = x_dot + p_.tau * xacc;
    theta = theta + p_.tau * theta_dot;
    theta_dot = theta_dot + p_.tau * thetaacc;
  } else {
    x_dot = x_dot + p_.tau * xacc;
    x = x + p_.tau * x_dot;
    theta_dot = theta_dot + p_.tau * thetaacc;
    theta = theta + p_.tau * theta_dot;
  }
  StepResult r;
  r.terminated = x < -p_.x_threshold || x > p_.x_threshold || theta < -p_.theta_threshold_radians ||
                 theta > p_.theta_threshold_radians;
  obs[0] = static_cast<float>(x);
  obs[1] = static_cast<float>(x_dot);
  obs[2] = static_cast<float>(theta);
  obs[3] = static_cast<float>(theta_dot);
  store_state(x, x_dot, theta, theta_dot);
  // reward, with Gymnasium's steps_beyond_terminated bookkeeping
  if (!r.terminated) {
    r.reward = p_.sutton_barto_reward ? 0.0 : 1.0;
  } else if (steps_beyond_terminated_ < 0) {
    steps_beyond_terminated_ = 0;
    r.reward = p_.sutton_barto_reward ? -1.0 : 1.0;
  } else {
    ++steps_beyond_terminated_;
    r.reward = p_.sutton_barto_reward ? -1.0 : 0.0;
  }
  return r;
}

void CartPole::do_set_state(std::span<const double> s) {
  check_state(spec_, s, 4);
  store_state(s[0], s[1], s[2], s[3]);
  steps_beyond_terminated_ = -1;
}

void CartPole::do_sync_state(StateIo& io) {
  io.section("cartpole");
  io(x_);
  io(x_dot_);
  io(theta_);
  io(theta_dot_);
  io.bounded(steps_beyond_terminated_, -1, p_.max_episode_steps, "steps beyond termination");
  io(rng_);
}

}  // namespace dprl::envs
