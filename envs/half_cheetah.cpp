#include "envs/half_cheetah.hpp"

#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

// envs/assets/half_cheetah.xml, byte for byte (checked by tests/envs/half_cheetah_test.cpp)
constexpr std::string_view kCheetahXml = R"xml(
<!-- HalfCheetah (Wawrzynski 2009) for dprl's half_cheetah env, written from the published facts
     of Gymnasium's half_cheetah.xml (HalfCheetah-v5): the same bodies, joints (ranges, stiffness,
     damping, armature), capsule geoms, contact parameters, actuators and timestep. Visual-only
     elements (textures, materials, lights, colours) are left out; they do not affect the physics.
     dprl compiles this text into the binary (envs/half_cheetah.cpp); a test keeps the two equal.

     qpos / qvel order: rootx, rootz, rooty, bthigh, bshin, bfoot, fthigh, fshin, ffoot.
     Actuator order:    bthigh, bshin, bfoot, fthigh, fshin, ffoot (motors, ctrl in [-1, 1]). -->
<mujoco model="half_cheetah">
  <compiler angle="radian" inertiafromgeom="true" settotalmass="14"/>
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <size nstack="300000"/>

  <default>
    <joint limited="true" armature="0.1" damping="0.01" stiffness="8"
           solimplimit="0 0.8 0.03" solreflimit="0.02 1"/>
    <geom contype="1" conaffinity="0" condim="3" friction="0.4 0.1 0.1"
          solimp="0 0.8 0.01" solref="0.02 1"/>
    <motor ctrllimited="true" ctrlrange="-1 1"/>
  </default>

  <worldbody>
    <geom name="floor" type="plane" pos="0 0 0" size="40 40 40" conaffinity="1" condim="3"/>
    <body name="torso" pos="0 0 0.7">
      <!-- planar root: slide x, slide z, hinge y; no limits, springs, damping or armature -->
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 0" limited="false"
             armature="0" damping="0" stiffness="0"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 0" limited="false"
             armature="0" damping="0" stiffness="0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 0" limited="false"
             armature="0" damping="0" stiffness="0"/>
      <geom name="torso" type="capsule" fromto="-0.5 0 0 0.5 0 0" size="0.046"/>
      <geom name="head" type="capsule" pos="0.6 0 0.1" axisangle="0 1 0 0.87" size="0.046 0.15"/>

      <body name="bthigh" pos="-0.5 0 0">
        <joint name="bthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-0.52 1.05"
               stiffness="240" damping="6"/>
        <geom name="bthigh" type="capsule" pos="0.1 0 -0.13" axisangle="0 1 0 -3.8"
              size="0.046 0.145"/>
        <body name="bshin" pos="0.16 0 -0.25">
          <joint name="bshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-0.785 0.785"
                 stiffness="180" damping="4.5"/>
          <geom name="bshin" type="capsule" pos="-0.14 0 -0.07" axisangle="0 1 0 -2.03"
                size="0.046 0.15"/>
          <body name="bfoot" pos="-0.28 0 -0.14">
            <joint name="bfoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-0.4 0.785"
                   stiffness="120" damping="3"/>
            <geom name="bfoot" type="capsule" pos="0.03 0 -0.097" axisangle="0 1 0 -0.27"
                  size="0.046 0.094"/>
          </body>
        </body>
      </body>

      <body name="fthigh" pos="0.5 0 0">
        <joint name="fthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-1 0.7"
               stiffness="180" damping="4.5"/>
        <geom name="fthigh" type="capsule" pos="-0.07 0 -0.12" axisangle="0 1 0 0.52"
              size="0.046 0.133"/>
        <body name="fshin" pos="-0.14 0 -0.24">
          <joint name="fshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-1.2 0.87"
                 stiffness="120" damping="3"/>
          <geom name="fshin" type="capsule" pos="0.065 0 -0.09" axisangle="0 1 0 -0.6"
                size="0.046 0.106"/>
          <body name="ffoot" pos="0.13 0 -0.18">
            <joint name="ffoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-0.5 0.5"
                   stiffness="60" damping="1.5"/>
            <geom name="ffoot" type="capsule" pos="0.045 0 -0.07" axisangle="0 1 0 -0.6"
                  size="0.046 0.07"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>

  <actuator>
    <motor name="bthigh" joint="bthigh" gear="120"/>
    <motor name="bshin" joint="bshin" gear="90"/>
    <motor name="bfoot" joint="bfoot" gear="60"/>
    <motor name="fthigh" joint="fthigh" gear="120"/>
    <motor name="fshin" joint="fshin" gear="60"/>
    <motor name="ffoot" joint="ffoot" gear="30"/>
  </actuator>
</mujoco>
)xml";

constexpr const char* kCheetahId = "half_cheetah";

}  // namespace

std::string_view HalfCheetah::builtin_xml() { return kCheetahXml.substr(1); }  // drop the leading newline

