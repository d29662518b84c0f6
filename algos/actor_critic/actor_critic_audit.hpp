// White-box privacy audit of the DP actor-critic's releases (paper 001, Seo and Yang 2020;
// algos/actor_critic/actor_critic.hpp): the noised actor gradients and/or critic directions,
// against the epsilon the run reports.
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023), with the canaries of algos/audit/release_canaries.hpp. The learner's guarantee, as its
// record states it (formal: false): under replace-one-trajectory adjacency every release is a
// vector rescaled to norm C plus N(0, sigma^2 C^2) noise, so of L2 sensitivity 2C (noise
// multiplier sigma / 2), and the run's epsilon composes all of them (its accountant). Canary j
// occupies coordinate j of every privatised vector (actor: S A values, critic: S) and adds +C
// (included) or -C (not) to it, a change of exactly 2C between the two; it is scored over all
// releases and subtracted again after each, so the learner trains as without canaries. The
// audited training is the run's own (ActorCritic::train with the experiment's params, train
// settings and noise source kind, from the audit's seed; trace_similarity's non-private twin
// and any shared ledger file are left out, they release nothing); the claim is the epsilon
// that training reports for the releases it made.
// What it tests: the noise actually drawn against the sensitivity the record declares. It does
// not (and cannot) test that 2C bounds a trajectory's influence, nor what the record says is not
// covered (the policy, metrics): those are not releases of this mechanism.
// Mis-specification: halve-noise, quarter-noise, near-zero-noise (noise std / 2, / 4, / 100),
// double-sensitivity
// (canaries of 4C).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "algos/actor_critic/actor_critic.hpp"
#include "algos/audit/audit_report.hpp"

namespace dprl::algos {

// ParamError: dp none (no release), black box (no released model covers the claim), more
// canaries than the smallest privatised vector, guesses > canaries.
void check_actor_critic_audit(const ActorCritic& learner, const EnvSpec& spec,
                              const AuditParams& a);

AuditReport audit_actor_critic(const ActorCritic& learner,
                               const std::function<std::unique_ptr<Env>()>& make_env,
                               const TrainParams& train, const AuditParams& a);

}  // namespace dprl::algos
