// Running the pipeline's stages (see pipeline.hpp).
#include "algos/run/pipeline.hpp"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "algos/audit/audited_record.hpp"
#include "algos/core/algorithm.hpp"
#include "algos/core/private_noise.hpp"
#include "algos/expert_level/expert_rollouts.hpp"
#include "algos/run/pipeline_ledger.hpp"
#include "algos/run/selective_audit.hpp"
#include "engine/cpu_time.hpp"
#include "engine/data/dataset_io.hpp"
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
  bool unstable_all = false;  // policies source: D_unst is every recorded trajectory
  json record;                // the release's guarantee record
  std::int64_t prefixes = 0, transitions = 0;
  bool reused = false;
};

// The release's digest: what a finished release on disk must match to be reused.
std::string release_digest(const PipelineSpec& s) {
  const std::string pop_record = read_file(s.population.out / "population.json");
  return sha256_hex(fmt::format("{}\n{}\n{}\n{}\n{}\nexperts={}\n", pop_record,
                                to_yaml(param_map_to_node(dump_params(s.release))), s.seed, s.noise,
                                s.population.digest, s.experts));
}

// The recorded source's private bookkeeping: each demonstration's stable prefix length, which
// D_unst needs and which must not be published (it names the recorded episodes). It lives with
// the private data, in the population's folder, keyed by the release and the run directory.
fs::path recorded_lengths_file(const PipelineSpec& s, const std::string& digest) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(s.out), ec);
  return s.population.out / "release_private" /
         (sha256_hex(digest + "\n" + out.string()).substr(0, 32) + ".json");
}

