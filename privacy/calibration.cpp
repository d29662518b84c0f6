#include "privacy/calibration.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

void check_dpsgd_inputs(double q, std::int64_t steps, double delta) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ParamError(fmt::format("sampling rate q = {} must be in (0, 1]", q));
  }
  if (steps < 1) throw ParamError(fmt::format("steps T = {} must be >= 1", steps));
  check_delta(delta);
}

double dpsgd_epsilon(double z, double q, std::int64_t steps, double delta,
                     std::string_view accountant) {
  check_dpsgd_inputs(q, steps, delta);
  auto acc = make_accountant(accountant);
  acc->compose(dpsgd_event(z, q, steps));
  return acc->epsilon(delta);
}

double calibrate_noise_multiplier(double target, double q, std::int64_t steps, double delta,
                                  std::string_view accountant, double rel_tol) {
  if (!(target > 0.0) || !std::isfinite(target)) {
    throw ParamError(fmt::format("target epsilon = {} must be finite and > 0", target));
  }
  if (!(rel_tol > 0.0 && rel_tol <= 0.1)) {
    throw ParamError(fmt::format("rel_tol = {} must be in (0, 0.1]", rel_tol));
  }
  check_dpsgd_inputs(q, steps, delta);
  (void)make_accountant(accountant);  // validates the name before any work
  auto eps = [&](double z) { return dpsgd_epsilon(z, q, steps, delta, accountant); };
  constexpr double kMaxZ = 1e6;
  // f(z) = log(eps(z) / target): positive at lo, <= 0 at hi
  auto f = [&](double z) {
    const double e = eps(z);
    return e <= 0.0 ? -1e300 : std::log(e / target);
  };
  double hi = 1.0, f_hi = f(hi);
  while (f_hi > 0.0) {
    hi *= 2.0;
    if (hi > kMaxZ) {
      throw ParamError(
          fmt::format("no noise multiplier <= {} reaches epsilon = {} (q = {}, T = {}, delta = {})",
                      kMaxZ, target, q, steps, delta));
    }
    f_hi = f(hi);
  }
  double lo = hi / 2.0, f_lo = f(lo);
  while (f_lo <= 0.0) {
    hi = lo;
    f_hi = f_lo;
    lo /= 2.0;
    if (lo < 1e-6) return hi;  // target reachable with (almost) no noise
    f_lo = f(lo);
  }
  // Illinois regula falsi on f, safeguarded by bisection whenever the bracket fails to halve in
  // two steps; the bracket [lo, hi] always satisfies f(lo) > 0 >= f(hi), and hi is returned.
  int side = 0;  // which end moved last (+1 hi, -1 lo)
  double width = hi - lo;
  for (int it = 0; hi - lo > rel_tol * hi && it < 200; ++it) {
    double z;
    if (it % 2 == 1 && hi - lo > 0.5 * width) {
      z = 0.5 * (lo + hi);
    } else {
      if (it % 2 == 0) width = hi - lo;
      z = (f_hi > -1e299) ? hi - f_hi * (hi - lo) / (f_hi - f_lo) : 0.5 * (lo + hi);
      // keep strictly inside the bracket
      const double margin = 0.25 * rel_tol * hi;
      z = std::min(std::max(z, lo + margin), hi - margin);
    }
    const double fz = f(z);
    if (fz <= 0.0) {
      hi = z;
      f_hi = fz;
      if (side == 1) f_lo *= 0.5;  // Illinois: damp the stuck end
      side = 1;
    } else {
      lo = z;
      f_lo = fz;
      if (side == -1) f_hi *= 0.5;
      side = -1;
    }
  }
  return hi;
}

}  // namespace dprl::privacy
