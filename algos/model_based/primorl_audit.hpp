// One-run privacy audit of PriMORL's trajectory-level DP-FedAvg (variant tdp) with canary
// trajectories: the clients of DP-FedAvg are trajectories, so the canaries are clients too.
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023), with the shared machinery of algos/audit/audit_report.hpp. The audited training is the
// model stage of the run (algos/model_based/primorl.hpp, Primorl::model_stage): the same data and
// public split, the same initial ensemble, TDP settings and seed, trained by
// train_ensemble_tdp (privacy/dp_fedavg.hpp's clipping, fixed-denominator average and release,
// with the run's noise source kind) for the run's rounds (audit.steps overrides). The policy
// stage reads nothing but the released model, so it is post-processing and is not run. The
// population is the run's K training trajectories plus the M canaries: q is kept and the
// denominator is q (K + M) whichever canaries are included (add/remove adjacency of one
// trajectory, as the theorem needs). The claim is the epsilon of the run's RDP ledger at the
// rounds trained (rounds stop before a budget_epsilon would be exceeded, as in the run).
//
// Modes (stated in the report):
// - white box: Dirac canary updates. The clip set is a product of groups (flat: one per member,
//   threshold C / sqrt(N); per_layer: one per member and block, C / sqrt(N L)). Canary j is the
//   update with the group threshold at coordinate j of every group with at least M coordinates
//   and 0 elsewhere: it lies in the clip set and has norm C sqrt(G' / G) for G' of the G groups
//   used (C when every group is large enough; the report states canary_norm). Each round every
//   included canary is sampled with probability q (its own coin, like a trajectory's) and then
//   added to the clipped sum before the release (privacy/release_tap.hpp). Its score is the log
//   likelihood ratio of the releases' projections on its direction, in sum units, under
//   "included" (Poisson mixture) against "excluded" (privacy/one_run_audit.hpp, poisson_llr),
//   the noise scale estimated from the first release as an auditor who sees only the releases
//   would. Needs at least one group of M coordinates.
// - black box: canary trajectory j has L copies of one transition (x_j, y_j), L the median length
//   of the run's trajectories: the input x_j = [s_j; a_j] with s_j uniform within 4 public
//   standard deviations of the public split's mean state (clipped to the observation space) and
//   a_j uniform in the action box; the target y_j = ybar + 3 sd_y (+-1 per output, random signs)
//   around the public split's target mean ybar and standard deviations. Included canaries join
//   the training table as clients. Score_j = the mean over members of
//   sum_k (y_jk - ybar_k) (mu_k(x_j) - ybar_k) / var_k(x_j) from the released ensemble: the log
//   likelihood of y_j minus that of its mirror 2 ybar - y_j. Only the released model is read.
// Mis-specification (the claim stays that of the configured z and C): halve-noise,
// quarter-noise and near-zero-noise draw the release's noise at 1/2, 1/4 and 1/100 of its
// standard deviation;
// double-sensitivity clips clients at 2 C (z halved so the noise stays z C / (q K)) and doubles
// the white-box canaries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "algos/audit/audit_report.hpp"
#include "algos/model_based/primorl.hpp"

namespace dprl::algos {

// The checks before training (ParamError: variant not tdp, white-box canaries larger than every
// clip group, guesses > canaries).
void check_primorl_audit(const Primorl& learner, const EnvSpec& spec, const AuditParams& a);

// Audits a fresh Primorl learner of the run's params; seed is the experiment's.
AuditReport audit_primorl(Primorl& learner, const std::function<std::unique_ptr<Env>()>& make_env,
                          std::uint64_t seed, const AuditParams& a);

}  // namespace dprl::algos