// ledger null (an audit): a release of this config must be on disk; drawing a new one would
// spend its budget again
Release release_stage(const PipelineSpec& s, const Dataset& data,
                      const std::vector<fs::path>& policies, const PipelineOptions& o,
                      PipelineLedger* ledger) {
  const fs::path dir = s.out / "release";
  const std::string digest = release_digest(s);
  const bool recorded = s.release.source == "recorded";
  Release r;
  std::error_code ec;
  std::vector<std::int64_t> lengths;  // recorded: per demonstration
  if (fs::exists(dir / "release.json", ec)) {
    const auto j = json::parse(read_file(dir / "release.json"), nullptr, false);
    if (j.is_object() && j.contains("digest") && j.at("digest") == digest) {
      try {  // our own file, but a damaged one is named, not reported as a JSON library error
        r.record = j.at("privacy");
        r.prefixes = j.at("stable_prefixes").get<std::int64_t>();
        r.transitions = j.at("stable_transitions").get<std::int64_t>();
      } catch (const std::exception& e) {
        throw DataError(
            fmt::format("{}: damaged ({}); remove it to release anew (a new draw is "
                        "charged to {} with the earlier ones)",
                        (dir / "release.json").string(), e.what(), PipelineLedger::kFileName));
      }
      if (r.prefixes > 0) r.stable = load_dataset(dir / "stable", "minari");
      if (recorded) {
        const fs::path f = recorded_lengths_file(s, digest);
        try {
          lengths = json::parse(read_file(f)).get<std::vector<std::int64_t>>();
        } catch (const std::exception& e) {
          throw DataError(
              fmt::format("{}: the recorded release's private bookkeeping is "
                          "missing or damaged ({}); remove {} to release anew",
                          f.string(), e.what(), dir.string()));
        }
        if (lengths.size() != data.num_episodes())
          throw DataError(fmt::format("{}: {} lengths for {} demonstrations", f.string(),
                                      lengths.size(), data.num_episodes()));
      }
      r.reused = true;
    } else {
      fmt::print(stderr,
                 "dprl: note: {} holds a release of another config; releasing anew (charged to "
                 "{} with the earlier draws)\n",
                 dir.string(), PipelineLedger::kFileName);
    }
  }
  if (!r.reused && !ledger)
    throw DataError(fmt::format(
        "{}: no finished release of this pipeline (run it with dprl run first: an audit never "
        "draws a release, which would spend its budget again)",
        (dir / "release.json").string()));
  if (!r.reused) {
    // charge -> durable -> draw. A charge of this very release left by a run killed before it
    // published anything (no stable/, no release.json) pays for this draw.
    const bool nothing_out =
        !fs::exists(dir / "stable", ec) && !fs::exists(dir / "release.json", ec);
    if (!(nothing_out && ledger->last_of("release", digest)))
      ledger->charge(
          {"release", digest,
           fmt::format("DataRelease ({} source, T = {})", s.release.source, s.release.trajectories),
           release_constants(s.release).epsilon_exact, s.delta1});
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    const bool seeded = s.noise == "seeded";
    // as every private learner (algos/core/private_noise.hpp): OS entropy with the secure samplers,
    // or a stream derived from the seed and the release's privacy parameters (warned once)
    auto noise = make_private_noise(
        s.noise, s.seed, 20,
        {s.release.epsilon1, s.release.delta1, static_cast<double>(s.release.trajectories),
         static_cast<double>(s.release.max_length), s.release.p_min},
        "privacy");
    auto experts = NetExperts::load(policies, o.jobs);
    DataReleaseResult res;
    if (recorded) {
      res = data_release(data, *experts, s.release, *noise);
      lengths = res.stable_length;
      r.stable = stable_release(data, res.examined, res.stable_length);
      // the private bookkeeping first: a release.json always finds it
      const fs::path f = recorded_lengths_file(s, digest);
      make_dirs(f.parent_path());
      write_file_atomic(f, json(lengths).dump() + "\n");
    } else {
      // fresh rollouts of the experts' policies in the default env, every random choice from
      // the secret source (expert_rollouts.hpp)
      ParamMap env_params = s.population.env_params;
      param_map_set(env_params, "max_episode_steps",
                    {std::to_string(s.population.max_steps), "population.demos"});
      const std::string env_id = s.population.env_id;
      const Dataset rollouts =
          draw_expert_rollouts([&] { return envs::make_env(env_id, env_params); }, policies,
                               s.release.trajectories, s.release.p_min, *noise);
      res = data_release_rollouts(rollouts, *experts, s.release, *noise);
      r.stable = stable_release(rollouts, res.examined, res.stable_length);
    }
    r.record = json::parse(privacy_json(release_report(s.release, res, noise->name(), seeded)));
    r.prefixes = res.stable_prefixes;
    r.transitions = res.stable_transitions;
    SaveOptions so;
    so.overwrite = true;
    if (r.stable->num_episodes() > 0) save_minari(*r.stable, dir / "stable", so);
    json j;
    j["digest"] = digest;
    j["source"] = s.release.source;
    j["stable_prefixes"] = r.prefixes;
    j["stable_transitions"] = r.transitions;
    j["examined"] = s.release.trajectories;
    json stable = json::array();  // the prefix lengths in the order of stable/
    for (std::size_t e = 0; e < r.stable->num_episodes(); ++e)
      stable.push_back(r.stable->episode_length(e));
    j["stable_lengths"] = std::move(stable);
    j["privacy"] = r.record;
    write_file_atomic(dir / "release.json", j.dump(2) + "\n");  // last: the stage is complete
  }
  if (r.stable && r.stable->num_episodes() == 0) r.stable.reset();
  if (recorded) {
    // D_unst is the data minus the stable prefixes: rebuilt, never stored (it is private input)
    ReleasedData parts = split_release(data, lengths);
    if (parts.unstable.num_episodes() > 0) r.unstable = std::move(parts.unstable);
  } else {
    r.unstable_all = true;
  }
  return r;
}

