#include "privacy/sparse_vector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "privacy/composition.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {
namespace {

// Laplace noise of the given scale for queries of the given sensitivity. A secure source serves
// its noise on a power-of-two grid g; the sparse-vector coupling shifts the threshold noise by
// the sensitivity and the query noise by twice it, which the discrete noise matches exactly only
// when those shifts are multiples of g. The default grid 2^(floor(log2 scale) - 12) exceeds the
// sensitivity once scale >= 2^13 sensitivity (eps' <= 2^-11 at count sensitivity 1), and rounding
// the shifts up to the grid would double the per-query epsilon; so the grid is capped at the
// largest power of two not above the sensitivity (a finer grid changes nothing else: the noise
// has scale ceil(scale / g) g >= scale).
double svt_laplace(double scale, double sensitivity, NoiseSource& noise) {
  if (!noise.secure()) return noise.laplace(scale);
  const double cap = std::ldexp(1.0, std::ilogb(sensitivity));
  const double g = std::min(secure_grid(scale), cap);
  return secure_laplace(scale, g, [&noise] { return noise.next_u64(); });
}

}  // namespace

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
  return s.theta + s.threshold_shift + svt_laplace(s.threshold_noise_scale, 1.0, noise);
}

bool prefix_query(double count, double theta_hat, const SvtPieces& s, NoiseSource& noise) {
  if (!std::isfinite(count)) throw ParamError("prefix query: count is not finite");
  return count + svt_laplace(s.query_noise_scale, 1.0, noise) > theta_hat;
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
  noisy_threshold_ =
      p_.threshold + svt_laplace(2.0 * p_.sensitivity / p_.epsilon, p_.sensitivity, noise_);
}

bool AboveThreshold::query(double value) {
  if (halted_) throw BudgetExceeded("above_threshold: already answered above; instance is spent");
  if (!std::isfinite(value)) throw ParamError("above_threshold: query value is not finite");
  if (value + svt_laplace(4.0 * p_.sensitivity / p_.epsilon, p_.sensitivity, noise_) >=
      noisy_threshold_) {
    halted_ = true;
    return true;
  }
  return false;
}

std::string svt_pieces_json(const SvtPieces& s) {
  return nlohmann::ordered_json{{"epsilon_prime", s.eps_prime},
                                {"delta_prime", s.delta_prime},
                                {"c_min", s.c_min},
                                {"theta", s.theta},
                                {"threshold_shift", s.threshold_shift},
                                {"threshold_noise_scale", s.threshold_noise_scale},
                                {"query_noise_scale", s.query_noise_scale},
                                {"per_trajectory_epsilon", s.per_trajectory_epsilon},
                                {"per_trajectory_delta", s.per_trajectory_delta},
                                {"composed_epsilon", json_number(s.composed_epsilon)},
                                {"composed_delta", s.composed_delta}}
      .dump();
}

}  // namespace dprl::privacy
