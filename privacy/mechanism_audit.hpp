// Black-box mechanism audits: run one of privacy/'s mechanisms many times on a worst-case pair of
// neighbouring inputs (or a given pair) and certify a lower bound on its epsilon at delta with
// privacy/audit.hpp (threshold sets, Bonferroni-corrected one-sided Clopper-Pearson bounds).
//
// Sources: the hypothesis-testing view of DP (Kairouz, Oh and Viswanath, "The Composition Theorem
// for Differential Privacy", ICML 2015, Thm. 2.1) and auditing with confidence intervals
// (Jagielski, Ullman and Oprea, "Auditing Differentially Private Machine Learning: How Private is
// Private SGD?", NeurIPS 2020; Nasr, Song, Thakurta, Papernot and Carlini, "Adversary
// Instantiation: Lower Bounds for Differentially Private Machine Learning", IEEE S&P 2021).
//
// Neighbouring pairs (record level, "replace one value" with the query's sensitivity 1):
//   gaussian, analytic-gaussian   D = x0 u, D' = x1 u with u = (1, ..., 1) / sqrt(d) (L2 distance
//                                 |x1 - x0|; any unit u is worst case for the L2 sensitivity)
//   laplace                       D = x0 e_1, D' = x1 e_1 (L1 worst case: the whole difference on
//                                 one coordinate)
//   discrete-gaussian, -laplace   scalar, the exact samplers of privacy/secure_sampling.hpp on the
//                                 grid g = 1/16 (sigma or b rounded up to a multiple of g);
//                                 the default claim is the continuous Gaussian's curve, which
//                                 the discrete one matches closely (Canonne, Kamath and Steinke,
//                                 NeurIPS 2020) without a proof relied on here
//   svt                           AboveThreshold (threshold 0, sensitivity 1): six queries at
//                                 0 then one at 0 (D) against six at 1 then one at -1 (D');
//                                 the event "halted at the seventh query" (derived in
//                                 tests/privacy/empirical_dp_test.cpp)
//   dirichlet                     m = 2, eta = 0.25, tau = 0.1, L = 1, b = 0.5: pi = (0.25, 0.75)
//                                 against pi moved by L b along (1, -1) / sqrt(2)
// Default pair x0 = 0, x1 = 1 (= the sensitivity).
// Statistics (--attack):
//   projection  vector outputs are projected on the difference direction u. For isotropic
//               Gaussian noise this is the sufficient statistic (the log likelihood ratio is affine
//               in <y, u>), and for Laplace noise with the difference on e_1 the other coordinates
//               carry no information, so the upper sets {<y, u> >= t} are the most powerful tests
//               (Neyman-Pearson) for the mechanism as specified.
//   classifier  for vector outputs (d in [2, 64]): privacy/audit_classifier.hpp's Gaussian
//               discriminant, fitted on the first min(n / 2, 100000) runs per input and scored
//               on the others; it finds leaks off the direction u (a coordinate without noise,
//               correlated or input-dependent noise).
//   both        the union of the two families of sets; auto (the default) is both for vector
//               outputs with d in [2, 64] and projection otherwise.
// Rejection sets {s >= t}: K thresholds fixed before the runs they are evaluated on. Projection:
// from the claimed mechanism's scale s, t = (x0 + x1) / 2 + s j / 4, j = -8, ..., 40 (49 sets) for
// location mechanisms, t = 0.5 for svt, t = 0.05, ..., 0.95 for dirichlet. Classifier: 48 order
// statistics of the training runs' scores (classifier_thresholds). Every one-sided interval is
// taken at (1 - confidence) / (2K), K the sets of both families.
// Guarantee: if the mechanism as run is (epsilon_claimed, delta)-DP for the pair, P(refuted) <=
// 1 - confidence over the sampling.
// Mis-specification (to show the audit's power): halve-noise runs the noise scale / 2 (Dirichlet:
// concentration x 4), quarter-noise / 4 (x 16), double-sensitivity moves D' to x0 + 2 (x1 - x0),
// unnoised-coordinate (vector kinds, d >= 2) releases the last coordinate without noise (an
// off-by-one in a noise loop; only the classifier sees it for gaussian, whose u spreads the
// difference over every coordinate); the claim stays that of the correctly specified mechanism.
//
// | field          | meaning                                                         | default |
// |----------------|-----------------------------------------------------------------|---------|
// | mechanism      | gaussian, laplace, analytic-gaussian, discrete-gaussian,        | gaussian|
// |                | discrete-laplace, svt, dirichlet                                |         |
// | noise_multiplier | z: sigma (Gaussian kinds) or b (Laplace kinds) = z x pair distance  | unset   |
// | epsilon        | calibrate by epsilon instead (gaussian: classical; analytic:   | unset   |
// |                | Balle and Wang 2018; laplace: b = 1 / epsilon; svt)            |         |
// | concentration  | Dirichlet k                                                    | 2       |
// | claim_epsilon  | claimed epsilon (unset: the mechanism's own accounting)        | unset   |
// | delta          | delta of the claim and of the bound (dirichlet unset: eq. 6)   | 1e-5    |
// | dim            | output dimension d (gaussian, laplace, analytic-gaussian)      | 1       |
// | secure         | exact discrete noise with snapping (secure_release.hpp)        | false   |
// | samples        | runs per input                                                  | 100000  |
// | seed           | root seed; D draws from stream (seed, 0), D' from (seed, 1)    | 0       |
// | confidence     | 1 - alpha, in (0, 1)                                            | 0.95    |
// | attack         | auto, projection, classifier, both (above)                      | auto    |
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace dprl::privacy::audit {

struct MechanismAuditParams {
  std::string mechanism = "gaussian";
  double noise_multiplier = NAN;
  double epsilon = NAN;
  double concentration = 2.0;
  double claim_epsilon = NAN;
  double delta = NAN;  // NaN: 1e-5 (0 for laplace kinds and svt; eq. 6 for dirichlet)
  int dim = 1;
  bool secure = false;
  std::int64_t samples = 100000;
  std::uint64_t seed = 0;
  double confidence = 0.95;
  bool has_pair = false;
  double x0 = 0.0, x1 = 1.0;
  // none | halve-noise | quarter-noise | double-sensitivity | unnoised-coordinate
  std::string mis_specify = "none";
  std::string attack = "auto";  // auto | projection | classifier | both
};

struct MechanismAuditReport {
  double epsilon_claimed = 0.0;
  double epsilon_lower = 0.0;
  double delta = 0.0;
  double confidence = 0.0;
  bool refuted = false;
  std::int64_t samples = 0;  // per input
  double noise_scale = 0.0;  // sigma, b or k of the mechanism as run
  std::string statistic;     // what s is
  double threshold = 0.0;    // the best set {s >= threshold}
  double fpr_upper = 1.0, fnr_upper = 1.0;
  double fpr = 0.0, fnr = 0.0;  // empirical rates of that set
  int sets = 0;                 // K
  std::string attack;           // as resolved: projection, classifier or both
  std::int64_t classifier_train = 0;  // the classifier's training runs per input (0: none)
};

// Validates (ParamError naming the flag, e.g. "--noise-multiplier"), samples and audits.
MechanismAuditReport audit_mechanism(const MechanismAuditParams& p);

// The report as `dprl audit mechanism --json` prints it (one line; the inputs that identify the
// audit, then the report, the best event nested; infinite epsilons as "inf").
std::string mechanism_audit_json(const MechanismAuditParams& p, const MechanismAuditReport& r);

}  // namespace dprl::privacy::audit
