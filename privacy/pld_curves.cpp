#include "privacy/pld_curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

namespace {

constexpr double kPldTailSigmas = 9.6;  // normal tail beyond this: < 1e-21
// Window limits (see the header): 2^22 points (32 MiB per curve), losses within [-1e6, 1e6], so
// that grid indices times composition counts stay far inside int64.
constexpr std::int64_t kMaxSinglePoints = std::int64_t{1} << 22;
constexpr double kMaxLoss = 1e6;

using math::normal_cdf;
using math::normal_sf;

// The remove-direction hockey-stick curve of the Poisson-subsampled Gaussian (P = (1-q) N(0, z^2)
// + q N(1, z^2), Q = N(0, z^2)): delta = P(x > x_eps) - e^eps Q(x > x_eps).
double delta_remove(double q, double z, double eps) {
  if (eps > 700.0) {
    // e^eps overflows beyond ~709 (and c sf(x/z) would be inf * 0): the same in log space,
    // log c = eps + log(1 - (1 - q) e^-eps)
    const double log_c = eps + std::log1p(-(1.0 - q) * std::exp(-eps));
    const double x = z * z * (log_c - std::log(q)) + 0.5;
    return q * normal_sf((x - 1.0) / z) - std::exp(log_c + math::log_normal_cdf(-x / z));
  }
  const double ee = std::exp(eps);
  if (ee <= 1.0 - q) return -std::expm1(eps);  // below the smallest loss
  const double c = ee - (1.0 - q);
  const double x = z * z * std::log(c / q) + 0.5;
  return q * normal_sf((x - 1.0) / z) - c * normal_sf(x / z);
}

// The add direction (P = N(0, z^2), Q = mixture): delta = P(x < x_eps) - e^eps Q(x < x_eps).
double delta_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return 0.0;  // above the largest loss -log(1 - q)
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return (1.0 - ee * (1.0 - q)) * normal_cdf(x / z) - q * ee * normal_cdf((x - 1.0) / z);
}

double delta_laplace(double scale, double eps) {
  const double e0 = 1.0 / scale;
  if (eps >= e0) return 0.0;
  if (eps <= -e0) return -std::expm1(eps);
  return -std::expm1((eps - e0) / 2.0);
}

// g(eps) = delta(eps) - (1 - e^eps) = e^eps Q(L <= eps) - P(L <= eps) >= 0: the same curve minus a
// part linear in e^eps, computed without cancellation where delta is close to 1 - e^eps.
double g_remove(double q, double z, double eps) {
  const double ee = std::exp(eps);
  if (ee <= 1.0 - q) return 0.0;
  const double c = ee - (1.0 - q);
  const double x = z * z * std::log(c / q) + 0.5;
  return c * normal_cdf(x / z) - q * normal_cdf((x - 1.0) / z);
}

double g_add(double q, double z, double eps) {
  const double em = std::exp(-eps);
  if (em <= 1.0 - q) return std::expm1(eps);
  const double x = z * z * std::log((em - (1.0 - q)) / q) + 0.5;
  const double ee = std::exp(eps);
  return ee * ((1.0 - q) * normal_sf(x / z) + q * normal_sf((x - 1.0) / z)) - normal_sf(x / z);
}

double g_laplace(double scale, double eps) {
  const double e0 = 1.0 / scale;
  if (eps <= -e0) return 0.0;
  if (eps >= e0) return std::expm1(eps);
  return std::exp(eps) - std::exp((eps - e0) / 2.0);
}

// A curve value: rounding can take it a little below 0 (clamped); NaN is a numerical failure and
// is refused, never clamped to 0 (which would drop loss mass: an optimistic PLD).
double curve_value(double v, double eps) {
  if (std::isnan(v)) {
    throw ParamError(fmt::format("pld: the hockey-stick curve is NaN at epsilon = {}", eps));
  }
  return std::max(0.0, v);
}

struct Window {
  std::int64_t i_lo, i_hi;  // grid indices of the bottom and top points (i_hi > i_lo)
};

Window window(const PldCurve& c, double h) {
  DPRL_CHECK(!std::isnan(c.lo) && !std::isnan(c.hi) && c.hi >= c.lo);
  const double width = double(kMaxSinglePoints - 2) * h;
  double bottom = std::clamp(c.lo, -kMaxLoss, kMaxLoss);
  double top = std::clamp(c.hi, bottom, kMaxLoss);
  if (top - bottom > width) {
    if (c.keep_top) {
      bottom = top - width;
    } else {
      top = bottom + width;
    }
  }
  const auto i_lo = static_cast<std::int64_t>(std::floor(bottom / h));
  return {i_lo, std::max(i_lo + 1, static_cast<std::int64_t>(std::ceil(top / h)))};
}

