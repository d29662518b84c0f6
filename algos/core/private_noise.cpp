#include "algos/core/private_noise.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdio>
#include <mutex>
#include <set>

#include "engine/error.hpp"
#include "engine/progress.hpp"
#include "engine/rng.hpp"

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
    note(fmt::format(
        "dprl: warning: {}: noise: seeded is reproducible from the config, so the run is not "
        "formally private (use noise: os-entropy for real data)",
        learner));
  }
  return privacy::make_seeded_noise(seed, stream, privacy_stream_id(params));
}

}  // namespace dprl::algos
