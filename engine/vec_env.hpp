// A vector of N envs of one concrete type, stepped in lock-step with auto-reset.
//
// Observations are one (obs_dim x N) float buffer, column per env (env i at offset i * obs_dim),
// ready for a network's column-per-sample batch. When env i terminates or truncates, its final
// observation is copied to final_obs(i), the episode's return and length are recorded, and the env
// is reset at once (same-step auto-reset) from seed derive_seed(root, kEnvReset, i, k) for its k-th
// episode, so each slot's episodes are a fixed sequence whatever the thread count or N of other
// slots.
//
// E is a concrete `final` env class (steps go through Env::step_as: no virtual dispatch in the
// loop) or dprl::Env itself for envs made by the registry.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "engine/env.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"

namespace dprl {

struct EpisodeRecord {
  int slot;
  double ret;
  std::int64_t length;
  bool terminated;  // false: truncated
};

template <class E>
class VecEnv {
 public:
  VecEnv(std::vector<std::unique_ptr<E>> envs, std::uint64_t root_seed)
      : envs_(std::move(envs)), root_(root_seed) {
    DPRL_CHECK(!envs_.empty());
    dim_ = envs_[0]->spec().observation.dim();
    obs_.resize(dim_ * envs_.size());
    final_obs_.resize(dim_ * envs_.size());
    returns_.assign(envs_.size(), 0.0);
    lengths_.assign(envs_.size(), 0);
    episode_index_.assign(envs_.size(), 0);
    rewards_.assign(envs_.size(), 0.0);
    terminated_.assign(envs_.size(), 0);
    truncated_.assign(envs_.size(), 0);
  }

  std::size_t size() const { return envs_.size(); }
  std::size_t obs_dim() const { return dim_; }
  const EnvSpec& spec() const { return envs_[0]->spec(); }
  E& env(std::size_t i) { return *envs_[i]; }

  // Resets every slot to its first episode.
  void reset() {
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      episode_index_[i] = 0;
      reset_slot(i);
    }
  }

  // Steps every slot with its action (discrete: actions[i]; continuous: actions holds N columns of
  // action_dim values). Results in rewards(), terminated(), truncated(); finished episodes are
  // appended to finished().
  template <class Action>
  void step(std::span<const Action> actions) {
    finished_.clear();
    const std::size_t adim = actions.size() / envs_.size();
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      std::span<float> o(obs_.data() + i * dim_, dim_);
      StepResult r;
      if constexpr (std::is_same_v<E, Env>) {
        if constexpr (std::is_integral_v<Action>) {
          r = envs_[i]->step(static_cast<std::int64_t>(actions[i]), o);
        } else {
          r = envs_[i]->step(std::span<const double>(actions.data() + i * adim, adim), o);
        }
      } else if constexpr (std::is_integral_v<Action>) {
        r = Env::step_as(*envs_[i], static_cast<std::int64_t>(actions[i]), o);
      } else {
        r = Env::step_as(*envs_[i], std::span<const double>(actions.data() + i * adim, adim), o);
      }
      rewards_[i] = r.reward;
      terminated_[i] = r.terminated;
      truncated_[i] = r.truncated;
      returns_[i] += r.reward;
      ++lengths_[i];
      if (r.terminated || r.truncated) {
        std::copy(o.begin(), o.end(), final_obs_.begin() + i * dim_);
        finished_.push_back({static_cast<int>(i), returns_[i], lengths_[i], r.terminated});
        ++episode_index_[i];
        reset_slot(i);
      }
    }
    total_steps_ += static_cast<std::int64_t>(envs_.size());
  }

  std::span<const float> obs() const { return obs_; }
  std::span<const float> final_obs(std::size_t i) const {
    return {final_obs_.data() + i * dim_, dim_};
  }
  std::span<const double> rewards() const { return rewards_; }
  std::span<const std::uint8_t> terminated() const { return terminated_; }
  std::span<const std::uint8_t> truncated() const { return truncated_; }
  const std::vector<EpisodeRecord>& finished() const { return finished_; }
  std::int64_t total_steps() const { return total_steps_; }

  // Saves or loads every slot's env snapshot and the episode bookkeeping (checkpoints). A load
  // refuses (DataError) episode lengths beyond the env's time limit and negative or absurd counters
  // (the loop increments them: a stored 2^63 - 1 would overflow).
  void sync_state(StateIo& io) {
    io.section("vec_env");
    for (auto& e : envs_) e->sync_state(io);
    io(obs_, true);
    io(final_obs_, true);
    io(returns_, true);
    io(rewards_, true);
    io(lengths_, true);
    io(episode_index_, true);
    io(terminated_, true);
    io(truncated_, true);
    // at most one finished episode per slot and step
    std::uint64_t nf = finished_.size();
    io.bounded(nf, std::uint64_t{0}, std::uint64_t{envs_.size()}, "finished episodes");
    if (io.loading()) finished_.assign(nf, EpisodeRecord{});
    for (auto& f : finished_) {
      io.bounded(f.slot, 0, static_cast<int>(envs_.size()) - 1, "finished episode's slot");
      io(f.ret);
      io(f.length);
      io(f.terminated);
    }
    constexpr std::int64_t kMaxCount = std::int64_t{1} << 62;
    io.bounded(total_steps_, std::int64_t{0}, kMaxCount, "total steps");
    if (!io.loading()) return;
    for (std::size_t i = 0; i < envs_.size(); ++i) {
      const int limit = envs_[i]->spec().max_episode_steps;
      if (lengths_[i] < 0 || (limit > 0 && lengths_[i] > limit) ||
          episode_index_[i] > static_cast<std::uint64_t>(kMaxCount))
        throw DataError(
            "checkpoint: section 'vec_env' holds a negative or absurd episode length "
            "or count (a damaged or foreign checkpoint)");
    }
  }

 private:
  void reset_slot(std::size_t i) {
    returns_[i] = 0;
    lengths_[i] = 0;
    envs_[i]->reset(derive_seed(root_, Domain::kEnvReset, i, episode_index_[i]),
                    std::span<float>(obs_.data() + i * dim_, dim_));
  }

  std::vector<std::unique_ptr<E>> envs_;
  std::uint64_t root_;
  std::size_t dim_ = 0;
  std::vector<float> obs_, final_obs_;
  std::vector<double> returns_, rewards_;
  std::vector<std::int64_t> lengths_;
  std::vector<std::uint64_t> episode_index_;
  std::vector<std::uint8_t> terminated_, truncated_;
  std::vector<EpisodeRecord> finished_;
  std::int64_t total_steps_ = 0;
};

}  // namespace dprl
