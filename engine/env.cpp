#include "engine/env.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/error.hpp"

namespace dprl {

StepResult Env::step(std::int64_t, std::span<float>) {
  throw InvalidAction(fmt::format("{}: action space is {}; a discrete action was given", spec().id,
                                  spec().action.describe()));
}

StepResult Env::step(std::span<const double>, std::span<float>) {
  throw InvalidAction(fmt::format("{}: action space is {}; a continuous action was given",
                                  spec().id, spec().action.describe()));
}

void Env::action_mask(std::span<std::uint8_t> mask) const {
  std::fill(mask.begin(), mask.end(), std::uint8_t{1});
}

}  // namespace dprl
