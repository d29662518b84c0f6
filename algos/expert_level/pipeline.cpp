// Running the pipeline's stages (see pipeline.hpp).
#include "algos/expert_level/pipeline.hpp"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "algos/algorithm.hpp"
#include "algos/expert_level/selective_audit.hpp"
#include "algos/private_noise.hpp"
#include "engine/cpu_time.hpp"
#include "engine/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/policy.hpp"
#include "engine/rng.hpp"
#include "engine/sha256.hpp"
#include "envs/register_envs.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// The demonstrations' user ids must be exactly the experts 0..m-1 of the manifest.
void check_experts(const Dataset& data, const ExpertsFolder& f, const PipelineSpec& s) {
  const auto m = static_cast<std::int64_t>(f.policies.size());
  const auto users = data.users();
  if (m != s.population_experts || static_cast<std::int64_t>(users.size()) != m ||
      users.front() != 0 || users.back() != m - 1)
    throw DataError(fmt::format(
        "{}: the experts folder holds {} experts but the dataset's user ids are {} distinct "
        "values in [{}, {}] (expected 0..{})",
        (s.population.out / "manifest.json").string(), m, users.size(),
        users.empty() ? 0 : users.front(), users.empty() ? 0 : users.back(),
        s.population_experts - 1));
  if (f.action_floor != s.population.action_floor)
    throw DataError(fmt::format("{}: action_floor {} differs from the population's {}",
                                (s.population.out / "manifest.json").string(), f.action_floor,
                                s.population.action_floor));
}

// A uniformly random subset of s.experts experts (a partial Fisher-Yates shuffle seeded by the
// pipeline's seed: public randomness), with all of their trajectories; ids renumbered 0..m-1 in
// the order drawn.
void subset_experts(const PipelineSpec& s, Dataset& data, ExpertsFolder& folder) {
  const auto all = static_cast<std::uint64_t>(folder.policies.size());
  std::vector<std::int64_t> order(all), rank(all, -1);
  for (std::uint64_t i = 0; i < all; ++i) order[i] = static_cast<std::int64_t>(i);
  Rng rng(derive_seed(s.seed, Domain::kDataset, 0x5eb5e7));
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(s.experts); ++i)
    std::swap(order[i], order[i + rng.below(all - i)]);
  std::vector<fs::path> policies;
  for (std::int64_t i = 0; i < s.experts; ++i) {
    rank[order[i]] = i;
    policies.push_back(folder.policies[order[i]]);
  }
  std::vector<std::size_t> keep;
  for (std::size_t e = 0; e < data.num_episodes(); ++e)
    if (rank[data.user_id(e)] >= 0) keep.push_back(e);
  Dataset sub = data.subset(keep);
  for (std::size_t e = 0; e < sub.num_episodes(); ++e) sub.set_user_id(e, rank[sub.user_id(e)]);
  data = std::move(sub);
  folder.policies = std::move(policies);
}

struct Release {
  std::optional<Dataset> stable, unstable;
  json record;  // the release's guarantee record
  std::int64_t prefixes = 0, transitions = 0;
  bool reused = false;
};

