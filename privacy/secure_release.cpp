#include "privacy/secure_release.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "engine/error.hpp"
#include "privacy/snapped_values.hpp"
#include "privacy/table_gaussian.hpp"

namespace dprl::privacy {
SecurePlan secure_release_plan(SecureNoise kind, double scale, double sensitivity,
                               std::size_t dim) {
  if (kind == SecureNoise::kLaplace)
    return plan_secure_release(scale, sensitivity, dim, SensitivityNorm::kL1,
                               kMaxSecureLaplaceRatio);
  SecurePlan plan = plan_secure_release(scale, sensitivity, dim, SensitivityNorm::kL2,
                                        kMaxSecureGaussianRatio);
  if (dim < kTableMinValues) return plan;  // the exact sampler: no distance
  // the table sampler for this width, built now (and cached) rather than at the first release
  table_gaussian(secure_gaussian_steps(plan.scale, plan.grid));
  plan.sampler_tv = gaussian_release_tv(dim, true);
  return plan;
}

double gaussian_release_tv(std::size_t dim, bool secure) {
  if (!secure || dim < kTableMinValues) return 0.0;
  return static_cast<double>(dim) * kTableTvPerValue;
}

double sampler_delta(double epsilon, double sampler_tv_sum) {
  if (!(sampler_tv_sum >= 0.0)) throw ParamError("sampler_delta: the distance must be >= 0");
  if (sampler_tv_sum == 0.0) return 0.0;
  // a delta of 1 holds for every mechanism: past it (or past e^epsilon's range, epsilon > 709)
  // the bound says nothing, and 1 records that as a number rather than an infinity
  return std::min(1.0, (1.0 + std::exp(epsilon)) * sampler_tv_sum);
}

double record_delta(double delta, double sampler_delta) {
  return std::min(1.0, delta + sampler_delta);
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
  if (kind == SecureNoise::kGaussian && values.size() >= kTableMinValues) {
    table_gaussian(secure_gaussian_steps(scale, grid))->release(values, grid, noise);
    return;
  }
  if (kind == SecureNoise::kGaussian)
    return secure_gaussian_release_exact(values, scale, grid, noise);
  const BitSource words = [&noise] { return noise.next_u64(); };
  BitReader bits(words);  // one reader for the whole vector: no bits wasted between values
  for (double& v : values) v = snap_to_grid(v, grid) + secure_laplace(scale, grid, bits);
}

void secure_gaussian_release_exact(std::span<double> values, double scale, double grid,
                                   NoiseSource& noise) {
  DPRL_CHECK(noise.secure());
  const BitSource words = [&noise] { return noise.next_u64(); };
  BitReader bits(words);
  for (double& v : values) v = snap_to_grid(v, grid) + secure_gaussian(scale, grid, bits);
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
  check_finite_release(values);
  secure_release_on_grid(values, SecureNoise::kGaussian, sd, grid, noise);
}

RepeatedGaussianRelease::RepeatedGaussianRelease(double sd, double grid) : sd_(sd), grid_(grid) {
  if (!(sd > 0.0) || !std::isfinite(sd))
    throw ParamError("repeated Gaussian release: the standard deviation must be > 0 and finite");
  if (!(grid >= 0.0) || !std::isfinite(grid))
    throw ParamError("repeated Gaussian release: the grid must be >= 0 and finite");
  if (grid > 0.0) table_ = table_gaussian(secure_gaussian_steps(sd, grid));
}

void RepeatedGaussianRelease::operator()(std::span<double> values, NoiseSource& noise) const {
  DPRL_CHECK(sd_ > 0.0);  // not a default-constructed one
  if (!table_) return add_gaussian_release(values, sd_, grid_, noise);
  DPRL_CHECK(noise.secure());
  check_finite_release(values);
  table_->release(values, grid_, noise);
}

std::uint64_t VaryingGaussianRelease::ladder(std::uint64_t s) {
  DPRL_CHECK(s >= 1);
  const int e = std::max(0, static_cast<int>(std::bit_width(s)) - 1 - kVaryingLadderBits);
  const std::uint64_t step = std::uint64_t{1} << e;
  return (s + step - 1) / step * step;
}

void VaryingGaussianRelease::operator()(std::span<double> values, double sd, double grid,
                                        NoiseSource& noise) {
  if (!(grid > 0.0)) return add_gaussian_release(values, sd, grid, noise);
  DPRL_CHECK(noise.secure());
  check_finite_release(values);
  // the top of the sampler's range keeps s itself (the ladder would leave the range)
  const std::uint64_t s0 = secure_gaussian_steps(sd, grid), up = ladder(s0);
  const std::uint64_t s = up < kMaxDiscreteGaussianSigma ? up : s0;
  auto& sampler = samplers_[s];
  if (!sampler) {
    // A of width 2.6 k shared per octave, B about s / k in [32, 64); one table below 2^8
    const int octave = static_cast<int>(std::bit_width(s)) - 1;
    const std::int64_t k =
        octave >= 8 ? std::min<std::int64_t>(std::int64_t{1} << (octave - 5), 1024) : 0;
    sampler = std::make_shared<const TableGaussian>(s, k);
  }
  sampler->release(values, grid, noise);
}

double repeated_release_tv(std::size_t dim, bool secure) {
  return secure ? static_cast<double>(dim) * kTableTvPerValue : 0.0;
}

}  // namespace dprl::privacy
