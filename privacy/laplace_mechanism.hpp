// The Laplace mechanism: releases f(x) + Lap(b)^d with b = Delta_1 / epsilon.
//
// Source: Dwork, McSherry, Nissim, Smith 2006; Dwork and Roth 2014, Thm. 3.6.
// Guarantee: epsilon-DP (pure) for f with L1 sensitivity Delta_1 under the caller's neighbouring
// relation (the one that defines Delta_1).
// Parameters (LaplaceParams): l1_sensitivity > 0, epsilon > 0 (finite; NaN rejected). Violations
// throw ParamError naming the parameter and the rule.
// With a secure NoiseSource the input is snapped to the noise grid and b is inflated by
// (1 + g / Delta_1) to cover the snapping (see secure_sampling.hpp).
#pragma once

#include <span>

#include "engine/params.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::privacy {

struct LaplaceParams {
  double l1_sensitivity = 1.0;
  double epsilon = 1.0;
  template <class V>
  void visit(V& v) {
    v("l1_sensitivity", l1_sensitivity, Range::positive(), "L1 sensitivity of the query");
    v("epsilon", epsilon, Range::positive(), "target epsilon (pure DP)");
  }
};

class LaplaceMechanism {
 public:
  explicit LaplaceMechanism(LaplaceParams p);
  double scale() const { return scale_; }
  void release(std::span<double> values, NoiseSource& noise) const;
  // laplace(b / Delta_1): one release, for a ledger.
  DpEvent event() const { return DpEvent::laplace(scale_ / p_.l1_sensitivity); }

 private:
  LaplaceParams p_;
  double scale_;
};

}  // namespace dprl::privacy
