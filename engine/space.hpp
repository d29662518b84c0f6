// Observation and action spaces (Gymnasium's Discrete and Box) and the env specification.
//
// sample(rng) draws an element the way Gymnasium 1.x's Space.sample does (gymnasium/spaces/box.py,
// discrete.py): Discrete(n) uniform over {0..n-1}; each Box component independently, by its
// bounds: [low, high) uniform when both are finite, low + Exp(1) when only low is, high - Exp(1)
// when only high is, N(0, 1) when neither is. The draws come from the Rng given (engine/rng.hpp),
// so a seeded Rng gives the same elements on every platform.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dprl {

class Rng;

struct Space {
  enum class Kind { kDiscrete, kBox };
  Kind kind = Kind::kDiscrete;
  std::int64_t n = 0;       // Discrete: number of values {0..n-1}
  std::vector<double> low;  // Box: per-component bounds (may be +-inf); size = dim
  std::vector<double> high;

  static Space discrete(std::int64_t n);
  static Space box(std::vector<double> low, std::vector<double> high);
  // Box with every component in [lo, hi].
  static Space box(std::size_t dim, double lo, double hi);

  bool is_discrete() const { return kind == Kind::kDiscrete; }
  // Components of a flat vector holding one element (1 for Discrete).
  std::size_t dim() const { return is_discrete() ? 1 : low.size(); }
  // Whether a flat float32 observation lies in the space (bounds checked in float32, as Gymnasium
  // does for float32 Boxes).
  bool contains(std::span<const float> x) const;
  bool contains(std::span<const double> x) const;
  bool contains(std::int64_t a) const { return is_discrete() && a >= 0 && a < n; }
  std::string describe() const;  // "Discrete(2)", "Box(-inf..inf, (4,))"

  // A random element (see above): dim() values (Discrete: the index as a double).
  std::vector<double> sample(Rng& rng) const;
  // The same into out, which must hold dim() values (no allocation).
  void sample(Rng& rng, std::span<double> out) const;
  // A random index of a Discrete space (DPRL_CHECK: the space is Discrete).
  std::int64_t sample_index(Rng& rng) const;
};

struct EnvSpec {
  std::string id;     // registry name
  Space observation;  // observations are float32 (Discrete: the index as a float)
  Space action;
  int max_episode_steps = 0;  // truncation limit
  double reward_threshold = 0;
  bool has_reward_threshold = false;
  bool has_action_mask = false;
};

}  // namespace dprl