// delta at the top point (below eps = 0 delta is g + 1 - e^eps, computed from g without
// cancellation)
double top_delta(const PldCurve& c, double e_top) {
  return e_top < 0.0 ? curve_value(c.g(e_top), e_top) - std::expm1(e_top)
                     : curve_value(c.delta(e_top), e_top);
}

}  // namespace

void check_pld_interval(double h) {
  if (!(h >= 1e-6 && h <= 0.1)) {
    throw ParamError(
        fmt::format("pld: value_discretization_interval = {} must be in [1e-6, 0.1]", h));
  }
}

PldCurve subsampled_gaussian_curve(double q, double z, bool remove) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ParamError(fmt::format("pld: sampling_probability = {} must be in (0, 1]", q));
  }
  if (!(z > 0.0) || !std::isfinite(z)) {
    throw ParamError(fmt::format("pld: noise_multiplier = {} must be finite and > 0", z));
  }
  // the remove-direction loss log(1 - q + q e^((2x - 1) / (2 z^2))) at x, in log space (exact
  // for q = 1, where log1p(q expm1(y)) is -inf once e^y < 2^-53)
  auto loss = [q, z](double x) {
    return math::log_add(std::log1p(-q), std::log(q) + (2.0 * x - 1.0) / (2.0 * z * z));
  };
  if (remove || q == 1.0) {
    // the loss increases with x; P's mass lies in x in [-9.6 z, 1 + 9.6 z] ([1 - 9.6 z, ...]
    // when q = 1: P is N(1, z^2) alone, and its loss range is then 19.2 / z wide, not 1 / z^2)
    const double x_lo = q == 1.0 ? 1.0 - kPldTailSigmas * z : -kPldTailSigmas * z;
    return {[q, z](double e) { return delta_remove(q, z, e); },
            [q, z](double e) { return g_remove(q, z, e); }, loss(x_lo), loss(1.0 + kPldTailSigmas * z),
            false};
  }
  return {[q, z](double e) { return delta_add(q, z, e); },
          [q, z](double e) { return g_add(q, z, e); }, -loss(kPldTailSigmas * z),
          std::min(-std::log1p(-q), -loss(-kPldTailSigmas * z)), false};
}

PldCurve laplace_curve(double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("pld: laplace scale = {} must be finite and > 0", scale));
  }
  return {[scale](double e) { return delta_laplace(scale, e); },
          [scale](double e) { return g_laplace(scale, e); }, -1.0 / scale, 1.0 / scale, true};
}

double discretized_infinity_mass(const PldCurve& c, double h) {
  check_pld_interval(h);
  return top_delta(c, double(window(c, h).i_hi) * h);
}

// The masses are second differences of the curve, taken from delta for eps >= 0 and from g for
// eps < 0 (the linear part 1 - e^eps has second difference 0), so neither side suffers
// cancellation; the top point's mass is a first difference: delta(top - h) - delta(top) =
// p_top (1 - e^-h), and delta(top) is the +inf mass.
Pld discretize(const PldCurve& c, double h) {
  check_pld_interval(h);
  const Window w = window(c, h);
  const auto n = static_cast<std::size_t>(w.i_hi - w.i_lo + 1);
  auto eps_at = [&](std::size_t i) { return double(w.i_lo + std::int64_t(i)) * h; };
  std::vector<double> d(n), gv(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double e = eps_at(i);
    if (e >= -2.0 * h) d[i] = curve_value(c.delta(e), e);
    if (e <= 2.0 * h) gv[i] = curve_value(c.g(e), e);
  }
  Pld p;
  p.interval = h;
  p.offset = w.i_lo;
  p.mass.assign(n, 0.0);
  const double eh = std::exp(h), em1 = std::expm1(h);
  double sum = 0.0;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const auto& v = eps_at(i) < 0.0 ? gv : d;
    p.mass[i] = std::max(0.0, ((v[i - 1] - v[i]) * eh - (v[i] - v[i + 1])) / em1);
    sum += p.mass[i];
  }
  const std::size_t t = n - 1;
  const double e_t = eps_at(t);
  p.infinity_mass = top_delta(c, e_t);
  const double step =
      e_t < 0.0 ? (gv[t - 1] - gv[t]) + (std::exp(e_t) - std::exp(eps_at(t - 1))) : d[t - 1] - d[t];
  p.mass[t] = std::max(0.0, step * eh / em1);
  sum += p.mass[t];
  p.mass[0] = std::max(0.0, 1.0 - p.infinity_mass - sum);
  return p;
}

}  // namespace dprl::privacy
