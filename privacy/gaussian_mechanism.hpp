// The Gaussian mechanism: releases f(x) + N(0, sigma^2 I) for f with L2 sensitivity Delta.
//
// Sources and guarantees (neighbouring relation: whatever defines Delta, e.g. add/remove or
// replace one record; the caller states it):
// - Classical calibration (Dwork and Roth 2014, Thm. A.1):
//     sigma = Delta * sqrt(2 ln(1.25 / delta)) / epsilon   gives (epsilon, delta)-DP
//   ONLY for epsilon in (0, 1); classical_gaussian_sigma rejects epsilon >= 1 (ParamError).
// - Analytic Gaussian mechanism (Balle and Wang 2018, Thm. 8): the mechanism is (epsilon,
//   delta)-DP iff  Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2 sigma) -
//   epsilon sigma/Delta) <= delta. analytic_gaussian_sigma returns the smallest such sigma (found
//   by bisection to 1e-12 relative, then the upper end returned: never too small), valid for every
//   epsilon > 0.
// Parameters (GaussianParams): l2_sensitivity > 0, epsilon > 0, delta in (0, 1), analytic
// (default true). NaN anywhere is rejected. Every violation throws ParamError naming the
// parameter and the rule.
// With a secure NoiseSource, release() of d values snaps them to a power-of-two grid g and adds
// exact discrete Gaussian noise of scale >= sigma (1 + sqrt(d) g / Delta): the snapped vectors' L2
// sensitivity is Delta + sqrt(d) g, and the grid is chosen per release so that sqrt(d) g / Delta
// <= 2^-12 while the sampler's range allows (secure_release.hpp, secure_sampling.hpp, which also
// say what is proven for the discrete Gaussian); secure_plan(d) reports the grid and scale. From
// d = 4096 values on, the noise is the table-based discrete Gaussian (table_gaussian.hpp): the
// release is then (epsilon, delta + sampler_delta(epsilon, secure_plan(d).sampler_tv))-DP.
#pragma once

#include <cstddef>
#include <span>

#include "engine/params.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

double classical_gaussian_sigma(double epsilon, double delta, double sensitivity = 1.0);
double analytic_gaussian_sigma(double epsilon, double delta, double sensitivity = 1.0);
// delta(epsilon) of the Gaussian mechanism with noise multiplier z = sigma / Delta (exact).
double gaussian_delta(double noise_multiplier, double epsilon);
// Smallest epsilon with gaussian_delta(z, epsilon) <= delta (bisection, rounded up).
double gaussian_epsilon(double noise_multiplier, double delta);

struct GaussianParams {
  double l2_sensitivity = 1.0;
  double epsilon = 1.0;
  double delta = 1e-5;
  bool analytic = true;  // Balle and Wang 2018; false: classical (epsilon < 1 only)
  template <class V>
  void visit(V& v) {
    v("l2_sensitivity", l2_sensitivity, Range::positive(), "L2 sensitivity of the query");
    v("epsilon", epsilon, Range::positive(), "target epsilon");
    v("delta", delta, Range::open(0, 1), "target delta");
    v("analytic", analytic, "analytic calibration (Balle and Wang 2018) instead of classical");
  }
  void check() const;
};

class GaussianMechanism {
 public:
  explicit GaussianMechanism(GaussianParams p);
  double sigma() const { return sigma_; }
  const GaussianParams& params() const { return p_; }
  // Adds noise in place; values must be finite (ParamError otherwise).
  void release(std::span<double> values, NoiseSource& noise) const;
  // The grid and inflated scale of a secure release of dim values.
  SecurePlan secure_plan(std::size_t dim) const;
  // gaussian(sigma / Delta): what a ledger charges for one release.
  DpEvent event() const { return DpEvent::gaussian(sigma_ / p_.l2_sensitivity); }

 private:
  GaussianParams p_;
  double sigma_;
};

}  // namespace dprl::privacy
