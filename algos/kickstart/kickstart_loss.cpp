#include "algos/kickstart/kickstart_loss.hpp"

#include <cmath>

#include "engine/error.hpp"

namespace dprl::algos {

double kickstart_alpha(double lambda, double beta, double k) {
  if (std::isinf(k) || lambda == 0.0) return 0.0;
  return lambda * std::sqrt(std::log(1.0 / beta) / (2.0 * (k + 1.0)));
}

PhiValue kickstart_phi(const float* logp, const float* q, int m, double alpha, double scale,
                       float* dz) {
  double p[kKickstartMaxActions], d[kKickstartMaxActions];
  DPRL_CHECK(m >= 1 && m <= kKickstartMaxActions);
  const int n = m;
  double sq = 0;
  for (int i = 0; i < n; ++i) {
    p[i] = std::exp(static_cast<double>(logp[i]));
    d[i] = p[i] - q[i];
    sq += d[i] * d[i];
  }
  PhiValue out;
  out.distance = std::sqrt(sq);
  if (!(out.distance > alpha && out.distance > 1e-12)) return out;
  out.active = true;
  out.phi = out.distance;
  double pg = 0;  // <p, g>
  for (int i = 0; i < n; ++i) pg += p[i] * d[i] / out.distance;
  for (int i = 0; i < n; ++i)
    dz[i] += static_cast<float>(scale * p[i] * (d[i] / out.distance - pg));
  return out;
}

}  // namespace dprl::algos
