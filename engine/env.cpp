#include "engine/env.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/error.hpp"

namespace dprl {

StepResult Env::do_step(std::int64_t, std::span<float>) {
  throw InvalidAction(fmt::format("{}: action space is {}; a discrete action was given", spec().id,
                                  spec().action.describe()));
}

StepResult Env::do_step(std::span<const double>, std::span<float>) {
  throw InvalidAction(fmt::format("{}: action space is {}; a continuous action was given",
                                  spec().id, spec().action.describe()));
}

void Env::action_mask(std::span<std::uint8_t> mask) const {
  std::fill(mask.begin(), mask.end(), std::uint8_t{1});
}

std::string Env::snapshot() const {
  StateIo io;
  // a saver only reads the members it is given
  const_cast<Env*>(this)->sync_state(io);
  return io.take();
}

void Env::restore(std::string_view bytes) {
  StateIo io(bytes, fmt::format("snapshot of env '{}'", spec().id));
  sync_state(io);
  io.expect_end();
}

void Env::sync_state(StateIo& io) {
  do_sync_state(io);
  io.bounded(elapsed_, 0, spec_.max_episode_steps, "elapsed steps");
}

void Env::throw_bad_obs_size(std::size_t given) const {
  throw Error(fmt::format("{}: the observation buffer holds {} floats; the observation space {} "
                          "needs {}",
                          spec_.id, given, spec_.observation.describe(),
                          spec_.observation.dim()));
}

void Env::do_sync_state(StateIo&) {
  throw Error(
      fmt::format("env '{}' cannot be snapshotted mid-episode, so runs on it write no "
                  "checkpoints",
                  spec().id));
}

}  // namespace dprl
