// The tables of a finished sweep, built from each run's summary.json text (see sweep.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "algos/run/sweep.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/params.hpp"

namespace dprl::algos {
namespace {

using Status = RunOutcome::Status;
using Json = nlohmann::ordered_json;

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

double number(const Json& j) { return j.is_number() ? j.get<double>() : NAN; }

// The figures the tables use, read back from summary.json's text (numbers round-trip exactly).
RunSummary parse_summary(const std::string& text, const SweepRun& run) {
  try {
    const Json j = Json::parse(text);
    RunSummary s;
    s.seed = j.at("seed").get<std::uint64_t>();
    s.env_steps = j.at("env_steps").get<std::int64_t>();
    s.episodes = j.at("episodes").get<std::int64_t>();
    const Json& e = j.at("final_eval");
    s.final_eval.return_mean = number(e.at("return_mean"));
    s.final_eval.return_std = number(e.at("return_std"));
    s.final_eval.episodes = e.at("episodes").get<int>();
    if (const Json& p = j.at("privacy"); !p.is_null()) {
      PrivacyReport r;
      const Json& eps = p.at("epsilon");
      r.epsilon = eps.is_string() ? INFINITY : eps.get<double>();
      s.privacy = r;
    }
    for (const auto& [k, v] : j.at("extra").items()) s.extra.emplace_back(k, number(v));
    return s;
  } catch (const std::exception& e) {
    throw DataError(
        fmt::format("{}/summary.json: unexpected content: {}", run.out.string(), e.what()));
  }
}

double extra_of(const RunSummary& s, const std::string& key) {
  for (const auto& [k, v] : s.extra)
    if (k == key) return v;
  return NAN;
}

std::string sweep_csv(const SweepPlan& plan, const std::vector<std::optional<RunSummary>>& sums,
                      const std::vector<std::string>& extra_keys) {
  std::vector<std::string> header = {"run", "label"};
  for (const auto& k : plan.keys) header.push_back(csv_field(k));
  for (const char* c : {"seed", "env_steps", "return_mean", "return_std", "episodes", "epsilon"})
    header.push_back(c);
  for (const auto& k : extra_keys) header.push_back(k);
  header.push_back("dir");
  std::string csv = fmt::format("{}\n", fmt::join(header, ","));
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const auto& run = plan.runs[i];
    std::vector<std::string> row = {fmt::format("{}", i), csv_field(run.label)};
    for (const auto& [k, v] : run.values) row.push_back(csv_field(v));
    row.push_back(fmt::format("{}", run.seed));
    if (const auto& s = sums[i]) {
      row.push_back(fmt::format("{}", s->env_steps));
      row.push_back(format_param(s->final_eval.return_mean));
      row.push_back(format_param(s->final_eval.return_std));
      row.push_back(fmt::format("{}", s->final_eval.episodes));
      row.push_back(s->privacy ? format_param(s->privacy->epsilon) : std::string());
      for (const auto& k : extra_keys) {
        const double v = extra_of(*s, k);
        row.push_back(std::isfinite(v) ? format_param(v) : std::string());
      }
    } else {
      row.resize(row.size() + 5 + extra_keys.size());  // failed: no figures
    }
    row.push_back(csv_field(run.out.string()));
    csv += fmt::format("{}\n", fmt::join(row, ","));
  }
  return csv;
}

// per configuration: mean and sample sd across seeds of each figure; best by final return
std::string summary_md(const SweepPlan& plan, const std::vector<std::optional<RunSummary>>& sums,
                       const std::vector<std::string>& extra_keys, std::string& best) {
  std::vector<std::string> labels;
  for (const auto& run : plan.runs)
    if (std::find(labels.begin(), labels.end(), run.label) == labels.end())
      labels.push_back(run.label);
  std::vector<std::string> figures = {"return_mean"};
  figures.insert(figures.end(), extra_keys.begin(), extra_keys.end());
  std::string md = "| configuration | seeds |";
  std::string rule = "|---|---|";
  for (const auto& f : figures) {
    md += fmt::format(" {} |", f);
    rule += "---|";
  }
  md += "\n" + rule + "\n";
  double best_value = -INFINITY;
  std::size_t failed = 0;
  for (const auto& label : labels) {
    std::size_t n = 0;
    std::string cells;
    for (const auto& f : figures) {
      std::vector<double> xs;
      for (std::size_t i = 0; i < plan.runs.size(); ++i)
        if (plan.runs[i].label == label && sums[i])
          xs.push_back(f == "return_mean" ? sums[i]->final_eval.return_mean
                                          : extra_of(*sums[i], f));
      n = xs.size();
      if (xs.empty()) {
        cells += " - |";
        continue;
      }
      const auto [m, sd] = mean_sd(xs);
      cells += fmt::format(" {:.4g} +- {:.3g} |", m, sd);
      if (f == "return_mean" && m > best_value) {
        best_value = m;
        best = label;
      }
    }
    md += fmt::format("| {} | {} |{}\n", label, n, cells);
  }
  for (const auto& s : sums) failed += s ? 0 : 1;
  md += fmt::format("\nbest by mean final evaluation return: {} ({:.4g})\n", best, best_value);
  if (failed > 0) md += fmt::format("\n{} runs failed: see failures.csv\n", failed);
  return md;
}

}  // namespace

SweepResult write_sweep_tables(const SweepPlan& plan, std::vector<RunOutcome> outcomes) {
  DPRL_CHECK(outcomes.size() == plan.runs.size());
  SweepResult result;
  std::vector<std::optional<RunSummary>> sums(plan.runs.size());
  std::string failures = "run,label,seed,dir,error\n";
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const RunOutcome& o = outcomes[i];
    const SweepRun& run = plan.runs[i];
    DPRL_CHECK(o.status != Status::kPending);
    if (o.status == Status::kFailed) {
      ++result.failed;
      failures += fmt::format("{},{},{},{},{}\n", i, csv_field(run.label), run.seed,
                              csv_field(run.out.string()), csv_field(o.error));
      continue;
    }
    ++(o.status == Status::kSkipped ? result.skipped : result.ran);
    sums[i] = parse_summary(o.summary, run);
  }
  // learner-specific figures (summary "extra") become columns too, in first-seen order
  std::vector<std::string> extra_keys;
  for (const auto& s : sums)
    if (s)
      for (const auto& [k, v] : s->extra)
        if (std::find(extra_keys.begin(), extra_keys.end(), k) == extra_keys.end())
          extra_keys.push_back(k);

  result.table_csv = sweep_csv(plan, sums, extra_keys);
  result.summary_md = summary_md(plan, sums, extra_keys, result.best_label);
  for (auto& s : sums) result.summaries.push_back(s ? std::move(*s) : RunSummary{});
  result.outcomes = std::move(outcomes);

  make_dirs(plan.out);
  write_file_atomic(plan.out / "sweep.csv", result.table_csv);
  write_file_atomic(plan.out / "summary.md", result.summary_md);
  std::error_code ec;
  if (result.failed > 0)
    write_file_atomic(plan.out / "failures.csv", failures);
  else
    std::filesystem::remove(plan.out / "failures.csv", ec);
  return result;
}

MeanSd mean_sd(const std::vector<double>& xs) {
  DPRL_CHECK(!xs.empty());
  double m = 0;
  for (double x : xs) m += x;
  m /= static_cast<double>(xs.size());
  double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return {m, xs.size() > 1 ? std::sqrt(ss / static_cast<double>(xs.size() - 1)) : 0.0};
}

}  // namespace dprl::algos
