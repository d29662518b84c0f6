// LunarLander on Box2D 2.4 (see envs/lunar_lander.hpp). The only file that sees Box2D.
#include "envs/lunar_lander.hpp"

#include <box2d/box2d.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

// Gymnasium lunar_lander.py constants
constexpr double FPS = 50;
constexpr double SCALE = 30.0;  // affects how fast-paced the game is
constexpr double MAIN_ENGINE_POWER = 13.0;
constexpr double SIDE_ENGINE_POWER = 0.6;
constexpr double INITIAL_RANDOM = 1000.0;  // initial force on the lander's centre
constexpr double LANDER_POLY[6][2] = {{-14, +17}, {-17, 0}, {-17, -10},
                                      {+17, -10}, {+17, 0}, {+14, +17}};
constexpr double LEG_AWAY = 20;
constexpr double LEG_DOWN = 18;
constexpr double LEG_W = 2, LEG_H = 8;
constexpr double LEG_SPRING_TORQUE = 40;
constexpr double SIDE_ENGINE_HEIGHT = 14;
constexpr double SIDE_ENGINE_AWAY = 12;
constexpr double MAIN_ENGINE_Y_LOCATION = 4;
constexpr double VIEWPORT_W = 600, VIEWPORT_H = 400;
constexpr double W = VIEWPORT_W / SCALE;
constexpr double H = VIEWPORT_H / SCALE;
constexpr int CHUNKS = 11;
constexpr double helipad_y = H / 4;

constexpr std::size_t kHistoryCap = 100000;  // steps reserved up front at most

b2Vec2 vec(double x, double y) { return b2Vec2(static_cast<float>(x), static_cast<float>(y)); }

}  // namespace

// Engine command of one step, from a discrete or a (clipped) continuous action.
struct EngineCommand {
  double m_power = 0;    // 0 = main engine off
  double s_power = 0;    // 0 = side engines off
  double direction = 0;  // -1 left, +1 right
};

struct LunarLander::Impl : public b2ContactListener {
  const Params& p;
  std::optional<b2World> world;
  b2Body* moon = nullptr;
  b2Body* lander = nullptr;
  b2Body* legs[2] = {nullptr, nullptr};
  bool ground_contact[2] = {false, false};
  bool game_over = false;
  double prev_shaping = 0;
  bool has_prev_shaping = false;
  int wind_idx = 0, torque_idx = 0;
  double terrain_y[CHUNKS] = {};  // the terrain's chunk heights (for view())
  double last_wind = 0;           // the wind force of the last step (for view())
  Rng rng;
  std::uint64_t seed = 0;
  std::vector<double> history;  // actions since reset (discrete: 1 value, continuous: 2)
  std::array<float, kObsDim> obs{};
  bool started = false;

  explicit Impl(const Params& params) : p(params) {}

  // contact listener: the lander body touching anything ends the game; legs flag contact
  void BeginContact(b2Contact* c) override {
    b2Body* a = c->GetFixtureA()->GetBody();
    b2Body* b = c->GetFixtureB()->GetBody();
    if (a == lander || b == lander) game_over = true;
    for (int i = 0; i < 2; ++i)
      if (a == legs[i] || b == legs[i]) ground_contact[i] = true;
  }
  void EndContact(b2Contact* c) override {
    b2Body* a = c->GetFixtureA()->GetBody();
    b2Body* b = c->GetFixtureB()->GetBody();
    for (int i = 0; i < 2; ++i)
      if (a == legs[i] || b == legs[i]) ground_contact[i] = false;
  }

  void build(std::uint64_t episode_seed);
  StepResult physics_step(const EngineCommand& cmd);
};

