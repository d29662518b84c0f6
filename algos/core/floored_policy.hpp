// A policy whose every discrete action has probability at least a floor P (paper 000, App. B.1).
//
// The wrapped policy chooses a* (its greedy or sampled action; ties are its own business, the
// built-in argmax takes the lowest index). The floored policy plays a* with probability
// 1 - (|A| - 1) P and each other action with probability P. One uniform u per step decides:
// j = floor(u / P) < |A| - 1 picks the j-th action other than a*, else a*. P = 0 plays a* always.
//
// Parameters:
//   floor  P in [0, 1/|A|)   (paper 000 uses 0.02)
// begin_episode(seed) seeds the floor's stream with derive_seed(seed, Domain::kDataset, 1) and
// the wrapped policy with derive_seed(seed, Domain::kDataset, 2).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/policy.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

// The floored action for base choice a_star among n actions and a uniform u in [0, 1).
std::int64_t floored_action(std::int64_t a_star, std::int64_t n, double floor, double u);
// Throws ParamError (naming "action_floor") unless 0 <= floor < 1/n.
void check_action_floor(double floor, std::int64_t n);

class FlooredPolicy final : public Policy {
 public:
  // Throws ParamError unless 0 <= floor < 1/num_actions.
  FlooredPolicy(std::unique_ptr<Policy> base, std::int64_t num_actions, double floor);

  std::string name() const override { return base_->name() + "+floor"; }
  void begin_episode(std::uint64_t seed) override;
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;

  // Probability of playing a when the base policy chose a_star.
  double probability(std::int64_t a_star, std::int64_t a) const {
    return a == a_star ? 1.0 - static_cast<double>(n_ - 1) * floor_ : floor_;
  }
  double floor() const { return floor_; }
  Policy& base() { return *base_; }

 private:
  std::unique_ptr<Policy> base_;
  std::int64_t n_;
  double floor_;
  Rng rng_;
};

}  // namespace dprl::algos
