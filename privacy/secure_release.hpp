// The secure release of a d-dimensional query answer: snap every coordinate to a power-of-two grid
// and add discrete noise on that grid, with the scale inflated to cover the snapping (see
// secure_sampling.hpp, plan_secure_release). Laplace noise is the exact discrete Laplace. Gaussian
// noise on vectors of kTableMinValues values or more comes from the table sampler
// (table_gaussian.hpp), within a stated statistical distance of the exact discrete Gaussian: the
// plan returns it for one release as sampler_tv, and a record's delta grows by
// sampler_delta(epsilon, sum of sampler_tv over the run's releases). Shorter vectors (scalar
// mechanisms) keep the exact sampler, whose distance is 0: a table costs about 10 to 20 ms to build, the price of 10^5 exact
// values; a width released many times (LSVI-UCB) uses RepeatedGaussianRelease below, which puts
// every release of that width on the table sampler, and widths that change with every release
// (DP-Actor) use VaryingGaussianRelease, which rounds them up to a ladder of cheap samplers.
// A release picks its sampler by the vector's length; a plan's sampler_tv is for one vector of dim
// values (a learner releasing vectors of another length counts gaussian_release_tv per vector).
// The one implementation of the snapped release: the Laplace and Gaussian mechanisms, DP-FedAvg
// and the private learners (actor_critic, lsvi_ucb, the offline learners' and selective DP-SGD,
// the offline audit) all release through it.
//
// Guarantee: Laplace noise (L1 sensitivity Delta, base scale b = Delta / epsilon) stays
// epsilon-DP for the snapped vector; Gaussian noise (L2 sensitivity Delta, base sigma) keeps the
// zCDP of noise multiplier sigma / Delta (secure_sampling.hpp states what is and is not proven)
// for the exact discrete Gaussian; with the table sampler an (epsilon, delta) statement becomes
// (epsilon, delta + sampler_delta) (docs/privacy.md, "The table-based discrete Gaussian").
// The neighbouring relation is the caller's, the one that defines Delta, and so is `dim`: the
// number of coordinates that can differ between neighbours (each adds up to one grid step to the
// snapped sensitivity: Delta + dim g in L1, Delta + sqrt(dim) g in L2).
// Validation (ParamError): finite values; scale, sensitivity > 0 and finite; the dimension within
// the sampler's range (see plan_secure_release).
//
// Gaussian releases whose source may be seeded (the learners' `noise: seeded`, reproducible and
// not formal) go through gaussian_release_plan and add_gaussian_release: with a secure source the
// snapped release above, with any other NoiseSource::add_gaussian at the base standard deviation.
// The plan is made once per calibration (scale, sensitivity and dim fixed) and reused for every
// release; its scale is the standard deviation to record, and the noise multiplier against the
// (snapped) sensitivity is scale / sensitivity in both cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "privacy/noise_source.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

class TableGaussian;

enum class SecureNoise { kLaplace, kGaussian };

// Gaussian releases of at least this many values use the table sampler.
inline constexpr std::size_t kTableMinValues = 4096;

// Laplace: L1 norm and the discrete Laplace's range; Gaussian: L2 norm and the discrete
// Gaussian's range.
SecurePlan secure_release_plan(SecureNoise kind, double scale, double sensitivity, std::size_t dim);

// values[i] = snap(values[i], g) + g * discrete noise of scale >= plan.scale, with the plan for
// dim = values.size(); noise must be secure (checked).
void secure_release(std::span<double> values, SecureNoise kind, double scale, double sensitivity,
                    NoiseSource& noise);
// The same on a grid planned beforehand (grid and scale of a SecurePlan).
void secure_release_on_grid(std::span<double> values, SecureNoise kind, double scale, double grid,
                            NoiseSource& noise);
// The Gaussian release with the exact sampler (Canonne, Kamath, Steinke; secure_sampling.hpp):
// the reference the table sampler is tested against, about 30x slower.
void secure_gaussian_release_exact(std::span<double> values, double scale, double grid,
                                   NoiseSource& noise);

// The statistical distance bound of one Gaussian release of dim values: dim kTableTvPerValue
// when the table sampler serves it (secure and dim >= kTableMinValues), else 0. The plans'
// sampler_tv; learners whose width changes between releases count it per release.
double gaussian_release_tv(std::size_t dim, bool secure);

