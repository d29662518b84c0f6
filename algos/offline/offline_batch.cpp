#include "algos/offline/offline_batch.hpp"

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl::algos {

namespace {

// Uniform integer in [0, n) from 64-bit words (Lemire's multiply-shift with rejection: unbiased).
std::uint64_t below(privacy::NoiseSource& src, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const unsigned __int128 m = static_cast<unsigned __int128>(src.next_u64()) * n;
    if (static_cast<std::uint64_t>(m) >= threshold) return static_cast<std::uint64_t>(m >> 64);
  }
}

}  // namespace

TransitionSampler::TransitionSampler(const Dataset& ds) : ds_(ds) {
  DPRL_CHECK(ds.info().action_space.is_discrete());
  DPRL_CHECK(ds.num_transitions() > 0);
  episode_.resize(ds.num_transitions());
  for (std::size_t e = 0; e < ds.num_episodes(); ++e)
    std::fill_n(episode_.begin() + static_cast<std::ptrdiff_t>(ds.episode_start(e)),
                ds.episode_length(e), static_cast<std::uint32_t>(e));
  const auto users = ds.users();
  const auto by_user = ds.episodes_by_user(users);
  user_episodes_.resize(users.size());
  user_cum_.resize(users.size());
  for (std::size_t u = 0; u < users.size(); ++u) {
    std::uint64_t cum = 0;
    for (std::size_t e : by_user[u]) {
      user_episodes_[u].push_back(static_cast<std::uint32_t>(e));
      cum += ds.episode_length(e);
      user_cum_[u].push_back(cum);
    }
  }
}

void TransitionSampler::resize(int n, OfflineBatch& b) const {
  const auto d = static_cast<Eigen::Index>(ds_.obs_dim());
  if (b.obs.rows() != d || b.obs.cols() != n) {
    b.obs.resize(d, n);
    b.next_obs.resize(d, n);
  }
  b.actions.resize(n);
  b.rewards.resize(n);
  b.not_done.resize(n);
  b.n = n;
}

void TransitionSampler::put(std::size_t t, std::size_t e, int col, OfflineBatch& b) const {
  const auto s = ds_.obs(t, e), s2 = ds_.next_obs(t, e);
  std::copy(s.begin(), s.end(), b.obs.col(col).data());
  std::copy(s2.begin(), s2.end(), b.next_obs.col(col).data());
  b.actions[col] = static_cast<int>(ds_.discrete_action(t));
  b.rewards[col] = ds_.reward(t);
  b.not_done[col] = ds_.terminated(t) ? 0.0f : 1.0f;
}

void TransitionSampler::uniform(int n, Rng& rng, OfflineBatch& b) const {
  resize(n, b);
  b.users = n;
  const std::uint64_t total = ds_.num_transitions();
  for (int i = 0; i < n; ++i) {
    const std::size_t t = rng.below(total);
    put(t, episode_[t], i, b);
  }
}

void TransitionSampler::poisson_users(double q, int k, privacy::NoiseSource& src,
                                      OfflineBatch& b) const {
  DPRL_CHECK(q > 0.0 && q <= 1.0 && k >= 1);
  thread_local std::vector<std::uint32_t> chosen;
  chosen.clear();
  const auto m = static_cast<std::int64_t>(user_episodes_.size());
  if (q >= 1.0) {
    for (std::int64_t u = 0; u < m; ++u) chosen.push_back(static_cast<std::uint32_t>(u));
  } else {
    const double log1mq = std::log1p(-q);
    std::int64_t u = -1;
    for (;;) {
      const double gap = std::floor(std::log(src.uniform_open()) / log1mq);
      if (!(gap < static_cast<double>(m))) break;  // also stops on +inf
      u += static_cast<std::int64_t>(gap) + 1;
      if (u >= m) break;
      chosen.push_back(static_cast<std::uint32_t>(u));
    }
  }
  const int users = static_cast<int>(chosen.size());
  resize(users * k, b);
  b.users = users;
  for (int i = 0; i < users; ++i) {
    const auto& cum = user_cum_[chosen[i]];
    for (int j = 0; j < k; ++j) {
      const std::uint64_t r = below(src, cum.back());
      const auto it = std::upper_bound(cum.begin(), cum.end(), r);
      const std::size_t idx = static_cast<std::size_t>(it - cum.begin());
      const std::size_t e = user_episodes_[chosen[i]][idx];
      const std::uint64_t before = idx == 0 ? 0 : cum[idx - 1];
      put(ds_.episode_start(e) + (r - before), e, i * k + j, b);
    }
  }
}

}  // namespace dprl::algos
