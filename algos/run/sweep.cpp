#include "algos/run/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "algos/core/checkpoint.hpp"
#include "algos/run/experiment.hpp"
#include "algos/run/pipeline.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/sha256.hpp"

namespace dprl::algos {
namespace {

namespace fs = std::filesystem;

std::string last_component(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::vector<std::uint64_t> read_seeds(const Node& top, const Node& base_config,
                                      const fs::path& base_path) {
  std::vector<std::uint64_t> seeds;
  if (const Node* s = top.find("seeds")) {
    if (!s->is_seq() || s->elements().empty())
      throw ConfigError(fmt::format("{}: seeds must be a non-empty list of integers", s->where()));
    for (const auto& e : s->elements()) {
      const auto v = e.as_int("seeds");
      if (v < 0) throw ConfigError(fmt::format("{}: seeds must be non-negative", e.where()));
      // a repeated seed would run twice into one run directory
      if (std::find(seeds.begin(), seeds.end(), static_cast<std::uint64_t>(v)) != seeds.end())
        throw ConfigError(fmt::format("{}: seeds: {} is listed twice", e.where(), v));
      seeds.push_back(static_cast<std::uint64_t>(v));
    }
    return seeds;
  }
  const Node* bs = base_config.find("seed");
  if (!bs)
    throw ConfigError(fmt::format("{}: the sweep has no seeds and {} has no seed", top.where(),
                                  base_path.string()));
  return {static_cast<std::uint64_t>(bs->as_int("seed"))};
}

// grid keys into plan.keys; returns each key's values
std::vector<std::vector<std::string>> read_grid(const Node& top, SweepPlan& plan) {
  std::vector<std::vector<std::string>> values;
  const Node* g = top.find("grid");
  if (!g) return values;
  const Node& grid = g->expect_map("grid");
  for (const auto& [k, v] : grid.items()) {
    if (!v.is_seq() || v.elements().empty())
      throw ConfigError(fmt::format("{}: grid.{} must be a non-empty list", v.where(), k));
    plan.keys.push_back(k);
    std::vector<std::string> vs;
    for (const auto& e : v.elements()) vs.push_back(e.as_string("grid." + k));
    values.push_back(std::move(vs));
  }
  return values;
}

// the runs of grid point p (mixed-radix digits of p, first key slowest), one per seed
void add_point(SweepPlan& plan, std::size_t p, const std::vector<std::vector<std::string>>& values,
               const std::vector<std::uint64_t>& seeds, const Node& base_config) {
  std::vector<std::size_t> digit(values.size());
  std::size_t rest = p;
  for (std::size_t k = values.size(); k-- > 0;) {
    digit[k] = rest % values[k].size();
    rest /= values[k].size();
  }
  std::vector<std::pair<std::string, std::string>> assignment;
  std::vector<std::string> label_parts;
  for (std::size_t k = 0; k < values.size(); ++k) {
    assignment.emplace_back(plan.keys[k], values[k][digit[k]]);
    label_parts.push_back(last_component(plan.keys[k]) + "=" + values[k][digit[k]]);
  }
  const std::string label =
      label_parts.empty() ? "base" : run_label(fmt::format("{}", fmt::join(label_parts, ",")));
  for (std::uint64_t seed : seeds) {
    SweepRun run;
    run.index = plan.runs.size();
    run.label = label;
    run.seed = seed;
    run.values = assignment;
    run.config = base_config;
    for (const auto& [k, v] : assignment) apply_override(run.config, k + "=" + v, "grid");
    const Node* name = run.config.find("name");
    run.name = name ? name->text() : label;
    run.out = plan.out / label / fmt::format("seed{}", seed);
    RunOptions opts;
    opts.seed = seed;
    opts.out = run.out;
    // validates now; the digest is that of the config.yaml the run will write
    run.config_sha256 = is_pipeline(run.config)
                            ? parse_pipeline(run.config, run.name, {}, opts).digest
                            : sha256_hex(to_yaml(resolve_experiment(run.config, run.name, opts)));
    plan.runs.push_back(std::move(run));
  }
}

// temporary files of atomic writes a killed run left behind ("<name>.tmp.<pid>.<n>", engine/io)
void remove_write_leftovers(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find(".tmp.") != std::string::npos)
      stale.push_back(it->path());
  for (const auto& p : stale) fs::remove(p, ec);
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string run_label(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
          c == '=' || c == ','))
      c = '_';
  return s;
}

SweepPlan plan_sweep(const fs::path& file) {
  const Node root = load_yaml_file(file);
  const Node& top = root.expect_map("the sweep");
  top.check_keys({"base", "out", "seeds", "set", "grid"}, "the sweep");
  const Node* base = top.find("base");
  if (!base) throw ConfigError(fmt::format("{}: missing key 'base' in the sweep", top.where()));
  const fs::path base_path = file.parent_path() / base->as_string("base");
  Node base_config = load_yaml_file(base_path);
  // fixed overrides shared by every run (applied before the grid values)
  if (const Node* st = top.find("set")) {
    const Node& set = st->expect_map("set");
    for (const auto& [k, v] : set.items())
      apply_override(base_config, k + "=" + v.as_string("set." + k), "set");
  }
  // a pipeline's population file is named relative to the pipeline file (also when
  // `set` names it)
  if (Node* pop = is_pipeline(base_config) ? base_config.find("population") : nullptr)
    if (pop->is_scalar())
      *pop = Node::scalar((base_path.parent_path() / pop->text()).string(), pop->where());

  SweepPlan plan;
  if (const Node* o = top.find("out"))
    plan.out = o->as_string("out");
  else
    plan.out = fs::path("runs") / file.stem();
  // a file where the sweep folder goes fails every run: refuse it before the first
  std::error_code ec;
  if (fs::exists(plan.out, ec) && !fs::is_directory(plan.out, ec))
    throw ConfigError(fmt::format("{}: out '{}' exists and is not a folder",
                                  top.find("out") ? top.find("out")->where() : file.string(),
                                  plan.out.string()));
  const auto seeds = read_seeds(top, base_config, base_path);
  const auto values = read_grid(top, plan);
  // every run is resolved while planning: a grid of 10^6 runs and more is refused up front
  constexpr double kMaxRuns = 1e6;
  double runs = static_cast<double>(seeds.size());
  for (const auto& v : values) runs *= static_cast<double>(v.size());
  if (runs > kMaxRuns)
    throw ConfigError(fmt::format("{}: the grid times the seeds is {:g} runs; at most {:g}",
                                  file.string(), runs, kMaxRuns));
  std::size_t points = 1;
  for (const auto& v : values) points *= v.size();
  for (std::size_t p = 0; p < points; ++p) add_point(plan, p, values, seeds, base_config);
  return plan;
}

RunState run_state(const SweepRun& run) {
  RunState st;
  std::error_code ec;
  if (!fs::exists(run.out / "run.json", ec) || !fs::exists(run.out / "summary.json", ec)) return st;
  try {
    const auto record = nlohmann::json::parse(read_file(run.out / "run.json"));
    std::string summary = read_file(run.out / "summary.json");
    if (record.at("config_sha256").get<std::string>() != run.config_sha256) {
      st.kind = RunState::Kind::kOtherConfig;
    } else if (record.at("summary_sha256").get<std::string>() != sha256_hex(summary)) {
      st.kind = RunState::Kind::kAltered;
    } else {
      st.kind = RunState::Kind::kComplete;
      st.summary = std::move(summary);
    }
  } catch (const std::exception&) {
    // unreadable record: not complete
  }
  return st;
}

namespace {

// Whether run.out holds a checkpoint of this very run to continue from: config.yaml carries the
// run's digest and a checkpoint reads back whole. A corrupted checkpoint.bin is removed so the
// previous one is used (the same recovery `dprl resume` asks of a user); when none is usable, both
// are removed and the run starts from step 0. Notes on stderr say which.
bool usable_checkpoint(const SweepRun& run) {
  std::error_code ec;
  const bool any =
      fs::exists(run.out / kCheckpointFile, ec) || fs::exists(run.out / kPrevCheckpointFile, ec);
  if (!any) return false;
  try {
    if (sha256_hex(read_file(run.out / "config.yaml")) != run.config_sha256) return false;
  } catch (const std::exception&) {
    return false;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!read_run_checkpoint(run.out)) return false;
      fmt::print(stderr, "dprl: note: {} continues from its last checkpoint\n", run.out.string());
      return true;
    } catch (const DataError& e) {
      fmt::print(stderr, "dprl: note: {}: unusable checkpoint dropped ({})\n", run.out.string(),
                 one_line(e.what()));
      // the newest file is the one read: drop it and try the previous one
      fs::remove(run.out / (fs::exists(run.out / kCheckpointFile, ec) ? kCheckpointFile
                                                                      : kPrevCheckpointFile),
                 ec);
    }
  }
  remove_run_checkpoints(run.out);
  return false;
}

}  // namespace

