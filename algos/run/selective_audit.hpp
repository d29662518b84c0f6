// One-run privacy audit of the expert-level pipeline's DP-SGD part (selective DP-SGD, Alg. 3, or
// the expert-level DP-SGD baseline, Alg. 4; algos/expert_level/selective_dp_sgd.hpp) with canary
// EXPERTS: the privacy unit of the pipeline is the expert, so each canary is one.
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023); shared machinery in algos/audit/audit_report.hpp. The pipeline's guarantee is
// (epsilon1 + epsilon2, delta1 + delta2) by basic composition of DataRelease and DP-SGD. This
// audit tests the DP-SGD part ALONE against epsilon2, the figure its own ledger reports
// (epsilon_claimed; epsilon_reported is the whole pipeline's): the release is a separate
// mechanism on counts whose claim this audit does not test (its mechanisms are covered by
// dprl audit mechanism). The audited training is train_selective itself (the learner's dp_step,
// the release rule and noise source kind, the Bernoulli(p) coins, the steps on D_stable, the
// ledger and its sound or paper accounting) on the run's D_stable and D_unst, m experts, batch b,
// with the audit's own seed: the canaries join the population, q0 = b / m is kept (the expected
// batch grows to q0 (m + M)), so inclusion changes nothing but that expert's presence.
//
// Modes (stated in the report):
// - white box: Dirac gradient canaries (algos/audit/dirac_tap.hpp): at each noisy step every
//   included canary is sampled with probability q0 and adds C e_j to the clipped sum; scored by
//   the Poisson log likelihood ratio of the released coordinates. The auditor sees every noisy
//   step's release, so under accounting: paper (which assumes nobody can tell noisy from stable
//   steps) a refutation is possible and says exactly that. Needs M <= the noised values.
// - black box: canary expert j has one transition at an out-of-distribution observation with a
//   uniform action (algos/offline/offline_audit.hpp, CanaryUsers), added to D_unst; scored by the
//   released model's margin for that action minus the initial model's (public: fixed by the
//   audit seed).
// Mis-specification (the claim stays that of the configured z and C): halve-noise,
// quarter-noise and near-zero-noise draw the release's noise at 1/2, 1/4 and 1/100 of its
// standard deviation; double-sensitivity clips experts at 2 C
// (white box: canaries 2 C e_j) with the noise still for C.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "algos/audit/audit_report.hpp"
#include "algos/expert_level/selective_dp_sgd.hpp"
#include "algos/run/pipeline.hpp"

namespace dprl::algos {

// The audit of train_selective's DP-SGD part for these inputs (as train_selective takes them);
// seed is the experiment's. ParamError when p takes no DP step, for white-box canaries beyond
// the noised values, guesses > canaries.
AuditReport audit_selective(OfflineLearner& learner, const Dataset* stable, const Dataset* unstable,
                            std::int64_t num_experts, int batch_size, const SelectiveDpSgdParams& p,
                            const std::function<std::unique_ptr<Env>()>& make_env,
                            std::uint64_t seed, const AuditParams& a);

// A pipeline that has run (its population and release on disk; pipeline_train_data): mode
// non_private is a ConfigError (no claim). epsilon_reported is the pipeline's figure.
AuditReport audit_pipeline(const PipelineSpec& spec, const PipelineOptions& opts,
                           const AuditParams& a, double epsilon_reported);

}  // namespace dprl::algos
