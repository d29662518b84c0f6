// algos/audit/: the audit machinery every family's audit shares (reports, release canaries,
// the Dirac-canary tap); docs/architecture.md.
//
// What every training audit shares: the `audit:` section's parameters, the canaries' coins and
// scores, and the report written to audit.json and summary.json's "audit".
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023): m canaries, each included independently with probability 1/2; after training the auditor
// guesses "in" for the r/2 highest scores and "out" for the r/2 lowest, and the number of right
// guesses becomes an epsilon lower bound (privacy/one_run_audit.hpp). The learners' audits
// (algos/offline/offline_audit.hpp, algos/audit/*_audit.hpp, algos/expert_level/
// selective_audit.hpp, algos/model_based/primorl_audit.hpp) choose what a canary is and how it
// is scored; ppo_kickstart's per-query guarantee is audited as a mechanism instead
// (algos/kickstart/kickstart_audit.hpp).
//
// What a lower bound shows: with probability >= confidence over the audit's own randomness, the
// audited training (or mechanism) is not (epsilon, delta)-DP for any epsilon below
// epsilon_lower. epsilon_lower > epsilon_claimed refutes the claim. A bound below the claim never
// shows that the claim holds.
//
// | param       | default | meaning                                                      |
// |-------------|---------|--------------------------------------------------------------|
// | canaries    | 1000    | M canaries, each included with probability 1/2               |
// | white_box   | false   | canaries in the released statistic (true) or in the data     |
// | guesses     | 0       | r = guesses (0: M / 5), r/2 "in" and r - r/2 "out"           |
// | confidence  | 0.95    | confidence of the bound                                      |
// | seed        | 0       | coins, canaries, and seeded noise and sampling               |
// | steps       | 0       | steps or rounds T (0: the experiment's)                      |
// | mis_specify | none    | none, halve-noise, quarter-noise, near-zero-noise,           |
// |             |         | double-sensitivity                                           |
// | samples     | 200000  | outputs per input of a mechanism audit (ppo_kickstart)       |
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/params.hpp"

namespace dprl::algos {

struct AuditParams {
  std::int64_t canaries = 1000;
  bool white_box = false;
  std::int64_t guesses = 0;
  double confidence = 0.95;
  std::int64_t seed = 0;
  std::int64_t steps = 0;
  std::string mis_specify = "none";
  std::int64_t samples = 200000;

  template <class V>
  void visit(V& v) {
    v("canaries", canaries, Range::closed(2, 1e6), "canaries, each included w.p. 1/2");
    v("white_box", white_box, "canaries in the released statistic (true) or in the data (false)");
    v("guesses", guesses, Range::closed(0, 1e6), "guesses r (0: canaries / 5)");
    v("confidence", confidence, Range::open(0, 1), "confidence of the lower bound");
    v("seed", seed, Range::closed(0, 4.6e18), "seed of the audit's coins and canaries");
    v("steps", steps, Range::closed(0, 1e12), "gradient steps or rounds (0: the experiment's)");
    v("mis_specify", mis_specify,
      Choices{{"none", "halve-noise", "quarter-noise", "near-zero-noise", "double-sensitivity"}},
      "run the learner wrongly, keeping the claim (tests of the audit)");
    v("samples", samples, Range::closed(1000, 1e8),
      "outputs per input of a mechanism audit (ppo_kickstart)");
  }
};

// Validates the ranges (for callers that fill the struct directly) and guesses <= canaries.
void check_audit_params(const AuditParams& a);

// The factor a mis-specification applies to the noise standard deviation (halve-noise 1/2,
// quarter-noise 1/4, near-zero-noise 1/100, otherwise 1) and to the sensitivity
// (double-sensitivity 2, otherwise 1). ppo_kickstart's Dirichlet concentration is multiplied by
// the inverse square of the noise factor.
double mis_noise_factor(const std::string& mis_specify);
double mis_sensitivity_factor(const std::string& mis_specify);

// M canaries with their coins (each included w.p. 1/2, from the audit seed's coin stream: the
// same coins for the same seed in every learner's audit) and one score each.
struct CanarySet {
  std::vector<char> in;
  std::vector<double> score;
  std::int64_t included = 0;
  CanarySet(std::int64_t m, std::uint64_t seed);
  std::int64_t size() const { return static_cast<std::int64_t>(in.size()); }
};

// The audit's random streams: derive_seed(seed, Domain::kAlgo, kAuditStream, role).
inline constexpr std::uint64_t kAuditStream = 0xA0D17;
std::uint64_t audit_stream(std::uint64_t seed, std::uint64_t role);

struct AuditReport {
  std::string learner;
  std::string kind;               // what was audited, against which claim (one line)
  std::string mode;               // white-box, black-box, or mechanism (black box on outputs)
  std::string mis_specify;        // none, halve-noise, ...
  double epsilon_reported = NAN;  // the run's summary.json privacy.epsilon (NaN: not a run)
  double epsilon_claimed = 0;     // the epsilon the audited training or mechanism claims
  double epsilon_lower = 0;
  double delta = 0;
  double confidence = 0;
  bool refuted = false;
  std::int64_t canaries = 0, included = 0, guesses = 0, correct = 0;
  std::string details_json = "{}";  // the learner's own fields (a JSON object)
};

// Fills guesses, correct, epsilon_lower and refuted from the canaries' scores.
void tally_canaries(const CanarySet& c, std::int64_t guesses, AuditReport& r);

// One JSON object: the fields above (epsilon_reported = epsilon_claimed when NaN), then the
// details' fields.
std::string audit_report_json(const AuditReport& r);
// A few lines for a terminal.
std::string audit_report_text(const AuditReport& r);

// 1.4826 times the median absolute deviation of x (a robust noise scale; fallback when x has
// fewer than two values or no spread).
double robust_scale(std::span<const double> x, double fallback);

}  // namespace dprl::algos
