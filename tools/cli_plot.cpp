// `dprl plot RUN_DIR... --y COLUMN [--x COLUMN] -o FIG.svg [--title T] [--log-x] [--log-y]
// [--stat mean|median] [--percentiles LO,HI] [--label L]...`: line plots of metrics.csv columns,
// one series per configuration with the mean across its seeds and a 95% band, or (--stat median)
// the median and a percentile band, 15th-85th by default (tools/svg_plot.hpp has the statistics).
// docs/plot.md is the user guide.
//
// Log axes: the mean and band are computed on the data as it is (all seeds, zeros included), and
// points whose x or mean is not positive are then left out of the drawing.
//
// Grouping: runs form one configuration when they share a parent directory and their config.yaml
// files are equal once the lines that differ between seeds of one experiment are dropped: any
// "seed:" line, the top-level "out:" line (the run directory itself), and a seed suffix in the
// top-level "name:". A run without config.yaml is grouped by its directory name without the seed
// suffix ("ppo_seed3", "ppo-s3", "lr=0.1,seed=3", "3" all end in a seed suffix). A CSV file given
// by name (other than metrics.csv) is a run of its own: files of one folder whose names share
// the stem before the seed suffix ("ours_seed1.csv", "ours_seed2.csv") form one configuration.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "tools/cli.hpp"
#include "tools/metrics_csv.hpp"
#include "tools/svg_plot.hpp"

