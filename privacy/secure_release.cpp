#include "privacy/secure_release.hpp"

#include "engine/error.hpp"

namespace dprl::privacy {

SecurePlan secure_release_plan(SecureNoise kind, double scale, double sensitivity,
                               std::size_t dim) {
  return kind == SecureNoise::kLaplace
             ? plan_secure_release(scale, sensitivity, dim, SensitivityNorm::kL1,
                                   kMaxSecureLaplaceRatio)
             : plan_secure_release(scale, sensitivity, dim, SensitivityNorm::kL2,
                                   kMaxSecureGaussianRatio);
}

void secure_release(std::span<double> values, SecureNoise kind, double scale, double sensitivity,
                    NoiseSource& noise) {
  DPRL_CHECK(noise.secure());
  const SecurePlan plan = secure_release_plan(kind, scale, sensitivity, values.size());
  const BitSource bits = [&noise] { return noise.next_u64(); };
  for (double& v : values) {
    const double snapped = snap_to_grid(v, plan.grid);
    v = snapped + (kind == SecureNoise::kLaplace ? secure_laplace(plan.scale, plan.grid, bits)
                                                 : secure_gaussian(plan.scale, plan.grid, bits));
  }
}

}  // namespace dprl::privacy
