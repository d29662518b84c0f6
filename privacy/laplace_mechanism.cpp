#include "privacy/laplace_mechanism.hpp"

#include <cmath>

#include "engine/error.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

LaplaceMechanism::LaplaceMechanism(LaplaceParams p) : p_(p) {
  validate_params(p_, "laplace");
  scale_ = p_.l1_sensitivity / p_.epsilon;
}

void LaplaceMechanism::release(std::span<double> values, NoiseSource& noise) const {
  for (double v : values) {
    if (!std::isfinite(v)) throw ParamError("laplace mechanism: input value is not finite");
  }
  if (noise.secure()) {
    // the snapped input moves by <= g/2: inflate the scale until it covers Delta + g
    double b = scale_;
    for (int i = 0; i < 8 && b < scale_ * (1.0 + secure_grid(b) / p_.l1_sensitivity); ++i) {
      b = scale_ * (1.0 + secure_grid(b) / p_.l1_sensitivity);
    }
    const double g = secure_grid(b);
    for (double& v : values) v = snap_to_grid(v, g) + noise.laplace(b);
    return;
  }
  for (double& v : values) v += noise.laplace(scale_);
}

}  // namespace dprl::privacy
