#include "privacy/laplace_mechanism.hpp"

#include <cmath>

#include "engine/error.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::privacy {

LaplaceMechanism::LaplaceMechanism(LaplaceParams p) : p_(p) {
  validate_params(p_, "laplace");
  scale_ = p_.l1_sensitivity / p_.epsilon;
}

SecurePlan LaplaceMechanism::secure_plan(std::size_t dim) const {
  return secure_release_plan(SecureNoise::kLaplace, scale_, p_.l1_sensitivity, dim);
}

void LaplaceMechanism::release(std::span<double> values, NoiseSource& noise) const {
  for (double v : values) {
    if (!std::isfinite(v)) throw ParamError("laplace mechanism: input value is not finite");
  }
  if (noise.secure()) {
    secure_release(values, SecureNoise::kLaplace, scale_, p_.l1_sensitivity, noise);
    return;
  }
  for (double& v : values) v += noise.laplace(scale_);
}

}  // namespace dprl::privacy
