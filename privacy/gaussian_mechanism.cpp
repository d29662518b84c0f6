#include "privacy/gaussian_mechanism.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/root_finding.hpp"
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
  // delta(z) decreases in z: bracket by powers of two, bisect to 1e-12 relative and return the
  // upper end (its delta is <= the target; a NaN delta counts as not meeting it)
  auto meets = [&](double z) { return gaussian_delta(z, epsilon) <= delta; };
  const auto b = bracket_geometric(meets, 1.0, 1e-300, 1e300);
  if (!b) throw ParamError(fmt::format("no sigma <= 1e300 reaches epsilon = {}", epsilon));
  if (b->lo == 0.0) return b->hi * sensitivity;
  const Bracket r =
      find_boundary([&](double z) { return meets(z) ? -1.0 : 1.0; }, b->lo, b->hi, {1e-12});
  return r.hi * sensitivity;
}

double gaussian_epsilon(double z, double delta) {
  if (!(z > 0.0) || !std::isfinite(z)) {
    throw ParamError(fmt::format("noise_multiplier = {} must be finite and > 0", z));
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("delta = {} must be in (0, 1)", delta));
  }
  auto meets = [&](double e) { return gaussian_delta(z, e) <= delta; };
  if (meets(0.0)) return 0.0;
  // delta(epsilon) decreases in epsilon: bisect [0, first power of two that meets]
  const auto b = bracket_geometric(meets, 1.0, 1e-300, 1e300);
  if (!b) return math::kInf;
  if (b->lo == 0.0) return b->hi;
  return find_boundary([&](double e) { return meets(e) ? -1.0 : 1.0; }, b->lo, b->hi, {1e-12}).hi;
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
