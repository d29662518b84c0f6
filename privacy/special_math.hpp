// Numerical functions shared by the accountants and mechanisms: log-space sums, Gaussian tails
// in log space, log binomial coefficients and the regularised incomplete beta function.
//
// Sources: log_erfc uses std::erfc where it is accurate and the asymptotic (Abramowitz and Stegun
// 7.1.23) series beyond x = 25; the incomplete beta function is the Lentz continued fraction
// (Abramowitz and Stegun 26.5.8). All functions are pure; they take doubles and return doubles and
// never throw (NaN in, NaN out), so callers validate their own parameters.
#pragma once

namespace dprl::privacy::math {

inline constexpr double kInf = __builtin_huge_val();

// log(exp(a) + exp(b)), exact for -inf arguments.
double log_add(double a, double b);
// log(exp(a) - exp(b)) for a >= b; -inf when a == b.
double log_sub(double a, double b);
// log(erfc(x)), accurate for large positive x where erfc underflows.
double log_erfc(double x);
// Standard normal CDF Phi(x) and its logarithm (accurate in the far lower tail).
double normal_cdf(double x);
double log_normal_cdf(double x);
// Upper tail 1 - Phi(x), accurate for large x.
double normal_sf(double x);
// Regularised incomplete beta I_x(a, b), a, b > 0, x in [0, 1].
double incomplete_beta(double a, double b, double x);

}  // namespace dprl::privacy::math
