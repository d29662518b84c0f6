#include "privacy/gaussian_mechanism.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

namespace {

void check_eps_delta_sens(double epsilon, double delta, double sensitivity) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) {
    throw ParamError(fmt::format("epsilon = {} must be finite and > 0", epsilon));
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("delta = {} must be in (0, 1)", delta));
  }
  if (!(sensitivity > 0.0) || !std::isfinite(sensitivity)) {
    throw ParamError(fmt::format("sensitivity = {} must be finite and > 0", sensitivity));
  }
}

}  // namespace

double classical_gaussian_sigma(double epsilon, double delta, double sensitivity) {
  check_eps_delta_sens(epsilon, delta, sensitivity);
  if (epsilon >= 1.0) {
    throw ParamError(fmt::format(
        "epsilon = {} must be < 1 for the classical Gaussian calibration (Dwork and Roth Thm "
        "A.1); use the analytic Gaussian mechanism",
        epsilon));
  }
  return sensitivity * std::sqrt(2.0 * std::log(1.25 / delta)) / epsilon;
}

double gaussian_delta(double z, double epsilon) {
  // Balle and Wang 2018 Thm. 8 with Delta = 1, sigma = z; second term in log space.
  const double a = 1.0 / (2.0 * z);
  const double b = epsilon * z;
  const double log_t1 = math::log_normal_cdf(a - b);
  const double log_t2 = epsilon + math::log_normal_cdf(-a - b);
  return std::exp(math::log_sub(log_t1, log_t2));
}

double analytic_gaussian_sigma(double epsilon, double delta, double sensitivity) {
  check_eps_delta_sens(epsilon, delta, sensitivity);
  // delta(z) decreases in z: bracket, then bisect to 1e-12 relative and return the upper end.
  double hi = 1.0;
  while (gaussian_delta(hi, epsilon) > delta) hi *= 2.0;
  double lo = hi / 2.0;
  while (lo > 1e-300 && gaussian_delta(lo, epsilon) <= delta) {
    hi = lo;
    lo /= 2.0;
  }
  while (hi - lo > 1e-12 * hi) {
    const double mid = 0.5 * (lo + hi);
    (gaussian_delta(mid, epsilon) <= delta ? hi : lo) = mid;
  }
  return hi * sensitivity;
}

double gaussian_epsilon(double z, double delta) {
  if (!(z > 0.0) || !std::isfinite(z)) {
    throw ParamError(fmt::format("noise_multiplier = {} must be finite and > 0", z));
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("delta = {} must be in (0, 1)", delta));
  }
  if (gaussian_delta(z, 0.0) <= delta) return 0.0;
  double hi = 1.0;
  while (gaussian_delta(z, hi) > delta) hi *= 2.0;
  double lo = 0.0;
  while (hi - lo > 1e-12 * hi) {
    const double mid = 0.5 * (lo + hi);
    (gaussian_delta(z, mid) <= delta ? hi : lo) = mid;
  }
  return hi;
}

void GaussianParams::check() const {
  if (!analytic && epsilon >= 1.0) {
    throw ParamError(fmt::format(
        "gaussian.epsilon = {} must be < 1 when analytic = false (classical calibration)",
        epsilon));
  }
}

GaussianMechanism::GaussianMechanism(GaussianParams p) : p_(p) {
  validate_params(p_, "gaussian");
  sigma_ = p_.analytic ? analytic_gaussian_sigma(p_.epsilon, p_.delta, p_.l2_sensitivity)
                       : classical_gaussian_sigma(p_.epsilon, p_.delta, p_.l2_sensitivity);
}

SecurePlan GaussianMechanism::secure_plan(std::size_t dim) const {
  return secure_release_plan(SecureNoise::kGaussian, sigma_, p_.l2_sensitivity, dim);
}

void GaussianMechanism::release(std::span<double> values, NoiseSource& noise) const {
  for (double v : values) {
    if (!std::isfinite(v)) throw ParamError("gaussian mechanism: input value is not finite");
  }
  if (noise.secure()) {
    secure_release(values, SecureNoise::kGaussian, sigma_, p_.l2_sensitivity, noise);
    return;
  }
  for (double& v : values) v += noise.gaussian(sigma_);
}

}  // namespace dprl::privacy
