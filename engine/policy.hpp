// Policies acting in an env, and seeded evaluation over episodes.
//
// A policy answers discrete actions (with an optional action mask) or continuous ones. Evaluation
// episode e of round r starts from seed derive_seed(seed, Domain::kEval, r, e), so the same policy
// and seed give the same returns wherever and however often it is run.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/env.hpp"
#include "engine/rng.hpp"
#include "engine/run_dir.hpp"

namespace dprl {

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // Called at the start of each episode (stochastic policies reseed here).
  virtual void begin_episode(std::uint64_t seed) {}
  virtual std::int64_t act_discrete(std::span<const float> obs, std::span<const std::uint8_t> mask);
  virtual void act_continuous(std::span<const float> obs, std::span<double> action);
};

// Uniformly random actions from the env's action space (masked actions excluded when the env
// has masks).
class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(const EnvSpec& spec) : spec_(spec) {}
  std::string name() const override { return "random"; }
  void begin_episode(std::uint64_t seed) override { rng_.seed_with(seed); }
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;
  void act_continuous(std::span<const float> obs, std::span<double> action) override;

 private:
  EnvSpec spec_;
  Rng rng_;
};

// Watches the episodes evaluate() runs (dprl render draws a frame at each call). It sees the env
// only as const: it cannot change a trajectory.
class EpisodeObserver {
 public:
  virtual ~EpisodeObserver() = default;
  // Episode `episode` (from 0) has been reset.
  virtual void on_reset(const Env& env, int episode) = 0;
  // Step `step` (from 1) of the episode has been taken; ret is the return so far. Returning false
  // ends the episode there (its statistics then cover the steps taken).
  virtual bool on_step(const Env& env, int episode, std::int64_t step, const StepResult& r,
                       double ret) = 0;
};

// Runs `episodes` seeded episodes of policy in env (each to termination or truncation, or until
// the observer, if any, ends it).
EvalStats evaluate(Env& env, Policy& policy, int episodes, std::uint64_t seed,
                   std::uint64_t round = 0, EpisodeObserver* observer = nullptr);

}  // namespace dprl
