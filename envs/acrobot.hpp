// Acrobot: a two-link pendulum actuated at the middle joint; swing the tip above a line.
//
// Matches Gymnasium 1.3 gymnasium/envs/classic_control/acrobot.py (AcrobotEnv; dynamically the
// same as v1.2.3) wrapped in TimeLimit: Acrobot-v1 (500 steps). Bit-identical float64
// trajectories: same operation order, glibc sin/cos/pow (Python's x**2 is pow, not x*x),
// -ffp-contract=off.
//
// State (float64) [theta1, theta2, dtheta1, dtheta2]; theta1 = 0 hangs down, theta2 is relative
// to link 1. Observation (float32) [cos t1, sin t1, cos t2, sin t2, dtheta1, dtheta2], bounds
// +-[1, 1, 1, 1, max_vel_1, max_vel_2]. Action: Discrete(3), torque -1, 0, +1 (plus
// U(-torque_noise_max, torque_noise_max) noise from the episode stream when that is positive).
// Step: one classical RK4 step of size dt on [t1, t2, dt1, dt2] ("book" or "nips" dynamics);
// afterwards the angles are wrapped into [-pi, pi] by repeated +-2 pi and the velocities clipped.
// Termination: -cos t1 - cos(t2 + t1) > 1 (fixed threshold, as in the reference). Reward -1 per
// step, 0 on the terminating step. Reset: each component ~ U(-0.1, 0.1), rounded to float32.
// link_length_2 is not part of the dynamics (link 2's mass sits at link_com_pos_2); it is listed
// because Gymnasium lists it (it only draws with it).
//
// | parameter         | default | range      | meaning                                  |
// |-------------------|---------|------------|------------------------------------------|
// | link_length_1     | 1.0     | (0, inf)   | m                                        |
// | link_length_2     | 1.0     | (0, inf)   | m (not used by the dynamics)             |
// | link_mass_1       | 1.0     | (0, inf)   | kg                                       |
// | link_mass_2       | 1.0     | (0, inf)   | kg                                       |
// | link_com_pos_1    | 0.5     | [0, inf)   | centre of mass of link 1 from its joint  |
// | link_com_pos_2    | 0.5     | [0, inf)   | centre of mass of link 2 from its joint  |
// | link_moi_1        | 1.0     | (0, inf)   | moment of inertia of link 1              |
// | link_moi_2        | 1.0     | (0, inf)   | moment of inertia of link 2              |
// | g                 | 9.8     | [0, inf)   | m/s^2                                    |
// | max_vel_1         | 4 pi    | (0, inf)   | clip of dtheta1 (rad/s)                  |
// | max_vel_2         | 9 pi    | (0, inf)   | clip of dtheta2 (rad/s)                  |
// | dt                | 0.2     | (0, 10]    | seconds per step (one RK4 step)          |
// | book_or_nips      | book    | book, nips | book keeps the dtheta1^2 term            |
// | torque_noise_max  | 0.0     | [0, 1e3]   | uniform torque noise amplitude           |
// | max_episode_steps | 500     | [1, 1e9]   | TimeLimit                                |
#pragma once

#include <array>
#include <cstdint>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl::envs {

struct AcrobotParams {
  // Gymnasium acrobot.py class constants
  double link_length_1 = 1.0;
  double link_length_2 = 1.0;
  double link_mass_1 = 1.0;
  double link_mass_2 = 1.0;
  double link_com_pos_1 = 0.5;
  double link_com_pos_2 = 0.5;
  double link_moi_1 = 1.0;
  double link_moi_2 = 1.0;
  double g = 9.8;
  double max_vel_1 = 4 * std::numbers::pi;
  double max_vel_2 = 9 * std::numbers::pi;
  double dt = 0.2;
  std::string book_or_nips = "book";
  double torque_noise_max = 0.0;
  int max_episode_steps = 500;  // Acrobot-v1 registration

  template <class V>
  void visit(V& v) {
    v("link_length_1", link_length_1, Range::positive(), "length of link 1 (m)");
    v("link_length_2", link_length_2, Range::positive(),
      "length of link 2 (m); not used by the dynamics, as in the reference");
    v("link_mass_1", link_mass_1, Range::positive(), "mass of link 1 (kg)");
    v("link_mass_2", link_mass_2, Range::positive(), "mass of link 2 (kg)");
    v("link_com_pos_1", link_com_pos_1, Range::non_negative(),
      "centre of mass of link 1 from the pivot (m)");
    v("link_com_pos_2", link_com_pos_2, Range::non_negative(),
      "centre of mass of link 2 from the joint (m)");
    v("link_moi_1", link_moi_1, Range::positive(), "moment of inertia of link 1");
    v("link_moi_2", link_moi_2, Range::positive(), "moment of inertia of link 2");
    v("g", g, Range::non_negative(), "gravitational acceleration (m/s^2)");
    v("max_vel_1", max_vel_1, Range::positive(), "clip of dtheta1 after each step (rad/s)");
    v("max_vel_2", max_vel_2, Range::positive(), "clip of dtheta2 after each step (rad/s)");
    v("dt", dt, Range::left_open(0, 10), "seconds per step (one RK4 step)");
    v("book_or_nips", book_or_nips, Choices{{"book", "nips"}},
      "book: Sutton and Barto's dynamics; nips: without the dtheta1^2 term in ddtheta2");
    v("torque_noise_max", torque_noise_max, Range::closed(0, 1e3),
      "amplitude of uniform noise added to the torque");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class Acrobot final : public Env {
 public:
  using Params = AcrobotParams;
  explicit Acrobot(const Params& p = Params{});

  std::vector<double> state() const override { return {s_[0], s_[1], s_[2], s_[3]}; }
  ParamMap params() const override { return dump_params(p_); }

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::int64_t action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  using Vec4 = std::array<double, 4>;
  Vec4 dsdt(const Vec4& s, double a) const;
  void store_state(const Vec4& s);
  void write_obs(std::span<float> obs) const;

  Params p_;
  bool book_ = true;
  // sub-expressions of the reference that depend on parameters only, grouped as it groups them
  double m1_lc1sq_ = 0;       // m1 * lc1**2
  double l1sq_lc2sq_ = 0;     // l1**2 + lc2**2
  double two_l1_lc2_ = 0;     // 2 * l1 * lc2
  double lc2sq_ = 0;          // lc2**2
  double l1_lc2_ = 0;         // l1 * lc2
  double m2_lc2_g_ = 0;       // m2 * lc2 * g
  double neg_m2_l1_lc2_ = 0;  // -m2 * l1 * lc2
  double two_m2_l1_lc2_ = 0;  // 2 * m2 * l1 * lc2
  double m1lc1_m2l1_g_ = 0;   // (m1 * lc1 + m2 * l1) * g
  double m2_l1_lc2_ = 0;      // m2 * l1 * lc2
  double m2_lc2sq_i2_ = 0;    // m2 * lc2**2 + I2
  Vec4 s_{};
  Rng rng_;
};

}  // namespace dprl::envs
