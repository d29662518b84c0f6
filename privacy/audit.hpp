// Empirical privacy auditing: a lower bound on epsilon, certified at a chosen confidence, from
// samples of a mechanism's output on one pair of neighbouring inputs D and D'.
//
// Sources:
// - Hypothesis-testing characterisation of DP (Wasserman and Zhou 2010; Kairouz, Oh, Viswanath
//   2015, Thm. 2.1): M is (epsilon, delta)-DP only if every test that rejects "the input was D"
//   on a set S has
//     FPR + e^epsilon FNR >= 1 - delta  and  FNR + e^epsilon FPR >= 1 - delta,
//   FPR = P(M(D) in S), FNR = P(M(D') not in S). Hence, for every S,
//     epsilon >= max(log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR)).
// - Auditing with confidence intervals (Jagielski, Ullman, Oprea 2020; Nasr, Song, Thakurta,
//   Papernot, Carlini 2021): replace FPR and FNR by one-sided Clopper-Pearson (1934) upper bounds
//   from the sample counts; the bound above only decreases, so it holds whenever the two
//   intervals do.
// Confidence: audit_scalar() evaluates K sets {s >= t}, one per threshold t, which must be fixed
// before sampling (e.g. from the mechanism's theory); every one-sided interval is taken at level
// alpha / (2K), so by the union bound all 2K hold, and so does the reported maximum, with
// probability >= 1 - alpha over the sampling.
// The statistic s should order outputs by their likelihood ratio between D and D' (e.g. the
// output itself for a scalar Gaussian or Laplace mechanism on inputs 0 and Delta, the projection
// on the difference for a vector): its upper sets are then the most powerful tests (Neyman-
// Pearson).
// Validation (ParamError naming the parameter): k in [0, n], n >= 1, alpha in (0, 1), a, b > 0,
// p in [0, 1], rates in [0, 1], delta in [0, 1), non-empty samples and thresholds, finite
// samples and thresholds.
#pragma once

#include <cstdint>
#include <span>

namespace dprl::privacy::audit {

// The x in [0, 1] with I_x(a, b) = p (regularised incomplete beta; bisection to 1e-15).
double beta_quantile(double a, double b, double p);

// One-sided Clopper-Pearson bounds for a binomial proportion with k successes in n trials:
// P(p > upper) <= alpha and P(p < lower) <= alpha. upper = B^-1(1 - alpha; k + 1, n - k) (1 when
// k = n), lower = B^-1(alpha; k, n - k + 1) (0 when k = 0).
double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha);
double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha);

// The epsilon lower bound of one test with these error rates at delta (0 when neither log is
// positive, +inf when a rate is 0 and the other numerator positive).
double epsilon_from_error_rates(double fpr, double fnr, double delta);

struct AuditResult {
  double epsilon = 0.0;    // certified lower bound (0 when no set gives one)
  double threshold = 0.0;  // the set {s >= threshold} attaining it
  double fpr_upper = 1.0;  // its Clopper-Pearson upper bounds
  double fnr_upper = 1.0;
};

// s0: the statistic of samples under D, s1: under D'; the sets {s >= t} for t in thresholds.
AuditResult audit_scalar(std::span<const double> s0, std::span<const double> s1,
                         std::span<const double> thresholds, double delta, double alpha);

}  // namespace dprl::privacy::audit