// The delta a record adds for the table sampler: if each release is within statistical distance
// tv_r of the exact one, the run is within T = sum_r tv_r of the exact run, and an (epsilon,
// delta)-DP exact run makes the real run (epsilon, delta + (1 + e^epsilon) T)-DP
// (docs/privacy.md, "The table-based discrete Gaussian"). 0 when T is 0; at most 1 (the vacuous
// delta, which it is whenever (1 + e^epsilon) T >= 1, epsilon > 709 included).
double sampler_delta(double epsilon, double sampler_tv_sum);
// A record's delta: the configured delta plus sampler_delta, at most 1 (a delta of 1 is vacuous
// already, and above 1 it would read as a probability it is not).
double record_delta(double delta, double sampler_delta);

// Gaussian noise of base standard deviation sd for L2 sensitivity `sensitivity` over dim
// differing coordinates: secure_release_plan's grid and inflated scale when secure, else
// {grid 0, scale sd, inflation 1} (no snapping).
SecurePlan gaussian_release_plan(double sd, double sensitivity, std::size_t dim, bool secure);
// values += N(0, sd^2) per value, sd and grid from gaussian_release_plan: with grid > 0 the values
// are first checked finite (ParamError) and released by secure_release_on_grid; with grid 0 by
// noise.add_gaussian. The grid must be > 0 exactly when noise is secure (checked).
void add_gaussian_release(std::span<double> values, double sd, double grid, NoiseSource& noise);

// Gaussian releases at one width made many times (sd and grid of a plan made once per
// calibration: LSVI-UCB's Gram nodes and targets): a secure release of any length draws from the
// table sampler of that width, whose tables are built once, here, so each value costs the
// table's few ns rather than the exact sampler's ~240 ns, and a width released hundreds of times
// repays the ~10 ms a table takes to build. The noise and its guarantee are those of
// add_gaussian_release on a long vector: the snapped values plus the table's discrete Gaussian of
// standard deviation >= sd on the grid; one release of dim values is within statistical distance
// repeated_release_tv(dim, secure) of the exact release, which a record adds up over its releases
// (sampler_delta). With grid 0 (a non-secure source) a call is add_gaussian_release itself.
class RepeatedGaussianRelease {
 public:
  RepeatedGaussianRelease() = default;
  // sd > 0 and grid >= 0 from gaussian_release_plan (ParamError otherwise)
  RepeatedGaussianRelease(double sd, double grid);
  // values += noise as above; the values are checked finite (ParamError) when secure.
  void operator()(std::span<double> values, NoiseSource& noise) const;

 private:
  double sd_ = 0, grid_ = 0;
  std::shared_ptr<const TableGaussian> table_;
};

// The statistical distance bound of one RepeatedGaussianRelease of dim values: dim
// kTableTvPerValue when secure, else 0. The same bound holds for VaryingGaussianRelease.
double repeated_release_tv(std::size_t dim, bool secure);

// Gaussian releases whose width changes from one release to the next (DP-Actor's clip = median
// sets C, and so the noise sd, per release), at the speed of the table sampler. A secure release
// of standard deviation sd on the grid g needs s = ceil(sd / g) grid steps; s is rounded UP to
// the ladder point s' = ceil(s / 2^e) 2^e, e = max(0, floor(log2 s) - kVaryingLadderBits), so the
// noise is at most 2^-7 (0.8%) wider than asked and never narrower, and the table sampler of s'
// (table_gaussian.hpp) serves the release. Its first coefficient is k = 2^(floor(log2 s') - 5)
// (for s' >= 2^8; a single table below): the wide table A, of width 2.6 k, is one per octave of s
// and shared, and the table that depends on s' is narrow (width 32 to 64), so building one costs
// well under a millisecond. A grid that follows C in powers of two keeps s within about one
// octave, so a run builds at most about 2^kVaryingLadderBits + 1 samplers, each kept here.
// Guarantee: each release is add_gaussian_release at standard deviation s' g >= sd, so every
// guarantee stated for sd holds; one release of dim values is within statistical distance
// repeated_release_tv(dim, true) of the exact discrete Gaussian at s' (a record adds it up over
// its releases: sampler_delta). With a non-secure source (grid 0) a call is add_gaussian_release
// at sd itself.
inline constexpr int kVaryingLadderBits = 7;

class VaryingGaussianRelease {
 public:
  // values += noise of standard deviation >= sd on the grid g (both from gaussian_release_plan;
  // the values are checked finite, ParamError, when secure)
  void operator()(std::span<double> values, double sd, double grid, NoiseSource& noise);
  // s' for s (public for tests)
  static std::uint64_t ladder(std::uint64_t s);
  // the samplers built so far
  std::size_t samplers() const { return samplers_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::shared_ptr<const TableGaussian>> samplers_;
};

}  // namespace dprl::privacy
