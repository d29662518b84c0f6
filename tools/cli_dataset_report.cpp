#include "tools/cli_dataset_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"

namespace dprl::cli {

DatasetSummary summarize(const Dataset& data, int bins) {
  DatasetSummary s;
  s.users = data.users().size();
  const std::size_t n = data.num_episodes();
  if (n == 0) return s;
  std::vector<double> rets(n);
  double sum = 0, len_sum = 0;
  s.return_min = INFINITY;
  s.return_max = -INFINITY;
  s.length_min = data.episode_length(0);
  for (std::size_t e = 0; e < n; ++e) {
    rets[e] = data.episode_return(e);
    sum += rets[e];
    s.return_min = std::min(s.return_min, rets[e]);
    s.return_max = std::max(s.return_max, rets[e]);
    const std::size_t len = data.episode_length(e);
    len_sum += static_cast<double>(len);
    s.length_min = std::min(s.length_min, len);
    s.length_max = std::max(s.length_max, len);
    const std::size_t last = data.episode_start(e) + len - 1;
    s.terminated += data.terminated(last) ? 1 : 0;
    s.truncated += data.truncated(last) && !data.terminated(last) ? 1 : 0;
  }
  s.return_mean = sum / static_cast<double>(n);
  double ss = 0;
  for (double r : rets) ss += (r - s.return_mean) * (r - s.return_mean);
  s.return_std = std::sqrt(ss / static_cast<double>(n));
  s.length_mean = len_sum / static_cast<double>(n);
  const double width = (s.return_max - s.return_min) / bins;
  s.bin_counts.assign(static_cast<std::size_t>(bins), 0);
  for (int b = 0; b <= bins; ++b) s.bin_edges.push_back(s.return_min + width * b);
  for (double r : rets) {
    int b = width > 0 ? static_cast<int>((r - s.return_min) / width) : 0;
    s.bin_counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))]++;
  }
  return s;
}

nlohmann::ordered_json summary_json(const Dataset& data, const DatasetSummary& s) {
  const DatasetInfo& info = data.info();
  nlohmann::ordered_json j;
  j["dataset_id"] = info.dataset_id;
  j["env_id"] = info.env_id;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : info.env_params) params[k] = v.text;
  j["env_params"] = params;
  j["observation_space"] = info.observation_space.describe();
  j["action_space"] = info.action_space.describe();
  j["episodes"] = data.num_episodes();
  j["transitions"] = data.num_transitions();
  j["users"] = s.users;
  j["return_mean"] = s.return_mean;
  j["return_std"] = s.return_std;
  j["return_min"] = s.return_min;
  j["return_max"] = s.return_max;
  j["length_mean"] = s.length_mean;
  j["length_min"] = s.length_min;
  j["length_max"] = s.length_max;
  j["episodes_terminated"] = s.terminated;
  j["episodes_truncated"] = s.truncated;
  j["return_histogram"] = {{"edges", s.bin_edges}, {"counts", s.bin_counts}};
  j["payload_bytes"] = data.payload_bytes();
  if (!info.metadata_json.empty()) {
    auto m = nlohmann::ordered_json::parse(info.metadata_json, nullptr, false);
    if (!m.is_discarded()) j["metadata"] = std::move(m);
  }
  return j;
}

std::string summary_text(const Dataset& data, const DatasetSummary& s, const std::string& path) {
  const DatasetInfo& info = data.info();
  std::string out = fmt::format("{}: {}\n", path, info.dataset_id);
  out += fmt::format("  env          {}\n", info.env_id.empty() ? "(unknown)" : info.env_id);
  out += fmt::format("  observation  {}\n  action       {}\n", info.observation_space.describe(),
                     info.action_space.describe());
  out += fmt::format("  episodes     {} ({} terminated, {} truncated)\n", data.num_episodes(),
                     s.terminated, s.truncated);
  out += fmt::format("  transitions  {}\n  users        {}\n", data.num_transitions(), s.users);
  out += fmt::format("  length       mean {:.1f} min {} max {}\n", s.length_mean, s.length_min,
                     s.length_max);
  out += fmt::format("  return       mean {:.4f} std {:.4f} min {:.4f} max {:.4f}\n", s.return_mean,
                     s.return_std, s.return_min, s.return_max);
  std::size_t top = 1;
  for (auto c : s.bin_counts) top = std::max(top, c);
  for (std::size_t b = 0; b < s.bin_counts.size(); ++b) {
    const std::size_t bar = (s.bin_counts[b] * 40 + top - 1) / top;
    out += fmt::format("  [{:>11.4g}, {:>11.4g}{} {:>8} {}\n", s.bin_edges[b], s.bin_edges[b + 1],
                       b + 1 == s.bin_counts.size() ? "]" : ")", s.bin_counts[b],
                       std::string(bar, '#'));
  }
  return out;
}

void validate_dataset(const Dataset& data, const std::string& path, const std::string& env_id,
                      const ParamMap& env_params) {
  data.validate(path);
  if (env_id.empty()) return;
  auto env = envs::make_env(env_id, env_params);
  check_spaces(data.info(), env->spec(), path);
}

}  // namespace dprl::cli
