#include "algos/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "algos/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/params.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::algos {
namespace {

std::string last_component(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
          c == '=' || c == ','))
      c = '_';
  return s;
}

}  // namespace

SweepPlan plan_sweep(const std::filesystem::path& file) {
  const Node root = load_yaml_file(file);
  const Node& top = root.expect_map("the sweep");
  top.check_keys({"base", "out", "seeds", "set", "grid"}, "the sweep");
  const Node* base = top.find("base");
  if (!base) throw ConfigError(fmt::format("{}: missing key 'base' in the sweep", top.where()));
  const std::filesystem::path base_path = file.parent_path() / base->as_string("base");
  Node base_config = load_yaml_file(base_path);
  // fixed overrides shared by every run (applied before the grid values)
  if (const Node* st = top.find("set")) {
    const Node& set = st->expect_map("set");
    for (const auto& [k, v] : set.items())
      apply_override(base_config, k + "=" + v.as_string("set." + k), "set");
  }

  SweepPlan plan;
  if (const Node* o = top.find("out"))
    plan.out = o->as_string("out");
  else
    plan.out = std::filesystem::path("runs") / file.stem();

  std::vector<std::uint64_t> seeds;
  if (const Node* s = top.find("seeds")) {
    if (!s->is_seq() || s->elements().empty())
      throw ConfigError(fmt::format("{}: seeds must be a non-empty list of integers", s->where()));
    for (const auto& e : s->elements()) {
      const auto v = e.as_int("seeds");
      if (v < 0) throw ConfigError(fmt::format("{}: seeds must be non-negative", e.where()));
      seeds.push_back(static_cast<std::uint64_t>(v));
    }
  } else {
    const Node* bs = base_config.find("seed");
    if (!bs)
      throw ConfigError(fmt::format("{}: the sweep has no seeds and {} has no seed", top.where(),
                                    base_path.string()));
    seeds.push_back(static_cast<std::uint64_t>(bs->as_int("seed")));
  }

  std::vector<std::vector<std::string>> values;
  if (const Node* g = top.find("grid")) {
    const Node& grid = g->expect_map("grid");
    for (const auto& [k, v] : grid.items()) {
      if (!v.is_seq() || v.elements().empty())
        throw ConfigError(fmt::format("{}: grid.{} must be a non-empty list", v.where(), k));
      plan.keys.push_back(k);
      std::vector<std::string> vs;
      for (const auto& e : v.elements()) vs.push_back(e.as_string("grid." + k));
      values.push_back(std::move(vs));
    }
  }

  std::size_t points = 1;
  for (const auto& v : values) points *= v.size();
  for (std::size_t p = 0; p < points; ++p) {
    // mixed-radix digits of p, first key slowest
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
        label_parts.empty() ? "base" : sanitize(fmt::format("{}", fmt::join(label_parts, ",")));
    for (std::uint64_t seed : seeds) {
      SweepRun run;
      run.index = plan.runs.size();
      run.label = label;
      run.seed = seed;
      run.values = assignment;
      run.config = base_config;
      for (const auto& [k, v] : assignment) apply_override(run.config, k + "=" + v, "grid");
      run.out = plan.out / label / fmt::format("seed{}", seed);
      RunOptions opts;
      opts.seed = seed;
      opts.out = run.out;
      resolve_experiment(run.config, base_path.stem().string(), opts);  // validate now
      plan.runs.push_back(std::move(run));
    }
  }
  return plan;
}

