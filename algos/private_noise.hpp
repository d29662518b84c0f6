// Noise for the private learners (actor_critic, lsvi_ucb): which NoiseSource a run draws from,
// how a seeded stream is derived, and the release of a noised vector.
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
// Release (add_gaussian_release): with a secure source each element is first snapped to the grid
// g = secure_grid(sd) of the discrete sampler and then gets an exact discrete Gaussian sample
// (a multiple of g), so the output is a grid point and the floating-point attack of Mironov
// (2012) does not apply. Snapping moves each element by at most g / 2, so two inputs at L2
// distance Delta give snapped vectors at distance at most Delta + sqrt(n) g for n elements that
// can differ: callers account that sensitivity (snapped_sensitivity). g <= sd 2^-12 is checked.
// With a non-secure source it is NoiseSource::add_gaussian, unchanged.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
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

// The grid of the secure sampler at standard deviation sd (<= sd 2^-12).
double release_grid(double sd);
// Adds N(0, sd^2) to every element (see above); sd > 0.
void add_gaussian_release(std::span<double> x, double sd, privacy::NoiseSource& noise);
// Delta + sqrt(coords) g: the L2 sensitivity of the snapped vector when at most coords elements
// differ between neighbours (Delta when the source is not secure).
double snapped_sensitivity(double delta_l2, double coords, double sd, bool secure);
// The smallest sd with sd >= z * snapped_sensitivity(delta_l2, coords, sd, secure): noise
// multiplier z against the snapped sensitivity (z delta_l2 when not secure). ParamError when the
// grid term cannot be covered (z sqrt(coords) 2^-12 >= 1/2).
double secure_noise_scale(double z, double delta_l2, double coords, bool secure);

}  // namespace dprl::algos
