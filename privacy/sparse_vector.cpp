#include "privacy/sparse_vector.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/composition.hpp"

namespace dprl::privacy {

SvtPieces svt_params(const SvtParams& p) {
  if (!(p.epsilon1 > 0.0) || !std::isfinite(p.epsilon1)) {
    throw ParamError(fmt::format("svt epsilon1 = {} must be finite and > 0", p.epsilon1));
  }
  if (!(p.delta1 > 0.0 && p.delta1 < 1.0)) {
    throw ParamError(fmt::format("svt delta1 = {} must be in (0, 1)", p.delta1));
  }
  if (p.queries < 1) throw ParamError(fmt::format("svt queries T = {} must be >= 1", p.queries));
  if (p.max_length < 1) {
    throw ParamError(fmt::format("svt max_length L = {} must be >= 1", p.max_length));
  }
  if (!(p.p_min > 0.0 && p.p_min <= 1.0)) {
    throw ParamError(fmt::format("svt p_min = {} must be in (0, 1]", p.p_min));
  }
  const double t = static_cast<double>(p.queries);
  SvtPieces s{};
  s.eps_prime = p.epsilon1 / std::sqrt(32.0 * t * std::log(2.0 / p.delta1));
  s.delta_prime = p.delta1 / (2.0 * t * static_cast<double>(p.max_length));
  s.c_min = -1.0 / std::expm1(-s.eps_prime);  // e^e' / (e^e' - 1), without overflow
  s.theta = s.c_min / p.p_min;
  s.threshold_shift = 4.0 / s.eps_prime * std::log(1.0 / s.delta_prime);
  s.threshold_noise_scale = 2.0 / s.eps_prime;
  s.query_noise_scale = 4.0 / s.eps_prime;
  s.per_trajectory_epsilon = 2.0 * s.eps_prime;
  s.per_trajectory_delta = p.delta1 / (2.0 * t);
  const EpsDelta total = advanced_composition(s.per_trajectory_epsilon, s.per_trajectory_delta,
                                              p.queries, p.delta1 / 2.0);
  s.composed_epsilon = total.epsilon;
  s.composed_delta = total.delta;
  return s;
}

double noisy_threshold(const SvtPieces& s, NoiseSource& noise) {
  return s.theta + s.threshold_shift + noise.laplace(s.threshold_noise_scale);
}

bool prefix_query(double count, double theta_hat, const SvtPieces& s, NoiseSource& noise) {
  if (!std::isfinite(count)) throw ParamError("prefix query: count is not finite");
  return count + noise.laplace(s.query_noise_scale) > theta_hat;
}

AboveThreshold::AboveThreshold(AboveThresholdParams p, NoiseSource& noise) : p_(p), noise_(noise) {
  if (!(p_.epsilon > 0.0) || !std::isfinite(p_.epsilon)) {
    throw ParamError(
        fmt::format("above_threshold epsilon = {} must be finite and > 0", p_.epsilon));
  }
  if (!(p_.sensitivity > 0.0) || !std::isfinite(p_.sensitivity)) {
    throw ParamError(
        fmt::format("above_threshold sensitivity = {} must be finite and > 0", p_.sensitivity));
  }
  if (!std::isfinite(p_.threshold)) throw ParamError("above_threshold threshold must be finite");
  noisy_threshold_ = p_.threshold + noise_.laplace(2.0 * p_.sensitivity / p_.epsilon);
}

bool AboveThreshold::query(double value) {
  if (halted_) throw BudgetExceeded("above_threshold: already answered above; instance is spent");
  if (!std::isfinite(value)) throw ParamError("above_threshold: query value is not finite");
  if (value + noise_.laplace(4.0 * p_.sensitivity / p_.epsilon) >= noisy_threshold_) {
    halted_ = true;
    return true;
  }
  return false;
}

}  // namespace dprl::privacy