void LunarLander::Impl::build(std::uint64_t episode_seed) {
  seed = episode_seed;
  rng.seed_with(episode_seed);
  history.clear();
  // a fresh world each episode, constructed in place
  world.reset();
  world.emplace(b2Vec2(0.0f, static_cast<float>(p.gravity)));
  world->SetContactListener(this);
  game_over = false;
  ground_contact[0] = ground_contact[1] = false;
  has_prev_shaping = false;
  prev_shaping = 0;

  // terrain
  double height[CHUNKS + 1];
  for (double& h : height) h = rng.uniform(0, H / 2);
  double chunk_x[CHUNKS];
  for (int i = 0; i < CHUNKS; ++i) chunk_x[i] = W / (CHUNKS - 1) * i;
  for (int i = CHUNKS / 2 - 2; i <= CHUNKS / 2 + 2; ++i) height[i] = helipad_y;
  double smooth_y[CHUNKS];
  for (int i = 0; i < CHUNKS; ++i) {
    // Python's height[-1] for i = 0 is the last height
    const double prev = height[i == 0 ? CHUNKS : i - 1];
    smooth_y[i] = 0.33 * (prev + height[i] + height[i + 1]);
    terrain_y[i] = smooth_y[i];
  }
  last_wind = 0;
  b2BodyDef moon_def;
  moon = world->CreateBody(&moon_def);
  {
    b2EdgeShape edge;
    edge.SetTwoSided(vec(0, 0), vec(W, 0));
    b2FixtureDef fd;  // pybox2d defaults: density 0, friction 0.2
    fd.shape = &edge;
    moon->CreateFixture(&fd);
  }
  for (int i = 0; i < CHUNKS - 1; ++i) {
    b2EdgeShape edge;
    edge.SetTwoSided(vec(chunk_x[i], smooth_y[i]), vec(chunk_x[i + 1], smooth_y[i + 1]));
    b2FixtureDef fd;
    fd.shape = &edge;
    fd.density = 0;
    fd.friction = 0.1f;
    moon->CreateFixture(&fd);
  }

  // lander
  const double initial_y = H;
  b2BodyDef lander_def;
  lander_def.type = b2_dynamicBody;
  lander_def.position = vec(W / 2, initial_y);
  lander_def.angle = 0;
  lander = world->CreateBody(&lander_def);
  {
    b2Vec2 pts[6];
    for (int i = 0; i < 6; ++i) pts[i] = vec(LANDER_POLY[i][0] / SCALE, LANDER_POLY[i][1] / SCALE);
    b2PolygonShape poly;
    poly.Set(pts, 6);
    b2FixtureDef fd;
    fd.shape = &poly;
    fd.density = 5.0f;
    fd.friction = 0.1f;
    fd.filter.categoryBits = 0x0010;
    fd.filter.maskBits = 0x001;  // collide only with ground
    fd.restitution = 0.0f;
    lander->CreateFixture(&fd);
  }
  const double fx = rng.uniform(-INITIAL_RANDOM, INITIAL_RANDOM);
  const double fy = rng.uniform(-INITIAL_RANDOM, INITIAL_RANDOM);
  lander->ApplyForceToCenter(vec(fx, fy), true);
  if (p.enable_wind) {
    // integers(-9999, 9999): [-9999, 9999)
    wind_idx = -9999 + static_cast<int>(rng.below(19998));
    torque_idx = -9999 + static_cast<int>(rng.below(19998));
  }

  // legs, i = -1 then +1 (legs[0] starts on the +x side)
  for (int k = 0; k < 2; ++k) {
    const double i = k == 0 ? -1.0 : 1.0;
    b2BodyDef leg_def;
    leg_def.type = b2_dynamicBody;
    leg_def.position = vec(W / 2 - i * LEG_AWAY / SCALE, initial_y);
    leg_def.angle = static_cast<float>(i * 0.05);
    b2Body* leg = world->CreateBody(&leg_def);
    b2PolygonShape box;
    box.SetAsBox(static_cast<float>(LEG_W / SCALE), static_cast<float>(LEG_H / SCALE));
    b2FixtureDef fd;  // default friction 0.2
    fd.shape = &box;
    fd.density = 1.0f;
    fd.restitution = 0.0f;
    fd.filter.categoryBits = 0x0020;
    fd.filter.maskBits = 0x001;
    leg->CreateFixture(&fd);
    legs[k] = leg;

    b2RevoluteJointDef rjd;
    rjd.bodyA = lander;
    rjd.bodyB = leg;
    rjd.localAnchorA = vec(0, 0);
    rjd.localAnchorB = vec(i * LEG_AWAY / SCALE, LEG_DOWN / SCALE);
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = static_cast<float>(LEG_SPRING_TORQUE);
    rjd.motorSpeed = static_cast<float>(0.3 * i);
    if (k == 0) {
      rjd.lowerAngle = static_cast<float>(0.9 - 0.5);  // the angle is "wrong" on purpose
      rjd.upperAngle = static_cast<float>(0.9);
    } else {
      rjd.lowerAngle = static_cast<float>(-0.9);
      rjd.upperAngle = static_cast<float>(-0.9 + 0.5);
    }
    world->CreateJoint(&rjd);
  }
  started = true;
}

