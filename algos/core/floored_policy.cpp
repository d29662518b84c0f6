#include "algos/core/floored_policy.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"

namespace dprl::algos {

void check_action_floor(double floor, std::int64_t n) {
  if (n < 1) throw ParamError("action_floor: needs a Discrete action space");
  if (!(floor >= 0.0) || !(floor * static_cast<double>(n) < 1.0))
    throw ParamError(
        fmt::format("action_floor = {}: must lie in [0, 1/|A|) = [0, {:.6g}) for {} "
                    "actions",
                    floor, 1.0 / static_cast<double>(n), n));
}

std::int64_t floored_action(std::int64_t a_star, std::int64_t n, double floor, double u) {
  if (floor <= 0.0) return a_star;
  const double j = std::floor(u / floor);
  if (j >= static_cast<double>(n - 1)) return a_star;
  const auto k = static_cast<std::int64_t>(j);  // the k-th action other than a_star
  return k < a_star ? k : k + 1;
}

FlooredPolicy::FlooredPolicy(std::unique_ptr<Policy> base, std::int64_t num_actions, double floor)
    : base_(std::move(base)), n_(num_actions), floor_(floor) {
  DPRL_CHECK(base_ != nullptr);
  check_action_floor(floor, num_actions);
}

void FlooredPolicy::begin_episode(std::uint64_t seed) {
  rng_.seed_with(derive_seed(seed, Domain::kDataset, 1));
  base_->begin_episode(derive_seed(seed, Domain::kDataset, 2));
}

std::int64_t FlooredPolicy::act_discrete(std::span<const float> obs,
                                         std::span<const std::uint8_t> mask) {
  const std::int64_t a_star = base_->act_discrete(obs, mask);
  DPRL_CHECK(a_star >= 0 && a_star < n_);
  return floored_action(a_star, n_, floor_, rng_.uniform());
}

}  // namespace dprl::algos
