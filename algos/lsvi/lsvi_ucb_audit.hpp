// White-box privacy audit of private LSVI-UCB / LSVI-UCB+ (paper 002; algos/lsvi/lsvi_ucb.hpp,
// algos/lsvi/lsvi_ucb_private.hpp): the Gram tree nodes and regression targets it releases, against
// the epsilon the run reports.
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023), with the canaries of algos/audit/release_canaries.hpp. The learner's guarantee: joint DP
// with one user = one episode; every release is a Gaussian mechanism whose L2 sensitivity over
// the H steps released together is the channel's (gram_sensitivity, make_channels), and the run's
// epsilon composes the releases one user takes part in (levels tree nodes, one target release
// per update and channel). A canary is such a user: canary j sits at step h_j = j mod H, entry
// i_j = j / H, of every release that carries the first episode (every target release: the
// targets are cumulative; the Gram nodes completed at leaves 1, 2, 4, ...: the nodes covering
// the first leaf, one per level), with the channel's full sensitivity on that one entry
// (replace: +-Delta / 2, add-remove: Delta or 0, the run's neighbouring relation). Scores add up
// over all releases and channels; the contributions are subtracted after each release, so the
// learner runs as without canaries. The audited run is LsviUcb::train with the experiment's
// params and episodes and the noise source kind, from the audit's seed; the claim is the epsilon
// that run reports.
// What it tests: the noise drawn against the declared sensitivities and the release counts the
// accountant composes; not whether a real episode's influence is within them (that is the
// validity of features and rewards, checked by LinearMdpModel::validate).
// Needs M <= H d (d the feature dimension). Mis-specification: halve-noise, quarter-noise,
// near-zero-noise (noise std / 2, / 4, / 100),
// double-sensitivity (canaries of twice the channel's sensitivity).
#pragma once

#include <functional>
#include <memory>

#include "algos/audit/audit_report.hpp"
#include "algos/lsvi/lsvi_ucb.hpp"

namespace dprl::algos {

// ParamError: not private, black box, M > H d, guesses > canaries.
void check_lsvi_ucb_audit(const LsviUcb& learner, const Env& env, const AuditParams& a);

AuditReport audit_lsvi_ucb(const LsviUcb& learner,
                           const std::function<std::unique_ptr<Env>()>& make_env,
                           const TrainParams& train, const AuditParams& a);

}  // namespace dprl::algos
