#include "envs/dmc_cartpole.hpp"

#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

// envs/assets/dmc_cartpole.xml, byte for byte (checked by tests/envs/dmc_cartpole_test.cpp)
constexpr std::string_view kCartpoleXml = R"xml(
<!-- Cart-pole of the DeepMind Control Suite for dprl's dmc_cartpole env, written from the
     published facts of dm_control's suite/cartpole.xml (one pole): the same bodies, joints,
     geoms, masses, damping, actuator and options (RK4, timestep 0.01, contacts off). The suite's
     skybox, visual and material includes, lights and cameras only affect rendering and are left
     out. dprl compiles this text into the binary (envs/dmc_cartpole.cpp); a test keeps the two
     equal.

     qpos / qvel order: slider (cart x, m), hinge_1 (pole angle, rad; 0 = upright).
     Actuator: slide, a motor on the slider with gear 10 and ctrl in [-1, 1]. -->
<mujoco model="cart-pole">
  <option timestep="0.01" integrator="RK4">
    <flag contact="disable" energy="enable"/>
  </option>

  <default>
    <default class="pole">
      <joint type="hinge" axis="0 1 0" damping="2e-6"/>
      <geom type="capsule" fromto="0 0 0 0 0 1" size="0.045" mass="0.1"/>
    </default>
  </default>

  <worldbody>
    <geom name="floor" type="plane" pos="0 0 -0.05" size="4 4 0.2"/>
    <geom name="rail1" type="capsule" pos="0 0.07 1" zaxis="1 0 0" size="0.02 2"/>
    <geom name="rail2" type="capsule" pos="0 -0.07 1" zaxis="1 0 0" size="0.02 2"/>
    <body name="cart" pos="0 0 1">
      <joint name="slider" type="slide" axis="1 0 0" limited="true" range="-1.8 1.8"
             solreflimit="0.08 1" damping="5e-4"/>
      <geom name="cart" type="box" size="0.2 0.15 0.1" mass="1"/>
      <body name="pole_1" childclass="pole">
        <joint name="hinge_1"/>
        <geom name="pole_1"/>
      </body>
    </body>
  </worldbody>

  <actuator>
    <motor name="slide" joint="slider" gear="10" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
)xml";

constexpr const char* kCartpoleId = "dmc_cartpole";

}  // namespace

std::string_view DmcCartpole::builtin_xml() { return kCartpoleXml.substr(1); }  // drop the leading newline

DmcCartpole::DmcCartpole(const Params& p) : p_(p) {
  validate_params(p_, kCartpoleId);
  swing_up_ = p_.task == "swingup";
  model_ = mj::load_model(p_.xml_file, "built-in dmc_cartpole.xml", builtin_xml());
  const std::string source = p_.xml_file.empty() ? "built-in" : p_.xml_file;
  mj::check_model_shape(model_.get(), kCartpoleId, source, kNq, kNv, kNu, 0);
  pole_body_ = mj_name2id(model_.get(), mjOBJ_BODY, "pole_1");
  if (pole_body_ < 0)
    throw ModelLoadError(fmt::format("{}: model '{}' has no body named pole_1", kCartpoleId, source));
  data_ = mj::make_data(model_.get());
  mj_forward(model_.get(), data_.get());
  spec_.id = kCartpoleId;
  spec_.observation = Space::box(5, -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::infinity());
  spec_.action = Space::box({round_to_float(model_->actuator_ctrlrange[0])},
                            {round_to_float(model_->actuator_ctrlrange[1])});
  spec_.max_episode_steps = p_.max_episode_steps;
}

double DmcCartpole::tolerance_gaussian(double x, double margin, double value_at_margin) {
  if (0.0 <= x && x <= 0.0) return 1.0;
  // d = where(x < lower, lower - x, x - upper) / margin; scale = sqrt(-2 log(value_at_margin))
  const double d = (x < 0.0 ? 0.0 - x : x - 0.0) / margin;
  const double scale = std::sqrt(-2 * std::log(value_at_margin));
  const double xs = d * scale;
  return std::exp(-0.5 * (xs * xs));
}

