// One-run privacy audit of the offline learners' user-level DP-SGD (bc, discrete_cql,
// discrete_bcq) with canary USERS.
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023): m canaries, each included independently with probability 1/2; after training the auditor
// guesses "in" for the r/2 highest scores and "out" for the r/2 lowest, and the number of right
// guesses becomes an epsilon lower bound (privacy/one_run_audit.hpp, their Theorem for
// (epsilon, delta)). The privacy unit here is the user, so each canary is one user.
//
// The audited training is the learner's own DP step (OfflineLearner::dp_step: joint per-user
// clipping over every trained network, the configured release rule and noise source) on the
// run's dataset plus the included canaries, with the run's noise multiplier z, clip norm C,
// contribution k, accountant and delta, for T gradient steps (train.steps, or what the budget
// affords under train.until_budget). The Poisson rate q = b / m_run of the run is kept: with M
// canaries the audited population is m_run + M users and the expected batch q (m_run + M), so the
// claimed epsilon, dpsgd_epsilon({z, q, T}, delta, accountant), is the run's. q is fixed whether or
// not a canary is included, so inclusion changes nothing but that user's presence (add/remove
// adjacency, as the theorem needs).
//
// Modes (stated in the report):
// - black box: canary j is a user with one transition (o_j, a_j, reward 1, terminated) at an
//   observation o_j = mean + 4 std * u_j (u_j uniform in [-1, 1]^d, per-dimension mean and std
//   of the run's observations, clipped to the observation space) and a uniform action a_j.
//   Score_j = m(o_j) after training minus m(o_j) before it, for the margin
//   m(o) = f(o)[a_j] - max_{a != a_j} f(o)[a] of the model's outputs
//   (OfflineLearner::released_outputs). Only the released model is read, and the initial one,
//   which is public (fixed by the audit seed before any data is seen): subtracting its margins
//   removes the spread the random initialisation gives every canary alike.
// - white box: Dirac gradient canaries (their Section 5 white-box setting): canary j, when
//   included and Poisson-sampled in a step (rate q, like every user), adds C e_j to the clipped
//   sum just before the release (a user whose clipped gradient is C e_j: norm exactly C). Score_j
//   is the log likelihood ratio of the released coordinate j over the steps under "included"
//   (each step a mixture: sampled w.p. q, shifted by the canary) against "excluded"
//   (privacy/one_run_audit.hpp, poisson_llr: the Neyman-Pearson statistic; with q = 1 it orders
//   canaries as the plain sum of the coordinate does). Its noise scale is estimated from the
//   first release (1.4826 times the median absolute deviation of the canary coordinates), as an
//   auditor who sees only the releases would. The auditor sees every released noisy sum but not
//   the sampling. Needs M <= the number of noised values.
// Mis-specification (the claim stays that of the configured z and C): halve-noise,
// quarter-noise and near-zero-noise divide the release's noise std by 2, 4 and 100;
// double-sensitivity clips users at 2 C
// (white box: canaries add 2 C e_j) while the noise still covers C.
//
// What a lower bound shows: with probability >= confidence over the audit's own randomness, the
// audited training is not (epsilon, delta)-DP for any epsilon below epsilon_lower. It never shows
// that a run IS private (a weak audit gives a small bound for a broken learner too), and it
// audits the training algorithm with this configuration, not the bytes of an earlier run's model.
//
// Parameters: the `audit:` section (algos/audit/audit_report.hpp, AuditParams).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "algos/audit/audit_report.hpp"
#include "algos/offline/offline_learner.hpp"
#include "engine/data/dataset.hpp"
#include "engine/env.hpp"
#include "engine/params.hpp"

namespace dprl::algos {

using OfflineAuditParams = AuditParams;

struct OfflineAuditReport {
  std::string mode;  // "black-box" or "white-box"
  std::string mis_specify;
  double epsilon_claimed = 0;  // dpsgd_epsilon({z, q, T}, delta, accountant)
  double epsilon_lower = 0;
  bool refuted = false;
  double delta = 0;
  double confidence = 0;
  std::string accountant;
  std::int64_t canaries = 0, included = 0, guesses = 0, correct = 0;
  std::int64_t steps = 0;
  std::int64_t run_users = 0;  // m_run
  double sampling_rate = 0;    // q
  double noise_multiplier = 0, clip_norm = 0;
  double noise_sd = 0;  // the release's noise std on the sum (mis-specification included)
  std::string noise_source;
};

// Audits `learner` (a private offline learner: dp true) on `data` in an env with `spec`.
// `steps` is the experiment's train.steps, `until_budget` its train.until_budget. Throws
// ParamError for a non-private learner, white_box with M above the noised values, guesses > M.
OfflineAuditReport audit_offline(OfflineLearner& learner, const EnvSpec& spec, const Dataset& data,
                                 std::int64_t steps, bool until_budget,
                                 const OfflineAuditParams& a);

// The checks audit_offline makes before training (the same throws), without training.
void check_offline_audit(OfflineLearner& learner, const EnvSpec& spec, const Dataset& data,
                         std::int64_t steps, bool until_budget, const OfflineAuditParams& a);

// Black-box canary users (above): canary j's observation (obs_dim values at j obs_dim) and action.
struct CanaryUsers {
  std::size_t obs_dim = 0;
  std::vector<float> obs;
  std::vector<int> actions;
};
// M canaries around the moments of ds's observations, from the audit seed's stream.
CanaryUsers draw_canary_users(const Dataset& ds, const EnvSpec& spec, std::int64_t M,
                              std::uint64_t seed);
// A copy of ds with the canaries whose coin in[j] is set appended as users max_id + 1 + j (one
// terminal transition each); in empty: a plain copy.
Dataset with_canary_users(const Dataset& ds, const CanaryUsers& c, std::span<const char> in);
// score_j = f(o_j)[a_j] - max_{a != a_j} f(o_j)[a] from the learner's released outputs.
void canary_margins(const OfflineLearner& learner, const CanaryUsers& c, std::span<double> score);

// The report as one JSON object (audit.json), with the learner's name and the epsilon the run
// reported (epsilon_reported; the claim of the audited training is epsilon_claimed).
std::string audit_json(const OfflineAuditReport& r, const std::string& learner,
                       double epsilon_reported);
// The same as the shared report (algos/audit/audit_report.hpp).
AuditReport to_audit_report(const OfflineAuditReport& r, const std::string& learner,
                            double epsilon_reported);

}  // namespace dprl::algos
