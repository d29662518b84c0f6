#include "privacy/secure_release.hpp"

#include <cmath>

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
  secure_release_on_grid(values, kind, plan.scale, plan.grid, noise);
}

void secure_release_on_grid(std::span<double> values, SecureNoise kind, double scale, double grid,
                            NoiseSource& noise) {
  DPRL_CHECK(noise.secure());
  const BitSource words = [&noise] { return noise.next_u64(); };
  BitReader bits(words);  // one reader for the whole vector: no bits wasted between values
  for (double& v : values) {
    const double snapped = snap_to_grid(v, grid);
    v = snapped + (kind == SecureNoise::kLaplace ? secure_laplace(scale, grid, bits)
                                                 : secure_gaussian(scale, grid, bits));
  }
}

SecurePlan gaussian_release_plan(double sd, double sensitivity, std::size_t dim, bool secure) {
  if (!secure) return {0.0, sd, 1.0};
  return secure_release_plan(SecureNoise::kGaussian, sd, sensitivity, dim);
}

void add_gaussian_release(std::span<double> values, double sd, double grid, NoiseSource& noise) {
  DPRL_CHECK(noise.secure() == (grid > 0.0));
  if (!(grid > 0.0)) {
    noise.add_gaussian(values, sd);
    return;
  }
  for (double v : values)
    if (!std::isfinite(v)) throw ParamError("private release: input value is not finite");
  secure_release_on_grid(values, SecureNoise::kGaussian, sd, grid, noise);
}

}  // namespace dprl::privacy
