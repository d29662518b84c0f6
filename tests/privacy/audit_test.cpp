#include "privacy/audit.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/error.hpp"

using namespace dprl::privacy::audit;

namespace {

// P(Bin(n, p) <= k) by direct summation of the pmf in log space (independent of the incomplete
// beta function the library inverts).
double binomial_cdf(std::int64_t k, std::int64_t n, double p) {
  double s = 0.0;
  for (std::int64_t i = 0; i <= k; ++i) {
    const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                           double(i) * std::log(p) + double(n - i) * std::log1p(-p);
    s += std::exp(log_pmf);
  }
  return s;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("beta quantile inverts closed-form Beta CDFs") {
    // Beta(1, b): I_x = 1 - (1 - x)^b; Beta(a, 1): I_x = x^a
    for (double p : {1e-9, 0.025, 0.5, 0.975, 1 - 1e-9}) {
      CHECK(beta_quantile(1.0, 7.0, p) == doctest::Approx(1.0 - std::pow(1.0 - p, 1.0 / 7.0)));
      CHECK(beta_quantile(3.5, 1.0, p) == doctest::Approx(std::pow(p, 1.0 / 3.5)));
    }
    CHECK(beta_quantile(2.0, 2.0, 0.0) == 0.0);
    CHECK(beta_quantile(2.0, 2.0, 1.0) == 1.0);
    CHECK_THROWS_AS(beta_quantile(0.0, 1.0, 0.5), dprl::ParamError);
    CHECK_THROWS_AS(beta_quantile(1.0, 1.0, 1.5), dprl::ParamError);
  }

  TEST_CASE("Clopper-Pearson bounds: textbook values - closed forms at k = 0 and k = n") {
    // the exact 95% interval for 5 successes in 20 trials is (0.0866, 0.4910); 40-digit mpmath
    // bisection of the Beta CDF gives 0.0865714691014345 and 0.491045871707958, and for 37 of
    // 1000 at one-sided 1e-6: 0.015044568306689 and 0.0733771374731577
    CHECK(clopper_pearson_lower(5, 20, 0.025) ==
          doctest::Approx(0.0865714691014345).epsilon(1e-12));
    CHECK(clopper_pearson_upper(5, 20, 0.025) == doctest::Approx(0.491045871707958).epsilon(1e-12));
    CHECK(clopper_pearson_lower(37, 1000, 1e-6) ==
          doctest::Approx(0.015044568306689).epsilon(1e-10));
    CHECK(clopper_pearson_upper(37, 1000, 1e-6) ==
          doctest::Approx(0.0733771374731577).epsilon(1e-10));
    // k = 0: P(Bin(n, p) = 0) = (1 - p)^n = alpha; k = n: p^n = alpha
    CHECK(clopper_pearson_upper(0, 50, 1e-3) == doctest::Approx(1 - std::pow(1e-3, 1.0 / 50)));
    CHECK(clopper_pearson_lower(0, 50, 1e-3) == 0.0);
    CHECK(clopper_pearson_lower(50, 50, 1e-3) == doctest::Approx(std::pow(1e-3, 1.0 / 50)));
    CHECK(clopper_pearson_upper(50, 50, 1e-3) == 1.0);
    CHECK_THROWS_WITH_AS(clopper_pearson_upper(5, 4, 0.1), "audit: k = 5 must be in [0, n = 4]",
                         dprl::ParamError);
    CHECK_THROWS_AS(clopper_pearson_upper(1, 4, 0.0), dprl::ParamError);
  }

  TEST_CASE("Clopper-Pearson bounds at large n satisfy their defining binomial equations") {
    // upper: P(Bin(n, upper) <= k) = alpha; lower: P(Bin(n, lower) >= k) = alpha
    const std::int64_t n = 200000, k = 2700;
    const double alpha = 6.25e-8;
    const double up = clopper_pearson_upper(k, n, alpha), lo = clopper_pearson_lower(k, n, alpha);
    CHECK(binomial_cdf(k, n, up) == doctest::Approx(alpha).epsilon(1e-6));
    CHECK(1.0 - binomial_cdf(k - 1, n, lo) == doctest::Approx(alpha).epsilon(1e-6));
    CHECK(lo < double(k) / n);
    CHECK(up > double(k) / n);
  }

  TEST_CASE("epsilon from error rates: the hypothesis-testing bound in both directions") {
    // Laplace(1) on 0 and 1, set {y >= 1}: FPR = e^-1 / 2, FNR = 1/2, so epsilon >= 1 exactly
    CHECK(epsilon_from_error_rates(0.5 * std::exp(-1.0), 0.5, 0.0) == doctest::Approx(1.0));
    // the swapped roles give the same from the complement
    CHECK(epsilon_from_error_rates(0.5, 0.5 * std::exp(-1.0), 0.0) == doctest::Approx(1.0));
    // the larger of log((1 - delta - FNR) / FPR) and log((1 - delta - FPR) / FNR)
    CHECK(epsilon_from_error_rates(0.1, 0.2, 0.05) ==
          doctest::Approx(std::log((1 - 0.05 - 0.2) / 0.1)));
    CHECK(epsilon_from_error_rates(0.2, 0.1, 0.05) ==
          doctest::Approx(std::log((1 - 0.05 - 0.2) / 0.1)));
    CHECK(epsilon_from_error_rates(0.5, 0.5, 0.0) == 0.0);  // a coin flip certifies nothing
    CHECK(std::isinf(epsilon_from_error_rates(0.0, 0.5, 0.1)));
    CHECK(epsilon_from_error_rates(0.0, 0.95, 0.1) == 0.0);
    CHECK_THROWS_AS(epsilon_from_error_rates(1.5, 0.5, 0.0), dprl::ParamError);
    CHECK_THROWS_AS(epsilon_from_error_rates(0.5, 0.5, 1.0), dprl::ParamError);
  }

  TEST_CASE("audit_scalar: counts, Bonferroni level and the best set") {
    // 1000 samples each: 100 of D's and 600 of D''s at or above 1; 10 and 300 at or above 2
    std::vector<double> s0(1000, 0.0), s1(1000, 0.0);
    for (int i = 0; i < 100; ++i) s0[i] = i < 10 ? 2.0 : 1.0;
    for (int i = 0; i < 600; ++i) s1[i] = i < 300 ? 2.0 : 1.0;
    const std::vector<double> ts{1.0, 2.0};
    const double a = 1e-3 / 4;  // 2 sets x 2 intervals
    const auto r = audit_scalar(s0, s1, ts, 0.0, 1e-3);
    const double e1 = epsilon_from_error_rates(clopper_pearson_upper(100, 1000, a),
                                               clopper_pearson_upper(400, 1000, a), 0.0);
    const double e2 = epsilon_from_error_rates(clopper_pearson_upper(10, 1000, a),
                                               clopper_pearson_upper(700, 1000, a), 0.0);
    CHECK(r.epsilon == doctest::Approx(std::max(e1, e2)));
    CHECK(r.threshold == (e1 > e2 ? 1.0 : 2.0));
    CHECK(r.epsilon < std::log(0.3 / 0.01));  // below the plug-in estimate of the best set
    const std::vector<double> bad{NAN};
    CHECK_THROWS_AS(audit_scalar(bad, s1, ts, 0.0, 1e-3), dprl::ParamError);
    CHECK_THROWS_AS(audit_scalar(s0, s1, {}, 0.0, 1e-3), dprl::ParamError);
  }
}
