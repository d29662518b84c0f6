// The two steps every snapped release applies to its input (secure_release.hpp): the values must
// be finite, and each is rounded to the grid before the noise, a multiple of the grid, is added.
#pragma once

#include <cmath>
#include <span>

#include "engine/error.hpp"

namespace dprl::privacy {

// A snapped release refuses values that are not finite (their grid point is undefined).
inline void check_finite_release(std::span<const double> values) {
  for (double v : values)
    if (!std::isfinite(v)) throw ParamError("private release: input value is not finite");
}

// snap_to_grid(v, g) (secure_sampling.hpp) with v * (1 / g) for v / g, equal for a normal
// power-of-two g (|v| < 2^53 g keeps the quotient finite; above it v is a multiple of g already),
// and branch-free so that loops over it vectorise: inv_g = 1 / g, big = 2^53 g.
inline double snap_scaled(double v, double g, double inv_g, double big) {
  return std::fabs(v) >= big ? v : std::nearbyint(v * inv_g) * g;
}

}  // namespace dprl::privacy