StepResult LunarLander::Impl::physics_step(const EngineCommand& cmd) {
  // wind and turbulence while airborne
  last_wind = 0;
  if (p.enable_wind && !(ground_contact[0] || ground_contact[1])) {
    const double wind_mag =
        std::tanh(std::sin(0.02 * wind_idx) + std::sin(std::numbers::pi * 0.01 * wind_idx)) *
        p.wind_power;
    ++wind_idx;
    last_wind = wind_mag;
    lander->ApplyForceToCenter(vec(wind_mag, 0.0), true);
    const double torque_mag =
        std::tanh(std::sin(0.02 * torque_idx) + std::sin(std::numbers::pi * 0.01 * torque_idx)) *
        p.turbulence_power;
    ++torque_idx;
    lander->ApplyTorque(static_cast<float>(torque_mag), true);
  }

  // engines
  const double angle = lander->GetAngle();
  const double tip[2] = {std::sin(angle), std::cos(angle)};
  const double side[2] = {-tip[1], tip[0]};
  const double dispersion[2] = {rng.uniform(-1.0, 1.0) / SCALE, rng.uniform(-1.0, 1.0) / SCALE};
  const b2Vec2 pos = lander->GetPosition();
  if (cmd.m_power > 0) {
    const double ox =
        tip[0] * (MAIN_ENGINE_Y_LOCATION / SCALE + 2 * dispersion[0]) + side[0] * dispersion[1];
    const double oy =
        -tip[1] * (MAIN_ENGINE_Y_LOCATION / SCALE + 2 * dispersion[0]) - side[1] * dispersion[1];
    const double impulse_pos[2] = {pos.x + ox, pos.y + oy};
    lander->ApplyLinearImpulse(
        vec(-ox * MAIN_ENGINE_POWER * cmd.m_power, -oy * MAIN_ENGINE_POWER * cmd.m_power),
        vec(impulse_pos[0], impulse_pos[1]), true);
  }
  if (cmd.s_power > 0) {
    const double ox = tip[0] * dispersion[0] +
                      side[0] * (3 * dispersion[1] + cmd.direction * SIDE_ENGINE_AWAY / SCALE);
    const double oy = -tip[1] * dispersion[0] -
                      side[1] * (3 * dispersion[1] + cmd.direction * SIDE_ENGINE_AWAY / SCALE);
    // Gymnasium's quirk: 17 in x, SIDE_ENGINE_HEIGHT (14) in y
    const double impulse_pos[2] = {pos.x + ox - tip[0] * 17 / SCALE,
                                   pos.y + oy + tip[1] * SIDE_ENGINE_HEIGHT / SCALE};
    lander->ApplyLinearImpulse(
        vec(-ox * SIDE_ENGINE_POWER * cmd.s_power, -oy * SIDE_ENGINE_POWER * cmd.s_power),
        vec(impulse_pos[0], impulse_pos[1]), true);
  }

  world->Step(static_cast<float>(1.0 / FPS), 6 * 30, 2 * 30);

  // observation, in float64 from Box2D's float32 state
  const b2Vec2 p2 = lander->GetPosition();
  const b2Vec2 v2 = lander->GetLinearVelocity();
  const double s[kObsDim] = {
      (p2.x - VIEWPORT_W / SCALE / 2) / (VIEWPORT_W / SCALE / 2),
      (p2.y - (helipad_y + LEG_DOWN / SCALE)) / (VIEWPORT_H / SCALE / 2),
      v2.x * (VIEWPORT_W / SCALE / 2) / FPS,
      v2.y * (VIEWPORT_H / SCALE / 2) / FPS,
      lander->GetAngle(),
      20.0 * lander->GetAngularVelocity() / FPS,
      ground_contact[0] ? 1.0 : 0.0,
      ground_contact[1] ? 1.0 : 0.0,
  };
  for (int i = 0; i < kObsDim; ++i) obs[i] = static_cast<float>(s[i]);

  // reward
  StepResult r;
  const double shaping = -100 * std::sqrt(s[0] * s[0] + s[1] * s[1]) -
                         100 * std::sqrt(s[2] * s[2] + s[3] * s[3]) - 100 * std::fabs(s[4]) +
                         10 * s[6] + 10 * s[7];
  double reward = has_prev_shaping ? shaping - prev_shaping : 0.0;
  prev_shaping = shaping;
  has_prev_shaping = true;
  reward -= cmd.m_power * 0.30;  // less fuel spent is better
  reward -= cmd.s_power * 0.03;
  if (game_over || std::fabs(s[0]) >= 1.0) {
    r.terminated = true;
    reward = -100;
  }
  if (!lander->IsAwake()) {
    r.terminated = true;
    reward = +100;
  }
  r.reward = reward;
  return r;
}