// may_release false (an audit): a release of this config must be on disk; drawing a new one
// would spend its budget again
Release release_stage(const PipelineSpec& s, const Dataset& data,
                      const std::vector<fs::path>& policies, const PipelineOptions& o,
                      bool may_release = true) {
  const fs::path dir = s.out / "release";
  const std::string pop_record = read_file(s.population.out / "population.json");
  const std::string digest =
      sha256_hex(fmt::format("{}\n{}\n{}\n{}\n{}\nexperts={}\n", pop_record,
                             to_yaml(param_map_to_node(dump_params(s.release))), s.seed, s.noise,
                             s.population.digest, s.experts));
  Release r;
  std::error_code ec;
  std::vector<std::int64_t> lengths;
  if (fs::exists(dir / "release.json", ec)) {
    const auto j = json::parse(read_file(dir / "release.json"), nullptr, false);
    if (j.is_object() && j.contains("digest") && j.at("digest") == digest) {
      try {  // our own file, but a damaged one is named, not reported as a JSON library error
        r.record = j.at("privacy");
        r.prefixes = j.at("stable_prefixes").get<std::int64_t>();
        r.transitions = j.at("stable_transitions").get<std::int64_t>();
        lengths.assign(data.num_episodes(), 0);
        for (const auto& ek : j.at("stable")) lengths.at(ek.at(0).get<std::size_t>()) = ek.at(1);
      } catch (const std::exception& e) {
        throw DataError(fmt::format("{}: damaged ({}); remove it to release anew",
                                    (dir / "release.json").string(), e.what()));
      }
      r.reused = true;
    } else {
      fmt::print(stderr, "dprl: note: {} holds a release of another config; releasing anew\n",
                 dir.string());
    }
  }
  if (!r.reused && !may_release)
    throw DataError(fmt::format(
        "{}: no finished release of this pipeline (run it with dprl run first: an audit never "
        "draws a release, which would spend its budget again)",
        (dir / "release.json").string()));
  if (!r.reused) {
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    const bool seeded = s.noise == "seeded";
    // as every private learner (algos/private_noise.hpp): OS entropy with the secure samplers, or
    // a stream derived from the seed and the release's privacy parameters (warned once)
    auto noise = make_private_noise(
        s.noise, s.seed, 20,
        {s.release.epsilon1, s.release.delta1, static_cast<double>(s.release.trajectories),
         static_cast<double>(s.release.max_length), s.release.p_min},
        "privacy");
    auto experts = NetExperts::load(policies, o.jobs);
    const DataReleaseResult res = data_release(data, *experts, s.release, *noise);
    lengths = res.stable_length;
    r.record = json::parse(privacy_json(release_report(s.release, res, noise->name(), seeded)));
    r.prefixes = res.stable_prefixes;
    r.transitions = res.stable_transitions;
  }
  // D_unst is the data minus the stable prefixes: rebuilt, never stored (it is private input)
  ReleasedData parts = split_release(data, lengths);
  if (!r.reused) {
    SaveOptions so;
    so.overwrite = true;
    if (parts.stable.num_episodes() > 0) save_minari(parts.stable, dir / "stable", so);
    json j;
    j["digest"] = digest;
    j["stable_prefixes"] = r.prefixes;
    j["stable_transitions"] = r.transitions;
    j["examined"] = s.release.trajectories;
    json stable = json::array();  // (episode index, stable prefix length): what stable/ holds
    for (std::size_t e = 0; e < lengths.size(); ++e)
      if (lengths[e] > 0) stable.push_back({e, lengths[e]});
    j["stable"] = std::move(stable);
    j["privacy"] = r.record;
    write_file_atomic(dir / "release.json", j.dump(2) + "\n");  // last: the stage is complete
  }
  if (parts.stable.num_episodes() > 0) r.stable = std::move(parts.stable);
  if (parts.unstable.num_episodes() > 0) r.unstable = std::move(parts.unstable);
  return r;
}

