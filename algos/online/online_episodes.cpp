#include "algos/online/online_episodes.hpp"

#include <cmath>

#include "engine/rng.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {

OnlineEpisodes::OnlineEpisodes(Env& env, std::uint64_t seed, std::int64_t& episodes)
    : env_(env),
      seed_(seed),
      episodes_(episodes),
      obs_(env.spec().observation.dim()),
      next_(obs_.size()),
      recent_(NAN) {
  episodes_ = 0;
  env_.reset(derive_seed(seed_, Domain::kEnvReset, 0, 0), obs_);
}

void OnlineEpisodes::advance(const StepResult& r) {
  ep_ret_ += r.reward;
  if (r.terminated || r.truncated) {
    ++episodes_;
    recent_ = std::isnan(recent_) ? ep_ret_ : 0.9 * recent_ + 0.1 * ep_ret_;
    ep_ret_ = 0;
    env_.reset(derive_seed(seed_, Domain::kEnvReset, 0, episodes_), obs_);
  } else {
    obs_ = next_;
  }
}

void OnlineEpisodes::sync(StateIo& io, std::int64_t& step, std::int64_t total) {
  io(obs_, true);
  env_.sync_state(io);
  io.bounded(step, std::int64_t{0}, total, "step");
  io(ep_ret_);
  io(recent_);
  io.bounded(episodes_, std::int64_t{0}, std::int64_t{1} << 62, "episodes");
}

}  // namespace dprl::algos
