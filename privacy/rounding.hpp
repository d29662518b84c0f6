// The classic bound on floating-point rounding used by the private sums' sensitivities
// (user_dp_sgd.hpp, dp_fedavg.hpp): a sum or dot product of n terms, in any order, is within
// gamma_n = n u / (1 - n u) times the sum of the terms' magnitudes of the exact value, u = 2^-bits
// (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., Lemma 3.1).
#pragma once

#include <cmath>
#include <limits>

namespace dprl::privacy {

// gamma_n for unit roundoff 2^-bits (53: double, 24: float); infinite once n u >= 1/2, where the
// bound says nothing.
inline double rounding_gamma(double n, int bits) {
  const double nu = n * std::ldexp(1.0, -bits);
  return nu < 0.5 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

}  // namespace dprl::privacy
