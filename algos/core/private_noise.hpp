// Noise for the private learners (actor_critic, lsvi_ucb, the offline and selective DP-SGD
// learners): which NoiseSource a run draws from and how a seeded stream is derived.
//
// Sources (the learners' `noise` parameter):
//   os-entropy (default)  getrandom(2) bits and the exact discrete samplers of
//                         privacy/secure_sampling.hpp; nobody can regenerate the noise.
//   seeded                xoshiro256** seeded with derive_seed(seed, Domain::kDpNoise, stream,
//                         privacy_stream_id(privacy parameters)): reproducible, for experiments.
//                         Anyone holding the config can regenerate and subtract the noise, so a
//                         seeded run is never formal (summary.json: reproducible_noise true,
//                         formal false) and prints a one-line warning to stderr (once per
//                         process and learner, so a sweep says it once). The privacy
//                         parameters (epsilon, delta, noise scales) enter the stream: two seeded
//                         runs that differ only in epsilon draw unrelated noise, instead of the
//                         same standard normals at two scales, from which the un-noised
//                         statistic could be solved.
// Release: privacy/secure_release.hpp (gaussian_release_plan, add_gaussian_release): with a
// secure source the released vector is snapped to the sampler's grid and the noise widened to
// cover the snapped sensitivity, with a seeded one NoiseSource::add_gaussian.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "privacy/noise_source.hpp"

namespace dprl::algos {

// A 64-bit stream id hashed from the privacy parameters of a run (their bit patterns).
std::uint64_t privacy_stream_id(std::initializer_list<double> params);

// "os-entropy" or "seeded" (see above); learner names the warning's sender.
std::unique_ptr<privacy::NoiseSource> make_private_noise(const std::string& mode,
                                                         std::uint64_t seed, std::uint64_t stream,
                                                         std::initializer_list<double> params,
                                                         const std::string& learner);

}  // namespace dprl::algos