double DmcCartpole::tolerance_quadratic(double x, double margin) {
  if (0.0 <= x && x <= 0.0) return 1.0;
  const double d = (x < 0.0 ? 0.0 - x : x - 0.0) / margin;
  const double scaled_x = d * std::sqrt(1.0 - 0.0);  // value_at_margin 0
  return std::fabs(scaled_x) < 1 ? 1 - scaled_x * scaled_x : 0.0;
}

double DmcCartpole::smooth_reward(double cart_position, double pole_cos, double control,
                                  double angular_vel) {
  const double upright = (pole_cos + 1) / 2;
  const double centered = (1 + tolerance_gaussian(cart_position, 2)) / 2;
  const double small_control = (4 + tolerance_quadratic(control, 1)) / 5;
  const double small_velocity = (1 + tolerance_gaussian(angular_vel, 5)) / 2;
  return upright * small_control * small_velocity * centered;
}

double DmcCartpole::sparse_reward(double cart_position, double pole_cos) {
  // tolerance with margin 0: an indicator of the bounds
  const double cart_in_bounds = (-0.25 <= cart_position && cart_position <= 0.25) ? 1.0 : 0.0;
  const double angle_in_bounds = (0.995 <= pole_cos && pole_cos <= 1.0) ? 1.0 : 0.0;
  return cart_in_bounds * angle_in_bounds;
}

double DmcCartpole::pole_cos() const { return data_->xmat[9 * pole_body_ + 8]; }
double DmcCartpole::pole_sin() const { return data_->xmat[9 * pole_body_ + 2]; }
std::span<const double> DmcCartpole::qpos() const { return {data_->qpos, kNq}; }
std::span<const double> DmcCartpole::qvel() const { return {data_->qvel, kNv}; }

void DmcCartpole::write_obs(std::span<float> obs) const {
  const mjData* d = data_.get();
  obs[0] = static_cast<float>(d->qpos[0]);
  obs[1] = static_cast<float>(pole_cos());
  obs[2] = static_cast<float>(pole_sin());
  obs[3] = static_cast<float>(d->qvel[0]);
  obs[4] = static_cast<float>(d->qvel[1]);
}

void DmcCartpole::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  mj_resetData(m, d);
  // Balance.initialize_episode, in the suite's draw order
  if (swing_up_) {
    d->qpos[0] = 0.01 * rng_.normal();
    d->qpos[1] = std::numbers::pi + 0.01 * rng_.normal();
  } else {
    d->qpos[0] = rng_.uniform(-0.1, 0.1);
    d->qpos[1] = rng_.uniform(-0.034, 0.034);
  }
  for (int i = 0; i < kNv; ++i) d->qvel[i] = 0.01 * rng_.normal();
  mj_forward(m, d);
  write_obs(obs);
}

StepResult DmcCartpole::do_step(std::span<const double> action, std::span<float> obs) {
  check_continuous_action(spec_, action);
  if (std::fabs(action[0]) > mj::kMaxValue) [[unlikely]]
    throw InvalidAction(fmt::format("{}: action {} is beyond MuJoCo's 1e10", kCartpoleId, action[0]));
  const mjModel* m = model_.get();
  mjData* d = data_.get();
  d->ctrl[0] = action[0];
  mj_step(m, d);
  // the suite's step ends with mj_step1; the observation and reward need its kinematics only
  mj_kinematics(m, d);
  mj::check_warnings(d, kCartpoleId);
  StepResult r;
  r.reward = p_.sparse ? sparse_reward(d->qpos[0], pole_cos())
                       : smooth_reward(d->qpos[0], pole_cos(), d->ctrl[0], d->qvel[1]);
  write_obs(obs);
  return r;
}

std::vector<double> DmcCartpole::state() const {
  return mj::exact_state(model_.get(), data_.get());
}

void DmcCartpole::do_set_state(std::span<const double> s) {
  if (mj::set_env_state(model_.get(), data_.get(), spec_, s, kNq, kNv))
    mj_kinematics(model_.get(), data_.get());  // pole_cos / pole_sin; leaves the state alone
}

void DmcCartpole::do_sync_state(StateIo& io) {
  mj::Snapshot s{state(), {}};
  rng_.get_state(s.rng);
  if (!mj::sync_snapshot(io, "dmc_cartpole", s)) return;
  set_state(s.physics);
  rng_.set_state(s.rng);
}

}  // namespace dprl::envs