// The whole pipeline's record: basic composition of the two parts (Thm. 5.6).
PrivacyReport combined_report(const PipelineSpec& s, const Release* rel, const SelectiveResult& r) {
  PrivacyReport rep;
  const double e1 = rel ? rel->record.at("epsilon").get<double>() : 0.0;
  const double d1 = rel ? s.delta1 : 0.0;
  const double e2 = r.report ? r.report->epsilon : 0.0;
  const double d2 = r.report ? s.delta2 : 0.0;
  rep.epsilon = e1 + e2;
  rep.delta = d1 + d2;
  rep.accountant = "basic composition of the release (advanced composition) and DP-SGD (" +
                   s.selective.accountant + ")";
  rep.neighbouring = "add-remove";
  rep.unit = "expert";
  rep.sensitivity = "release: count sensitivity 1; DP-SGD: L2 clip per sampled expert";
  rep.covers = {"policy.bin (the released model)",
                "metrics.csv (evaluation returns in public env episodes; epsilon)", "summary.json",
                "release/stable (D_stable) and release/release.json"};
  const bool seeded = s.noise == "seeded";
  rep.formal = !seeded && (!r.report || r.report->formal);
  rep.noise_source = r.report ? r.report->noise_source
                              : (rel ? rel->record.at("noise_source").get<std::string>() : "");
  rep.reproducible_noise = seeded;
  json d;
  d["mode"] = s.mode;
  d["relation"] = "add or remove one expert together with all of its trajectories";
  d["budget"] = {{"epsilon", s.epsilon}, {"delta", s.delta},       {"epsilon1", s.epsilon1},
                 {"delta1", s.delta1},   {"epsilon2", s.epsilon2}, {"delta2", s.delta2}};
  d["accounting"] = s.selective.accounting;
  json parts = json::object();
  parts["release"] = rel ? rel->record : json(nullptr);
  parts["dp_sgd"] = r.report ? json::parse(privacy_json(*r.report)) : json(nullptr);
  d["parts"] = std::move(parts);
  d["not_covered"] =
      "the unstable data (the raw data minus the release; private input, not stored)";
  rep.details_json = d.dump();
  return rep;
}