namespace dprl::cli {

namespace {

namespace fs = std::filesystem;

struct PlotOptions {
  std::vector<std::string> run_dirs;
  std::string x;  // empty: "step", or "env_steps" when there is no step column
  std::string y;
  std::string output;
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 800;
  int height = 480;
  bool log_x = false;
  bool log_y = false;
  std::string stat = "mean";  // mean (95% band) or median (percentile band)
  std::vector<double> percentiles{15, 85};
  std::vector<std::string> labels;  // legend labels, one per configuration in order (optional)
};

struct Run {
  fs::path dir;
  fs::path metrics_path;
  tools::MetricsTable table;
  std::string stem;    // directory name without its seed suffix
  std::string config;  // config.yaml without the seed-dependent lines ("" when absent)
  bool has_config = false;
  std::optional<std::int64_t> seed;  // from summary.json, when present
};

struct Group {
  std::string key;
  std::vector<const Run*> runs;
  std::string label;
};

// "ppo_seed3" -> "ppo", "ppo-s3" -> "ppo", "lr=0.1,seed=3" -> "lr=0.1", "7" -> "".
std::string strip_seed_suffix(const std::string& name) {
  static const std::regex kSeedWord(R"(^(.*?)[_\-.,=+ ]*seed[_\-=]?\d+$)", std::regex::icase);
  static const std::regex kShort(R"(^(.*?)[_\-.,=+ ]+s\d+$)", std::regex::icase);
  static const std::regex kNumber(R"(^\d+$)");
  std::smatch m;
  std::string stem = name;
  if (std::regex_match(name, m, kSeedWord) || std::regex_match(name, m, kShort))
    stem = m[1].str();
  else if (std::regex_match(name, kNumber))
    stem.clear();
  while (!stem.empty() && std::string_view("_-.,=+ ").find(stem.back()) != std::string_view::npos)
    stem.pop_back();
  return stem;
}

// Last component of a directory path ("runs/a/" and "runs/a" -> "a"; "." -> the cwd's name).
std::string dir_name(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

std::string parent_name(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.parent_path().filename().string();
}

std::string ltrim(const std::string& s) {
  const auto p = s.find_first_not_of(" \t");
  return p == std::string::npos ? std::string() : s.substr(p);
}

// config.yaml text without the lines that vary between seeds of one configuration.
std::string config_without_seed(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string body = ltrim(line);
    const bool top_level = body.size() == line.size();
    if (body.rfind("seed:", 0) == 0) continue;
    if (top_level && body.rfind("out:", 0) == 0) continue;
    if (top_level && body.rfind("name:", 0) == 0) {
      out += "name: " + strip_seed_suffix(ltrim(body.substr(5))) + "\n";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

Run load_run(const std::string& arg) {
  Run run;
  const fs::path p(arg);
  std::error_code ec;
  if (fs::is_regular_file(p, ec) && p.extension() == ".csv" && p.filename() != "metrics.csv") {
    // a table of its own ("ours_seed2.csv"): the file is the run, named by its stem, grouped
    // with the files of its folder that share the stem
    run.metrics_path = p;
    run.dir = p;
    run.table = tools::read_metrics_csv(p);
    run.stem = strip_seed_suffix(p.stem().string());
    return run;
  }
  if (fs::is_regular_file(p, ec) && p.extension() == ".csv") {
    run.metrics_path = p;
    run.dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  } else {
    if (!fs::exists(p, ec))
      throw DataError(fmt::format("run directory {} does not exist", p.string()));
    if (!fs::is_directory(p, ec))
      throw DataError(fmt::format("{}: not a run directory or a .csv file", p.string()));
    run.dir = p;
    run.metrics_path = p / "metrics.csv";
    if (!fs::is_regular_file(run.metrics_path, ec))
      throw DataError(fmt::format("{}: not a run directory (no metrics.csv)", p.string()));
  }
  run.table = tools::read_metrics_csv(run.metrics_path);
  run.stem = strip_seed_suffix(dir_name(run.dir));
  const fs::path config = run.dir / "config.yaml";
  if (fs::is_regular_file(config, ec)) {
    run.config = config_without_seed(read_file(config));
    run.has_config = true;
  }
  const fs::path summary = run.dir / "summary.json";
  if (fs::is_regular_file(summary, ec)) {
    const auto j = nlohmann::json::parse(read_file(summary), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw DataError(fmt::format("{}: not valid JSON", summary.string()));
    if (j.is_object() && j.contains("seed") && j["seed"].is_number_integer())
      run.seed = j["seed"].get<std::int64_t>();
  }
  return run;
}

std::string parent_key(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.parent_path().string();
}

// Legend labels: the directory stem, else parent/stem, else the stem with the config lines that
// differ between groups, else numbered.
void label_groups(std::vector<Group>& groups) {
  auto distinct = [&] {
    std::set<std::string> seen;
    for (const auto& g : groups)
      if (!seen.insert(g.label).second) return false;
    return true;
  };
  auto stem_or_parent = [](const Run& r) {
    if (!r.stem.empty()) return r.stem;
    return parent_name(r.dir);
  };
  for (auto& g : groups) g.label = stem_or_parent(*g.runs.front());
  if (distinct()) return;
  std::vector<std::string> base;
  for (auto& g : groups) {
    base.push_back(g.label);
    const Run& r = *g.runs.front();
    const std::string parent = parent_name(r.dir);
    g.label = r.stem.empty() ? parent : parent + "/" + r.stem;
  }
  if (distinct()) return;
  for (std::size_t k = 0; k < groups.size(); ++k) groups[k].label = base[k];
  // within each set of equal labels, add the config lines that not every member shares
  std::map<std::string, std::vector<std::size_t>> sets;
  for (std::size_t k = 0; k < groups.size(); ++k) sets[groups[k].label].push_back(k);
  for (const auto& [label, members] : sets) {
    if (members.size() < 2) continue;
    std::map<std::string, std::size_t> line_count;
    std::vector<std::vector<std::string>> lines(members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::istringstream in(groups[members[m]].runs.front()->config);
      std::set<std::string> unique;
      for (std::string line; std::getline(in, line);)
        if (unique.insert(line).second) lines[m].push_back(line);
      for (const auto& l : unique) ++line_count[l];
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      std::string diff;
      for (const auto& l : lines[m]) {
        if (line_count[l] == members.size()) continue;
        const std::string t = ltrim(l);
        if (t.empty() || t.back() == ':') continue;  // map headers carry no value
        diff += (diff.empty() ? "" : ", ") + t;
      }
      if (diff.size() > 60) diff = diff.substr(0, 57) + "...";
      if (!diff.empty()) groups[members[m]].label += " [" + diff + "]";
    }
  }
  if (distinct()) return;
  std::map<std::string, int> used;
  for (auto& g : groups)
    if (int n = used[g.label]++; n > 0) g.label += fmt::format(" #{}", n + 1);
}

void run_plot(const PlotOptions& opt) {
  if (opt.percentiles.size() != 2 ||
      !(opt.percentiles[0] >= 0 && opt.percentiles[0] <= opt.percentiles[1] &&
        opt.percentiles[1] <= 100))
    throw ParamError("--percentiles: must be LO,HI with 0 <= LO <= HI <= 100");
  std::vector<Run> runs;
  runs.reserve(opt.run_dirs.size());
  for (const auto& arg : opt.run_dirs) runs.push_back(load_run(arg));

  // the x column: as given, else step, else env_steps (chosen from the first run)
  std::string x_name = opt.x;
  if (x_name.empty()) {
    x_name = runs.front().table.default_x();
  }
  for (const auto& r : runs) {
    r.table.column(x_name, "--x");
    r.table.column(opt.y, "--y");
  }

  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& r : runs) {
    std::string key = parent_key(r.dir) + "\n";
    key += r.has_config ? "config\n" + r.config : "stem\n" + r.stem;
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back(Group{key, {}, ""});
    groups[it->second].runs.push_back(&r);
  }
  label_groups(groups);
  if (!opt.labels.empty()) {
    if (opt.labels.size() != groups.size())
      throw ParamError(
          fmt::format("--label: {} given for {} configurations", opt.labels.size(), groups.size()));
    for (std::size_t k = 0; k < groups.size(); ++k) groups[k].label = opt.labels[k];
  }

  tools::PlotSpec spec;
  spec.title = opt.title;
  spec.x_label = opt.x_label.empty() ? x_name : opt.x_label;
  spec.y_label = opt.y_label.empty() ? opt.y : opt.y_label;
  spec.width = opt.width;
  spec.height = opt.height;
  spec.log_x = opt.log_x;
  spec.log_y = opt.log_y;
  std::vector<std::string> not_drawable;  // groups with finite points but none positive
  std::vector<std::string> warnings;
  for (const auto& g : groups) {
    std::map<std::int64_t, std::string> seeds;
    for (const Run* r : g.runs) {
      if (!r->seed) continue;
      auto [it, added] = seeds.emplace(*r->seed, r->dir.string());
      if (!added)
        warnings.push_back(fmt::format("{} and {} have the same seed {}; are they one run?",
                                       it->second, r->dir.string(), *r->seed));
    }
    std::vector<tools::Curve> curves;
    for (const Run* r : g.runs)
      curves.push_back({r->table.column(x_name, "--x"), r->table.column(opt.y, "--y")});
    tools::Band band = opt.stat == "median"
                           ? tools::percentile_band(curves, opt.percentiles[0], opt.percentiles[1])
                           : tools::seed_band(curves);
    if (band.x.empty()) {
      warnings.push_back(
          fmt::format("no finite ({}, {}) values for {}; left out", x_name, opt.y, g.label));
      continue;
    }
    tools::PlotSeries s{fmt::format("{} (n={})", g.label, g.runs.size()), std::move(band)};
    if (!tools::has_drawable_point(s, opt.log_x, opt.log_y)) {
      not_drawable.push_back(g.label);
      continue;
    }
    spec.series.push_back(std::move(s));
  }
  if (spec.series.empty() && !not_drawable.empty()) {
    // name the log axis that left nothing: x first, then y among the points with a drawable x
    std::vector<tools::Curve> all;
    for (const auto& r : runs)
      all.push_back({r.table.column(x_name, "--x"), r.table.column(opt.y, "--y")});
    const tools::PlotSeries pooled{"", tools::seed_band(all)};
    const bool x_fails = opt.log_x && !tools::has_drawable_point(pooled, true, false);
    throw DataError(fmt::format("{}: no positive values in column '{}'",
                                x_fails ? "--log-x" : "--log-y", x_fails ? x_name : opt.y));
  }
  for (const auto& label : not_drawable)
    warnings.push_back(fmt::format("no positive ({}, {}) values for {} on the log axes; left out",
                                   x_name, opt.y, label));
  if (spec.series.empty())
    throw DataError(fmt::format("nothing to plot: no finite ({}, {}) values in {}", x_name, opt.y,
                                runs.size() == 1 ? runs.front().metrics_path.string()
                                                 : fmt::format("any of the {} runs", runs.size())));
  for (const auto& w : warnings) fmt::print(stderr, "dprl: warning: {}\n", w);
  write_file_atomic(opt.output, tools::render_svg(spec));
  fmt::print("wrote {} ({} series from {} runs)\n", opt.output, spec.series.size(), runs.size());
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto opt = std::make_shared<PlotOptions>();
  auto* cmd = app.add_subcommand(
      "plot",
      "Line plot of a metrics.csv column: mean and 95% band (or median and percentile band) "
      "across seeds, as SVG");
  cmd->add_option("RUN_DIR", opt->run_dirs, "Run directories (each with metrics.csv)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--y", opt->y, "Column for the y axis")->required();
  cmd->add_option("--x", opt->x, "Column for the x axis (default: step, else env_steps)");
  cmd->add_option("-o,--output", opt->output, "Output SVG file")->required();
  cmd->add_option("--title", opt->title, "Plot title (default: none)");
  cmd->add_option("--x-label", opt->x_label, "x axis label (default: the column name)");
  cmd->add_option("--y-label", opt->y_label, "y axis label (default: the column name)");
  cmd->add_option("--width", opt->width, "Width in pixels")->capture_default_str();
  cmd->add_option("--height", opt->height, "Height in pixels")->capture_default_str();
  cmd->add_option("--stat", opt->stat,
                  "Centre line: mean (95% confidence band) or median (percentile band)")
      ->check(CLI::IsMember({"mean", "median"}))
      ->capture_default_str();
  cmd->add_option("--percentiles", opt->percentiles,
                  "Band of --stat median: LO,HI percentiles across seeds")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str();
  cmd->add_option("--label", opt->labels,
                  "Legend label of each configuration, in the order of their first run "
                  "(repeat once per configuration)");
  cmd->add_flag("--log-x", opt->log_x, "Base-10 logarithmic x axis (points with x <= 0 left out)");
  cmd->add_flag("--log-y", opt->log_y,
                "Base-10 logarithmic y axis (points whose mean is <= 0 left out)");
  cmd->callback([opt] { run_plot(*opt); });
}

}  // namespace dprl::cli
