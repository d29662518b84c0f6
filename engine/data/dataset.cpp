#include "engine/data/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"

namespace dprl {

Dataset::Dataset(DatasetInfo info) : info_(std::move(info)) {
  if (info_.observation_space.dim() == 0)
    throw DataError("dataset: the observation space has no components");
  if (info_.action_space.dim() == 0) throw DataError("dataset: the action space has no components");
}

namespace {

bool same_space(const Space& a, const Space& b) {
  if (a.kind != b.kind) return false;
  if (a.is_discrete()) return a.n == b.n;
  if (a.low.size() != b.low.size()) return false;
  for (std::size_t i = 0; i < a.low.size(); ++i)
    if (static_cast<float>(a.low[i]) != static_cast<float>(b.low[i]) ||
        static_cast<float>(a.high[i]) != static_cast<float>(b.high[i]))
      return false;
  return true;
}

}  // namespace

void check_spaces(const DatasetInfo& info, const EnvSpec& spec, const std::string& where) {
  if (!same_space(info.observation_space, spec.observation))
    throw DataError(fmt::format("{}: observation_space: the dataset has {} but env '{}' has {}",
                                where, info.observation_space.describe(), spec.id,
                                spec.observation.describe()));
  if (!same_space(info.action_space, spec.action))
    throw DataError(fmt::format("{}: action_space: the dataset has {} but env '{}' has {}", where,
                                info.action_space.describe(), spec.id, spec.action.describe()));
}

void adopt_env_spaces(DatasetInfo& info, const EnvSpec& spec) {
  const auto adopt = [](Space& have, const Space& env) {
    if (have.is_discrete()) {
      if (env.is_discrete() && have.n <= env.n) have = env;
      return;
    }
    if (env.is_discrete() || have.dim() != env.dim()) return;
    for (std::size_t i = 0; i < have.low.size(); ++i)
      if (!std::isinf(have.low[i]) || !std::isinf(have.high[i])) return;
    have = env;
  };
  adopt(info.observation_space, spec.observation);
  adopt(info.action_space, spec.action);
}

Dataset Dataset::from_arrays(DatasetInfo info, DatasetArrays a, const std::string& where) {
  Dataset d(std::move(info));
  const auto bad = [&](const char* field, std::size_t got, std::size_t want) {
    return DataError(fmt::format("{}: {}: {} values, expected {}", where, field, got, want));
  };
  const std::size_t e = a.user_ids.size();
  if (a.episode_starts.size() != e + 1 || a.episode_starts.front() != 0)
    throw bad("episode offsets", a.episode_starts.size(), e + 1);
  for (std::size_t i = 0; i < e; ++i)
    if (a.episode_starts[i + 1] <= a.episode_starts[i])
      throw DataError(fmt::format("{}: episode {} has no steps", where, i));
  const std::size_t n = a.episode_starts.back();
  if (a.seeds.size() != e) throw bad("seeds", a.seeds.size(), e);
  if (a.observations.size() != (n + e) * d.obs_dim())
    throw bad("observations", a.observations.size(), (n + e) * d.obs_dim());
  if (a.actions.size() != n * d.act_dim()) throw bad("actions", a.actions.size(), n * d.act_dim());
  if (a.rewards.size() != n) throw bad("rewards", a.rewards.size(), n);
  if (a.terminations.size() != n) throw bad("terminations", a.terminations.size(), n);
  if (a.truncations.size() != n) throw bad("truncations", a.truncations.size(), n);
  d.observations_ = std::move(a.observations);
  d.actions_ = std::move(a.actions);
  d.rewards_ = std::move(a.rewards);
  d.terminations_ = std::move(a.terminations);
  d.truncations_ = std::move(a.truncations);
  d.start_ = std::move(a.episode_starts);
  d.user_id_ = std::move(a.user_ids);
  d.seed_ = std::move(a.seeds);
  return d;
}

void Dataset::reserve(std::size_t episodes, std::size_t transitions) {
  observations_.reserve((transitions + episodes) * obs_dim());
  actions_.reserve(transitions * act_dim());
  rewards_.reserve(transitions);
  terminations_.reserve(transitions);
  truncations_.reserve(transitions);
  start_.reserve(episodes + 1);
  user_id_.reserve(episodes);
  seed_.reserve(episodes);
}

void Dataset::add_episode(std::span<const float> observations, std::span<const float> actions,
                          std::span<const float> rewards,
                          std::span<const std::uint8_t> terminations,
                          std::span<const std::uint8_t> truncations, std::int64_t user_id,
                          std::int64_t seed) {
  const std::size_t t = rewards.size();
  const auto bad = [&](const char* field, std::size_t got, std::size_t want) {
    return DataError(fmt::format("dataset: episode {}: '{}' has {} values, expected {}",
                                 num_episodes(), field, got, want));
  };
  if (t == 0) throw DataError(fmt::format("dataset: episode {} has no steps", num_episodes()));
  if (observations.size() != (t + 1) * obs_dim())
    throw bad("observations", observations.size(), (t + 1) * obs_dim());
  if (actions.size() != t * act_dim()) throw bad("actions", actions.size(), t * act_dim());
  if (terminations.size() != t) throw bad("terminations", terminations.size(), t);
  if (truncations.size() != t) throw bad("truncations", truncations.size(), t);
  observations_.insert(observations_.end(), observations.begin(), observations.end());
  actions_.insert(actions_.end(), actions.begin(), actions.end());
  rewards_.insert(rewards_.end(), rewards.begin(), rewards.end());
  terminations_.insert(terminations_.end(), terminations.begin(), terminations.end());
  truncations_.insert(truncations_.end(), truncations.begin(), truncations.end());
  start_.push_back(start_.back() + t);
  user_id_.push_back(user_id);
  seed_.push_back(seed);
}

std::size_t Dataset::episode_of(std::size_t t) const {
  DPRL_DCHECK(t < num_transitions());
  // the last start <= t
  const auto it = std::upper_bound(start_.begin(), start_.end(), t);
  return static_cast<std::size_t>(it - start_.begin()) - 1;
}

double Dataset::episode_return(std::size_t e) const {
  double sum = 0;
  for (std::size_t t = start_[e]; t < start_[e + 1]; ++t) sum += rewards_[t];
  return sum;
}

std::vector<std::int64_t> Dataset::users() const {
  std::vector<std::int64_t> u(user_id_);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return u;
}

std::vector<std::vector<std::size_t>> Dataset::episodes_by_user(
    const std::vector<std::int64_t>& users) const {
  std::vector<std::vector<std::size_t>> out(users.size());
  for (std::size_t e = 0; e < num_episodes(); ++e) {
    const auto it = std::lower_bound(users.begin(), users.end(), user_id_[e]);
    if (it != users.end() && *it == user_id_[e])
      out[static_cast<std::size_t>(it - users.begin())].push_back(e);
  }
  return out;
}

void Dataset::validate(const std::string& where) const {
  const Space& os = info_.observation_space;
  const Space& as = info_.action_space;
  for (std::size_t e = 0; e < num_episodes(); ++e) {
    const std::size_t t0 = start_[e], t1 = start_[e + 1];
    for (std::size_t row = t0 + e; row <= t1 + e; ++row) {
      const std::span<const float> o(observations_.data() + row * obs_dim(), obs_dim());
      for (float v : o)
        if (!std::isfinite(v))
          throw DataError(fmt::format("{}: observations: episode {} row {} is not finite", where, e,
                                      row - t0 - e));
      if (!os.contains(o))
        throw DataError(fmt::format("{}: observations: episode {} row {} lies outside {}", where, e,
                                    row - t0 - e, os.describe()));
    }
    for (std::size_t t = t0; t < t1; ++t) {
      const auto a = action(t);
      bool ok = std::all_of(a.begin(), a.end(), [](float v) { return std::isfinite(v); });
      ok = ok && as.contains(a);
      if (!ok)
        throw DataError(fmt::format("{}: actions: episode {} step {} lies outside {}", where, e,
                                    t - t0, as.describe()));
      if (!std::isfinite(rewards_[t]))
        throw DataError(
            fmt::format("{}: rewards: episode {} step {} is not finite", where, e, t - t0));
      if (terminations_[t] > 1 || truncations_[t] > 1)
        throw DataError(fmt::format("{}: terminations/truncations: episode {} step {} is not 0/1",
                                    where, e, t - t0));
      if (t + 1 < t1 && (terminations_[t] || truncations_[t]))
        throw DataError(
            fmt::format("{}: terminations/truncations: episode {} ends at step {} but has {} steps",
                        where, e, t - t0, t1 - t0));
    }
  }
}

void Dataset::add_episode_of(const Dataset& from, std::size_t e, std::int64_t user) {
  DPRL_CHECK(e < from.num_episodes());
  const std::size_t od = from.obs_dim(), ad = from.act_dim();
  const std::size_t t0 = from.start_[e], t = from.episode_length(e);
  add_episode({from.observations_.data() + (t0 + e) * od, (t + 1) * od},
              {from.actions_.data() + t0 * ad, t * ad}, {from.rewards_.data() + t0, t},
              {from.terminations_.data() + t0, t}, {from.truncations_.data() + t0, t}, user,
              from.seed_[e]);
}

Dataset Dataset::subset(std::span<const std::size_t> episodes) const {
  Dataset out(info_);
  std::size_t n = 0;
  for (std::size_t e : episodes) n += episode_length(e);
  out.reserve(episodes.size(), n);
  for (std::size_t e : episodes) out.add_episode_of(*this, e, user_id_[e]);
  return out;
}

MergeUsers parse_merge_users(std::string_view name, const std::string& where) {
  if (name == "offset") return MergeUsers::kOffset;
  if (name == "keep") return MergeUsers::kKeep;
  if (name == "episode") return MergeUsers::kEpisode;
  throw ParamError(fmt::format("{} = '{}': expected offset, keep or episode", where, name));
}

Dataset merge_datasets(std::span<const Dataset> parts, std::span<const std::string> names,
                       MergeUsers users, const std::string& dataset_id) {
  DPRL_CHECK(names.size() == parts.size());
  if (parts.empty()) throw DataError("merge: no datasets to merge");
  const DatasetInfo& first = parts[0].info();
  std::size_t episodes = 0, transitions = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const DatasetInfo& in = parts[i].info();
    if (!same_space(in.observation_space, first.observation_space))
      throw DataError(fmt::format("{}: observation_space {} differs from {}'s {}", names[i],
                                  in.observation_space.describe(), names[0],
                                  first.observation_space.describe()));
    if (!same_space(in.action_space, first.action_space))
      throw DataError(fmt::format("{}: action_space {} differs from {}'s {}", names[i],
                                  in.action_space.describe(), names[0],
                                  first.action_space.describe()));
    if (!in.env_id.empty() && !first.env_id.empty() && in.env_id != first.env_id)
      throw DataError(fmt::format("{}: env '{}' differs from {}'s '{}'", names[i], in.env_id,
                                  names[0], first.env_id));
    episodes += parts[i].num_episodes();
    transitions += parts[i].num_transitions();
  }
  DatasetInfo info = first;
  if (!dataset_id.empty()) info.dataset_id = dataset_id;
  nlohmann::ordered_json meta;
  meta["merged_from"] = nlohmann::ordered_json::array();
  for (const Dataset& p : parts) meta["merged_from"].push_back(p.info().dataset_id);
  static const char* kMode[] = {"offset", "keep", "episode"};
  meta["users"] = kMode[static_cast<int>(users)];
  info.metadata_json = meta.dump();
  Dataset out(info);
  out.reserve(episodes, transitions);
  // kOffset: input i's ids shifted by next - lo_i, where next is the first id free after the
  // earlier inputs. Every id and the next free one must stay within int64: in unsigned
  // arithmetic (exact for the differences of two int64 values) checked before any is used, so
  // two inputs never share a user through a wrap-around.
  std::uint64_t next = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Dataset& p = parts[i];
    if (p.num_episodes() == 0) continue;
    const auto [lo, hi] = std::ranges::minmax(p.user_ids());
    std::uint64_t first = next;
    if (users == MergeUsers::kOffset) {
      const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
      constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
      if (span > kMax || next > kMax - span)
        throw DataError(fmt::format(
            "{}: --users offset: user ids [{}, {}] shifted past the earlier inputs' {} ids "
            "exceed int64 (use --users keep or episode, or renumber the inputs)",
            names[i], lo, hi, next));
      next += span + 1;  // at most 2^63: the next input's first id is checked against kMax
    }
    for (std::size_t e = 0; e < p.num_episodes(); ++e) {
      const std::int64_t u =
          users == MergeUsers::kKeep ? p.user_id(e)
          : users == MergeUsers::kOffset
              ? static_cast<std::int64_t>(first + (static_cast<std::uint64_t>(p.user_id(e)) -
                                                   static_cast<std::uint64_t>(lo)))
              : static_cast<std::int64_t>(out.num_episodes());
      out.add_episode_of(p, e, u);
    }
  }
  return out;
}

std::size_t Dataset::payload_bytes() const {
  return observations_.size() * sizeof(float) + actions_.size() * sizeof(float) +
         rewards_.size() * sizeof(float) + terminations_.size() + truncations_.size() +
         start_.size() * sizeof(std::size_t) + user_id_.size() * sizeof(std::int64_t) +
         seed_.size() * sizeof(std::int64_t);
}

std::size_t Dataset::memory_bytes() const {
  return observations_.capacity() * sizeof(float) + actions_.capacity() * sizeof(float) +
         rewards_.capacity() * sizeof(float) + terminations_.capacity() + truncations_.capacity() +
         start_.capacity() * sizeof(std::size_t) + user_id_.capacity() * sizeof(std::int64_t) +
         seed_.capacity() * sizeof(std::int64_t);
}

}  // namespace dprl