// A finished train stage (run.json records this config and the summary's digest): its summary.
std::optional<RunSummary> finished(const PipelineSpec& s) {
  std::error_code ec;
  if (!fs::exists(s.out / "run.json", ec) || !fs::exists(s.out / "summary.json", ec))
    return std::nullopt;
  try {
    const auto rec = nlohmann::json::parse(read_file(s.out / "run.json"));
    const std::string text = read_file(s.out / "summary.json");
    if (rec.at("config_sha256") != s.digest || rec.at("summary_sha256") != sha256_hex(text))
      return std::nullopt;
    const auto j = nlohmann::json::parse(text);
    RunSummary r;
    r.name = j.at("name");
    r.env = j.at("env");
    r.algo = j.at("algo");
    r.seed = j.at("seed");
    r.env_steps = j.at("env_steps");
    const auto& f = j.at("final_eval");
    r.final_eval.return_mean = f.at("return_mean");
    r.final_eval.return_std = f.at("return_std");
    r.final_eval.episodes = f.at("episodes");
    if (j.at("privacy").is_object()) {
      const auto& p = j.at("privacy");
      PrivacyReport rep;
      rep.epsilon = p.at("epsilon");
      rep.delta = p.at("delta");
      rep.accountant = p.at("accountant");
      rep.noise_source = p.at("noise_source");
      r.privacy = rep;
    }
    if (j.contains("audit") && j.at("audit").is_object()) {
      r.audit_json = j.at("audit").dump();
      r.audit_refuted = j.at("audit").value("refuted", false);
    }
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

PipelineTrainData pipeline_train_data(const PipelineSpec& s, const PipelineOptions& o) {
  fs::path demos = s.population.out / "demos";
  if (!s.population_on_disk) {
    PopulationOptions po;
    po.jobs = o.jobs;
    po.quiet = o.progress == Progress::Mode::kOff;
    demos = build_population(s.population, po).dataset;
  }
  PipelineTrainData t;
  t.data = load_dataset(demos, "minari");
  ExpertsFolder folder = read_experts(s.population.out);
  check_experts(t.data, folder, s);
  if (s.experts < s.population_experts) subset_experts(s, t.data, folder);
  t.experts = s.experts;
  if (s.mode == "selective" && s.epsilon1 > 0) {
    Release rel = release_stage(s, t.data, folder.policies, o, false);
    t.stable = std::move(rel.stable);
    t.unstable = std::move(rel.unstable);
  } else {
    t.unstable = t.data.subset([&] {
      std::vector<std::size_t> all(t.data.num_episodes());
      for (std::size_t e = 0; e < all.size(); ++e) all[e] = e;
      return all;
    }());
  }
  if (s.mode == "non_private") std::swap(t.stable, t.unstable);
  return t;
}

namespace {

// The DP-SGD stage checkpoints at every evaluation block (train_selective): a killed pipeline
// continues from its last checkpoint when run again, unless its config changed.
CheckpointSetup stage_checkpoints(const PipelineSpec& s) {
  std::error_code ec;
  if (!fs::exists(s.out / "config.yaml", ec) ||
      read_file(s.out / "config.yaml") != to_yaml(s.resolved))
    remove_run_checkpoints(s.out);
  CheckpointSetup ckpt{s.out, s.digest, "expert_level", s.eval_every > 0 ? s.eval_every : 1 << 30};
  if (auto loaded = read_run_checkpoint(s.out)) {
    ckpt.resume_file = loaded->file;
    ckpt.resume_payload = std::move(loaded->payload);
    fmt::print(stderr, "dprl: note: {} continues from its last checkpoint\n", s.out.string());
  }
  return ckpt;
}

// timing.json (wall-clock figures per stage, and the CPU time of the train stage: one thread,
// on a shared machine the figure to project from) and run.json
void write_pipeline_records(const PipelineSpec& s, const fs::path& dir, double wall_s,
                            double population_s, double release_s, bool release_reused,
                            double train_s, double train_cpu_s) {
  json timing;
  timing["wall_time_s"] = wall_s;
  timing["population_and_data_s"] = population_s;
  timing["release_s"] = release_s;
  timing["release_reused"] = release_reused;
  timing["train_s"] = train_s;
  timing["train_cpu_s"] = train_cpu_s;
  write_file_atomic(dir / "timing.json", timing.dump(2) + "\n");
  json record;
  record["config_sha256"] = s.digest;
  record["summary_sha256"] = sha256_hex(read_file(dir / "summary.json"));
  write_file_atomic(dir / "run.json", record.dump(2) + "\n");
}

}  // namespace

RunSummary run_pipeline(const PipelineSpec& s, const PipelineOptions& o) {
  if (auto done = finished(s)) {
    fmt::print(stderr, "dprl: note: {} holds this pipeline's finished run; reusing it\n",
               s.out.string());
    return *done;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  PopulationOptions po;
  po.jobs = o.jobs;
  po.quiet = o.progress == Progress::Mode::kOff;
  const PopulationResult pop = build_population(s.population, po);
  Dataset data = load_dataset(pop.dataset, "minari");
  ExpertsFolder folder = read_experts(s.population.out);
  check_experts(data, folder, s);
  const std::int64_t m = s.experts;
  if (m < s.population_experts) subset_experts(s, data, folder);

  const double population_s = since(start);
  const auto release_start = Clock::now();
  std::optional<Release> rel;
  if (s.mode == "selective" && s.epsilon1 > 0) rel = release_stage(s, data, folder.policies, o);
  const double release_s = since(release_start);
  const auto train_start = Clock::now();
  const double train_cpu_start = thread_cpu_seconds();
  const Dataset* stable = nullptr;
  const Dataset* unstable = &data;
  if (rel) {
    stable = rel->stable ? &*rel->stable : nullptr;
    unstable = rel->unstable ? &*rel->unstable : nullptr;
  }
  if (s.mode == "non_private") std::swap(stable, unstable);

  std::error_code ec;
  for (const char* f : {"run.json", "summary.json", "timing.json"}) fs::remove(s.out / f, ec);
  CheckpointSetup ckpt = stage_checkpoints(s);
  RunDir dir(s.out);
  dir.write_config(s.resolved);
  ParamMap eval = s.population.env_params;
  if (s.eval_max_steps > 0)
    param_map_set(eval, "max_episode_steps", {std::to_string(s.eval_max_steps), "train"});
  const std::string env_id = s.population.env_id;
  TrainParams tp;
  tp.steps = std::int64_t{1} << 40;  // iterations end by budget or stable_steps
  tp.eval_every = s.eval_every;
  tp.eval_episodes = s.eval_episodes;
  Progress progress(o.progress, s.name + ": ");
  TrainContext ctx([env_id, eval] { return envs::make_env(env_id, eval); }, s.seed, tp, &dir,
                   &progress);
  ctx.set_checkpoints(std::move(ckpt));
  // rows (and the progress line's return) go out only with checkpoints and the summary
  if (s.mode != "non_private") ctx.hold_metrics_until_checkpoints();
  auto algo = algo_registry().make(s.learner_id, s.learner_params);
  auto& learner = dynamic_cast<OfflineLearner&>(*algo);
  int batch = 0;
  for (const auto& [k, v] : algo->params())
    if (k == "batch_size") batch = std::stoi(v.text);
  const SelectiveResult r = train_selective(learner, stable, unstable, m, batch, s.selective, ctx);
  progress.finish();

  RunSummary sum;
  sum.name = s.name;
  sum.env = env_id;
  sum.algo = s.learner_id;
  sum.seed = s.seed;
  sum.env_steps = r.iterations;
  sum.final_eval = ctx.last_eval();
  if (s.mode != "non_private") sum.privacy = combined_report(s, rel ? &*rel : nullptr, r);
  auto env = envs::make_env(env_id, eval);
  RandomPolicy random(env->spec());
  const EvalStats rs = evaluate(*env, random, s.eval_episodes, s.seed, 0);
  sum.extra = {{"experts", static_cast<double>(m)},
               {"iterations", static_cast<double>(r.iterations)},
               {"noisy_steps", static_cast<double>(r.noisy_steps)},
               {"stable_steps", static_cast<double>(r.stable_steps)},
               {"skipped_steps", static_cast<double>(r.skipped)},
               {"random_return", rs.return_mean}};
  if (rel) {
    sum.extra.push_back({"stable_prefixes", static_cast<double>(rel->prefixes)});
    sum.extra.push_back({"stable_transitions", static_cast<double>(rel->transitions)});
    sum.extra.push_back({"release_epsilon_exact", rel->record.at("epsilon").get<double>()});
  }
  if (r.report) sum.extra.push_back({"dp_sgd_epsilon", r.epsilon});
  if (r.capped) sum.extra.push_back({"capped", 1.0});
  const double train_s = since(train_start);
  const double train_cpu_s = thread_cpu_seconds() - train_cpu_start;
  sum.wall_time_s = since(start);
  algo->save_policy(dir.path() / algo->policy_file());
  if (s.audit) {
    // a separate training of the DP-SGD part with canary experts (selective_audit.hpp)
    auto fresh = algo_registry().make(s.learner_id, s.learner_params);
    AuditReport a = audit_selective(
        dynamic_cast<OfflineLearner&>(*fresh), stable, unstable, m, batch, s.selective,
        [env_id, eval] { return envs::make_env(env_id, eval); }, s.seed, *s.audit);
    a.learner = "expert_level (" + s.learner_id + ")";
    a.epsilon_reported = sum.privacy ? sum.privacy->epsilon : NAN;
    sum.audit_json = audit_report_json(a);
    sum.audit_refuted = a.refuted;
    write_file_atomic(dir.path() / "audit.json", sum.audit_json + "\n");
  }
  dir.write_summary(sum);
  remove_run_checkpoints(s.out);
  write_pipeline_records(s, dir.path(), sum.wall_time_s, population_s, release_s,
                         rel ? rel->reused : false, train_s, train_cpu_s);
  return sum;
}

RunSummary run_pipeline_file(const fs::path& file, const RunOptions& opts,
                             const PipelineOptions& popts) {
  const Node root = load_yaml_file(file);
  const PipelineSpec spec = parse_pipeline(root, file.stem().string(), file.parent_path(), opts);
  return run_pipeline(spec, popts);
}

}  // namespace dprl::algos