// The whole pipeline's record: basic composition (Thm. 5.6) of every draw charged to the
// directory's ledger (this run's release and train stage, and any earlier ones).
PrivacyReport combined_report(const PipelineSpec& s, const Release* rel, const SelectiveResult& r,
                              const PipelineLedger& ledger) {
  PrivacyReport rep;
  rep.epsilon = ledger.epsilon();
  rep.delta = ledger.delta();
  rep.accountant = "basic composition of every draw on this directory (" +
                   std::string(PipelineLedger::kFileName) +
                   "): releases (advanced composition) and DP-SGD stages (" +
                   s.selective.accountant + ")";
  rep.neighbouring = NeighbouringRelation::kAddRemove;
  rep.unit = "expert";
  rep.sensitivity = "release: count sensitivity 1; DP-SGD: L2 clip per sampled expert";
  rep.covers = {"policy.bin (the released model)",
                "metrics.csv (evaluation returns in public env episodes; epsilon)",
                "summary.json (except its \"audit\" object)",
                "release/stable (D_stable) and release/release.json",
                std::string(PipelineLedger::kFileName) + " and privacy_ledger.json"};
  const bool seeded = s.noise == "seeded";
  const bool release_formal = !rel || rel->record.value("formal", false);
  rep.formal = !seeded && release_formal && (!r.report || r.report->formal);
  rep.noise_source = r.report ? r.report->noise_source
                              : (rel ? rel->record.at("noise_source").get<std::string>() : "");
  rep.reproducible_noise = seeded;
  json d;
  d["mode"] = s.mode;
  d["relation"] =
      rel && s.release.source == "recorded"
          ? "add or remove one expert together with all of its recorded trajectories (the "
            "release's bound does not hold for it: see parts.release.details.note)"
          : "add or remove one expert: its policy (the release examines rollouts of the "
            "policies drawn inside the mechanism with secret randomness) and all of its recorded "
            "trajectories (the DP-SGD steps)";
  d["budget"] = {{"epsilon", s.epsilon}, {"delta", s.delta},       {"epsilon1", s.epsilon1},
                 {"delta1", s.delta1},   {"epsilon2", s.epsilon2}, {"delta2", s.delta2}};
  d["accounting"] = s.selective.accounting;
  json parts = json::object();
  parts["release"] = rel ? rel->record : json(nullptr);
  parts["dp_sgd"] = r.report ? json::parse(privacy_json(*r.report)) : json(nullptr);
  d["parts"] = std::move(parts);
  d["ledger"] = json::parse(ledger.to_json()).at("charges");
  d["not_covered"] =
      "the unstable data (the raw data minus the release; private input, not stored); "
      "timing.json; audit.json and summary.json \"audit\"";
  if (!release_formal && !seeded)
    d["note"] =
        "not formal: the release examined the fixed recorded demonstrations "
        "(release.source: recorded)";
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

PipelineExperts pipeline_experts(const PipelineSpec& s, const PipelineOptions& o) {
  fs::path demos = s.population.out / "demos";
  std::error_code ec;
  if (s.population_on_disk && (!fs::exists(s.population.out / "manifest.json", ec) ||
                               !fs::exists(demos, ec)))
    throw DataError(fmt::format(
        "{}: the population {} is not built (no manifest.json or demos/); build it first with "
        "dprl population",
        s.population.out.string(), s.population.name));
  if (!s.population_on_disk) {
    PopulationOptions po;
    po.jobs = o.jobs;
    po.quiet = o.progress == Progress::Mode::kOff;
    demos = build_population(s.population, po).dataset;
  }
  PipelineExperts e;
  e.data = load_dataset(demos, "minari");
  ExpertsFolder folder = read_experts(s.population.out);
  check_experts(e.data, folder, s);
  if (s.experts < s.population_experts) subset_experts(s, e.data, folder);
  e.policies = std::move(folder.policies);
  return e;
}

PipelineTrainData pipeline_train_data(const PipelineSpec& s, const PipelineOptions& o) {
  PipelineExperts ex = pipeline_experts(s, o);
  PipelineTrainData t;
  t.data = std::move(ex.data);
  t.experts = s.experts;
  if (s.mode == "selective" && s.epsilon1 > 0) {
    Release rel = release_stage(s, t.data, ex.policies, o, nullptr);
    t.stable = std::move(rel.stable);
    t.unstable = std::move(rel.unstable);
    if (rel.unstable_all) t.unstable = t.data;
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

void check_pipeline(const PipelineSpec& s) {
  if (const std::string problem = dir_problem(s.out); !problem.empty())
    throw ConfigError(fmt::format("out = '{}': {}", s.out.string(), problem));
  if (s.mode == "non_private") return;
  std::error_code ec;
  if (!fs::exists(s.out / PipelineLedger::kFileName, ec)) return;
  const PipelineLedger ledger(s.out, s.epsilon, s.delta);  // a damaged ledger throws here
  if (ledger.epsilon() >= s.epsilon * (1 + 1e-9) || ledger.delta() >= s.delta * (1 + 1e-9))
    throw BudgetExceeded(fmt::format(
        "{}: earlier draws on this directory already spent ({:.6g}, {:.3g}) of the budget "
        "({:.6g}, {:.3g}); nothing is left for this run",
        ledger.file().string(), ledger.epsilon(), ledger.delta(), s.epsilon, s.delta));
}

RunSummary run_pipeline(const PipelineSpec& s, const PipelineOptions& o) {
  check_pipeline(s);
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
  PipelineExperts ex = pipeline_experts(s, o);
  Dataset& data = ex.data;
  const std::int64_t m = s.experts;

  const double population_s = since(start);
  const auto release_start = Clock::now();
  // every draw that reads the private data is charged to the directory's ledger first
  std::optional<PipelineLedger> ledger;
  if (s.mode != "non_private") ledger.emplace(s.out, s.epsilon, s.delta);
  std::optional<Release> rel;
  if (s.mode == "selective" && s.epsilon1 > 0)
    rel = release_stage(s, data, ex.policies, o, &*ledger);
  const double release_s = since(release_start);
  const auto train_start = Clock::now();
  const double train_cpu_start = thread_cpu_seconds();
  const Dataset* stable = nullptr;
  const Dataset* unstable = &data;
  if (rel) {
    stable = rel->stable ? &*rel->stable : nullptr;
    unstable = rel->unstable_all ? &data : (rel->unstable ? &*rel->unstable : nullptr);
  }
  if (s.mode == "non_private") std::swap(stable, unstable);

  std::error_code ec;
  // whether an earlier train stage in this directory published anything (rows go out only with
  // checkpoints, the policy and summary at the end)
  auto has_rows = [&] {
    if (!fs::exists(s.out / "metrics.csv", ec)) return false;
    const std::string rows = read_file(s.out / "metrics.csv");
    const auto nl = rows.find('\n');
    return nl != std::string::npos && nl + 1 < rows.size();
  };
  const bool published =
      fs::exists(s.out / "summary.json", ec) || fs::exists(s.out / "policy.bin", ec) || has_rows();
  for (const char* f : {"run.json", "summary.json", "timing.json"}) fs::remove(s.out / f, ec);
  CheckpointSetup ckpt = stage_checkpoints(s);
  // the train stage's charge: a stage continuing from its checkpoint is the same draw (charged
  // when it began); a stage killed before publishing anything left a charge that pays for this
  // one; anything else is a new draw on the same data
  std::optional<std::size_t> train_charge;
  if (ledger && s.selective.p > 0 && s.epsilon2 > 0) {
    train_charge = ledger->last_of("train", s.digest);
    const bool continuing = !ckpt.resume_payload.empty() && train_charge;
    if (!continuing && (published || !train_charge))
      train_charge =
          ledger->charge({"train", s.digest, fmt::format("selective DP-SGD ({} mode)", s.mode),
                          s.epsilon2, s.delta2});
  }
  RunDir dir(s.out);
  dir.write_config(s.resolved);
  if (!ckpt.resume_payload.empty()) dir.defer_until_resumed();
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
  sum.gradient_steps = r.iterations;
  sum.final_eval = ctx.last_eval();
  if (train_charge && r.report) ledger->settle(*train_charge, r.report->epsilon);
  if (s.mode != "non_private") sum.privacy = combined_report(s, rel ? &*rel : nullptr, r, *ledger);
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
  sum.dir = dir.path().string();
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
    // it trained on the protected data again, uncharged: the record is not formal
    if (sum.privacy) mark_audited(*sum.privacy);
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
