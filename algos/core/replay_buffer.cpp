#include "algos/core/replay_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/limits.hpp"

namespace dprl::algos {

namespace {

// refuses a buffer larger than the machine before any of it is allocated
std::size_t checked_capacity(std::size_t capacity, int obs_dim, int act_dim) {
  const double floats =
      static_cast<double>(capacity) * (2.0 * obs_dim + act_dim + 2);  // obs, next, act, rew, term
  check_memory(
      fmt::format("buffer_size = {}: a replay buffer of {} transitions", capacity, capacity),
      floats * sizeof(float));
  return capacity;
}

}  // namespace

ReplayBuffer::ReplayBuffer(std::size_t capacity, int obs_dim, int act_dim)
    : capacity_(checked_capacity(capacity, obs_dim, act_dim)),
      obs_dim_(obs_dim),
      act_dim_(act_dim),
      obs_(capacity * obs_dim),
      next_obs_(capacity * obs_dim),
      act_(capacity * act_dim),
      rew_(capacity),
      term_(capacity) {
  DPRL_CHECK(capacity > 0);
}

void ReplayBuffer::add(std::span<const float> obs, std::span<const float> action, double reward,
                       std::span<const float> next_obs, bool terminated) {
  std::copy(obs.begin(), obs.end(), obs_.begin() + pos_ * obs_dim_);
  std::copy(next_obs.begin(), next_obs.end(), next_obs_.begin() + pos_ * obs_dim_);
  std::copy(action.begin(), action.end(), act_.begin() + pos_ * act_dim_);
  rew_[pos_] = static_cast<float>(reward);
  term_[pos_] = terminated ? 1.0f : 0.0f;
  pos_ = (pos_ + 1) % capacity_;
  size_ = std::min(size_ + 1, capacity_);
}

void ReplayBuffer::sync_state(StateIo& io, int discrete_actions) {
  io.section("replay_buffer");
  std::uint64_t cap = capacity_, pos = pos_, size = size_;
  io(cap);
  io(pos);
  io(size);
  if (io.loading()) {
    if (cap != capacity_ || size > capacity_ || pos >= capacity_)
      throw DataError(
          fmt::format("replay buffer of capacity {} in a checkpoint, {} expected", cap, capacity_));
    pos_ = pos;
    size_ = size;
  }
  const auto part = [&](std::vector<float>& v, std::size_t width) {
    io.raw(v.data(), size_ * width * sizeof(float));
  };
  part(obs_, obs_dim_);
  part(next_obs_, obs_dim_);
  part(act_, act_dim_);
  part(rew_, 1);
  part(term_, 1);
  if (io.loading() && discrete_actions > 0)
    for (std::size_t i = 0; i < size_ * act_dim_; ++i) {
      const float a = act_[i];
      if (!(a >= 0 && a < static_cast<float>(discrete_actions)) || a != std::floor(a))
        throw DataError(
            fmt::format("replay buffer in a checkpoint holds action {} (actions are 0 "
                        "to {})",
                        a, discrete_actions - 1));
    }
}

void ReplayBuffer::sample(int batch, Rng& rng, ReplayBatch& out) const {
  DPRL_CHECK(size_ > 0);
  out.obs.resize(obs_dim_, batch);
  out.next_obs.resize(obs_dim_, batch);
  out.actions.resize(act_dim_, batch);
  out.rewards.resize(batch);
  out.terminated.resize(batch);
  for (int i = 0; i < batch; ++i) {
    const std::size_t k = rng.below(size_);
    std::copy_n(obs_.begin() + k * obs_dim_, obs_dim_, out.obs.col(i).data());
    std::copy_n(next_obs_.begin() + k * obs_dim_, obs_dim_, out.next_obs.col(i).data());
    std::copy_n(act_.begin() + k * act_dim_, act_dim_, out.actions.col(i).data());
    out.rewards[i] = rew_[k];
    out.terminated[i] = term_[k];
  }
}

}  // namespace dprl::algos