namespace {

EngineCommand discrete_command(std::int64_t a) {
  EngineCommand c;
  if (a == 2) c.m_power = 1.0;
  if (a == 1 || a == 3) {
    c.direction = static_cast<double>(a - 2);
    c.s_power = 1.0;
  }
  return c;
}

// a0, a1 already clipped to [-1, 1]
EngineCommand continuous_command(double a0, double a1) {
  EngineCommand c;
  if (a0 > 0.0) c.m_power = (std::clamp(a0, 0.0, 1.0) + 1.0) * 0.5;
  if (std::fabs(a1) > 0.5) {
    c.direction = a1 > 0 ? 1.0 : -1.0;
    c.s_power = std::clamp(std::fabs(a1), 0.5, 1.0);
  }
  return c;
}

}  // namespace

LunarLander::LunarLander(const Params& p) : p_(p) {
  validate_params(p_, "lunar_lander");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  spec_.id = "lunar_lander";
  // Gymnasium declares +-2.5 (positions), +-10 (velocities), +-2 pi (angle), +-10 (angular) but
  // does not enforce them, and they are exceeded (a spinning lander passes 2 pi under random
  // actions; thrust can lift it past y = 2.5), so only the leg flags are bounded here
  const std::vector<double> low = {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, 0, 0};
  const std::vector<double> high = {kInf, kInf, kInf, kInf, kInf, kInf, 1, 1};
  spec_.observation = Space::box(low, high);
  spec_.action = p_.continuous ? Space::box(2, -1, 1) : Space::discrete(4);
  spec_.max_episode_steps = p_.max_episode_steps;
  spec_.has_reward_threshold = true;
  spec_.reward_threshold = 200;
  impl_ = std::make_unique<Impl>(p_);
  const std::size_t per_step = p_.continuous ? 2 : 1;
  impl_->history.reserve(
      per_step *
      std::min<std::size_t>(static_cast<std::size_t>(p_.max_episode_steps), kHistoryCap));
}

LunarLander::~LunarLander() = default;

void LunarLander::do_reset(std::uint64_t seed, std::span<float> obs) {
  impl_->build(seed);
  impl_->physics_step(p_.continuous ? continuous_command(0, 0) : discrete_command(0));
  std::copy(impl_->obs.begin(), impl_->obs.end(), obs.begin());
}

StepResult LunarLander::do_step(std::int64_t action, std::span<float> obs) {
  if (p_.continuous || action < 0 || action > 3) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  DPRL_CHECK(impl_->started);
  impl_->history.push_back(static_cast<double>(action));
  StepResult r = impl_->physics_step(discrete_command(action));
  std::copy(impl_->obs.begin(), impl_->obs.end(), obs.begin());
  return r;
}

StepResult LunarLander::do_step(std::span<const double> action, std::span<float> obs) {
  if (!p_.continuous) [[unlikely]]
    throw InvalidAction(
        fmt::format("lunar_lander: a continuous action was given to {}", spec_.action.describe()));
  check_continuous_action(spec_, action);
  DPRL_CHECK(impl_->started);
  const double a0 = std::clamp(action[0], -1.0, 1.0);
  const double a1 = std::clamp(action[1], -1.0, 1.0);
  impl_->history.push_back(a0);
  impl_->history.push_back(a1);
  StepResult r = impl_->physics_step(continuous_command(a0, a1));
  std::copy(impl_->obs.begin(), impl_->obs.end(), obs.begin());
  return r;
}

