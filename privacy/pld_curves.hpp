// The privacy loss distributions of single mechanisms, discretized by "connect the dots"
// (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022), for the PLD accountant
// (pld_accountant.hpp, which states the guarantee and the neighbouring relation).
//
// A mechanism is given by its hockey-stick curve delta(eps) = sup_S P(S) - e^eps Q(S) (and
// g(eps) = delta(eps) - (1 - e^eps), the same curve without its linear part, for eps < 0) and by
// the loss range [lo, hi] holding P's mass (tails beyond 9.6 noise standard deviations, mass
// < 1e-21, excluded). discretize() evaluates the curve on the grid eps_i = i h of a window of that
// range and returns the unique discrete PLD whose curve equals the true one at every grid point and
// is linear in e^eps in between; as delta is convex in e^eps, it dominates the mechanism.
// Any window keeps that property: mass below the window's bottom is moved up to it, mass above its
// top goes to the +inf loss (infinity mass = delta(top)). The window is clamped to [-1e6, 1e6] and
// to 2^22 points (a loss range of 419 at h = 1e-4), keeping its top end for pure-DP mechanisms
// (Laplace: their mass sits at the top) and its bottom end for the subsampled Gaussian (tiny noise
// multipliers then put the excess in the +inf mass, and epsilon is +inf for every delta below it).
#pragma once

#include <cstdint>
#include <functional>

#include "privacy/pld_accountant.hpp"

namespace dprl::privacy {

struct PldCurve {
  std::function<double(double)> delta;  // delta(eps), used for eps >= -2h
  std::function<double(double)> g;      // delta(eps) - (1 - e^eps), used for eps <= 2h
  double lo, hi;                        // loss range of P's mass
  bool keep_top;                        // which end a clamped window keeps
};

// Poisson-subsampled Gaussian (remove: P = (1 - q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2); add:
// the reverse) and Laplace (P = Lap(0, b), Q = Lap(1, b)). ParamError on q outside (0, 1], z or
// b not finite and > 0.
PldCurve subsampled_gaussian_curve(double q, double z, bool remove);
PldCurve laplace_curve(double scale);

// Throws ParamError unless the discretization interval h is in [1e-6, 0.1].
void check_pld_interval(double h);

// The +inf mass discretize() would give (delta at the window's top), without building the grid.
double discretized_infinity_mass(const PldCurve& c, double h);
Pld discretize(const PldCurve& c, double h);

}  // namespace dprl::privacy
