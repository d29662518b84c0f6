// The secure release of a d-dimensional query answer: snap every coordinate to a power-of-two grid
// and add exact discrete noise on that grid, with the scale inflated to cover the snapping (see
// secure_sampling.hpp, plan_secure_release). One implementation, used by LaplaceMechanism and
// GaussianMechanism when their NoiseSource is secure.
//
// Guarantee: Laplace noise (L1 sensitivity Delta, base scale b = Delta / epsilon) stays
// epsilon-DP for the snapped vector; Gaussian noise (L2 sensitivity Delta, base sigma) keeps the
// zCDP of noise multiplier sigma / Delta (secure_sampling.hpp states what is and is not proven).
// The neighbouring relation is the caller's, the one that defines Delta.
// Validation (ParamError): finite values; scale, sensitivity > 0 and finite; the dimension within
// the sampler's range (see plan_secure_release).
#pragma once

#include <cstddef>
#include <span>

#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

enum class SecureNoise { kLaplace, kGaussian };

// Laplace: L1 norm and the discrete Laplace's range; Gaussian: L2 norm and the discrete
// Gaussian's range.
SecurePlan secure_release_plan(SecureNoise kind, double scale, double sensitivity, std::size_t dim);

// values[i] = snap(values[i], g) + g * discrete noise of scale >= plan.scale; noise must be
// secure (checked).
void secure_release(std::span<double> values, SecureNoise kind, double scale, double sensitivity,
                    NoiseSource& noise);

}  // namespace dprl::privacy
