// Which audit each learner gets: the one entry point of `dprl run` (an experiment's `audit:`
// section), `dprl audit dpsgd CONFIG` and `dprl audit run RUN_DIR` for every registered learner.
//
// | learner                         | audit                                                   |
// |---------------------------------|---------------------------------------------------------|
// | bc, discrete_cql, discrete_bcq  | canary users of user-level DP-SGD                       |
// |                                 | (algos/offline/offline_audit.hpp)                       |
// | primorl (variant tdp)           | canary trajectories of DP-FedAvg                        |
// |                                 | (algos/model_based/primorl_audit.hpp)                   |
// | actor_critic (dp != none)       | white-box canaries in the noised actor gradients and    |
// |                                 | critic directions                                       |
// |                                 | (algos/actor_critic/actor_critic_audit.hpp)             |
// | lsvi_ucb (private)              | white-box canaries in the Gram and target releases      |
// |                                 | (algos/lsvi/lsvi_ucb_audit.hpp)                         |
// | ppo_kickstart (dirichlet)       | one query's Dirichlet mechanism at the run's teacher    |
// |                                 | (algos/kickstart/kickstart_audit.hpp)                   |
// | the expert-level pipeline       | canary experts of its DP-SGD part                       |
// |                                 | (algos/run/selective_audit.hpp)                         |
// Every other learner releases nothing private: ConfigError (one line) naming it, and the same
// for a private learner configured without privacy (dp: false, variant no_noise, ...). Where a
// mode cannot test the claim (black box for actor_critic and lsvi_ucb, whose claims cover only
// releases the run does not write; white box for ppo_kickstart, a mechanism on its outputs) the
// learner's check says so in one line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "algos/audit/audit_report.hpp"
#include "algos/core/algorithm.hpp"

namespace dprl::algos {

struct AuditInputs {
  std::string algo_id;
  const Env& env;  // a probe env of the experiment
  std::function<std::unique_ptr<Env>()> make_env;
  const Dataset* data = nullptr;  // offline learners
  const TrainParams& train;
  std::uint64_t seed = 0;  // the experiment's
};

// The audit's own checks on a probe learner of the experiment's params, before anything is
// written (ConfigError or ParamError, one line).
void check_audit(Algorithm& probe, const AuditInputs& in, const AuditParams& a);

// Runs the audit on a fresh learner of the experiment's params; epsilon_reported is the run's
// figure (NaN when auditing a config that was not run).
AuditReport run_audit(Algorithm& fresh, const AuditInputs& in, const AuditParams& a,
                      double epsilon_reported);

}  // namespace dprl::algos
