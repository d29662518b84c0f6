// Independent reference values for the privacy tests: computed here from the definitions, with
// no code from privacy/ (only the C++ standard library), so a wrong formula in the library cannot
// also be in the expectation.
//   - exact (epsilon, delta) of the Gaussian mechanism as mu-GDP (Dong, Roth, Su 2019, Cor. 2.13):
//     delta(eps) = Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2), mu = Delta / sigma;
//     T compositions of noise multiplier z are sqrt(T) / z - GDP (Cor. 3.3);
//   - subsampled-Gaussian RDP by numerical integration of its defining integral (Mironov, Talwar,
//     Zhang 2019, sec. 3): A_a = E_{x ~ N(0, z^2)} (1 - q + q e^((2x - 1) / (2 z^2)))^a;
//   - Laplace RDP by numerical integration of D_a(Lap(0, b) || Lap(1, b));
//   - the RDP-to-DP conversion of Canonne, Kamath, Steinke 2020, Prop. 12.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dprl::privacy::reference {

inline double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// log of the upper normal tail 1 - Phi(t), also where it underflows (asymptotic series, relative
// error < 1e-8 for t >= 20).
inline double log_normal_sf(double t) {
  if (t < 20.0) return std::log(0.5 * std::erfc(t / std::sqrt(2.0)));
  const double r = 1.0 / (t * t);
  return -0.5 * t * t - std::log(t * std::sqrt(2.0 * M_PI)) +
         std::log1p(-r + 3 * r * r - 15 * r * r * r);
}

// delta(eps) of mu-GDP.
inline double gdp_delta(double mu, double eps) {
  return phi(-eps / mu + mu / 2) - std::exp(eps) * phi(-eps / mu - mu / 2);
}

// Smallest eps >= 0 with gdp_delta(mu, eps) <= delta (bisection to 1e-13 relative).
inline double gdp_epsilon(double mu, double delta) {
  if (gdp_delta(mu, 0.0) <= delta) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (gdp_delta(mu, hi) > delta) hi *= 2.0;
  while (hi - lo > 1e-13 * hi) {
    const double mid = 0.5 * (lo + hi);
    (gdp_delta(mu, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

// log A_a of the Poisson-subsampled Gaussian by the trapezoid rule in log space. The integrand is
// analytic in a strip of half-width pi z^2 around the real axis (its zeros sit at
// Im x = pi z^2 (2k + 1)), so the trapezoid rule with step h converges like
// exp(-2 pi^2 z^2 / h); h = min(z / 8, z^2 / 6) makes that < 1e-25 (and < 1e-137 for the Gaussian
// factor alone). The range [-12 z, a + 12 z] holds every binomial component N(i, z^2), i = 0..a.
inline double subsampled_gaussian_log_a(double q, double z, double a) {
  const double h = std::min(z / 8.0, z * z / 6.0);
  const double x0 = -12.0 * z, x1 = std::max(a, 1.0) + 12.0 * z;
  const auto n = static_cast<long>(std::ceil((x1 - x0) / h));
  std::vector<double> logs(static_cast<std::size_t>(n) + 1);
  double top = -std::numeric_limits<double>::infinity();
  for (long i = 0; i <= n; ++i) {
    const double x = x0 + double(i) * h;
    const double y = (2.0 * x - 1.0) / (2.0 * z * z);
    // log(1 - q + q e^y), accurate for both signs of y
    const double mix =
        y > 0 ? y + std::log(q + (1.0 - q) * std::exp(-y)) : std::log1p(q * std::expm1(y));
    const double l = -x * x / (2.0 * z * z) - std::log(z * std::sqrt(2.0 * M_PI)) + a * mix;
    logs[static_cast<std::size_t>(i)] = l;
    top = std::max(top, l);
  }
  double s = 0.0;
  for (double l : logs) s += std::exp(l - top);
  return top + std::log(s * h);
}

inline double subsampled_gaussian_rdp(double q, double z, double a) {
  return subsampled_gaussian_log_a(q, z, a) / (a - 1.0);
}

// D_a(Lap(0, b) || Lap(1, b)) = log(int p^a q^(1-a)) / (a - 1), integrated piecewise by
// Simpson's rule on (-60 b, 0), (0, 1), (1, 1 + 60 b) with 2^16 intervals each (the tails beyond
// carry e^-60 of the mass). The integrand is exp(linear) on each piece with slope s = 1 / b or
// (2a - 1) / b, where Simpson's relative error is (h s)^4 / 180: < 2e-12 for a <= 64, b >= 0.5.
inline double laplace_rdp(double b, double a) {
  auto integrand = [&](double x) {
    return std::exp(-(a * std::fabs(x) + (1.0 - a) * std::fabs(x - 1.0)) / b) / (2.0 * b);
  };
  auto simpson = [&](double u, double v) {
    const int n = 1 << 16;
    const double h = (v - u) / n;
    double s = integrand(u) + integrand(v);
    for (int i = 1; i < n; ++i) s += (i % 2 ? 4.0 : 2.0) * integrand(u + i * h);
    return s * h / 3.0;
  };
  const double total = simpson(-60.0 * b, 0.0) + simpson(0.0, 1.0) + simpson(1.0, 1.0 + 60.0 * b);
  return std::log(total) / (a - 1.0);
}

// CKS 2020 Prop. 12 at each order, minimised over the orders (no floor, no KL shortcut).
inline double cks_epsilon(const std::vector<double>& orders, const std::vector<double>& rdp,
                          double delta) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    best =
        std::min(best, rdp[i] + std::log1p(-1.0 / a) - (std::log(delta) + std::log(a)) / (a - 1));
  }
  return best;
}

// dp_accounting's 156 default orders, listed independently of the library's table.
inline std::vector<double> dp_accounting_orders() {
  std::vector<double> o;
  for (int i = 11; i <= 109; ++i) o.push_back(i / 10.0);
  for (int i = 11; i <= 63; ++i) o.push_back(i);
  for (double a : {128.0, 256.0, 512.0, 1024.0}) o.push_back(a);
  return o;
}

// Epsilon of T steps of the Poisson-subsampled Gaussian (rate q, noise z) from the integrated RDP.
inline double dpsgd_rdp_epsilon(double q, double z, double steps, double delta) {
  const std::vector<double> orders = dp_accounting_orders();
  std::vector<double> rdp;
  for (double a : orders) rdp.push_back(steps * subsampled_gaussian_rdp(q, z, a));
  return cks_epsilon(orders, rdp, delta);
}

}  // namespace dprl::privacy::reference