SweepResult run_sweep(const SweepPlan& plan, int jobs, bool verbose) {
  if (jobs < 1) throw ParamError(fmt::format("--jobs = {}: must be at least 1", jobs));
  SweepResult result;
  result.summaries.resize(plan.runs.size());
  std::mutex print_mutex;
  ThreadPool pool(jobs);
  pool.parallel_for(plan.runs.size(), [&](std::size_t i) {
    const SweepRun& run = plan.runs[i];
    RunOptions opts;
    opts.seed = run.seed;
    opts.out = run.out;
    opts.progress = Progress::Mode::kOff;
    result.summaries[i] = run_experiment(
        run.config, run.config.find("name") ? run.config.find("name")->text() : run.label, opts);
    if (verbose) {
      std::lock_guard lock(print_mutex);
      fmt::print(stderr, "[{}/{}] {} seed {}: return {:.4f}\n", i + 1, plan.runs.size(), run.label,
                 run.seed, result.summaries[i].final_eval.return_mean);
    }
  });

  // learner-specific figures (summary "extra") become columns too, in first-seen order
  std::vector<std::string> extra_keys;
  for (const auto& s : result.summaries)
    for (const auto& [k, v] : s.extra)
      if (std::find(extra_keys.begin(), extra_keys.end(), k) == extra_keys.end())
        extra_keys.push_back(k);
  auto extra_of = [](const RunSummary& s, const std::string& key) {
    for (const auto& [k, v] : s.extra)
      if (k == key) return v;
    return static_cast<double>(NAN);
  };

  std::vector<std::string> header = {"run", "label"};
  for (const auto& k : plan.keys) header.push_back(csv_field(k));
  for (const char* c :
       {"seed", "env_steps", "return_mean", "return_std", "episodes", "epsilon", "wall_time_s"})
    header.push_back(c);
  for (const auto& k : extra_keys) header.push_back(k);
  header.push_back("dir");
  std::string csv = fmt::format("{}\n", fmt::join(header, ","));
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const auto& run = plan.runs[i];
    const auto& s = result.summaries[i];
    std::vector<std::string> row = {fmt::format("{}", i), csv_field(run.label)};
    for (const auto& [k, v] : run.values) row.push_back(csv_field(v));
    row.push_back(fmt::format("{}", run.seed));
    row.push_back(fmt::format("{}", s.env_steps));
    row.push_back(format_param(s.final_eval.return_mean));
    row.push_back(format_param(s.final_eval.return_std));
    row.push_back(fmt::format("{}", s.final_eval.episodes));
    row.push_back(s.privacy ? format_param(s.privacy->epsilon) : std::string());
    row.push_back(fmt::format("{:.3f}", s.wall_time_s));
    for (const auto& k : extra_keys) {
      const double v = extra_of(s, k);
      row.push_back(std::isfinite(v) ? format_param(v) : std::string());
    }
    row.push_back(csv_field(run.out.string()));
    csv += fmt::format("{}\n", fmt::join(row, ","));
  }

  // per configuration: mean and sample sd across seeds of each figure; best by final return
  std::vector<std::string> labels;
  for (const auto& run : plan.runs)
    if (std::find(labels.begin(), labels.end(), run.label) == labels.end())
      labels.push_back(run.label);
  std::vector<std::string> figures = {"return_mean"};
  figures.insert(figures.end(), extra_keys.begin(), extra_keys.end());
  auto figure_of = [&](const RunSummary& s, const std::string& f) {
    return f == "return_mean" ? s.final_eval.return_mean : extra_of(s, f);
  };
  std::string md = "| configuration | seeds |";
  std::string rule = "|---|---|";
  for (const auto& f : figures) {
    md += fmt::format(" {} |", f);
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  std::string best;
  double best_value = -INFINITY;
  for (const auto& label : labels) {
    std::size_t n = 0;
    std::string cells;
    for (const auto& f : figures) {
      std::vector<double> xs;
      for (std::size_t i = 0; i < plan.runs.size(); ++i)
        if (plan.runs[i].label == label) xs.push_back(figure_of(result.summaries[i], f));
      n = xs.size();
      double m = 0;
      for (double x : xs) m += x;
      m /= static_cast<double>(xs.size());
      double ss = 0;
      for (double x : xs) ss += (x - m) * (x - m);
      const double sd = xs.size() > 1 ? std::sqrt(ss / static_cast<double>(xs.size() - 1)) : 0.0;
      cells += fmt::format(" {:.4g} +- {:.3g} |", m, sd);
      if (f == "return_mean" && m > best_value) {
        best_value = m;
        best = label;
      }
    }
    md += fmt::format("| {} | {} |{}\n", label, n, cells);
  }
  md += fmt::format("\nbest by mean final evaluation return: {} ({:.4g})\n", best, best_value);
  result.best_label = best;
  result.summary_md = md;
  make_dirs(plan.out);
  write_file_atomic(plan.out / "sweep.csv", csv);
  write_file_atomic(plan.out / "summary.md", md);
  result.table_csv = std::move(csv);
  return result;
}

}  // namespace dprl::algos
