#include "privacy/special_math.hpp"

#include <cmath>

namespace dprl::privacy::math {

double log_add(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double hi = std::fmax(a, b);
  return hi + std::log1p(std::exp(std::fmin(a, b) - hi));
}

double log_sub(double a, double b) {
  if (b == -kInf) return a;
  if (a <= b) return -kInf;
  return a + std::log1p(-std::exp(b - a));
}

double log_erfc(double x) {
  if (x < 25.0) return std::log(std::erfc(x));
  // erfc(x) = exp(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + ...)
  const double r = 1.0 / (x * x);
  const double series = 1.0 - 0.5 * r + 0.75 * r * r - 1.875 * r * r * r + 6.5625 * r * r * r * r;
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) + std::log(series);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / M_SQRT2); }

double normal_sf(double x) { return 0.5 * std::erfc(x / M_SQRT2); }

double log_normal_cdf(double x) { return std::log(0.5) + log_erfc(-x / M_SQRT2); }

namespace {

// Continued fraction for I_x(a, b) (modified Lentz), valid for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x)) return std::nan("");
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, 1.0 - x) / b;
}

}  // namespace dprl::privacy::math
