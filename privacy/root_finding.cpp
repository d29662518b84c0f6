#include "privacy/root_finding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl::privacy {

namespace {

bool above(double v) { return !(v <= 0.0); }  // NaN counts as "not there yet"

}  // namespace

Bracket find_boundary(const std::function<double(double)>& f, double lo, double hi,
                      const RootOptions& o) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    throw ParamError(
        fmt::format("root finding: bracket [{}, {}] must be finite with lo < hi", lo, hi));
  }
  if (o.integers && (lo != std::floor(lo) || hi != std::floor(hi))) {
    throw ParamError(fmt::format("root finding: bracket [{}, {}] must be integers", lo, hi));
  }
  double f_lo = f(lo), f_hi = f(hi);
  if (!above(f_lo) || above(f_hi)) {
    throw ParamError(
        fmt::format("root finding: f({}) = {} must be > 0 and f({}) = {} <= 0 (no sign change)", lo,
                    f_lo, hi, f_hi));
  }
  auto done = [&] {
    if (o.integers) return hi - lo <= 1.0;
    return hi - lo <= std::max(o.abs_tol, o.rel_tol * std::fabs(hi));
  };
  int side = 0;  // which end moved last (+1 hi, -1 lo)
  double width = hi - lo;
  for (int step = 0; step < o.max_steps && !done(); ++step) {
    double x = 0.5 * (lo + hi);
    const bool finite_ends = std::isfinite(f_lo) && std::isfinite(f_hi) && f_lo != f_hi;
    if (o.illinois && finite_ends && !(step % 2 == 1 && hi - lo > 0.5 * width)) {
      if (step % 2 == 0) width = hi - lo;
      x = hi - f_hi * (hi - lo) / (f_hi - f_lo);
      // keep strictly inside the bracket
      const double margin = 0.25 * std::max(o.abs_tol, o.rel_tol * std::fabs(hi));
      x = std::min(std::max(x, lo + margin), hi - margin);
    }
    if (o.integers) x = std::clamp(std::floor(x), lo + 1.0, hi - 1.0);
    if (!(x > lo && x < hi)) break;  // the bracket is as narrow as doubles allow
    const double fx = f(x);
    if (!above(fx)) {
      hi = x;
      f_hi = fx;
      if (side == 1) f_lo *= 0.5;  // Illinois: damp the stuck end
      side = 1;
    } else {
      lo = x;
      f_lo = fx;
      if (side == -1) f_hi *= 0.5;
      side = -1;
    }
  }
  return {lo, hi};
}

std::optional<Bracket> bracket_geometric(const std::function<bool(double)>& test, double start,
                                         double min, double max) {
  if (!(start > 0.0) || !(min > 0.0) || !(min <= start && start <= max)) {
    throw ParamError(
        fmt::format("root finding: need 0 < min <= start <= max (min = {}, start = {}, max = {})",
                    min, start, max));
  }
  if (test(start)) {
    double hi = start;
    for (double lo = start / 2; lo >= min; lo /= 2) {
      if (!test(lo)) return Bracket{lo, hi};
      hi = lo;
    }
    return Bracket{0.0, hi};
  }
  for (double hi = start * 2; hi <= max; hi *= 2) {
    if (test(hi)) return Bracket{hi / 2, hi};
  }
  return std::nullopt;
}

}  // namespace dprl::privacy
