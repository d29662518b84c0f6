// Adaptive explicit Runge-Kutta integration: Dormand-Prince 5(4) with error control.
//
// Source: J. R. Dormand and P. J. Prince, "A family of embedded Runge-Kutta formulae", J. Comp.
// Appl. Math. 6 (1980) 19-26 (the tableau); E. Hairer, S. P. Norsett and G. Wanner, "Solving
// Ordinary Differential Equations I", 2nd ed., section II.4 (the error norm, the step-size
// controller and the starting step size, eq. 4.11-4.13 and the algorithm on p. 169).
//
// The 5th-order solution is propagated (local extrapolation) and the embedded 4th-order one only
// estimates the error; the last stage is the first of the next step (FSAL), so an accepted step
// costs 6 right-hand-side evaluations. With sc_i = atol + rtol * max(|y_i|, |y_new_i|) the error
// is err = sqrt(mean_i (e_i / sc_i)^2); a step is accepted when err <= 1, and the next step size is
// h * clamp(safety * err^(-1/5), min_factor, max_factor) (never growing right after a rejection).
// Every call starts from Hairer's initial-step estimate, so the result depends only on
// (f, t0, t1, y0, options): no hidden state carries over between calls.
//
// Header-only template so the right-hand side inlines; no allocation (fixed-size std::array).
// Cost: each stage adds the newest derivative last (one multiply-add on the critical path), the
// norm is kept squared and the factor err^(-1/5) = (err^2)^(-1/10) comes from three Newton steps
// instead of libm's pow; about 10 ns of overhead per evaluation for 6 components.
//
// | option     | default | meaning                                                      |
// |------------|---------|--------------------------------------------------------------|
// | rtol       | 1e-8    | relative tolerance per component                             |
// | atol       | 1e-8    | absolute tolerance per component                             |
// | safety     | 0.9     | factor on the optimal step size                              |
// | min_factor | 0.2     | smallest step-size ratio between consecutive steps           |
// | max_factor | 10      | largest step-size ratio                                      |
// | max_steps  | 100000  | attempted steps before giving up (result.ok = false)         |
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dprl::envs::ode {

struct DopriOptions {
  double rtol = 1e-8;
  double atol = 1e-8;
  double safety = 0.9;
  double min_factor = 0.2;
  double max_factor = 10.0;
  int max_steps = 100000;
};

struct DopriResult {
  bool ok = true;       // false: max_steps reached, the step size underflowed or y is not finite
  int accepted = 0;     // accepted steps
  int rejected = 0;     // rejected steps
  int evaluations = 0;  // right-hand-side evaluations
  double last_h = 0;    // size of the last accepted step (diagnostics)
};

namespace detail {

// Dormand-Prince 5(4) tableau (Hairer, Norsett and Wanner, table II.5.2)
inline constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
inline constexpr double a21 = 1.0 / 5;
inline constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
inline constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
inline constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                        a54 = -212.0 / 729;
inline constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247,
                        a64 = 49.0 / 176, a65 = -5103.0 / 18656;
// 5th-order weights (also the last stage's row: FSAL)
inline constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784,
                        b6 = 11.0 / 84;
// b(5th) - b(4th): the error estimate's weights
inline constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920,
                        e5 = -17253.0 / 339200, e6 = 22.0 / 525, e7 = -1.0 / 40;

// x^(-1/10) for x > 0 to about 1e-4 relative, with arithmetic only: libm's pow sits on the
// critical path from one step's error to the next step's size and costs as much as several
// right-hand-side evaluations, while the step-size factor needs only a few digits (plain
// arithmetic is also reproducible everywhere). Reading the bits as a linear log2 gives y0 within
// about 6%; three Newton steps on y^10 x = 1 (error e -> 5.5 e^2) bring it to about 1e-4.
inline double pow_minus_tenth(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  constexpr std::uint64_t one = 0x3ff0000000000000ULL;
  // log2(y) ~ -log2(x) / 10 in the exponent field (two's complement arithmetic on the offset)
  const auto offset = static_cast<std::int64_t>(bits - one);
  const std::uint64_t guess = one - static_cast<std::uint64_t>(offset / 10);
  double y;
  std::memcpy(&y, &guess, sizeof y);
  for (int i = 0; i < 3; ++i) {
    const double y2 = y * y, y4 = y2 * y2, y8 = y4 * y4;
    y = y * ((11.0 - x * (y8 * y2)) * 0.1);
  }
  return y;
}

// mean of (v_i / sc_i)^2
template <std::size_t N>
double scaled_ms(const std::array<double, N>& v, const std::array<double, N>& sc) {
  double s = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double r = v[i] / sc[i];
    s += r * r;
  }
  return s / static_cast<double>(N);
}

template <std::size_t N>
double scaled_rms(const std::array<double, N>& v, const std::array<double, N>& sc) {
  double s = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double r = v[i] / sc[i];
    s += r * r;
  }
  return std::sqrt(s / static_cast<double>(N));
}

