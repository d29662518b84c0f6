// dprl agreement: how far the experts of a paper 000 pipeline agree on the prefixes of their
// demonstrations, against the release's expected threshold. A non-private diagnostic: it reads
// the demonstrations and the expert policies without noise, prints exact counts and is never part
// of a release (nothing is charged to any ledger). It answers the question an empty D_stable
// raises: is any prefix's count near E[theta_hat]?
//
// The population must be on disk (it is read as it is, never trained). For --episodes evenly spaced demonstrations (episode floor(i E / N)) the exact count (Eq. 12)
// of every prefix up to the release's L steps; per prefix length in --lengths: the prefixes that
// long, their largest, 90th-percentile and median counts, and how many reach E[theta_hat]
// (theta plus the noise's shift, the count at which a prefix passes with probability about 1/2).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algos/expert_level/data_release.hpp"
#include "algos/expert_level/expert_queries.hpp"
#include "algos/run/pipeline.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "engine/thread_pool.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

struct AgreementOpts {
  std::string file;
  int episodes = 100;
  std::vector<int> lengths = {1, 2, 5, 10, 20, 50};
  int jobs = 0;
  std::vector<std::string> overrides;
  bool json = false;
};

// The q-quantile of sorted values (nearest rank).
double quantile(const std::vector<double>& sorted, double q) {
  const auto n = sorted.size();
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  return sorted[std::min(n - 1, i == 0 ? 0 : i - 1)];
}

void cmd_agreement(const AgreementOpts& o) {
  const Node root = load_yaml_file(o.file);
  if (!algos::is_pipeline(root))
    throw ParamError(fmt::format("{}: not a pipeline file (no top-level `pipeline` key)", o.file));
  const std::filesystem::path path(o.file);
  algos::RunOptions ro;
  ro.overrides = o.overrides;
  algos::PipelineSpec s =
      algos::parse_pipeline(root, path.stem().string(), path.parent_path(), ro);
  // a diagnostic never trains: the population is read as it is on disk (a DataError when it is
  // not built; dprl population FILE builds it)
  s.population_on_disk = true;
  algos::PipelineOptions po;
  po.jobs = o.jobs > 0 ? o.jobs : hardware_threads();
  const algos::PipelineExperts ex = algos::pipeline_experts(s, po);
  const auto experts = algos::NetExperts::load(ex.policies, po.jobs);
  const algos::ReleaseConstants c = algos::release_constants(s.release);
  const std::size_t total = ex.data.num_episodes();
  const auto n = std::min<std::size_t>(total, static_cast<std::size_t>(o.episodes));
  std::vector<std::size_t> episodes(n);
  for (std::size_t i = 0; i < n; ++i) episodes[i] = i * total / n;
  const int longest = *std::max_element(o.lengths.begin(), o.lengths.end());
  const auto counts = algos::exact_prefix_counts(ex.data, episodes, *experts, s.release.p_min,
                                                 std::min<int>(longest, s.release.max_length));
  nlohmann::ordered_json j;
  j["file"] = o.file;
  j["experts"] = experts->num_experts();
  j["episodes"] = n;
  j["p_min"] = s.release.p_min;
  j["release_epsilon1"] = s.release.epsilon1;
  j["trajectories"] = s.release.trajectories;
  j["epsilon_prime"] = c.svt.eps_prime;
  j["theta"] = c.svt.theta;
  j["expected_threshold"] = c.expected_threshold;
  j["note"] =
      "non-private diagnostic: exact counts of the demonstrations' prefixes (Eq. 12), never "
      "released";
  auto rows = nlohmann::ordered_json::array();
  for (const int k : o.lengths) {
    if (k > s.release.max_length) continue;
    std::vector<double> v;
    for (const auto& ep : counts)
      if (static_cast<int>(ep.size()) >= k) v.push_back(ep[static_cast<std::size_t>(k - 1)]);
    std::sort(v.begin(), v.end());
    nlohmann::ordered_json r;
    r["length"] = k;
    r["prefixes"] = v.size();
    if (!v.empty()) {
      r["max"] = v.back();
      r["p90"] = quantile(v, 0.9);
      r["median"] = quantile(v, 0.5);
      r["at_threshold"] = std::count_if(v.begin(), v.end(),
                                        [&](double x) { return x >= c.expected_threshold; });
    }
    rows.push_back(r);
  }
  j["lengths"] = rows;
  if (o.json) {
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print(
      "{}: m = {} experts, {} of {} demonstrations, p_min = {}; release eps1 = {}: theta = {:.1f}, "
      "E[theta_hat] = {:.1f} (non-private diagnostic: exact counts, never released)\n",
      o.file, experts->num_experts(), n, total, s.release.p_min, s.release.epsilon1, c.svt.theta,
      c.expected_threshold);
  fmt::print("{:>6} {:>9} {:>10} {:>10} {:>10} {:>13}\n", "length", "prefixes", "max count",
             "p90", "median", "at threshold");
  for (const auto& r : rows) {
    if (r["prefixes"].get<std::size_t>() == 0) {
      fmt::print("{:>6} {:>9}\n", r["length"].get<int>(), 0);
      continue;
    }
    fmt::print("{:>6} {:>9} {:>10.1f} {:>10.1f} {:>10.1f} {:>13}\n", r["length"].get<int>(),
               r["prefixes"].get<std::size_t>(), r["max"].get<double>(), r["p90"].get<double>(),
               r["median"].get<double>(), r["at_threshold"].get<std::int64_t>());
  }
}

}  // namespace

void add_agreement_command(CLI::App& app) {
  auto o = std::make_shared<AgreementOpts>();
  auto* cmd = app.add_subcommand(
      "agreement",
      "paper 000: exact prefix counts of a pipeline's demonstrations against the release's "
      "threshold (non-private diagnostic)");
  cmd->add_option("file", o->file, "pipeline YAML (a Table 1 cell)")->required();
  cmd->add_option("--episodes", o->episodes, "demonstrations examined, evenly spaced (default 100)")
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--lengths", o->lengths, "prefix lengths reported (default 1,2,5,10,20,50)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--set", o->overrides, "override a config value, key.path=value (repeatable)");
  cmd->add_option("--jobs", o->jobs, "threads (default: all CPUs)")->check(CLI::Range(1, 4096));
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] { cmd_agreement(*o); });
}

}  // namespace dprl::cli