HalfCheetah::HalfCheetah(const Params& p) : p_(p) {
  validate_params(p_, kCheetahId);
  model_ = mj::load_model(p_.xml_file, "built-in half_cheetah.xml", builtin_xml());
  mj::check_model_shape(model_.get(), kCheetahId, p_.xml_file.empty() ? "built-in" : p_.xml_file, kNq, kNv,
                        kNu, 0);
  data_ = mj::make_data(model_.get());
  mj_forward(model_.get(), data_.get());
  // Gymnasium: dt = model.opt.timestep * frame_skip
  dt_ = model_->opt.timestep * p_.frame_skip;
  spec_.id = kCheetahId;
  const std::size_t obs_dim = kNq + kNv - (p_.exclude_current_positions_from_observation ? 1 : 0);
  spec_.observation = Space::box(obs_dim, -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::infinity());
  // Gymnasium builds the action box from actuator_ctrlrange (float32)
  std::vector<double> lo(kNu), hi(kNu);
  for (int i = 0; i < kNu; ++i) {
    lo[i] = round_to_float(model_->actuator_ctrlrange[2 * i]);
    hi[i] = round_to_float(model_->actuator_ctrlrange[2 * i + 1]);
  }
  spec_.action = Space::box(std::move(lo), std::move(hi));
  spec_.max_episode_steps = p_.max_episode_steps;
  spec_.reward_threshold = 4800.0;  // HalfCheetah-v5 registration
  spec_.has_reward_threshold = true;
}

void HalfCheetah::write_obs(std::span<float> obs) const {
  const mjData* d = data_.get();
  std::size_t k = 0;
  for (int i = p_.exclude_current_positions_from_observation ? 1 : 0; i < kNq; ++i)
    obs[k++] = static_cast<float>(d->qpos[i]);
  for (int i = 0; i < kNv; ++i) obs[k++] = static_cast<float>(d->qvel[i]);
}

void HalfCheetah::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  mj_resetData(m, d);
  // qpos = init_qpos + U(low, high, nq), then qvel = init_qvel + s * standard_normal(nv)
  const double s = p_.reset_noise_scale;
  for (int i = 0; i < kNq; ++i) d->qpos[i] = m->qpos0[i] + rng_.uniform(-s, s);
  for (int i = 0; i < kNv; ++i) d->qvel[i] = 0.0 + s * rng_.normal();
  mj_forward(m, d);
  write_obs(obs);
}

StepResult HalfCheetah::do_step(std::span<const double> action, std::span<float> obs) {
  check_continuous_action(spec_, action);
  for (int i = 0; i < kNu; ++i)
    if (std::fabs(action[i]) > mj::kMaxValue) [[unlikely]]
      throw InvalidAction(
          fmt::format("{}: action component {} = {} is beyond MuJoCo's 1e10", kCheetahId, i, action[i]));
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  const double x_position_before = d->qpos[0];
  // do_simulation: ctrl = action unclipped (MuJoCo clamps to ctrlrange), frame_skip mj_steps
  for (int i = 0; i < kNu; ++i) d->ctrl[i] = action[i];
  for (int k = 0; k < p_.frame_skip; ++k) mj_step(m, d);
  mj::check_warnings(d, kCheetahId);
  const double x_position_after = d->qpos[0];
  const double x_velocity = (x_position_after - x_position_before) / dt_;

  // control_cost: ctrl_cost_weight * np.sum(np.square(action)), summed left to right
  double sum_sq = 0.0;
  for (int i = 0; i < kNu; ++i) sum_sq += action[i] * action[i];
  const double forward_reward = p_.forward_reward_weight * x_velocity;
  const double ctrl_cost = p_.ctrl_cost_weight * sum_sq;

  StepResult r;
  r.reward = forward_reward - ctrl_cost;
  write_obs(obs);
  return r;
}

std::vector<double> HalfCheetah::state() const {
  return mj::exact_state(model_.get(), data_.get());
}

void HalfCheetah::do_set_state(std::span<const double> s) {
  mj::set_env_state(model_.get(), data_.get(), spec_, s, kNq, kNv);
}

std::span<const double> HalfCheetah::qpos() const { return {data_->qpos, kNq}; }
std::span<const double> HalfCheetah::qvel() const { return {data_->qvel, kNv}; }
double HalfCheetah::timestep() const { return model_->opt.timestep; }

std::vector<double> HalfCheetah::body_masses() const {
  return {model_->body_mass, model_->body_mass + model_->nbody};
}

void HalfCheetah::do_sync_state(StateIo& io) {
  mj::Snapshot s{state(), {}};
  rng_.get_state(s.rng);
  if (!mj::sync_snapshot(io, "half_cheetah", s)) return;
  set_state(s.physics);
  rng_.set_state(s.rng);
}

}  // namespace dprl::envs