std::vector<double> LunarLander::state() const {
  const std::size_t per_step = p_.continuous ? 2 : 1;
  std::vector<double> s;
  s.reserve(3 + impl_->history.size());
  s.push_back(static_cast<double>(impl_->seed >> 32));
  s.push_back(static_cast<double>(impl_->seed & 0xffffffffULL));
  s.push_back(static_cast<double>(impl_->history.size() / per_step));
  s.insert(s.end(), impl_->history.begin(), impl_->history.end());
  return s;
}

void LunarLander::do_set_state(std::span<const double> s) {
  const std::size_t per_step = p_.continuous ? 2 : 1;
  const auto fail = [&](const std::string& why) {
    throw ParamError(
        fmt::format("lunar_lander: bad state ({}); expected [seed >> 32, "
                    "seed & 0xffffffff, n, {} action values]",
                    why, per_step == 1 ? "n" : "2n"));
  };
  if (s.size() < 3) fail(fmt::format("{} values", s.size()));
  const auto is_index = [](double v, double limit) {
    return std::isfinite(v) && v == std::floor(v) && v >= 0 && v < limit;
  };
  if (!is_index(s[0], 4294967296.0) || !is_index(s[1], 4294967296.0))
    fail("the seed halves must be integers in [0, 2^32)");
  if (!is_index(s[2], 1e9)) fail("the step count must be a non-negative integer");
  const auto n = static_cast<std::size_t>(s[2]);
  if (s.size() != 3 + n * per_step) fail(fmt::format("{} values for {} steps", s.size(), n));
  for (std::size_t i = 3; i < s.size(); ++i) {
    const double a = s[i];
    const bool ok = per_step == 1 ? is_index(a, 4) : (std::isfinite(a) && a >= -1 && a <= 1);
    if (!ok) fail(fmt::format("action value {} is {}", i - 3, format_param(a)));
  }

  // rebuild from the seed and replay
  const std::uint64_t seed =
      (static_cast<std::uint64_t>(s[0]) << 32) | static_cast<std::uint64_t>(s[1]);
  std::vector<float> obs(kObsDim);
  reset(seed, obs);
  if (impl_->history.capacity() < s.size() - 3) impl_->history.reserve(s.size() - 3);
  for (std::size_t k = 0; k < n; ++k) {
    if (per_step == 1) {
      step(static_cast<std::int64_t>(s[3 + k]), obs);
    } else {
      const double a[2] = {s[3 + 2 * k], s[4 + 2 * k]};
      step(std::span<const double>(a, 2), obs);
    }
  }
}

void LunarLander::do_sync_state(StateIo& io) {
  io.section("lunar_lander");
  bool started = impl_->started;
  io(started);
  if (!started) {
    if (io.loading() && impl_->started)
      throw DataError("checkpoint: section 'lunar_lander' is of an env never reset");
    return;
  }
  std::vector<double> recipe = io.loading() ? std::vector<double>{} : state();
  io(recipe);
  if (!io.loading()) return;
  try {  // set_state checks the recipe (seed halves, step count, actions in the space)
    set_state(recipe);
  } catch (const ParamError& e) {
    throw DataError(fmt::format("checkpoint: section 'lunar_lander': {}", e.what()));
  }
}

std::span<const float> LunarLander::last_observation() const { return impl_->obs; }

bool LunarLander::lander_awake() const { return impl_->lander && impl_->lander->IsAwake(); }

LunarLander::View LunarLander::view() const {
  View v;
  v.width = W;
  v.height = H;
  v.helipad_y = helipad_y;
  v.helipad_x1 = W / (CHUNKS - 1) * (CHUNKS / 2 - 1);
  v.helipad_x2 = W / (CHUNKS - 1) * (CHUNKS / 2 + 1);
  if (!impl_->started || impl_->lander == nullptr) return v;
  v.terrain.reserve(2 * CHUNKS);
  for (int i = 0; i < CHUNKS; ++i) {
    v.terrain.push_back(W / (CHUNKS - 1) * i);
    v.terrain.push_back(impl_->terrain_y[i]);
  }
  const auto pose = [](const b2Body* b) {
    return Pose{b->GetPosition().x, b->GetPosition().y, b->GetAngle()};
  };
  v.hull = pose(impl_->lander);
  for (int k = 0; k < 2; ++k) {
    v.legs[k] = pose(impl_->legs[k]);
    v.leg_contact[k] = impl_->ground_contact[k];
  }
  v.wind_force = impl_->last_wind;
  return v;
}

}  // namespace dprl::envs
