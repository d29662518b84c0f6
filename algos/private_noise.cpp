#include "algos/private_noise.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::algos {

std::uint64_t privacy_stream_id(std::initializer_list<double> params) {
  std::uint64_t h = 0x5d1e6a3b9c0f2e47ULL;
  for (double p : params) h = mix64(h ^ std::bit_cast<std::uint64_t>(p));
  return h;
}

std::unique_ptr<privacy::NoiseSource> make_private_noise(const std::string& mode,
                                                         std::uint64_t seed, std::uint64_t stream,
                                                         std::initializer_list<double> params,
                                                         const std::string& learner) {
  if (mode == "os-entropy") return privacy::make_os_entropy_noise(true);
  if (mode != "seeded")
    throw ParamError(
        fmt::format("{}.noise = '{}': must be one of os-entropy, seeded", learner, mode));
  // once per process and learner: a sweep of seeded runs says it once
  static std::mutex mu;
  static std::set<std::string> warned;
  const std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(learner).second) {
    std::fflush(stdout);
    fmt::print(stderr,
               "dprl: warning: {}: noise: seeded is reproducible from the config, so the run is "
               "not formally private (use noise: os-entropy for real data)\n",
               learner);
  }
  return privacy::make_seeded_noise(seed, stream, privacy_stream_id(params));
}

double release_grid(double sd) {
  const double g = privacy::secure_grid(sd);
  DPRL_CHECK(g <= sd * 0x1.0p-12);
  return g;
}

void add_gaussian_release(std::span<double> x, double sd, privacy::NoiseSource& noise) {
  if (!noise.secure()) {
    noise.add_gaussian(x, sd);
    return;
  }
  const double g = release_grid(sd);
  for (double& v : x) {
    if (!std::isfinite(v)) throw ParamError("private release: input value is not finite");
    v = std::nearbyint(v / g) * g + noise.gaussian(sd);
  }
}

double snapped_sensitivity(double delta_l2, double coords, double sd, bool secure) {
  return secure ? delta_l2 + std::sqrt(coords) * release_grid(sd) : delta_l2;
}

double secure_noise_scale(double z, double delta_l2, double coords, bool secure) {
  if (!secure) return z * delta_l2;
  // g(sd) <= sd 2^-12 and is non-decreasing in sd, so sd_{k+1} = z (Delta + sqrt(n) g(sd_k))
  // increases from z Delta to the fixed point, which is below z Delta / (1 - z sqrt(n) 2^-12)
  const double r = z * std::sqrt(coords) * 0x1.0p-12;
  if (!(r < 0.5))
    throw ParamError(
        fmt::format("secure noise: noise multiplier {} over {} coordinates makes the snapping grid "
                    "(sd 2^-12) too coarse to cover (z sqrt(n) 2^-12 = {} must be < 0.5)",
                    z, coords, r));
  double sd = z * delta_l2;
  for (int it = 0; it < 200; ++it) {
    const double next = z * snapped_sensitivity(delta_l2, coords, sd, true);
    if (next <= sd) return sd;
    sd = next;
  }
  return z * delta_l2 / (1.0 - r);  // satisfies the inequality by the bound above
}

}  // namespace dprl::algos
