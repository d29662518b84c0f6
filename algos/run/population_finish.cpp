// Selection, the experts folder, the manifest and the demonstrations (see population.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "algos/core/collect.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/run/population.hpp"
#include "engine/cpu_time.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"
#include "engine/sha256.hpp"
#include "engine/thread_pool.hpp"
#include "envs/register_envs.hpp"

namespace dprl::algos {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

double score_of(const std::string& summary) {
  const auto j = nlohmann::json::parse(summary);
  const auto& r = j.at("final_eval").at("return_mean");
  return r.is_number() ? r.get<double>() : -INFINITY;
}

}  // namespace

std::vector<Chosen> select_experts(const PopulationSpec& spec, const std::vector<double>& score) {
  DPRL_CHECK(score.size() == spec.settings() * static_cast<std::size_t>(spec.runs_per_setting));
  const std::size_t settings = spec.settings();
  const int R = spec.runs_per_setting;
  std::vector<std::vector<int>> ranked(settings);
  for (std::size_t s = 0; s < settings; ++s) {
    auto& order = ranked[s];
    for (int r = 0; r < R; ++r) order.push_back(r);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return score[s * R + a] > score[s * R + b]; });
  }
  std::vector<Chosen> out;
  if (spec.rule == "top_k") {
    for (std::size_t s = 0; s < settings; ++s)
      for (int i = 0; i < spec.k; ++i)
        out.push_back({s, ranked[s][i], i, score[s * R + ranked[s][i]]});
    return out;
  }
  // hiv: the best of every setting, and the `extra` best of the second-placed runs
  std::vector<std::size_t> second(settings);
  for (std::size_t s = 0; s < settings; ++s) second[s] = s;
  std::stable_sort(second.begin(), second.end(), [&](std::size_t a, std::size_t b) {
    return score[a * R + ranked[a][1]] > score[b * R + ranked[b][1]];
  });
  std::vector<bool> extra(settings, false);
  for (std::int64_t i = 0; i < spec.extra; ++i) extra[second[i]] = true;
  for (std::size_t s = 0; s < settings; ++s) {
    out.push_back({s, ranked[s][0], 0, score[s * R + ranked[s][0]]});
    if (extra[s]) out.push_back({s, ranked[s][1], 1, score[s * R + ranked[s][1]]});
  }
  return out;
}

namespace {

void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

Dataset collect_demos(const PopulationSpec& spec, const std::vector<fs::path>& files, int jobs) {
  ParamMap params = spec.env_params;
  param_map_set(params, "max_episode_steps", {std::to_string(spec.max_steps), "population.demos"});
  std::vector<Dataset> parts(files.size());
  CollectParams cp;
  cp.episodes = spec.episodes;
  cp.seed = derive_seed(spec.seed, Domain::kDataset);
  cp.action_floor = spec.action_floor;
  ThreadPool pool(jobs);
  pool.parallel_for(files.size(), [&](std::size_t i) {
    auto env = envs::make_env(spec.env_id, params);
    auto pol = NnPolicy::load(files[i]);
    CollectParams p = cp;
    p.user_id = static_cast<std::int64_t>(i);
    parts[i] = collect(*env, *pol, "expert", p);
  });
  DatasetInfo info = parts.front().info();
  info.dataset_id = fmt::format("dprl/{}/{}-experts-v0", spec.env_id, spec.name);
  json meta;
  meta["privacy_unit"] = "expert";
  meta["population"] = spec.name;
  meta["experts"] = files.size();
  meta["episodes_per_expert"] = spec.episodes;
  meta["max_steps"] = spec.max_steps;
  meta["action_floor"] = spec.action_floor;
  meta["collect_seed"] = cp.seed;
  info.metadata_json = meta.dump();
  Dataset all(std::move(info));
  std::size_t eps = 0, steps = 0;
  for (const auto& d : parts) eps += d.num_episodes(), steps += d.num_transitions();
  all.reserve(eps, steps);
  for (const auto& d : parts)
    for (std::size_t e = 0; e < d.num_episodes(); ++e) {
      const std::size_t t0 = d.episode_start(e), n = d.episode_length(e);
      all.add_episode({d.obs(t0, e).data(), (n + 1) * d.obs_dim()},
                      {d.action(t0).data(), n * d.act_dim()}, d.rewards().subspan(t0, n),
                      d.terminations().subspan(t0, n), d.truncations().subspan(t0, n), d.user_id(e),
                      d.episode_seed(e));
    }
  return all;
}

}  // namespace

