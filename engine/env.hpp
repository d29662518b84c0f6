// The environment interface.
//
// Physics run in double; observations are float32 written into a caller buffer of exactly
// spec().observation.dim() floats. step() allocates nothing. Concrete envs are `final` classes;
// the registry hands out the same objects behind this interface.
//
// The boundary: reset() and step() are non-virtual. They check the observation buffer's size in
// every build type (Error naming the env and both sizes), own the step counter and the time limit,
// and call the env's do_reset() / do_step(). An env implements only its dynamics.
//
// Dispatch: step() reaches do_step() through the vtable. GCC (12) does not devirtualise that call
// even when the object's class is final, so loops templated on the concrete class E
// (engine/vec_env.hpp, the env benchmarks) call Env::step_as(e, ...), which does what step() does
// with E::do_step named: a direct call. E declares `friend class Env;` for it.
//
// Time limits: the counter restarts at 0 on reset() and set_state(), and step() sets `truncated`
// on the step where it reaches spec().max_episode_steps (Gymnasium's TimeLimit folded in). Both
// flags can be true.
//
// Seeds: reset(seed, obs) starts an episode whose randomness derives from seed only. Reusing one
// seed replays one initial state; a loop over episodes derives one seed per episode,
// derive_seed(root, Domain::kEnvReset, slot, episode) (engine/rng.hpp), as VecEnv does.
//
// Exact replay: state() returns the env's internal physical state (the vector Gymnasium keeps, e.g.
// CartPole [x, x_dot, theta, theta_dot]); set_state(s) restores it and restarts the step counter at
// 0, so a replay of actions from it reproduces the reference trajectory.
//
// Checkpoints: snapshot() holds everything the env's future depends on (physical state, step
// counter, RNG, bookkeeping such as CartPole's steps_beyond_terminated), so restore(snapshot())
// on an env of the same id and params continues the episode mid-way exactly as if it had not
// stopped. sync_state() lists the env's own state through do_sync_state() (LunarLander, whose
// Box2D world has no snapshot, lists its replay recipe and re-simulates it on restore), then the
// step counter; an env that cannot be snapshotted keeps the default do_sync_state, which throws
// Error naming the env, and runs on it write no checkpoints. Every built-in env can be
// snapshotted.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
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

  // Set by the concrete env's constructor, never changed afterwards.
  const EnvSpec& spec() const { return spec_; }
  // Starts an episode whose randomness derives from seed only.
  void reset(std::uint64_t seed, std::span<float> obs) {
    check_obs(obs);
    do_reset(seed, obs);
    elapsed_ = 0;
  }
  // Discrete action; throws InvalidAction outside the space (or for a Box env).
  StepResult step(std::int64_t action, std::span<float> obs) {
    check_obs(obs);
    return count_step(do_step(action, obs));
  }
  // Continuous action of spec().action.dim() values; throws InvalidAction on NaN (or for a
  // Discrete env). Clipping happens only where the reference env clips.
  StepResult step(std::span<const double> action, std::span<float> obs) {
    check_obs(obs);
    return count_step(do_step(action, obs));
  }
  // step() on an env whose final class E the caller knows: E's do_step is called directly (see
  // above). Action is std::int64_t or std::span<const double>.
  template <class E, class Action>
  static StepResult step_as(E& env, Action action, std::span<float> obs) {
    static_assert(std::is_final_v<E> && std::is_base_of_v<Env, E>);
    Env& base = env;
    base.check_obs(obs);
    return base.count_step(env.E::do_step(action, obs));
  }

  virtual std::vector<double> state() const = 0;
  // Throws ParamError (wrong size, non-finite or impossible values).
  void set_state(std::span<const double> state) {
    do_set_state(state);
    elapsed_ = 0;
  }
  // Steps taken since reset / set_state.
  int elapsed_steps() const { return elapsed_; }

  // Writes 1 for actions that change the state (Taxi), all ones by default.
  virtual void action_mask(std::span<std::uint8_t> mask) const;
  // The finite model, or nullptr for continuous envs.
  virtual const TabularModel* tabular_model() const { return nullptr; }
  // The resolved parameters (every field, defaults included).
  virtual ParamMap params() const = 0;

  std::size_t obs_dim() const { return spec_.observation.dim(); }

  // The env's whole mutable state as bytes, and back (DataError on bytes of another env).
  std::string snapshot() const;
  void restore(std::string_view bytes);
  // Saves or loads the mutable state (see above): do_sync_state, then the step counter (a load
  // refuses one outside [0, spec().max_episode_steps]).
  void sync_state(StateIo& io);

 protected:
  // The dynamics behind reset() and step(): obs has spec().observation.dim() floats; the base
  // sets `truncated` and counts the step after do_step returns. The default do_step overloads
  // throw InvalidAction (the action is of the other kind).
  virtual void do_reset(std::uint64_t seed, std::span<float> obs) = 0;
  virtual StepResult do_step(std::int64_t action, std::span<float> obs);
  virtual StepResult do_step(std::span<const double> action, std::span<float> obs);
  virtual void do_set_state(std::span<const double> state) = 0;
  // The env's own mutable state (see above); the default throws Error (no snapshot).
  virtual void do_sync_state(StateIo& io);

  EnvSpec spec_;

 private:
  void check_obs(std::span<const float> obs) const {
    if (obs.size() != spec_.observation.dim()) [[unlikely]]
      throw_bad_obs_size(obs.size());
  }
  [[noreturn]] void throw_bad_obs_size(std::size_t given) const;
  // the time limit: truncated on the step that reaches spec().max_episode_steps
  StepResult count_step(StepResult r) {
    r.truncated = ++elapsed_ >= spec_.max_episode_steps;
    return r;
  }

  int elapsed_ = 0;
};

}  // namespace dprl
