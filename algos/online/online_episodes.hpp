// algos/online/: q_learning, DQN, PPO, SAC and its update, DDPG, and this shared episode loop;
// docs/architecture.md.
//
// The environment side of a step-driven off-policy loop (DQN, DDPG, SAC): the observation the
// agent acts on, the step's next observation, the return of the episode under way, a moving
// average of finished returns for progress lines, and the episode count. Episode k starts from
// env.reset(derive_seed(seed, Domain::kEnvReset, 0, k)), so a run's episodes depend on its seed only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/env.hpp"

namespace dprl {
class StateIo;
}

namespace dprl::algos {

class OnlineEpisodes {
 public:
  // Resets env for episode 0 and sets episodes to 0; episodes is the algorithm's own counter
  // (its train_episodes()), kept by reference and counted here.
  OnlineEpisodes(Env& env, std::uint64_t seed, std::int64_t& episodes);

  // The observation to act on, and the buffer env.step writes the next one into.
  std::vector<float>& obs() { return obs_; }
  std::vector<float>& next() { return next_; }

  // After env.step(action, next()): adds the reward; at an episode's end counts the episode, folds
  // its return into recent() and resets the env, otherwise next() becomes obs().
  void advance(const StepResult& r);

  // 0.9 recent + 0.1 return over finished episodes (NaN before the first).
  double recent() const { return recent_; }

  // Saves or restores, in this order: the observation, the env, step in [0, total], the episode
  // return, recent() and the episode count.
  void sync(StateIo& io, std::int64_t& step, std::int64_t total);

 private:
  Env& env_;
  std::uint64_t seed_;
  std::int64_t& episodes_;
  std::vector<float> obs_, next_;
  double ep_ret_ = 0, recent_;
};

}  // namespace dprl::algos
