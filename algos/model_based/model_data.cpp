#include "algos/model_based/model_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace dprl::algos::model_based {

bool in_test_split(std::int64_t unit_id, double test_fraction, std::uint64_t seed) {
  // 53 bits of the keyed hash of the unit's id: a uniform in [0, 1) for each unit, independent
  // of every other unit (derive_seed's mix is the project's keyed hash)
  const std::uint64_t h =
      derive_seed(seed, Domain::kDataset, 0x5e1ec7, static_cast<std::uint64_t>(unit_id));
  return static_cast<double>(h >> 11) * 0x1.0p-53 < test_fraction;
}

UnitSplit split_units(std::span<const std::int64_t> users, double test_fraction,
                      std::uint64_t seed) {
  UnitSplit s;
  for (const std::int64_t u : users)
    (in_test_split(u, test_fraction, seed) ? s.test_users : s.train_users).push_back(u);
  std::sort(s.test_users.begin(), s.test_users.end());
  std::sort(s.train_users.begin(), s.train_users.end());
  return s;
}

UnitSplit split_by_unit(const Dataset& d, double test_fraction, std::uint64_t seed) {
  const std::vector<std::int64_t> users = d.users();
  UnitSplit s = split_units(users, test_fraction, seed);
  // only the test units decide this error, and they are not protected (the record says so)
  if (s.test_users.empty())
    throw DataError(fmt::format(
        "dataset '{}': none of its {} privacy units falls in the test split at test_fraction "
        "{} (each unit is drawn with that probability); raise primorl.test_fraction",
        d.info().dataset_id, users.size(), test_fraction));
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
