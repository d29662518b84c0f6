#include "algos/run/experiment.hpp"

#include <fmt/format.h>

#include <chrono>

#include "algos/audit/audited_record.hpp"
#include "algos/core/algorithm.hpp"
#include "algos/offline/offline_learner.hpp"
#include "algos/run/audit_dispatch.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/sha256.hpp"
#include "envs/register_envs.hpp"

namespace dprl::algos {
namespace {

struct Parsed {
  std::string name;
  std::uint64_t seed = 0;
  std::filesystem::path out;
  std::string env_id;
  ParamMap env_params;
  std::string algo_id;
  ParamMap algo_params;
  TrainParams train;
  std::string data_path;  // the `data:` section ("" when absent)
  std::string data_format = "auto";
  std::string data_where;
  std::optional<AuditParams> audit;  // the `audit:` section
};

Parsed parse(const Node& root, const std::string& default_name, const RunOptions& opts) {
  const Node& top = root.expect_map("the experiment");
  top.check_keys({"name", "seed", "out", "env", "algo", "train", "data", "audit"},
                 "the experiment");
  Parsed p;
  p.name = top.find("name") ? top.find("name")->as_string("name") : default_name;
  // the name is the default run directory runs/<name>: one plain path component
  if (p.name.empty() || p.name == "." || p.name == ".." ||
      p.name.find_first_of("/\\") != std::string::npos || p.name.size() > 200)
    throw ConfigError(fmt::format(
        "{}: name '{}' must be a non-empty file name of at most 200 characters (no '/')",
        top.find("name") ? top.find("name")->where() : top.where(), p.name));
  if (opts.seed) {
    p.seed = *opts.seed;
  } else if (const Node* s = top.find("seed")) {
    const auto v = s->as_int("seed");
    if (v < 0)
      throw ConfigError(fmt::format("{}: seed must be a non-negative integer", s->where()));
    p.seed = static_cast<std::uint64_t>(v);
  } else {
    throw ConfigError(
        fmt::format("{}: missing key 'seed' in the experiment (or pass --seed)", top.where()));
  }
  if (opts.out && opts.out->empty())
    throw ConfigError("--out: the run directory must not be empty");
  if (opts.out)
    p.out = *opts.out;
  else if (const Node* o = top.find("out"))
    p.out = o->as_string("out");
  else
    p.out = std::filesystem::path("runs") / p.name;

  const Node* env = top.find("env");
  if (!env) throw ConfigError(fmt::format("{}: missing key 'env' in the experiment", top.where()));
  const Node& env_map = env->expect_map("env");
  env_map.check_keys({"id", "params"}, "env");
  const Node* env_id = env_map.find("id");
  if (!env_id) throw ConfigError(fmt::format("{}: missing key 'id' in env", env->where()));
  p.env_id = env_id->as_string("env.id");
  if (const Node* ep = env_map.find("params")) p.env_params = ep->to_param_map("env.params");

  const Node* algo = top.find("algo");
  if (!algo)
    throw ConfigError(fmt::format("{}: missing key 'algo' in the experiment", top.where()));
  const Node& algo_map = algo->expect_map("algo");
  algo_map.check_keys({"id", "params"}, "algo");
  const Node* algo_id = algo_map.find("id");
  if (!algo_id) throw ConfigError(fmt::format("{}: missing key 'id' in algo", algo->where()));
  p.algo_id = algo_id->as_string("algo.id");
  if (const Node* ap = algo_map.find("params")) p.algo_params = ap->to_param_map("algo.params");

  if (const Node* t = top.find("train"))
    p.train = read_params<TrainParams>(t->to_param_map("train"), "train");
  if (const Node* d = top.find("data")) {
    const Node& dm = d->expect_map("data");
    dm.check_keys({"path", "format"}, "data");
    const Node* path = dm.find("path");
    if (!path) throw ConfigError(fmt::format("{}: missing key 'path' in data", d->where()));
    p.data_path = path->as_string("data.path");
    p.data_where = path->where();
    if (const Node* f = dm.find("format")) {
      p.data_format = f->as_string("data.format");
      try {
        parse_dataset_format(p.data_format);
      } catch (const ParamError&) {
        throw ConfigError(fmt::format("{}: data.format '{}' must be auto, minari or d4rl",
                                      f->where(), p.data_format));
      }
    }
  }
  if (const Node* a = top.find("audit")) {
    p.audit =
        read_params<AuditParams>(a->is_null() ? ParamMap{} : a->to_param_map("audit"), "audit");
    if (p.audit->guesses > p.audit->canaries)
      throw ConfigError(fmt::format("{}: audit.guesses = {} must be <= audit.canaries = {}",
                                    a->where(), p.audit->guesses, p.audit->canaries));
  }
  return p;
}

// The experiment's dataset, loaded and checked against the env before anything is written.
std::shared_ptr<const Dataset> load_experiment_data(const Parsed& p, const Env& env,
                                                    const Algorithm& algo) {
  if (p.data_path.empty()) {
    if (algo.needs_dataset())
      throw ConfigError(
          fmt::format("missing key 'data' in the experiment: algo '{}' learns from "
                      "a dataset (data: {{path: DIR, format: minari|d4rl}})",
                      p.algo_id));
    return nullptr;
  }
  if (!algo.accepts_dataset())
    throw ConfigError(
        fmt::format("{}: data: algo '{}' does not read a dataset", p.data_where, p.algo_id));
  auto ds = std::make_shared<Dataset>(load_dataset(p.data_path, p.data_format));
  const DatasetFormat format = parse_dataset_format(p.data_format);
  const bool d4rl = (format == DatasetFormat::kAuto ? detect_dataset_format(p.data_path)
                                                    : format) == DatasetFormat::kD4rl;
  if (d4rl) {
    // a D4RL file has no spaces: it takes the env's, and every value is checked against them
    adopt_env_spaces(ds->mutable_info(), env.spec());
    if (ds->info().env_id.empty()) ds->mutable_info().env_id = env.spec().id;
  }
  check_spaces(ds->info(), env.spec(), p.data_path);
  if (d4rl) ds->validate(p.data_path);
  return ds;
}

Node resolved_tree(const Parsed& p, const Env& env, const Algorithm& algo) {
  Node root = Node::map("");
  root.set("name", Node::scalar(p.name, ""));
  root.set("seed", Node::scalar(fmt::format("{}", p.seed), ""));
  root.set("out", Node::scalar(p.out.string(), ""));
  Node env_node = Node::map("");
  env_node.set("id", Node::scalar(p.env_id, ""));
  env_node.set("params", param_map_to_node(env.params()));
  root.set("env", std::move(env_node));
  Node algo_node = Node::map("");
  algo_node.set("id", Node::scalar(p.algo_id, ""));
  algo_node.set("params", param_map_to_node(algo.params()));
  root.set("algo", std::move(algo_node));
  root.set("train", param_map_to_node(dump_params(p.train)));
  if (!p.data_path.empty()) {
    Node data = Node::map("");
    data.set("path", Node::scalar(p.data_path, ""));
    data.set("format", Node::scalar(p.data_format, ""));
    root.set("data", std::move(data));
  }
  if (p.audit) root.set("audit", param_map_to_node(dump_params(*p.audit)));
  return root;
}

// Whether the env's state can be saved mid-episode (Env::sync_state).
bool env_snapshots(const Env& env) {
  try {
    (void)env.snapshot();
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Checks a resume against the run directory and loads its checkpoint, before anything is written.
CheckpointSetup plan_checkpoints(const Parsed& p, const RunOptions& opts, const Algorithm& algo,
                                 const Env& env, const std::string& config_yaml) {
  CheckpointSetup c;
  c.dir = p.out;
  c.config_sha256 = sha256_hex(config_yaml);
  c.algo = p.algo_id;
  const bool can = opts.write && algo.resumable() && env_snapshots(env);
  c.every = can ? p.train.checkpoint_every : 0;
  if (!opts.resume) return c;
  if (!opts.write) throw ConfigError("--resume needs a run directory");
  if (!algo.resumable())
    throw ConfigError(fmt::format(
        "algo '{}' writes no checkpoints, so its runs cannot be resumed; run it again without "
        "--resume to start from step 0",
        p.algo_id));
  if (!env_snapshots(env))
    throw ConfigError(fmt::format(
        "env '{}' cannot be snapshotted mid-episode, so its runs write no checkpoints and cannot "
        "be resumed; run it again without --resume to start from step 0",
        p.env_id));
  if (p.train.checkpoint_every <= 0)
    throw ConfigError(
        "train.checkpoint_every is 0: the run writes no checkpoints and cannot be resumed");
  const auto cfg = p.out / "config.yaml";
  std::error_code ec;
  if (!std::filesystem::exists(cfg, ec))
    throw ConfigError(
        fmt::format("--resume: {} holds no run (no config.yaml); run it without "
                    "--resume",
                    p.out.string()));
  if (read_file(cfg) != config_yaml)
    throw ConfigError(fmt::format(
        "--resume: {} holds a run of a different config (its config.yaml differs from the "
        "resolved config); use another --out or run without --resume",
        p.out.string()));
  if (std::filesystem::exists(p.out / "summary.json", ec))
    throw ConfigError(fmt::format(
        "--resume: {} holds a complete run (summary.json); nothing to resume", p.out.string()));
  if (auto loaded = read_run_checkpoint(p.out)) {
    c.resume_file = loaded->file;
    c.resume_payload = std::move(loaded->payload);
    if (c.resume_payload.empty())
      throw DataError(fmt::format("{}: empty checkpoint", c.resume_file.string()));
  } else {
    note(fmt::format("dprl: note: {} has no checkpoint yet; the run starts from step 0",
                     p.out.string()));
  }
  return c;
}

// A finished run (summary.json) of another config in out is not replaced silently: the run is
// refused unless RunOptions::force. An unreadable config.yaml counts as another config.
void refuse_other_finished_run(const std::filesystem::path& out, const std::string& config_yaml) {
  std::error_code ec;
  if (!std::filesystem::exists(out / "summary.json", ec) ||
      !std::filesystem::exists(out / "config.yaml", ec))
    return;
  try {
    if (read_file(out / "config.yaml") == config_yaml) return;
  } catch (const std::exception&) {
  }
  throw ConfigError(fmt::format(
      "{} holds a finished run of another config (its config.yaml differs from this run's); "
      "use another --out, or --force to replace it",
      out.string()));
}

}  // namespace

Node resolve_experiment(const Node& config, const std::string& default_name,
                        const RunOptions& opts) {
  const Parsed p = parse(config, default_name, opts);
  auto env = envs::env_registry().make(p.env_id, p.env_params);
  auto algo = algo_registry().make(p.algo_id, p.algo_params);
  algo->check_env(env->spec());
  return resolved_tree(p, *env, *algo);
}

RunSummary run_experiment(Node config, const std::string& default_name, const RunOptions& opts) {
  std::optional<NoteSink> sink;
  if (opts.log) sink.emplace(opts.log);
  for (const auto& o : opts.overrides) apply_override(config, o);
  const Parsed p = parse(config, default_name, opts);
  // build everything before touching the disk: a bad config fails here
  const auto& reg = envs::env_registry();
  auto probe_env = reg.make(p.env_id, p.env_params);
  auto algo = algo_registry().make(p.algo_id, p.algo_params);
  algo->check_env(probe_env->spec());
  const Node resolved = resolved_tree(p, *probe_env, *algo);
  // a resume is checked (and its checkpoint read) before the learner's checks, which may open a
  // ledger in the run directory
  const std::string config_yaml = to_yaml(resolved);
  CheckpointSetup ckpt = plan_checkpoints(p, opts, *algo, *probe_env, config_yaml);
  if (opts.write && !opts.resume && !opts.force) refuse_other_finished_run(p.out, config_yaml);
  const auto data = load_experiment_data(p, *probe_env, *algo);
  // the learner's own checks against the env, train settings, dataset and ledger, still before
  // the disk
  const std::string env_id = p.env_id;
  const ParamMap env_params = p.env_params;
  const auto make_env = [&reg, env_id, env_params] { return reg.make(env_id, env_params); };
  const AuditInputs audit_in{p.algo_id, *probe_env, make_env, data.get(), p.train, p.seed};
  if (p.audit) {
    // the audit's own checks, on a separate learner, before anything is written
    auto probe = algo_registry().make(p.algo_id, p.algo_params);
    check_audit(*probe, audit_in, *p.audit);
  }
  const bool writes = opts.write && !opts.check_only;
  algo->check(RunPlan{*probe_env, p.train, p.seed,
                      writes ? std::optional<std::filesystem::path>(p.out) : std::nullopt,
                      data.get(), !ckpt.resume_payload.empty(), opts.force});
  RunSummary s;
  s.name = p.name;
  s.env = p.env_id;
  s.algo = p.algo_id;
  s.seed = p.seed;
  if (opts.check_only) return s;

  std::optional<RunDir> dir;
  if (opts.write) {
    dir.emplace(p.out);
    dir->write_config(resolved);
    if (ckpt.resume_payload.empty())
      remove_run_checkpoints(p.out);
    else
      dir->defer_until_resumed();  // a checkpoint refused on restore leaves metrics.csv as it was
  }
  Progress progress(opts.progress, p.name + ": ");
  const auto start = std::chrono::steady_clock::now();
  TrainContext ctx(make_env, p.seed, p.train, dir ? &*dir : nullptr, &progress);
  if (data) ctx.set_dataset(data, p.data_path);
  ctx.set_checkpoints(std::move(ckpt));
  ctx.set_hooks({opts.on_eval, opts.stop});
  const TrainSteps done = algo->train(ctx);
  progress.finish();
  ctx.set_hooks({opts.on_eval, {}});  // training is over: the final evaluation is not a stop point

  s.env_steps = done.env_steps;
  s.gradient_steps = done.gradient_steps;
  // the step column: gradient steps for the learners that only read a dataset
  const std::int64_t steps = algo->needs_dataset() ? done.gradient_steps : done.env_steps;
  s.episodes = algo->train_episodes();
  if (ctx.last_eval_step() != steps) {
    auto pol = algo->policy();
    ctx.evaluate(*pol, steps, s.episodes);
  }
  s.final_eval = ctx.last_eval();
  s.privacy = algo->privacy();
  s.extra = algo->summary_extra();
  s.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (dir) s.dir = dir->path().string();
  if (dir && p.train.checkpoint) algo->save_policy(dir->path() / algo->policy_file());
  if (p.audit) {
    // a separate training of the same configuration with canaries (the released model has none)
    auto fresh = algo_registry().make(p.algo_id, p.algo_params);
    const AuditReport r =
        run_audit(*fresh, audit_in, *p.audit, s.privacy ? s.privacy->epsilon : NAN);
    s.audit_json = audit_report_json(r);
    s.audit_refuted = r.refuted;
    // the audit trained again on the protected data, uncharged: the record is not formal
    if (s.privacy && audit_retrains_on_run_data(r)) mark_audited(*s.privacy);
    if (dir) dir->write_file("audit.json", s.audit_json + "\n");
  }
  if (dir) {
    dir->write_summary(s);
    remove_run_checkpoints(dir->path());
  }
  return s;
}

AuditReport audit_experiment(Node config, const std::string& default_name, const RunOptions& opts,
                             double epsilon_reported) {
  for (const auto& o : opts.overrides) apply_override(config, o);
  const Parsed p = parse(config, default_name, opts);
  const auto& reg = envs::env_registry();
  auto env = reg.make(p.env_id, p.env_params);
  auto algo = algo_registry().make(p.algo_id, p.algo_params);
  algo->check_env(env->spec());
  const auto data = load_experiment_data(p, *env, *algo);
  const std::string env_id = p.env_id;
  const ParamMap env_params = p.env_params;
  const AuditInputs in{
      p.algo_id,  *env,    [&reg, env_id, env_params] { return reg.make(env_id, env_params); },
      data.get(), p.train, p.seed};
  const AuditParams a = p.audit.value_or(AuditParams{});
  check_audit(*algo, in, a);
  // the learner's checks of the dataset and budget (no run directory: no ledger file)
  algo->check(RunPlan{*env, p.train, p.seed, std::nullopt, data.get()});
  return run_audit(*algo, in, a, epsilon_reported);
}

RunSummary resume_run_dir(const std::filesystem::path& dir, const RunOptions& opts) {
  const auto cfg = dir / "config.yaml";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw ConfigError(fmt::format("resume: {} is not a directory", dir.string()));
  if (!std::filesystem::exists(cfg, ec))
    throw ConfigError(fmt::format("resume: {} holds no run (no config.yaml)", dir.string()));
  Node config = load_yaml_file(cfg);
  const Node* out = config.find("out");
  if (!out) throw ConfigError(fmt::format("{}: missing key 'out'", cfg.string()));
  const std::filesystem::path out_path = out->as_string("out");
  if (!std::filesystem::equivalent(out_path, dir, ec))
    throw ConfigError(fmt::format(
        "resume: {} is the run directory '{}' seen from another working directory; resume it "
        "from the directory it was started in",
        dir.string(), out_path.string()));
  RunOptions o = opts;
  o.resume = true;
  o.out.reset();
  o.seed.reset();
  return run_experiment(std::move(config), "config", o);
}

RunSummary run_experiment_file(const std::filesystem::path& file, const RunOptions& opts) {
  return run_experiment(load_yaml_file(file), file.stem().string(), opts);
}

}  // namespace dprl::algos
