#include "algos/audit/release_canaries.hpp"

#include <cmath>

namespace dprl::algos {

ReleaseCanaries::ReleaseCanaries(CanarySet& canaries, bool replace, double noise_factor,
                                 double sensitivity_factor, Placement place)
    : c_(canaries),
      replace_(replace),
      noise_factor_(noise_factor),
      sens_factor_(sensitivity_factor),
      place_(std::move(place)) {}

double ReleaseCanaries::shift(const Release& r, std::int64_t j) const {
  const double delta = r.sensitivity * sens_factor_;
  if (replace_) return c_.in[j] ? 0.5 * delta : -0.5 * delta;
  return c_.in[j] ? delta : 0.0;
}

double ReleaseCanaries::before(const Release& r, std::span<double> x) {
  if (!(r.sd > 0.0) || !(r.sensitivity > 0.0) || !std::isfinite(r.sd)) return r.sd * noise_factor_;
  for (std::int64_t j = 0; j < c_.size(); ++j) {
    const std::int64_t k = place_(r, j);
    if (k >= 0) x[static_cast<std::size_t>(k)] += shift(r, j);
  }
  return r.sd * noise_factor_;
}

void ReleaseCanaries::after(const Release& r, std::span<double> x) {
  if (!(r.sd > 0.0) || !(r.sensitivity > 0.0) || !std::isfinite(r.sd)) return;
  const double delta = r.sensitivity * sens_factor_;
  const double c = replace_ ? 0.0 : 0.5 * delta * delta;
  const double inv = 1.0 / (r.sd * r.sd);
  bool carried = false;
  for (std::int64_t j = 0; j < c_.size(); ++j) {
    const std::int64_t k = place_(r, j);
    if (k < 0) continue;
    double& v = x[static_cast<std::size_t>(k)];
    if (std::isfinite(v)) c_.score[j] += (v * delta - c) * inv;
    v -= shift(r, j);
    carried = true;
  }
  if (carried) ++count_[r.channel & 3];
}

}  // namespace dprl::algos
