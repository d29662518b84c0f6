#include "algos/offline/offline_batch.hpp"

#include <algorithm>

#include "engine/error.hpp"

namespace dprl::algos {

BatchGatherer::BatchGatherer(const Dataset& ds) : ds_(ds) {
  DPRL_CHECK(ds.info().action_space.is_discrete());
  episode_.resize(ds.num_transitions());
  for (std::size_t e = 0; e < ds.num_episodes(); ++e)
    std::fill_n(episode_.begin() + static_cast<std::ptrdiff_t>(ds.episode_start(e)),
                ds.episode_length(e), static_cast<std::uint32_t>(e));
}

void BatchGatherer::gather(std::span<const std::size_t> transitions, OfflineBatch& b,
                           int users) const {
  const int n = static_cast<int>(transitions.size());
  const auto d = static_cast<Eigen::Index>(ds_.obs_dim());
  if (b.obs.rows() != d || b.obs.cols() != n) {
    b.obs.resize(d, n);
    b.next_obs.resize(d, n);
  }
  b.actions.resize(n);
  b.rewards.resize(n);
  b.not_done.resize(n);
  b.n = n;
  b.users = users < 0 ? n : users;
  for (int i = 0; i < n; ++i) {
    const std::size_t t = transitions[i], e = episode_[t];
    const auto s = ds_.obs(t, e), s2 = ds_.next_obs(t, e);
    std::copy(s.begin(), s.end(), b.obs.col(i).data());
    std::copy(s2.begin(), s2.end(), b.next_obs.col(i).data());
    b.actions[i] = static_cast<int>(ds_.discrete_action(t));
    b.rewards[i] = ds_.reward(t);
    b.not_done[i] = ds_.terminated(t) ? 0.0f : 1.0f;
  }
}

}  // namespace dprl::algos
