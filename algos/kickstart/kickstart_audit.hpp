// Black-box audit of ppo_kickstart's privacy-preserving teacher (paper 003, Gohari et al.;
// privacy/dirichlet_teacher.hpp): one query's Dirichlet mechanism at the run's actual teacher,
// k0, eta, tau and b, against the per-query (epsilon, delta) the run reports.
//
// The run's guarantee is per query only: for two b-adjacent observations (||x - x'||_2 <= b) and
// the teacher network held fixed, one answer Dir(k p~(x)) is (eps_j, delta_j)-DP (eq. 12 and
// eq. 6). It is not DP of any training data, and the whole-run totals are basic compositions of
// these. So the audit is a mechanism audit (privacy/audit.hpp's threshold sets with
// Clopper-Pearson bounds, as dprl audit mechanism) on the worst b-adjacent pair this search
// finds from the teacher:
//   candidates  observations of 64 seeded episodes with uniform random actions in the run's env
//               (at most 512 of them);
//   direction   at each candidate, the top right singular vector v of the numerical Jacobian of
//               the floored teacher policy p~ (central differences);
//   pairs       (x - b v / 2, x + b v / 2), (x, x + b v), (x - b v, x), kept when both points
//               lie in the observation space;
//   chosen      the pair with the largest symmetric Kullback-Leibler divergence between
//               Dir(k0 p~(x)) and Dir(k0 p~(x')).
// It is a heuristic search: a larger distinguishability may exist elsewhere, so the bound is
// one for the pair found (the pair and both policies are in the report). Then `samples` answers
// are drawn on each input through DirichletTeacher::answer (the run's mechanism: eta floor,
// Dirichlet(k p~), the run's noise source kind), at k0, with no budget and no decay (one query).
// Statistic: s(y) = sum_i (p~'_i - p~_i) log y_i, the log likelihood ratio up to a constant,
// so its upper sets are the most powerful tests (Neyman-Pearson); thresholds at 17 quantiles
// of each input's statistic in a pilot of samples / 10 draws per input (independent of the main
// draws), every set at the Bonferroni level. Claim: eq. 12 and eq. 6 at k0 with the run's
// certified Lipschitz bound (the run's first query; epsilon_reported is the run's total).
// Mis-specification (the claim stays that of k0): halve-noise answers at 4 k0, quarter-noise at
// 16 k0, near-zero-noise at 10^4 k0 (a Dirichlet coordinate's standard deviation scales as
// 1 / sqrt(k)),
// double-sensitivity uses a pair 2 b apart.
#pragma once

#include <functional>
#include <memory>

#include "algos/audit/audit_report.hpp"
#include "algos/kickstart/kickstart_ppo.hpp"

namespace dprl::algos {

// ParamError: teacher_mode not dirichlet, white box asked; DataError: no teacher file (checked
// when teacher_exists: before a run that trains its teacher, the file does not exist yet).
void check_kickstart_audit(const PpoKickstart& learner, const EnvSpec& spec, const AuditParams& a,
                           bool teacher_exists = true);

AuditReport audit_kickstart(const PpoKickstart& learner,
                            const std::function<std::unique_ptr<Env>()>& make_env,
                            const AuditParams& a);

}  // namespace dprl::algos
