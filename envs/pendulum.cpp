#include "envs/pendulum.hpp"

#include <cmath>
#include <numbers>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {

Pendulum::Pendulum(const Params& p) : p_(p) {
  validate_params(p_, "pendulum");
  // grouped as in the reference: 3 * g / (2 * l) and 3.0 / (m * l**2)
  gain_sin_ = 3 * p_.g / (2 * p_.l);
  gain_torque_ = 3.0 / (p_.m * py_square(p_.l));
  spec_.id = "pendulum";
  const double hs = round_to_float(p_.max_speed);
  spec_.observation = Space::box({-1.0, -1.0, -hs}, {1.0, 1.0, hs});
  const double ht = round_to_float(p_.max_torque);
  spec_.action = Space::box(1, -ht, ht);
  spec_.max_episode_steps = p_.max_episode_steps;
}

double Pendulum::angle_normalize(double x) {
  constexpr double kPi = std::numbers::pi;
  constexpr double kTwoPi = 2 * std::numbers::pi;
  const double a = x + kPi;
  // fmod is exact and returns a itself on [0, 2 pi): skip the slow call there
  if (a >= 0 && a < kTwoPi) return a - kPi;
  // Python/NumPy float modulo: fmod, then shifted into the divisor's sign
  double mod = std::fmod(a, kTwoPi);
  if (mod != 0) {
    if (mod < 0) mod += kTwoPi;
  } else {
    mod = 0.0;
  }
  return mod - kPi;
}

void Pendulum::write_obs(std::span<float> obs) {
  const double c = std::cos(th_);
  sin_th_ = std::sin(th_);
  obs[0] = static_cast<float>(c);
  obs[1] = static_cast<float>(sin_th_);
  obs[2] = static_cast<float>(thdot_);
}

void Pendulum::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  th_ = rng_.uniform(-std::numbers::pi, std::numbers::pi);
  thdot_ = rng_.uniform(-1.0, 1.0);
  write_obs(obs);
}

StepResult Pendulum::do_step(std::span<const double> action, std::span<float> obs) {
  check_continuous_action(spec_, action);
  // np.clip(u, -max_torque, max_torque)
  double u = action[0];
  u = u < -p_.max_torque ? -p_.max_torque : (u > p_.max_torque ? p_.max_torque : u);

  const double an = angle_normalize(th_);
  const double costs = py_square(an) + 0.1 * py_square(thdot_) + 0.001 * py_square(u);
  double newthdot = thdot_ + (gain_sin_ * sin_th_ + gain_torque_ * u) * p_.dt;
  newthdot = newthdot < -p_.max_speed ? -p_.max_speed
                                      : (newthdot > p_.max_speed ? p_.max_speed : newthdot);
  const double newth = th_ + newthdot * p_.dt;
  // separate scalar stores (a packed store would miss store forwarding in the next step)
  th_ = newth;
  compiler_barrier();
  thdot_ = newthdot;

  StepResult r;
  r.reward = -costs;
  write_obs(obs);
  return r;
}

void Pendulum::do_set_state(std::span<const double> s) {
  check_state(spec_, s, 2);
  th_ = s[0];
  thdot_ = s[1];
  sin_th_ = std::sin(th_);
}

void Pendulum::do_sync_state(StateIo& io) {
  io.section("pendulum");
  io(th_);
  io(thdot_);
  io(sin_th_);
  io(rng_);
}

}  // namespace dprl::envs
