// The environment interface.
//
// Physics run in double; observations are float32 written into a caller buffer of
// spec().observation.dim() floats. step() allocates nothing. Concrete envs are `final` classes, so
// loops templated on the concrete type (engine/vec_env.hpp) call step without virtual dispatch;
// the registry hands out the same objects behind this interface.
//
// Time limits: every env counts its own steps and sets `truncated` on the step where the count
// reaches spec().max_episode_steps (Gymnasium's TimeLimit folded in). Both flags can be true.
//
// Exact replay: state() returns the env's internal physical state (the vector Gymnasium keeps, e.g.
// CartPole [x, x_dot, theta, theta_dot]); set_state(s) restores it and restarts the step counter at
// 0, so a replay of actions from it reproduces the reference trajectory.
//
// Checkpoints: snapshot() holds everything the env's future depends on (physical state, step
// counter, RNG, bookkeeping such as CartPole's steps_beyond_terminated), so restore(snapshot())
// on an env of the same id and params continues the episode mid-way exactly as if it had not
// stopped. Envs list that state in sync_state() (LunarLander, whose Box2D world has no snapshot,
// lists its replay recipe and re-simulates it on restore); an env that cannot be snapshotted keeps
// the default, which throws Error naming the env, and runs on it write no checkpoints. Every
// built-in env can be snapshotted.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/params.hpp"
#include "engine/space.hpp"
#include "engine/state_io.hpp"

namespace dprl {

struct StepResult {
  double reward = 0;
  bool terminated = false;
  bool truncated = false;
};

// An explicit model of a finite MDP (Taxi, chain): for exact value iteration and linear-MDP
// learners. Transitions of (s, a) are outcomes[offset[s * A + a] .. offset[s * A + a + 1]).
struct TabularModel {
  struct Outcome {
    std::int32_t next_state;
    double prob;
    double reward;
    bool terminal;  // the episode terminates on arriving
  };
  int num_states = 0;
  int num_actions = 0;
  std::vector<std::size_t> offset;  // size num_states * num_actions + 1
  std::vector<Outcome> outcomes;
  std::vector<double> initial;  // reset distribution over states
  std::vector<bool> absorbing;  // states in which the episode has already ended

  std::span<const Outcome> at(int s, int a) const {
    const std::size_t i = static_cast<std::size_t>(s) * num_actions + a;
    return {outcomes.data() + offset[i], offset[i + 1] - offset[i]};
  }
};

class Env {
 public:
  virtual ~Env() = default;

  virtual const EnvSpec& spec() const = 0;
  // Starts an episode whose randomness derives from seed only.
  virtual void reset(std::uint64_t seed, std::span<float> obs) = 0;
  // Discrete action; throws InvalidAction outside the space (or for a Box env).
  virtual StepResult step(std::int64_t action, std::span<float> obs);
  // Continuous action of spec().action.dim() values; throws InvalidAction on NaN (or for a
  // Discrete env). Clipping happens only where the reference env clips.
  virtual StepResult step(std::span<const double> action, std::span<float> obs);

  virtual std::vector<double> state() const = 0;
  // Throws ParamError (wrong size, non-finite or impossible values).
  virtual void set_state(std::span<const double> state) = 0;
  // Steps taken since reset / set_state.
  virtual int elapsed_steps() const = 0;

  // Writes 1 for actions that change the state (Taxi), all ones by default.
  virtual void action_mask(std::span<std::uint8_t> mask) const;
  // The finite model, or nullptr for continuous envs.
  virtual const TabularModel* tabular_model() const { return nullptr; }
  // The resolved parameters (every field, defaults included).
  virtual ParamMap params() const = 0;

  std::size_t obs_dim() const { return spec().observation.dim(); }

  // The env's whole mutable state as bytes, and back (DataError on bytes of another env).
  std::string snapshot() const;
  void restore(std::string_view bytes);
  // Saves or loads the mutable state (see above); the default throws Error (no snapshot).
  virtual void sync_state(StateIo& io);
};

}  // namespace dprl
