#include "envs/acrobot.hpp"

#include <cmath>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

constexpr double kPi = std::numbers::pi;

// Gymnasium's wrap(x, -pi, pi): repeated +-2 pi, so +-pi stay as they are
double wrap_pi(double x) {
  constexpr double kDiff = kPi - -kPi;
  // Gymnasium's loop never ends once x - 2 pi == x (and takes |x| / 2 pi rounds before that); far
  // outside [-pi, pi], reachable only through set_state, the remainder stands in for it
  if (std::abs(x) > 1e6) x = std::remainder(x, kDiff);
  while (x > kPi) x = x - kDiff;
  while (x < -kPi) x = x + kDiff;
  return x;
}

// Python's min(max(x, lo), hi)
double bound(double x, double lo, double hi) {
  const double y = lo > x ? lo : x;
  return hi < y ? hi : y;
}

}  // namespace

Acrobot::Acrobot(const Params& p) : p_(p) {
  validate_params(p_, "acrobot");
  book_ = p_.book_or_nips == "book";
  const double m1 = p_.link_mass_1, m2 = p_.link_mass_2, l1 = p_.link_length_1;
  const double lc1 = p_.link_com_pos_1, lc2 = p_.link_com_pos_2, g = p_.g;
  m1_lc1sq_ = m1 * py_square(lc1);
  l1sq_lc2sq_ = py_square(l1) + py_square(lc2);
  two_l1_lc2_ = 2 * l1 * lc2;
  lc2sq_ = py_square(lc2);
  l1_lc2_ = l1 * lc2;
  m2_lc2_g_ = m2 * lc2 * g;
  neg_m2_l1_lc2_ = -m2 * l1 * lc2;
  two_m2_l1_lc2_ = 2 * m2 * l1 * lc2;
  m1lc1_m2l1_g_ = (m1 * lc1 + m2 * l1) * g;
  m2_l1_lc2_ = m2 * l1 * lc2;
  m2_lc2sq_i2_ = m2 * py_square(lc2) + p_.link_moi_2;

  spec_.id = "acrobot";
  const double v1 = round_to_float(p_.max_vel_1);
  const double v2 = round_to_float(p_.max_vel_2);
  spec_.observation = Space::box({-1.0, -1.0, -1.0, -1.0, -v1, -v2}, {1.0, 1.0, 1.0, 1.0, v1, v2});
  spec_.action = Space::discrete(3);
  spec_.max_episode_steps = p_.max_episode_steps;
  spec_.has_reward_threshold = true;
  spec_.reward_threshold = -100;  // Acrobot-v1 registration
}

Acrobot::Vec4 Acrobot::dsdt(const Vec4& s, double a) const {
  const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
  const double I1 = p_.link_moi_1, I2 = p_.link_moi_2, m2 = p_.link_mass_2;
  const double cos2 = std::cos(theta2);
  const double sin2 = std::sin(theta2);
  const double d1 = m1_lc1sq_ + m2 * (l1sq_lc2sq_ + two_l1_lc2_ * cos2) + I1 + I2;
  const double d2 = m2 * (lc2sq_ + l1_lc2_ * cos2) + I2;
  const double phi2 = m2_lc2_g_ * std::cos(theta1 + theta2 - kPi / 2.0);
  const double phi1 = neg_m2_l1_lc2_ * py_square(dtheta2) * sin2 -
                      two_m2_l1_lc2_ * dtheta2 * dtheta1 * sin2 +
                      m1lc1_m2l1_g_ * std::cos(theta1 - kPi / 2) + phi2;
  const double denom = m2_lc2sq_i2_ - py_square(d2) / d1;
  double ddtheta2;
  if (book_) {
    ddtheta2 = (a + d2 / d1 * phi1 - m2_l1_lc2_ * py_square(dtheta1) * sin2 - phi2) / denom;
  } else {
    ddtheta2 = (a + d2 / d1 * phi1 - phi2) / denom;
  }
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2};
}

// One scalar store each: a vectorized store of the state makes the next step's scalar loads miss
// store forwarding (see CartPole::store_state).
inline void Acrobot::store_state(const Vec4& s) {
  s_[0] = s[0];
  compiler_barrier();
  s_[1] = s[1];
  compiler_barrier();
  s_[2] = s[2];
  compiler_barrier();
  s_[3] = s[3];
}

void Acrobot::write_obs(std::span<float> obs) const {
  obs[0] = static_cast<float>(std::cos(s_[0]));
  obs[1] = static_cast<float>(std::sin(s_[0]));
  obs[2] = static_cast<float>(std::cos(s_[1]));
  obs[3] = static_cast<float>(std::sin(s_[1]));
  obs[4] = static_cast<float>(s_[2]);
  obs[5] = static_cast<float>(s_[3]);
}

void Acrobot::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  // drawn in float64, then stored as float32 like the reference
  Vec4 s;
  for (auto& v : s) v = round_to_float(rng_.uniform(-0.1, 0.1));
  store_state(s);
  write_obs(obs);
}

StepResult Acrobot::do_step(std::int64_t action, std::span<float> obs) {
  if (action < 0 || action > 2) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  double torque = static_cast<double>(action - 1);
  if (p_.torque_noise_max > 0) torque += rng_.uniform(-p_.torque_noise_max, p_.torque_noise_max);

  // one RK4 step over [0, dt]; the torque is constant across the stages
  const double dt = p_.dt;
  const double dt2 = dt / 2.0;
  const Vec4 y0 = s_;
  Vec4 y;
  const Vec4 k1 = dsdt(y0, torque);
  for (int i = 0; i < 4; ++i) y[i] = y0[i] + dt2 * k1[i];
  const Vec4 k2 = dsdt(y, torque);
  for (int i = 0; i < 4; ++i) y[i] = y0[i] + dt2 * k2[i];
  const Vec4 k3 = dsdt(y, torque);
  for (int i = 0; i < 4; ++i) y[i] = y0[i] + dt * k3[i];
  const Vec4 k4 = dsdt(y, torque);
  const double c = dt / 6.0;
  Vec4 ns;
  for (int i = 0; i < 4; ++i) ns[i] = y0[i] + c * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);

  ns[0] = wrap_pi(ns[0]);
  ns[1] = wrap_pi(ns[1]);
  ns[2] = bound(ns[2], -p_.max_vel_1, p_.max_vel_1);
  ns[3] = bound(ns[3], -p_.max_vel_2, p_.max_vel_2);
  store_state(ns);

  // the observation and the termination test share cos(theta1)
  const double cos1 = std::cos(ns[0]);
  obs[0] = static_cast<float>(cos1);
  obs[1] = static_cast<float>(std::sin(ns[0]));
  obs[2] = static_cast<float>(std::cos(ns[1]));
  obs[3] = static_cast<float>(std::sin(ns[1]));
  obs[4] = static_cast<float>(ns[2]);
  obs[5] = static_cast<float>(ns[3]);

  StepResult r;
  r.terminated = -cos1 - std::cos(ns[1] + ns[0]) > 1.0;
  r.reward = r.terminated ? 0.0 : -1.0;
  return r;
}

void Acrobot::do_set_state(std::span<const double> s) {
  check_state(spec_, s, 4);
  store_state({s[0], s[1], s[2], s[3]});
}

void Acrobot::do_sync_state(StateIo& io) {
  io.section("acrobot");
  io(s_);
  io(rng_);
}

}  // namespace dprl::envs
