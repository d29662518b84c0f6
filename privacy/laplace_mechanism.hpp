// The Laplace mechanism: releases f(x) + Lap(b)^d with b = Delta_1 / epsilon.
//
// Source: Dwork, McSherry, Nissim, Smith 2006; Dwork and Roth 2014, Thm. 3.6.
// Guarantee: epsilon-DP (pure) for f with L1 sensitivity Delta_1 under the caller's neighbouring
// relation (the one that defines Delta_1).
// Parameters (LaplaceParams): l1_sensitivity > 0, epsilon > 0 (finite; NaN rejected). Violations
// throw ParamError naming the parameter and the rule.
// With a secure NoiseSource, release() of d values snaps them to a power-of-two grid g and adds
// exact discrete Laplace noise of scale >= b (1 + d g / Delta_1): the snapped vectors' L1
// sensitivity is Delta_1 + d g, and the grid is chosen per release so that d g / Delta_1 <= 2^-12
// (secure_release.hpp, secure_sampling.hpp); secure_plan(d) reports the grid and scale.
#pragma once

#include <cstddef>
#include <span>

#include "engine/params.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"

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
  // Adds noise in place; values must be finite (ParamError otherwise).
  void release(std::span<double> values, NoiseSource& noise) const;
  // The grid and inflated scale of a secure release of dim values.
  SecurePlan secure_plan(std::size_t dim) const;
  // laplace(b / Delta_1): one release, for a ledger.
  DpEvent event() const { return DpEvent::laplace(scale_ / p_.l1_sensitivity); }

 private:
  LaplaceParams p_;
  double scale_;
};

}  // namespace dprl::privacy
