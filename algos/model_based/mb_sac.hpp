// Policy optimisation inside the pessimistic model: SAC on branched model rollouts (PriMORL
// Algorithm 4; the rollout schedule and replay retention of MBPO/MOPO, Janner et al. 2019 and
// Yu et al. 2020).
//
// Every rollout_freq SAC updates, rollout_batch start states are drawn and rolled for `horizon`
// steps with the current stochastic policy in the ModelEnv (penalised reward, no termination);
// every transition goes into the model replay, which keeps the last retain_epochs rollouts
// (capacity rollout_batch * horizon * retain_epochs). Each SAC update uses a batch of which a
// fraction real_ratio comes from real transitions (MOPO: 0.05) and the rest from the model replay
// (PriMORL: real_ratio 0). After each epoch of steps_per_epoch updates the caller evaluates the
// policy in the real env.
//
// Start states (PriMORL may not touch the data after model training): a fraction start_reset
// comes from the env's reset distribution rho_0 (public: the task's definition), the rest from
// states already in the model replay (post-processing of the model); with no model states yet all
// come from rho_0. The MOPO baseline instead starts every rollout from real dataset states
// (start_from_data), as the MOPO code does.
//
// | field           | default | meaning                                              |
// |-----------------|---------|------------------------------------------------------|
// | epochs          | 30      | SAC epochs                                           |
// | steps_per_epoch | 1000    | SAC updates per epoch (MOPO code)                    |
// | batch_size      | 256     | SAC batch (MOPO code)                                |
// | rollout_freq    | 1000    | SAC updates between rollouts (MOPO code)             |
// | rollout_batch   | 5000    | start states per rollout (MOPO code: 50000)          |
// | horizon         | 30      | rollout length h (Table 8: Pendulum 30, Cartpole 20) |
// | retain_epochs   | 5       | rollouts kept in the model replay (MOPO code)        |
// | real_ratio      | 0       | fraction of real transitions per batch               |
// | start_reset     | 0.5     | fraction of rollout starts drawn from rho_0          |
// | start_from_data | false   | start rollouts from real states (MOPO baseline)      |
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "algos/model_based/model_data.hpp"
#include "algos/model_based/model_env.hpp"
#include "algos/online/sac_learner.hpp"
#include "engine/env.hpp"

namespace dprl::algos::model_based {

struct PolicyStageConfig {
  int epochs = 30;
  int steps_per_epoch = 1000;
  int batch_size = 256;
  int rollout_freq = 1000;
  int rollout_batch = 5000;
  int horizon = 30;
  int retain_epochs = 5;
  double real_ratio = 0.0;
  double start_reset = 0.5;
  bool start_from_data = false;
};

struct EpochStats {
  int epoch = 0;
  std::int64_t updates = 0;
  double model_reward = 0;  // mean penalised reward of the last rollout
  double raw_reward = 0;    // mean model reward before the penalty
  double penalty = 0;       // mean u of the last rollout
  double q_loss = 0;        // last critic loss (sum of both critics)
  double alpha = 0;
};

// Checkpoints of the stage, between epochs: its state (epoch and counters, both generators, the
// model replay buffer, the learner, the last rollout's figures) as bytes its owner stores in its
// own checkpoint. resume_state: a saved state to continue from ("": from the first epoch).
struct PolicyStageCheckpoints {
  std::string resume_state;
  std::function<bool(std::int64_t updates)> due;                    // after each epoch
  std::function<void(std::int64_t updates, std::string state)> save;  // when due
};

// Runs the stage. `reset_env` supplies rho_0 states (reset only, never stepped). `real` is the
// real transition table for the MOPO baseline and must be null when real_ratio is 0 and
// start_from_data is false (PriMORL): then nothing here can read the dataset.
void train_policy_in_model(const ProbEnsemble& model, const ModelEnvConfig& env_cfg,
                           const PolicyStageConfig& cfg, SacLearner& learner, Env& reset_env,
                           std::uint64_t seed, const TransitionTable* real,
                           const std::function<void(const EpochStats&)>& on_epoch,
                           PolicyStageCheckpoints* checkpoints = nullptr);

}  // namespace dprl::algos::model_based