PopulationResult finish_population(const PopulationSpec& spec, const SweepPlan& plan,
                                   const std::vector<RunOutcome>& outcomes,
                                   const PopulationOptions& opts) {
  DPRL_CHECK(outcomes.size() == plan.runs.size());
  PopulationResult res;
  std::vector<double> score(plan.runs.size());
  std::string digest_text = spec.digest + "\n";
  std::size_t failed = 0;
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const auto& o = outcomes[i];
    if (o.status == RunOutcome::Status::kDone) ++res.trained;
    if (o.status != RunOutcome::Status::kDone && o.status != RunOutcome::Status::kSkipped) {
      ++failed;
      continue;
    }
    score[i] = score_of(o.summary);
    digest_text += plan.runs[i].config_sha256 + " " + sha256_hex(o.summary) + "\n";
  }
  if (failed > 0)
    throw DataError(
        fmt::format("population {}: {} of {} training runs failed (see {}); rerun to "
                    "retry them",
                    spec.name, failed, plan.runs.size(), (plan.out / "failures.csv").string()));
  const std::string digest = sha256_hex(digest_text);
  res.dataset = spec.out / "demos";
  res.manifest = spec.out / "manifest.json";
  const fs::path record = spec.out / "population.json";
  std::error_code ec;
  if (fs::exists(record, ec) && fs::exists(res.dataset, ec)) {
    try {
      const auto j = nlohmann::json::parse(read_file(record));
      if (j.at("digest").get<std::string>() == digest) {
        res.reused = true;
        res.experts = j.at("experts").get<std::int64_t>();
        return res;
      }
    } catch (const std::exception&) {
      // unreadable record: rebuild
    }
  }
  fs::remove(record, ec);
  const auto chosen = select_experts(spec, score);
  const fs::path dir = spec.out / "experts";
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  json manifest;
  manifest["population"] = spec.name;
  manifest["env"] = spec.env_id;
  manifest["env_params"] = json::object();
  for (const auto& [k, v] : spec.env_params) manifest["env_params"][k] = v.text;
  manifest["action_floor"] = spec.action_floor;
  manifest["selection"] = spec.rule == "top_k" ? fmt::format("top {} per setting", spec.k)
                                               : fmt::format(
                                                     "hiv: best per setting + {} best "
                                                     "second-placed",
                                                     spec.extra);
  json list = json::array();
  std::vector<fs::path> files;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Chosen& c = chosen[i];
    const SweepRun& run = plan.runs[c.setting * spec.runs_per_setting + c.run];
    const std::string name = fmt::format("expert_{:05}.bin", i);
    link_or_copy(run.out / "policy.bin", dir / name);
    files.push_back(dir / name);
    json e;
    e["id"] = i;
    e["setting"] = c.setting;
    e["params"] = json::object();
    for (const auto& [k, v] : run.values) e["params"][k] = v;
    e["run"] = c.run;
    e["rank"] = c.rank;
    e["seed"] = run.seed;
    e["score"] = c.score;
    e["policy"] = "experts/" + name;
    list.push_back(std::move(e));
  }
  manifest["experts"] = std::move(list);
  write_file_atomic(res.manifest, manifest.dump(1) + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  const Dataset demos = collect_demos(spec, files, opts.jobs);
  SaveOptions so;
  so.overwrite = true;
  save_minari(demos, res.dataset, so);
  res.demos_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.experts = static_cast<std::int64_t>(files.size());
  json rec;
  rec["digest"] = digest;
  rec["experts"] = res.experts;
  rec["episodes"] = demos.num_episodes();
  rec["transitions"] = demos.num_transitions();
  write_file_atomic(record, rec.dump(2) + "\n");
  return res;
}

PopulationResult build_population(const PopulationSpec& spec, const PopulationOptions& opts) {
  const SweepPlan plan = plan_population(spec);
  SweepOptions so;
  so.jobs = opts.jobs;
  so.quiet = opts.quiet;
  so.progress = opts.quiet ? Progress::Mode::kOff : Progress::Mode::kAuto;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  const SweepResult sr = run_sweep(plan, so);
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double train_cpu = process_cpu_seconds() - cpu0;
  PopulationResult res = finish_population(spec, plan, sr.outcomes, opts);
  res.train_wall_s = train_s;
  res.train_cpu_s = train_cpu;
  return res;
}

ExpertsFolder read_experts(const fs::path& out) {
  const fs::path file = out / "manifest.json";
  ExpertsFolder f;
  try {
    const auto j = nlohmann::json::parse(read_file(file));
    f.action_floor = j.at("action_floor").get<double>();
    f.env_id = j.at("env").get<std::string>();
    std::int64_t i = 0;
    for (const auto& e : j.at("experts")) {
      if (e.at("id").get<std::int64_t>() != i++)
        throw DataError("expert ids are not 0, 1, 2, ... in order");
      f.policies.push_back(out / e.at("policy").get<std::string>());
    }
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}: {}", file.string(), e.what()));
  } catch (const std::exception& e) {
    throw DataError(fmt::format("{}: not a population manifest ({})", file.string(), e.what()));
  }
  return f;
}

}  // namespace dprl::algos