RunOutcome execute_run(const SweepRun& run, int rank, bool from_checkpoint) {
  RunOutcome o;
  o.rank = rank;
  const auto start = std::chrono::steady_clock::now();
  try {
    // a run killed before it writes run.json again is never taken as complete
    std::error_code ec;
    for (const char* f : {"run.json", "summary.json", "timing.json"}) fs::remove(run.out / f, ec);
    remove_write_leftovers(run.out);
    RunOptions opts;
    opts.seed = run.seed;
    opts.out = run.out;
    opts.progress = Progress::Mode::kOff;
    opts.resume = from_checkpoint && !is_pipeline(run.config) && usable_checkpoint(run);
    o.summary = summary_json(
        is_pipeline(run.config)
            ? run_pipeline(parse_pipeline(run.config, run.name, {}, opts), {1, opts.progress})
            : run_experiment(run.config, run.name, opts));
    nlohmann::ordered_json record;
    record["config_sha256"] = run.config_sha256;
    record["summary_sha256"] = sha256_hex(o.summary);
    write_file_atomic(run.out / "run.json", record.dump(2) + "\n");
    o.status = RunOutcome::Status::kDone;
  } catch (const std::exception& e) {
    o.status = RunOutcome::Status::kFailed;
    o.summary.clear();
    o.error = one_line(e.what());
  }
  o.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

std::string outcome_to_json(std::size_t index, const RunOutcome& o) {
  static const char* kStatus[] = {"pending", "done", "skipped", "failed"};
  nlohmann::ordered_json j;
  j["run"] = index;
  j["status"] = kStatus[static_cast<int>(o.status)];
  j["summary"] = o.summary;
  j["error"] = o.error;
  j["wall_time_s"] = o.wall_time_s;
  j["rank"] = o.rank;
  return j.dump();
}

std::pair<std::size_t, RunOutcome> outcome_from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    RunOutcome o;
    const auto status = j.at("status").get<std::string>();
    if (status == "done")
      o.status = RunOutcome::Status::kDone;
    else if (status == "skipped")
      o.status = RunOutcome::Status::kSkipped;
    else if (status == "failed")
      o.status = RunOutcome::Status::kFailed;
    else
      throw DataError("unknown status " + status);
    o.summary = j.at("summary").get<std::string>();
    o.error = j.at("error").get<std::string>();
    o.wall_time_s = j.at("wall_time_s").get<double>();
    o.rank = j.at("rank").get<int>();
    return {j.at("run").get<std::size_t>(), std::move(o)};
  } catch (const std::exception& e) {
    throw DataError(fmt::format("malformed run outcome message: {}", one_line(e.what())));
  }
}

}  // namespace dprl::algos
