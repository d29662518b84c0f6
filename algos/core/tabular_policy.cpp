#include "algos/core/tabular_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::algos {

namespace {

std::string_view as_bytes(const std::vector<double>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)};
}

}  // namespace

int greedy_action(const double* q_row, int num_actions, std::span<const std::uint8_t> mask) {
  int best = -1;
  for (int a = 0; a < num_actions; ++a) {
    if (!mask.empty() && !mask[a]) continue;
    if (best < 0 || q_row[a] > q_row[best]) best = a;
  }
  return best < 0 ? 0 : best;
}

TabularGreedyPolicy::TabularGreedyPolicy(std::string env_id, int num_states, int num_actions,
                                         std::vector<double> q, bool use_mask, double explore,
                                         int horizon)
    : env_id_(std::move(env_id)),
      num_states_(num_states),
      num_actions_(num_actions),
      q_(std::move(q)),
      use_mask_(use_mask),
      explore_(explore),
      horizon_(horizon) {
  DPRL_CHECK(horizon_ >= 1);
  DPRL_CHECK(q_.size() == static_cast<std::size_t>(horizon_) * num_states_ * num_actions_);
  DPRL_CHECK(explore_ >= 0 && explore_ <= 1);
}

std::int64_t TabularGreedyPolicy::act_discrete(std::span<const float> obs,
                                               std::span<const std::uint8_t> mask) {
  const double s = obs.empty() ? -1.0 : obs[0];
  if (obs.size() != 1 || !(s >= 0) || s >= num_states_ || s != std::floor(s))
    throw InvalidAction(
        fmt::format("tabular policy for '{}' cannot act on observation {} (needs a "
                    "state index below {})",
                    env_id_, obs.empty() ? std::string("[]") : fmt::format("{}", s), num_states_));
  const int t = std::min(t_, horizon_ - 1);  // time-indexed tables: the row of this step
  ++t_;
  if (explore_ > 0 && rng_.uniform() < explore_) {
    if (!use_mask_ || mask.empty()) return static_cast<std::int64_t>(rng_.below(num_actions_));
    int allowed = 0;
    for (int a = 0; a < num_actions_; ++a) allowed += mask[a] ? 1 : 0;
    if (allowed > 0) {
      auto k = rng_.below(static_cast<std::uint64_t>(allowed));
      for (int a = 0; a < num_actions_; ++a)
        if (mask[a] && k-- == 0) return a;
    }
  }
  const auto row = (static_cast<std::size_t>(t) * num_states_ + static_cast<std::size_t>(s)) *
                   static_cast<std::size_t>(num_actions_);
  return greedy_action(q_.data() + row, num_actions_,
                       use_mask_ ? mask : std::span<const std::uint8_t>());
}

void TabularGreedyPolicy::save(const std::filesystem::path& file) const {
  nlohmann::ordered_json j;
  j["format"] = "dprl-policy";
  j["version"] = 1;
  j["type"] = "tabular_greedy";
  j["env"] = env_id_;
  j["num_states"] = num_states_;
  j["num_actions"] = num_actions_;
  j["use_mask"] = use_mask_;
  j["explore"] = explore_;
  if (horizon_ > 1) j["horizon"] = horizon_;
  j["q"] = q_;
  j["checksum"] = fmt::format("{:016x}", fnv1a64(as_bytes(q_)));
  write_file_atomic(file, j.dump() + "\n");
}

TabularGreedyPolicy TabularGreedyPolicy::load(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  const std::string name = file.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: not a dprl policy file (invalid JSON: {})", name, e.what()));
  }
  try {
    if (!j.is_object() || j.value("format", "") != "dprl-policy")
      throw DataError(fmt::format("{}: not a dprl policy file", name));
    if (j.at("version").get<int>() != 1)
      throw DataError(
          fmt::format("{}: unsupported policy version {}", name, j.at("version").dump()));
    if (j.at("type").get<std::string>() != "tabular_greedy")
      throw DataError(fmt::format("{}: policy type '{}' is not tabular_greedy", name,
                                  j.at("type").get<std::string>()));
    const int s = j.at("num_states").get<int>();
    const int a = j.at("num_actions").get<int>();
    const int horizon = j.value("horizon", 1);
    auto q = j.at("q").get<std::vector<double>>();
    if (horizon < 1 || horizon > 1000000)
      throw DataError(fmt::format("{}: horizon {} must be in [1, 1e6]", name, horizon));
    if (s <= 0 || a <= 0 || q.size() != static_cast<std::size_t>(horizon) * s * a)
      throw DataError(
          fmt::format("{}: q has {} values, expected {} x {} x {}", name, q.size(), horizon, s, a));
    const std::string sum = fmt::format("{:016x}", fnv1a64(as_bytes(q)));
    if (j.at("checksum").get<std::string>() != sum)
      throw DataError(fmt::format("{}: checksum mismatch (file corrupt)", name));
    const double explore = j.value("explore", 0.0);
    if (!(explore >= 0 && explore <= 1))
      throw DataError(fmt::format("{}: explore = {} must be in [0, 1]", name, explore));
    return TabularGreedyPolicy(j.at("env").get<std::string>(), s, a, std::move(q),
                               j.at("use_mask").get<bool>(), explore, horizon);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: malformed policy file ({})", name, e.what()));
  }
}

}  // namespace dprl::algos
