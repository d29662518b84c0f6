#include "engine/data/dataset_sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl {

void sample_uniform(const Dataset& data, std::size_t batch, Rng& rng,
                    std::vector<std::size_t>& out) {
  const std::size_t n = data.num_transitions();
  if (n == 0) throw DataError("sample_uniform: the dataset has no transitions");
  out.resize(batch);
  for (auto& t : out) t = static_cast<std::size_t>(rng.below(n));
}

UserIndex::UserIndex(const Dataset& data) : users_(data.users()) {
  const auto by_user = data.episodes_by_user(users_);
  offset_.reserve(users_.size() + 1);
  offset_.push_back(0);
  total_.reserve(users_.size());
  ep_start_.reserve(data.num_episodes());
  cum_.reserve(data.num_episodes());
  for (const auto& eps : by_user) {
    std::size_t c = 0;
    for (std::size_t e : eps) {
      ep_start_.push_back(data.episode_start(e));
      c += data.episode_length(e);
      cum_.push_back(c);
    }
    total_.push_back(c);
    offset_.push_back(cum_.size());
  }
}

std::size_t UserIndex::transition(std::size_t u, std::size_t k) const {
  DPRL_DCHECK(k < total_[u]);
  const auto first = cum_.begin() + static_cast<std::ptrdiff_t>(offset_[u]);
  const auto last = cum_.begin() + static_cast<std::ptrdiff_t>(offset_[u + 1]);
  // the first of the user's episodes whose cumulative count exceeds k
  const auto it = std::upper_bound(first, last, k);
  const auto j = static_cast<std::size_t>(it - cum_.begin());
  const std::size_t before = it == first ? 0 : *(it - 1);
  return ep_start_[j] + (k - before);
}

void UserBatch::clear() {
  users.clear();
  offsets.assign(1, 0);
  transitions.clear();
}

PoissonUserSampler::PoissonUserSampler(const UserIndex& index, double rate, std::size_t per_user)
    : index_(index), rate_(rate), per_user_(per_user) {
  if (!(rate >= 0.0 && rate <= 1.0))
    throw ParamError(fmt::format("poisson sampler: rate = {}: must lie in [0, 1]", rate));
  if (per_user < 1) throw ParamError("poisson sampler: per_user must be >= 1");
}

void PoissonUserSampler::sample(Rng& rng, UserBatch& out) const {
  out.clear();
  for (std::size_t u = 0; u < index_.num_users(); ++u) {
    if (!(rng.uniform() < rate_)) continue;
    const std::size_t count = index_.num_transitions(u);
    const std::size_t first = out.transitions.size();
    if (per_user_ <= count) {
      // Floyd's algorithm: per_user distinct positions, uniformly among the subsets
      for (std::size_t j = count - per_user_; j < count; ++j) {
        std::size_t k = static_cast<std::size_t>(rng.below(j + 1));
        const std::size_t cand = index_.transition(u, k);
        const auto b = out.transitions.begin() + static_cast<std::ptrdiff_t>(first);
        if (std::find(b, out.transitions.end(), cand) != out.transitions.end())
          k = j;  // already taken: take position j, new by construction
        out.transitions.push_back(index_.transition(u, k));
      }
    } else {
      for (std::size_t j = 0; j < per_user_; ++j)
        out.transitions.push_back(index_.transition(u, rng.below(count)));
    }
    out.users.push_back(u);
    out.offsets.push_back(out.transitions.size());
  }
}

ShuffleInterleaveSampler::ShuffleInterleaveSampler(const UserIndex& index, std::size_t batch)
    : index_(index), batch_(batch) {
  if (batch < 1) throw ParamError("shuffle-interleave sampler: batch must be >= 1");
  offset_.push_back(0);
  for (std::size_t u = 0; u < index.num_users(); ++u)
    offset_.push_back(offset_.back() + index.num_transitions(u));
  perm_.resize(offset_.back());
  taken_.resize(index.num_users());
  begin_epoch();
}

void ShuffleInterleaveSampler::begin_epoch() {
  for (std::size_t u = 0; u < index_.num_users(); ++u)
    for (std::size_t k = offset_[u]; k < offset_[u + 1]; ++k) perm_[k] = k - offset_[u];
  std::fill(taken_.begin(), taken_.end(), 0);
  remaining_ = perm_.size();
}

bool ShuffleInterleaveSampler::next(Rng& rng, std::vector<std::size_t>& out) {
  out.clear();
  if (remaining_ == 0) return false;
  // weighted choice of distinct users by remaining count (Efraimidis and Spirakis, 2006): the
  // batch_ largest keys log(u) / w
  keys_.clear();
  for (std::size_t u = 0; u < index_.num_users(); ++u) {
    const std::size_t left = offset_[u + 1] - offset_[u] - taken_[u];
    if (left == 0) continue;
    keys_.emplace_back(std::log(rng.uniform_open()) / static_cast<double>(left), u);
  }
  const std::size_t b = std::min(batch_, keys_.size());
  std::nth_element(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(b - 1), keys_.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  // users in ascending order: the batch does not depend on nth_element's tie order
  std::sort(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(b),
            [](const auto& x, const auto& y) { return x.second < y.second; });
  for (std::size_t i = 0; i < b; ++i) {
    const std::size_t u = keys_[i].second;
    // lazy Fisher-Yates over the user's positions
    const std::size_t lo = offset_[u] + taken_[u], n = offset_[u + 1] - lo;
    const std::size_t j = lo + static_cast<std::size_t>(rng.below(n));
    std::swap(perm_[lo], perm_[j]);
    out.push_back(index_.transition(u, perm_[lo]));
    ++taken_[u];
  }
  remaining_ -= b;
  return true;
}

namespace {

// k indices of 0..n-1 drawn uniformly without replacement (partial Fisher-Yates), sorted.
std::vector<std::size_t> draw(std::size_t n, std::size_t k, Rng& rng) {
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  for (std::size_t i = 0; i < k; ++i)
    std::swap(idx[i], idx[i + static_cast<std::size_t>(rng.below(n - i))]);
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::size_t test_count(double fraction, std::size_t n, const char* what) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw ParamError(fmt::format("{}: test_fraction = {}: must lie in [0, 1]", what, fraction));
  return static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n)));
}

}  // namespace

Split split_by_episode(const Dataset& data, double test_fraction, Rng& rng) {
  const std::size_t n = data.num_episodes();
  const auto test = draw(n, test_count(test_fraction, n, "split_by_episode"), rng);
  Split s;
  s.test = test;
  for (std::size_t e = 0, j = 0; e < n; ++e) {
    if (j < test.size() && test[j] == e)
      ++j;
    else
      s.train.push_back(e);
  }
  return s;
}

Split split_by_user(const Dataset& data, double test_fraction, Rng& rng) {
  const auto users = data.users();
  const auto picked =
      draw(users.size(), test_count(test_fraction, users.size(), "split_by_user"), rng);
  std::vector<bool> is_test(users.size(), false);
  for (std::size_t u : picked) is_test[u] = true;
  Split s;
  for (std::size_t e = 0; e < data.num_episodes(); ++e) {
    const auto it = std::lower_bound(users.begin(), users.end(), data.user_id(e));
    (is_test[static_cast<std::size_t>(it - users.begin())] ? s.test : s.train).push_back(e);
  }
  return s;
}

}  // namespace dprl
