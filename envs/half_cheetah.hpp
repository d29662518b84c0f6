// HalfCheetah: a planar two-legged runner (Wawrzynski 2009) rewarded for forward speed.
//
// Matches Gymnasium 1.3 gymnasium/envs/mujoco/half_cheetah_v5.py (HalfCheetahEnv, HalfCheetah-v5;
// dynamically the same as v1.2.3) wrapped in TimeLimit (1000 steps), on MuJoCo 2.2.2 instead of
// Gymnasium's required >= 2.3.3. The model is our own MJCF (envs/assets/half_cheetah.xml) written
// from the published facts of Gymnasium's half_cheetah.xml; on MuJoCo 2.2.2 both compile to the
// same masses, inertias and geometry and give bit-identical mj_step trajectories (checked once,
// docs/envs_mujoco.md). The same text is compiled into the binary, so no file is needed at run
// time; xml_file loads another model with the same joints and actuators instead.
//
// State (float64): qpos [rootx, rootz, rooty, bthigh, bshin, bfoot, fthigh, fshin, ffoot] and qvel
// in the same order; rootz is the torso height relative to its 0.7 m start.
// Observation (float32): qpos[1:] then qvel, Box(-inf, inf, (17,)); with
// exclude_current_positions_from_observation false, all of qpos then qvel (18).
// Action: Box(-1, 1, (6,)) torques for bthigh, bshin, bfoot, fthigh, fshin, ffoot. Like Gymnasium,
// the env does not clip: ctrl = action, and MuJoCo clamps ctrl to ctrlrange [-1, 1] inside the
// actuator model, while ctrl_cost uses the raw action. NaN, wrong sizes and |a| > 1e10 (which
// MuJoCo would zero as a bad control) throw InvalidAction.
// Step: x_before = qpos[0]; ctrl = a; frame_skip x mj_step (Gymnasium's trailing
// mj_rnePostConstraint only fills derived force fields and is skipped);
// x_velocity = (qpos[0] - x_before) / dt with dt = timestep * frame_skip (0.05);
// reward = forward_reward_weight * x_velocity - ctrl_cost_weight * sum(a_i^2) (left to right).
// Never terminates. A MuJoCo instability warning (NaN or huge values) throws DataError.
// Reset: mj_resetData; qpos = U(-s, s)^9 (drawn first), qvel = s N(0, 1)^9 with
// s = reset_noise_scale, from dprl's Rng seeded with the episode seed (so not NumPy's draws);
// then mj_forward.
//
// state(): the exact MuJoCo state [qpos (9), qvel (9), ctrl (6), time, qacc_warmstart (9)]
// (34 values, see envs/mujoco_util.hpp); set_state() takes that vector back exactly, or
// Gymnasium's set_state form [qpos (9), qvel (9)] (18 values: `dprl env replay` cases), which
// zeroes ctrl, time and the warm start and calls mj_forward. Env::snapshot() also carries the
// RNG and the step counter.
//
// | parameter                                  | default | range         | meaning              |
// |--------------------------------------------|---------|---------------|----------------------|
// | xml_file                                   | ""      | path          | "" = built-in model  |
// | frame_skip                                 | 5       | [1, 1000]     | mj_steps per step    |
// | forward_reward_weight                      | 1.0     | (-inf, inf)   | weight of x_velocity |
// | ctrl_cost_weight                           | 0.1     | [0, inf)      | weight of sum a^2    |
// | reset_noise_scale                          | 0.1     | [0, 10]       | reset noise scale    |
// | exclude_current_positions_from_observation | true    | bool          | drop rootx from obs  |
// | max_episode_steps                          | 1000    | [1, 1e9]      | TimeLimit            |
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"
#include "envs/mujoco_util.hpp"

namespace dprl::envs {

struct HalfCheetahParams {
  // Gymnasium half_cheetah_v5.py defaults and the HalfCheetah-v5 registration
  std::string xml_file;  // Gymnasium: "half_cheetah.xml" (its bundled asset) = our built-in model
  int frame_skip = 5;
  double forward_reward_weight = 1.0;
  double ctrl_cost_weight = 0.1;
  double reset_noise_scale = 0.1;
  bool exclude_current_positions_from_observation = true;
  int max_episode_steps = 1000;

  template <class V>
  void visit(V& v) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    v("xml_file", xml_file, Choices{},
      "MJCF file with the same joints and actuators; empty = the built-in model");
    v("frame_skip", frame_skip, Range::closed(1, 1000), "mj_step calls per env step");
    v("forward_reward_weight", forward_reward_weight, Range::open(-inf, inf),
      "weight of the forward velocity reward");
    v("ctrl_cost_weight", ctrl_cost_weight, Range::at_least(0),
      "weight of the control cost sum(a^2)");
    v("reset_noise_scale", reset_noise_scale, Range::closed(0, 10),
      "qpos + U(-s, s), qvel + s N(0, 1) at reset");
    v("exclude_current_positions_from_observation", exclude_current_positions_from_observation,
      "drop rootx (qpos[0]) from the observation");
    v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9),
      "time limit: truncated on this step");
  }
};

class HalfCheetah final : public Env {
 public:
  using Params = HalfCheetahParams;
  static constexpr int kNq = 9;
  static constexpr int kNv = 9;
  static constexpr int kNu = 6;

  // Loads the model; throws ModelLoadError naming the file for a missing or bad xml_file.
  explicit HalfCheetah(const Params& p = Params{});

  std::vector<double> state() const override;
  ParamMap params() const override { return dump_params(p_); }

  // Read access for tests: qpos and qvel (9 each), the model timestep and dt.
  std::span<const double> qpos() const;
  std::span<const double> qvel() const;
  double timestep() const;
  double dt() const { return dt_; }
  // Total mass of each body (world first), as compiled.
  std::vector<double> body_masses() const;

  // The built-in MJCF text (identical to envs/assets/half_cheetah.xml).
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
  double dt_ = 0;
  Rng rng_;
};

}  // namespace dprl::envs
