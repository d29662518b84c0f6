// DMC cartpole: the DeepMind Control Suite's cart-pole, balance and swing-up tasks.
//
// Matches dm_control 1.0.x suite/cartpole.py (Balance task; balance, swingup and their _sparse
// variants) as PriMORL (paper 004, section 5) uses it: control.Environment with the suite's 10 s
// time limit at control timestep 0.01 (1000 steps, action repeat 1) and flat observations. Runs on
// MuJoCo 2.2.2. The model is our own MJCF (envs/assets/dmc_cartpole.xml) written from the suite's
// published cartpole.xml facts (bit-identical mj_step trajectories to the suite's file without its
// rendering includes, checked once, docs/envs_mujoco.md); the same text is compiled into the
// binary.
//
// State (float64): qpos [slider, hinge_1], qvel in the same order; hinge_1 = 0 is upright.
// Observation (float32, Box(-inf, inf, (5,))): [cart position, pole cos, pole sin, cart velocity,
// pole angular velocity]: the suite's position (cart x and the pole body's xmat zz, xz) then its
// velocity (qvel), read after the step with kinematics updated as the suite's step does.
// Action: Box(-1, 1, (1,)) force; ctrl = a unclipped (MuJoCo clamps to ctrlrange, gear 10 N),
// and small_control below uses the raw ctrl, as in the suite. NaN, wrong sizes and |a| > 1e10
// throw InvalidAction. Step: one mj_step (RK4, 0.01 s). Never terminates; a MuJoCo instability
// warning throws DataError (the suite raises PhysicsError).
// Reward (smooth), in [0, 1], from dm_control utils/rewards.py tolerance():
//   upright = (cos + 1) / 2
//   centered = (1 + tolerance(x, margin 2, gaussian, value 0.1 at margin)) / 2
//   small_control = (4 + tolerance(u, margin 1, quadratic, value 0 at margin)) / 5
//   small_velocity = (1 + tolerance(pole angular velocity, margin 5, gaussian)) / 2
//   reward = upright * small_control * small_velocity * centered
// with tolerance = 1 at 0 and, at distance d from 0, gaussian exp(-0.5 (d/margin)^2 (-2 ln 0.1))
// or quadratic max(0, 1 - (d/margin)^2). sparse: 1 if |x| <= 0.25 and cos >= 0.995, else 0.
// Reset (dprl's Rng from the episode seed, not NumPy's): balance: slider ~ U(-0.1, 0.1),
// hinge_1 ~ U(-0.034, 0.034); swingup: slider ~ 0.01 N(0, 1), hinge_1 ~ pi + 0.01 N(0, 1); both
// then qvel ~ 0.01 N(0, 1)^2, in the suite's draw order; then mj_forward.
//
// state(): the exact MuJoCo state [qpos (2), qvel (2), ctrl (1), time, qacc_warmstart (2)]
// (8 values, envs/mujoco_util.hpp); set_state() also takes [qpos (2), qvel (2)], which zeroes
// ctrl, time and the warm start and calls mj_forward. Env::snapshot() adds the RNG and the
// step counter.
//
// | parameter         | default | range              | meaning                              |
// |-------------------|---------|--------------------|--------------------------------------|
// | task              | balance | balance, swingup   | initial-state distribution           |
// | sparse            | false   | bool               | the suite's *_sparse reward          |
// | xml_file          | ""      | path               | "" = built-in model                  |
// | max_episode_steps | 1000    | [1, 1e9]           | time limit (10 s / 0.01 s)           |
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"
#include "envs/mujoco_util.hpp"

namespace dprl::envs {

struct DmcCartpoleParams {
  // dm_control suite/cartpole.py: balance(), _DEFAULT_TIME_LIMIT = 10 s at 0.01 s per step
  std::string task = "balance";
  bool sparse = false;
  std::string xml_file;
  int max_episode_steps = 1000;

  template <class V>
  void visit(V& v) {
    v("task", task, Choices{{"balance", "swingup"}},
      "balance: start near upright; swingup: start hanging down");
    v("sparse", sparse, "the suite's sparse reward (balance_sparse, swingup_sparse)");
    v("xml_file", xml_file, Choices{},
      "MJCF file with the same joints and actuator; empty = the built-in model");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class DmcCartpole final : public Env {
 public:
  using Params = DmcCartpoleParams;
  static constexpr int kNq = 2;
  static constexpr int kNv = 2;
  static constexpr int kNu = 1;

  // Loads the model; throws ModelLoadError naming the file for a missing or bad xml_file.
  explicit DmcCartpole(const Params& p = Params{});

  std::vector<double> state() const override;
  ParamMap params() const override { return dump_params(p_); }

  // Read access for tests: qpos, qvel, ctrl, and the pole body's xmat zz (cos) and xz (sin).
  std::span<const double> qpos() const;
  std::span<const double> qvel() const;
  double pole_cos() const;
  double pole_sin() const;

  // dm_control rewards.tolerance with bounds (0, 0): 1 at x == 0, else the sigmoid of |x| / margin.
  static double tolerance_gaussian(double x, double margin, double value_at_margin = 0.1);
  static double tolerance_quadratic(double x, double margin);
  // The smooth reward from the suite's quantities (cart x, pole cos, ctrl, pole angular velocity).
  static double smooth_reward(double cart_position, double pole_cos, double control,
                              double angular_vel);
  static double sparse_reward(double cart_position, double pole_cos);

  // The built-in MJCF text (identical to envs/assets/dmc_cartpole.xml).
  static std::string_view builtin_xml();

 private:
  friend class Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override;
  StepResult do_step(std::span<const double> action, std::span<float> obs) override;
  void do_set_state(std::span<const double> s) override;
  void do_sync_state(StateIo& io) override;

  void write_obs(std::span<float> obs) const;

  Params p_;
  mj::ModelPtr model_;
  mj::DataPtr data_;
  bool swing_up_ = false;
  int pole_body_ = 2;
  Rng rng_;
};

}  // namespace dprl::envs
