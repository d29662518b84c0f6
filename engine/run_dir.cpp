#include "engine/run_dir.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/json_number.hpp"
#include "engine/params.hpp"
#include "engine/version.hpp"

namespace dprl {

RunDir::RunDir(std::filesystem::path dir)
    : dir_(std::move(dir)), last_flush_(std::chrono::steady_clock::now()) {
  make_dirs(dir_);
  // a previous run's wall-clock figures; this run's learner may add its own (below)
  std::filesystem::remove(dir_ / "timing.json");
}

RunDir::~RunDir() {
  if (held_) return;
  try {
    flush_metrics();
  } catch (const std::exception&) {
    // a destructor must not throw; the last explicit flush already reported any error
  }
}

void RunDir::flush_metrics() {
  if (!dirty_ || deferred_) return;
  write_file_atomic(dir_ / "metrics.csv", metrics_);
  dirty_ = false;
  last_flush_ = std::chrono::steady_clock::now();
}

void RunDir::sync_metrics(StateIo& io) {
  io.section("metrics");
  std::uint64_t n = columns_.size();
  // each column name takes at least its 8-byte length
  io.bounded(n, std::uint64_t{0}, std::uint64_t{io.remaining() / 8}, "metrics columns");
  if (io.loading()) columns_.assign(n, std::string());
  for (auto& c : columns_) io(c);
  io(metrics_);
  if (io.loading()) {
    dirty_ = true;
    loaded_ = true;
  }
}

void RunDir::write_config(const Node& resolved) const {
  write_file_atomic(dir_ / "config.yaml", to_yaml(resolved));
}

void RunDir::append_metrics(const std::vector<std::pair<std::string, double>>& row) {
  if (columns_.empty()) {
    for (const auto& [k, v] : row) columns_.push_back(k);
    metrics_ = fmt::format("{}\n", fmt::join(columns_, ","));
  }
  bool same = row.size() == columns_.size();
  for (std::size_t i = 0; same && i < row.size(); ++i) same = row[i].first == columns_[i];
  // the columns come from the learner, or from a checkpoint it wrote
  if (!same && loaded_)
    throw DataError(
        fmt::format("{}: the checkpoint resumed from holds {} metrics columns that are not the {} "
                    "this run writes (a damaged or foreign checkpoint)",
                    dir_.string(), columns_.size(), row.size()));
  DPRL_CHECK(same);
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < row.size(); ++i) {
    cells.push_back(std::isfinite(row[i].second) ? format_param(row[i].second) : std::string());
  }
  metrics_ += fmt::format("{}\n", fmt::join(cells, ","));
  dirty_ = true;
  if (!held_ && std::chrono::steady_clock::now() - last_flush_ > std::chrono::seconds(2))
    flush_metrics();
}

void RunDir::write_file(const std::string& name, std::string_view content) const {
  write_file_atomic(dir_ / name, content);
}

static nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

static nlohmann::ordered_json epsilon_json(double eps) {
  if (std::isnan(eps)) throw Error("privacy: epsilon is NaN");
  return json_number(eps);
}

static nlohmann::ordered_json privacy_report_json(const PrivacyReport& r) {
  nlohmann::ordered_json p;
  p["epsilon"] = epsilon_json(r.epsilon);
  p["delta"] = r.delta;
  if (r.sampler_delta > 0) p["sampler_delta"] = r.sampler_delta;
  p["accountant"] = r.accountant;
  p["neighbouring"] = r.neighbouring ? std::string(neighbouring_name(*r.neighbouring)) : "";
  p["unit"] = r.unit;
  p["sensitivity"] = r.sensitivity;
  p["covers"] = r.covers;
  p["not_covered"] = r.not_covered;
  p["formal"] = r.formal;
  p["noise_source"] = r.noise_source;
  p["reproducible_noise"] = r.reproducible_noise;
  if (!r.details_json.empty()) p["details"] = nlohmann::ordered_json::parse(r.details_json);
  return p;
}

std::string privacy_json(const PrivacyReport& r) { return privacy_report_json(r).dump(2); }

std::string summary_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["env"] = s.env;
  j["algo"] = s.algo;
  j["seed"] = s.seed;
  j["env_steps"] = s.env_steps;
  j["gradient_steps"] = s.gradient_steps;
  j["episodes"] = s.episodes;
  j["final_eval"] = {{"return_mean", number_or_null(s.final_eval.return_mean)},
                     {"return_std", number_or_null(s.final_eval.return_std)},
                     {"return_min", number_or_null(s.final_eval.return_min)},
                     {"return_max", number_or_null(s.final_eval.return_max)},
                     {"length_mean", number_or_null(s.final_eval.length_mean)},
                     {"episodes", s.final_eval.episodes}};
  if (s.privacy) {
    j["privacy"] = privacy_report_json(*s.privacy);
  } else {
    j["privacy"] = nullptr;
  }
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  for (const auto& [k, v] : s.extra) extra[k] = number_or_null(v);
  j["extra"] = extra;
  if (!s.audit_json.empty()) j["audit"] = nlohmann::ordered_json::parse(s.audit_json);
  j["versions"] = {
      {"dprl", kVersion},
      {"git_commit", kGitCommit},
      {"compiler", fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__)}};
  j["git_commit"] = kGitCommit;
  return j.dump(2) + "\n";
}

std::string timing_json(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["wall_time_s"] = s.wall_time_s;
  return j.dump(2) + "\n";
}

void RunDir::write_summary(const RunSummary& s) {
  flush_metrics();
  write_file_atomic(dir_ / "summary.json", summary_json(s));
  // wall_time_s first, then any figures the learner wrote to timing.json during this run (stage
  // times; the constructor removed an older file)
  std::string timing = timing_json(s);
  const auto file = dir_ / "timing.json";
  if (std::filesystem::exists(file)) {
    const auto own = nlohmann::ordered_json::parse(read_file(file), nullptr, false);
    if (own.is_object()) {
      auto j = nlohmann::ordered_json::parse(timing);
      for (const auto& [k, v] : own.items())
        if (k != "wall_time_s") j[k] = v;
      timing = j.dump(2) + "\n";
    }
  }
  write_file_atomic(file, timing);
}

}  // namespace dprl
