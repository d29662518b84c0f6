// Resource limits: inputs that would allocate absurd memory (a replay buffer of 10^12
// transitions, networks of 10^9 hidden units, a dataset header claiming 10^15 rows) are refused up
// front with a one-line ParamError naming the culprit, instead of an out-of-memory kill or a
// std::bad_alloc far from the input that caused it.
//
// | limit                    | value              | where                                     |
// |--------------------------|--------------------|-------------------------------------------|
// | one allocation           | physical memory    | check_memory (replay buffers, rollouts)   |
// | weights between hidden   | 1e8 (400 MB/copy)  | hidden widths of every learner's networks |
// | PPO rollout steps        | 1e7                | num_envs * num_steps                      |
#pragma once

#include <cstdint>
#include <string_view>

namespace dprl {

// Weights between consecutive hidden layers of one network (sum of h_i * h_{i+1}); a learner
// keeps several copies (targets, Adam moments, gradients), so 1e8 is already gigabytes.
inline constexpr double kMaxHiddenWeights = 1e8;
// Steps of one on-policy rollout (PPO num_envs * num_steps).
inline constexpr double kMaxRolloutSteps = 1e7;

// Physical memory of this machine in bytes (sysconf); 0 when it cannot be told.
std::uint64_t physical_memory_bytes();

// Throws ParamError "<what>: needs <X> GB, more than this machine's <Y> GB of memory" when bytes
// exceeds the physical memory (or is not finite). what names the parameter responsible.
void check_memory(std::string_view what, double bytes);

}  // namespace dprl