// Hairer, Norsett and Wanner's starting step (p. 169) for a method of the given order; f0 is
// f(t0, y); costs one evaluation; a, b and sc are scratch.
template <std::size_t N, class Rhs, class Options>
double initial_step(const Rhs& f, double t0, double span, const std::array<double, N>& y,
                    const std::array<double, N>& f0, int order, const Options& o,
                    std::array<double, N>& a, std::array<double, N>& b, std::array<double, N>& sc) {
  for (std::size_t i = 0; i < N; ++i) sc[i] = o.atol + o.rtol * std::fabs(y[i]);
  const double d0 = scaled_rms(y, sc);
  const double d1 = scaled_rms(f0, sc);
  double h = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  h = std::min(h, span);
  for (std::size_t i = 0; i < N; ++i) a[i] = y[i] + h * f0[i];
  f(t0 + h, a, b);
  for (std::size_t i = 0; i < N; ++i) a[i] = b[i] - f0[i];
  const double d2 = scaled_rms(a, sc) / h;
  const double dmax = std::max(d1, d2);
  const double h1 =
      dmax <= 1e-15 ? std::max(1e-6, h * 1e-3) : std::pow(0.01 / dmax, 1.0 / (order + 1));
  return std::min({100 * h, h1, span});
}

}  // namespace detail

// Integrates y' = f(t, y) from t0 to t1 (t1 > t0) in place. f is called as
// f(double t, const std::array<double, N>& y, std::array<double, N>& dydt).
template <std::size_t N, class Rhs>
DopriResult dopri5(const Rhs& f, double t0, double t1, std::array<double, N>& y,
                   const DopriOptions& o = DopriOptions{}) {
  using namespace detail;
  using Vec = std::array<double, N>;
  DopriResult res;
  const double span = t1 - t0;
  if (!(span > 0)) return res;

  Vec k1, k2, k3, k4, k5, k6, k7, tmp, y_new, sc;
  f(t0, y, k1);
  res.evaluations = 1;

  double h = detail::initial_step(f, t0, span, y, k1, 5, o, k2, k3, sc);
  ++res.evaluations;

  double t = t0;
  bool last_rejected = false;
  for (int attempt = 0; attempt < o.max_steps; ++attempt) {
    const bool last = t + h >= t1;
    if (last) h = t1 - t;
    // stages; the newest stage enters last, so each stage waits on one multiply-add only
    const double h21 = h * a21, h31 = h * a31, h32 = h * a32, h41 = h * a41, h42 = h * a42,
                 h43 = h * a43, h51 = h * a51, h52 = h * a52, h53 = h * a53, h54 = h * a54,
                 h61 = h * a61, h62 = h * a62, h63 = h * a63, h64 = h * a64, h65 = h * a65;
    for (std::size_t i = 0; i < N; ++i) tmp[i] = y[i] + h21 * k1[i];
    f(t + c2 * h, tmp, k2);
    for (std::size_t i = 0; i < N; ++i) tmp[i] = (y[i] + h31 * k1[i]) + h32 * k2[i];
    f(t + c3 * h, tmp, k3);
    for (std::size_t i = 0; i < N; ++i) tmp[i] = ((y[i] + h41 * k1[i]) + h42 * k2[i]) + h43 * k3[i];
    f(t + c4 * h, tmp, k4);
    for (std::size_t i = 0; i < N; ++i)
      tmp[i] = (((y[i] + h51 * k1[i]) + h52 * k2[i]) + h53 * k3[i]) + h54 * k4[i];
    f(t + c5 * h, tmp, k5);
    for (std::size_t i = 0; i < N; ++i)
      tmp[i] = ((((y[i] + h61 * k1[i]) + h62 * k2[i]) + h63 * k3[i]) + h64 * k4[i]) + h65 * k5[i];
    f(t + h, tmp, k6);
    const double hb1 = h * b1, hb3 = h * b3, hb4 = h * b4, hb5 = h * b5, hb6 = h * b6;
    for (std::size_t i = 0; i < N; ++i)
      y_new[i] = ((((y[i] + hb1 * k1[i]) + hb3 * k3[i]) + hb4 * k4[i]) + hb5 * k5[i]) + hb6 * k6[i];
    f(t + h, y_new, k7);
    res.evaluations += 6;

    // error estimate
    for (std::size_t i = 0; i < N; ++i) {
      tmp[i] = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
      sc[i] = o.atol + o.rtol * std::max(std::fabs(y[i]), std::fabs(y_new[i]));
    }
    // err^2, so that the step-size factor err^(-1/5) is (err^2)^(-1/10) with no square root
    const double err2 = scaled_ms(tmp, sc);
    if (!std::isfinite(err2)) {
      // a stage overflowed: shrink hard and retry
      h *= o.min_factor;
      last_rejected = true;
      ++res.rejected;
      if (h <= 1e-14 * span) break;
      continue;
    }
    if (err2 <= 1.0) {
      t = last ? t1 : t + h;
      y = y_new;
      k1 = k7;
      ++res.accepted;
      res.last_h = h;
      if (last) return res;
      double factor = err2 < 1e-30 ? o.max_factor : o.safety * pow_minus_tenth(err2);
      factor = std::clamp(factor, o.min_factor, last_rejected ? 1.0 : o.max_factor);
      h *= factor;
      last_rejected = false;
    } else {
      ++res.rejected;
      h *= std::max(o.min_factor, o.safety * pow_minus_tenth(err2));
      last_rejected = true;
    }
    if (h <= 1e-14 * span) break;
  }
  res.ok = false;
  return res;
}

}  // namespace dprl::envs::ode
