#include "envs/chain_mdp.hpp"

#include "engine/error.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {

ChainMdp::ChainMdp(const Params& p) : p_(p) {
  validate_params(p_, "chain_mdp");
  const int n = p_.n;
  spec_.id = "chain_mdp";
  spec_.observation = Space::discrete(n);
  spec_.action = Space::discrete(2);
  spec_.max_episode_steps = p_.max_episode_steps;

  // the explicit model
  model_.num_states = n;
  model_.num_actions = 2;
  model_.initial.assign(n, 0.0);
  model_.initial[0] = 1.0;
  model_.absorbing.assign(n, false);
  model_.absorbing[n - 1] = true;
  model_.offset.reserve(static_cast<std::size_t>(n) * 2 + 1);
  for (int s = 0; s < n; ++s) {
    const auto s32 = static_cast<std::int32_t>(s);
    for (int a = 0; a < 2; ++a) {
      model_.offset.push_back(model_.outcomes.size());
      if (s == n - 1) {
        model_.outcomes.push_back({s32, 1.0, 0.0, true});
      } else if (a == 0) {
        model_.outcomes.push_back({s32, 1.0, p_.step_reward, false});
      } else {
        const bool goal = s + 1 == n - 1;
        if (p_.p > 0)
          model_.outcomes.push_back({s32 + 1, p_.p, goal ? p_.goal_reward : p_.step_reward, goal});
        if (p_.p < 1) model_.outcomes.push_back({s32, 1.0 - p_.p, p_.step_reward, false});
      }
    }
  }
  model_.offset.push_back(model_.outcomes.size());
}

void ChainMdp::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  s_ = 0;
  obs[0] = 0.0f;
}

StepResult ChainMdp::do_step(std::int64_t action, std::span<float> obs) {
  if (action != 0 && action != 1) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  StepResult r;
  const int end = p_.n - 1;
  if (s_ == end) {
    // absorbing: the episode has already ended
    r.reward = 0.0;
    r.terminated = true;
  } else {
    if (action == 1 && rng_.uniform() < p_.p) ++s_;
    r.terminated = s_ == end;
    r.reward = r.terminated ? p_.goal_reward : p_.step_reward;
  }
  obs[0] = static_cast<float>(s_);
  return r;
}

void ChainMdp::do_set_state(std::span<const double> s) {
  s_ = static_cast<int>(check_index_state(spec_, s, p_.n));
}

void ChainMdp::do_sync_state(StateIo& io) {
  io.section("chain_mdp");
  io.bounded(s_, 0, p_.n - 1, "state");
  io(rng_);
}

}  // namespace dprl::envs
