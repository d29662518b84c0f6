#include "algos/model_based/model_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace dprl::algos::model_based {

UnitSplit split_by_unit(const Dataset& d, double test_fraction, std::uint64_t seed) {
  const std::vector<std::int64_t> users = d.users();
  if (users.size() < 2)
    throw DataError(
        fmt::format("dataset '{}': {} privacy unit(s), need at least 2 for a public "
                    "test split",
                    d.info().dataset_id, users.size()));
  auto n_test = static_cast<std::size_t>(std::llround(test_fraction * users.size()));
  n_test = std::clamp<std::size_t>(n_test, 1, users.size() - 1);
  std::vector<std::size_t> perm(users.size());
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(seed);
  for (std::size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  UnitSplit s;
  for (std::size_t i = 0; i < perm.size(); ++i)
    (i < n_test ? s.test_users : s.train_users).push_back(users[perm[i]]);
  std::sort(s.test_users.begin(), s.test_users.end());
  std::sort(s.train_users.begin(), s.train_users.end());
  return s;
}

TransitionTable make_table(const Dataset& d, std::span<const std::int64_t> users) {
  const std::vector<std::int64_t> sorted(users.begin(), users.end());
  DPRL_CHECK(std::is_sorted(sorted.begin(), sorted.end()));
  const auto by_user = d.episodes_by_user(sorted);
  const int D = static_cast<int>(d.obs_dim()), A = static_cast<int>(d.act_dim());
  std::size_t n = 0;
  for (const auto& eps : by_user)
    for (std::size_t e : eps) n += d.episode_length(e);
  TransitionTable t;
  t.x.resize(D + A, static_cast<Eigen::Index>(n));
  t.y.resize(D + 1, static_cast<Eigen::Index>(n));
  Eigen::Index c = 0;
  for (std::size_t u = 0; u < sorted.size(); ++u) {
    for (std::size_t e : by_user[u]) {
      const std::size_t t0 = d.episode_start(e), len = d.episode_length(e);
      for (std::size_t k = t0; k < t0 + len; ++k, ++c) {
        const auto s = d.obs(k, e), s1 = d.next_obs(k, e), a = d.action(k);
        for (int j = 0; j < D; ++j) {
          t.x(j, c) = s[j];
          t.y(j, c) = s1[j] - s[j];
        }
        for (int j = 0; j < A; ++j) t.x(D + j, c) = a[j];
        t.y(D, c) = d.reward(k);
      }
    }
    t.start.push_back(static_cast<std::size_t>(c));
    t.user.push_back(sorted[u]);
  }
  return t;
}

void input_moments(const TransitionTable& t, std::vector<float>& mean, std::vector<float>& std) {
  const auto rows = t.x.rows(), n = t.x.cols();
  DPRL_CHECK(n > 0);
  mean.assign(rows, 0.0f);
  std.assign(rows, 1.0f);
  for (Eigen::Index r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (Eigen::Index c = 0; c < n; ++c) m += t.x(r, c);
    m /= static_cast<double>(n);
    for (Eigen::Index c = 0; c < n; ++c) v += (t.x(r, c) - m) * (t.x(r, c) - m);
    const double sd = std::sqrt(v / static_cast<double>(n));
    mean[r] = static_cast<float>(m);
    std[r] = sd < 1e-6 ? 1.0f : static_cast<float>(sd);
  }
}

}  // namespace dprl::algos::model_based
