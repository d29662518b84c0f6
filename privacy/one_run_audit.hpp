// Auditing with one training run (Steinke, Nasr and Jagielski, "Privacy Auditing with One (1)
// Training Run", NeurIPS 2023): m canaries, each included independently with probability 1/2;
// after training the auditor guesses "in" or "out" for r of them (abstaining on the rest) and v
// guesses are right.
//
// Conversion (their main theorem, the (epsilon, delta) form): if the training is
// (epsilon, delta)-DP with respect to each canary (add/remove one example), then
//   P(V >= v) <= P(Binomial(r, q) >= v) + 2 m delta alpha,   q = e^eps / (1 + e^eps),
//   alpha = max_{i = 1..v} P(v - i <= Binomial(r, q) < v) / i
// (the maximum over i in 1..m of that paper reduces to i <= v: for i > v the probability stops
// growing while i does). p_value() is the right-hand side (capped at 1). epsilon_lower_one_run()
// is the largest epsilon whose p-value stays below 1 - confidence: every smaller epsilon is
// rejected at that level, so the bound holds with probability >= confidence.
//
// White-box DP-SGD audit (audit_dpsgd): full-batch DP-SGD (Abadi et al., "Deep Learning with
// Differential Privacy", CCS 2016, Algorithm 1 with sampling rate 1) on a small linear
// least-squares task of dimension P = max(m, 16): n examples x ~ N(0, I / P),
// y = <w*, x> + 0.1 N(0, 1), per-example gradients clipped to C = 1 (engine/nn/nn_dp.hpp
// clip_factors), noise z C N(0, I) (add_gaussian_noise, fill_standard_normal), step
// w -= 0.5 g / n. Canary j is a gradient canary: when included it adds C e_j to every step's
// clipped sum (norm exactly C, so clipping leaves it alone). Score_j = e_j . (sum over steps of
// the noisy gradient sums). The auditor guesses "in" for the k largest scores and "out" for the
// k smallest, k = guesses / 2 fixed before the run.
// Claim (default): T full-batch Gaussian steps compose to the Gaussian mechanism with noise
// multiplier z / sqrt(T) (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS B 2022),
// epsilon = gaussian_epsilon(z / sqrt(T), delta) (tight).
// Mis-specification: halve-noise runs z / 2, double-sensitivity makes each canary add 2 C e_j;
// the claim stays that of z.
// This synthetic task is white box only; the black-box mode (scores from the released model
// only) and canary users of user-level DP-SGD audit the offline learners
// (algos/offline/offline_audit.hpp).
//
// White-box score under Poisson sampling (poisson_llr): a canary that is included enters each
// release with probability q, adding `shift` to the release's projection y on the canary's
// direction, whose noise is N(0, sd^2). The likelihood ratio of y between "included" (the mixture
// (1 - q) N(0, sd^2) + q N(shift, sd^2)) and "excluded" (N(0, sd^2)) is
//   1 - q + q exp((y shift - shift^2 / 2) / sd^2),
// and, the releases being independent given the past, the sum of the logs over the releases is
// the log likelihood ratio of the whole transcript: the Neyman-Pearson statistic for one canary.
// With q = 1 it is affine in y, so it orders canaries as the summed projections do; with q < 1
// it weighs the releases where the canary was visibly sampled, which a plain sum averages away
// over the 1 - q releases without it.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace dprl::privacy::audit {

// log(1 - q + q exp((y shift - shift^2 / 2) / sd^2)), computed without overflow; q in (0, 1],
// sd > 0.
double poisson_llr(double y, double shift, double sd, double q);

// The one-run guesses on canary scores: "in" for the r/2 largest, "out" for the r - r/2 smallest
// (ties broken by index), counted against the coins `in`, and the bound at delta.
struct OneRunTally {
  std::int64_t guesses = 0, correct = 0;
  double epsilon_lower = 0;
};
// guesses = 0: scores.size() / 5. ParamError when guesses exceeds the canaries, sizes differ or
// a score is NaN.
OneRunTally one_run_tally(std::span<const double> scores, std::span<const char> in,
                          std::int64_t guesses, double delta, double confidence);

// P(V >= v) bound above; m >= 1, 0 <= v <= r <= m, epsilon >= 0, delta in [0, 1].
double one_run_p_value(std::int64_t m, std::int64_t r, std::int64_t v, double epsilon,
                       double delta);

// The epsilon lower bound at delta with the given confidence (bisection to 1e-9; 0 when even
// epsilon = 0 is not rejected).
double epsilon_lower_one_run(std::int64_t m, std::int64_t r, std::int64_t v, double delta,
                             double confidence);

// The right guesses among r from per-canary scores: "in" for the r / 2 canaries with the largest
// scores, "out" for the r - r / 2 with the smallest (ties in canary order); in[j] != 0: canary j
// was included. score has one value per canary.
std::int64_t correct_guesses(std::span<const char> in, std::span<const double> score,
                             std::int64_t r);

struct DpSgdAuditParams {
  std::int64_t canaries = 1000;  // m
  bool white_box = true;
  double noise_multiplier = 1.0;  // z
  std::int64_t steps = 10;        // T
  std::int64_t examples = 256;    // n real examples
  std::int64_t guesses = 0;       // r = k+ + k-; 0: m / 5
  double claim_epsilon = NAN;     // NaN: gaussian_epsilon(z / sqrt(T), delta)
  double delta = 1e-5;
  std::uint64_t seed = 0;
  double confidence = 0.95;
  std::string mis_specify = "none";  // none | halve-noise | double-sensitivity
};

struct DpSgdAuditReport {
  double epsilon_claimed = 0.0;
  double epsilon_lower = 0.0;
  bool refuted = false;
  std::int64_t included = 0;  // canaries actually inserted
  std::int64_t guesses = 0, correct = 0;
  double final_loss = 0.0;  // mean squared error of the trained model on the real examples
};

DpSgdAuditReport audit_dpsgd(const DpSgdAuditParams& p);

// The report as `dprl audit dpsgd --json` prints it (one line, with the audit's inputs; infinite
// epsilons as "inf").
std::string dpsgd_audit_json(const DpSgdAuditParams& p, const DpSgdAuditReport& r);

}  // namespace dprl::privacy::audit
