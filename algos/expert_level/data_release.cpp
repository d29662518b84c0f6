#include "algos/expert_level/data_release.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "privacy/composition.hpp"

namespace dprl::algos {

// Uniform integer in [0, n) from 64-bit draws (Lemire's multiply-and-reject: unbiased). A draw is
// rejected with probability below n / 2^64; 64 rejections in a row only happen with a degenerate
// source (the zero-noise test double), which is an error rather than an endless loop.
std::uint64_t uniform_below(privacy::NoiseSource& noise, std::uint64_t n) {
  const std::uint64_t t = (0 - n) % n;
  for (int tries = 0; tries < 64; ++tries) {
    const unsigned __int128 x = static_cast<unsigned __int128>(noise.next_u64()) * n;
    if (static_cast<std::uint64_t>(x) >= t) return static_cast<std::uint64_t>(x >> 64);
  }
  throw DataError(fmt::format("data release: the noise source '{}' gives no usable uniform draws",
                              noise.name()));
}

namespace {

// recorded: the fixed demonstrations are examined (T of them, equal counts per expert)
void check_inputs(const Dataset& data, const ExpertPanel& experts, const DataReleaseParams& p,
                  bool recorded) {
  const Space& as = data.info().action_space;
  if (!as.is_discrete())
    throw ParamError(
        fmt::format("data release: the action space is {}; expert-level release "
                    "needs discrete actions (Assumption 3.4)",
                    as.describe()));
  const int A = experts.num_actions();
  if (as.n != A || static_cast<int>(data.obs_dim()) != experts.obs_dim())
    throw DataError(fmt::format(
        "data release: the dataset has {} actions and {} observation values, the experts {} and {}",
        as.n, data.obs_dim(), A, experts.obs_dim()));
  if (!(p.p_min > 0.0 && p.p_min <= 1.0 / A))
    throw ParamError(
        fmt::format("release.p_min = {} must be in (0, 1/|A|] = (0, {:.6g}]", p.p_min, 1.0 / A));
  const auto episodes = static_cast<std::int64_t>(data.num_episodes());
  if (!recorded && p.trajectories != episodes)
    throw DataError(fmt::format("data release: {} rollouts for release.trajectories = {}", episodes,
                                p.trajectories));
  if (recorded && p.trajectories > episodes)
    throw ParamError(fmt::format("release.trajectories = {} must be at most the {} episodes",
                                 p.trajectories, episodes));
  const int m = experts.num_experts();
  std::vector<std::int64_t> per_expert(m, 0);
  for (std::size_t e = 0; e < data.num_episodes(); ++e) {
    const std::int64_t u = data.user_id(e);
    if (u < 0 || u >= m)
      throw DataError(
          fmt::format("data release: episode {} has user_id {}, outside the {} "
                      "experts [0, {})",
                      e, u, m, m));
    ++per_expert[u];
    if (static_cast<std::int64_t>(data.episode_length(e)) > p.max_length)
      throw DataError(
          fmt::format("data release: episode {} has {} steps, more than "
                      "release.max_length = {} (the public cap L)",
                      e, data.episode_length(e), p.max_length));
  }
  for (int i = 0; i < m && recorded; ++i)
    if (per_expert[i] != per_expert[0])
      throw DataError(fmt::format(
          "data release: expert {} holds {} trajectories and expert 0 holds {}; the uniform "
          "shuffle draws experts uniformly only when every expert holds the same number",
          i, per_expert[i], per_expert[0]));
}

// Every expert's greedy action at step j of the active episodes (indices into `episodes`):
// g[i * n + a] for expert i and active episode a (n of them), from their observations gathered
// column by column into `states`.
void greedy_at_step(const Dataset& data, std::span<const std::size_t> episodes,
                    const std::vector<std::size_t>& active, std::size_t j, ExpertPanel& experts,
                    std::vector<float>& states, std::vector<std::int32_t>& g) {
  const std::size_t n = active.size(), od = data.obs_dim();
  states.resize(n * od);
  for (std::size_t a = 0; a < n; ++a) {
    const std::size_t e = episodes[active[a]];
    const auto s = data.obs(data.episode_start(e) + j, e);
    std::copy(s.begin(), s.end(), states.begin() + static_cast<std::ptrdiff_t>(a * od));
  }
  g.resize(static_cast<std::size_t>(experts.num_experts()) * n);
  experts.greedy(states.data(), static_cast<int>(n), g);
}

// Alg. 2 lines 6-14 for the examined episodes: the stable prefix length of each. The T passes are
// independent given their own noise (a fresh threshold each), so they run in lockstep: prefix
// step j of every still-stable trajectory is queried in one batch of expert evaluations (no state
// is evaluated beyond a trajectory's first "below"). Noise order: the T thresholds, then the
// queries step by step in examination order.
void examine_all(const Dataset& data, const std::vector<std::size_t>& episodes,
                 ExpertPanel& experts, const DataReleaseParams& p, const privacy::SvtPieces& svt,
                 privacy::NoiseSource& noise, DataReleaseResult& r) {
  const int m = experts.num_experts(), A = experts.num_actions();
  const std::size_t T = episodes.size();
  int longest = 1;
  for (std::size_t e : episodes)
    longest = std::max(longest, static_cast<int>(data.episode_length(e)));
  std::vector<PrefixCounter> counters(T, PrefixCounter(m, A, p.p_min, longest));
  std::vector<double> theta_hat(T);
  for (std::size_t c = 0; c < T; ++c) theta_hat[c] = privacy::noisy_threshold(svt, noise);
  std::vector<std::size_t> active, next;
  for (std::size_t c = 0; c < T; ++c)
    if (data.episode_length(episodes[c]) > 0) active.push_back(c);
  std::vector<float> states;
  std::vector<std::int32_t> g, col(m);
  for (std::size_t j = 0; !active.empty(); ++j) {
    const std::size_t n = active.size();
    greedy_at_step(data, episodes, active, j, experts, states, g);
    next.clear();
    for (std::size_t a = 0; a < n; ++a) {
      const std::size_t c = active[a], e = episodes[c];
      for (int i = 0; i < m; ++i) col[i] = g[static_cast<std::size_t>(i) * n + a];
      const auto act = static_cast<std::int32_t>(data.discrete_action(data.episode_start(e) + j));
      counters[c].extend(col, act);
      ++r.queries;
      if (!privacy::prefix_query(counters[c].count(), theta_hat[c], svt, noise)) continue;
      r.stable_length[e] = static_cast<std::int64_t>(j) + 1;
      if (j + 1 < data.episode_length(e)) next.push_back(c);
    }
    active.swap(next);
  }
}

// the released prefixes' totals, from the examined trajectories' stable lengths
void count_stable(DataReleaseResult& r) {
  for (std::size_t e : r.examined)
    if (r.stable_length[e] > 0) {
      ++r.stable_prefixes;
      r.stable_transitions += r.stable_length[e];
    }
}

}  // namespace

std::vector<std::vector<double>> exact_prefix_counts(const Dataset& data,
                                                     std::span<const std::size_t> episodes,
                                                     ExpertPanel& experts, double p_min,
                                                     int max_length) {
  const int m = experts.num_experts(), A = experts.num_actions();
  const std::size_t od = data.obs_dim();
  if (static_cast<int>(od) != experts.obs_dim())
    throw DataError(fmt::format("prefix counts: the dataset has {} observation values, the "
                                "experts {}",
                                od, experts.obs_dim()));
  std::vector<std::vector<double>> counts(episodes.size());
  std::vector<PrefixCounter> counters(episodes.size(), PrefixCounter(m, A, p_min, max_length));
  std::vector<std::size_t> active;
  for (std::size_t c = 0; c < episodes.size(); ++c)
    if (data.episode_length(episodes[c]) > 0) active.push_back(c);
  std::vector<float> states;
  std::vector<std::int32_t> g, col(static_cast<std::size_t>(m));
  for (std::size_t j = 0; !active.empty() && j < static_cast<std::size_t>(max_length); ++j) {
    const std::size_t n = active.size();
    greedy_at_step(data, episodes, active, j, experts, states, g);
    std::vector<std::size_t> next;
    for (std::size_t a = 0; a < n; ++a) {
      const std::size_t c = active[a], e = episodes[c];
      for (int i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = g[static_cast<std::size_t>(i) * n + a];
      const auto act = static_cast<std::int32_t>(data.discrete_action(data.episode_start(e) + j));
      counters[c].extend(col, act);
      counts[c].push_back(counters[c].count());
      if (j + 1 < data.episode_length(e)) next.push_back(c);
    }
    active.swap(next);
  }
  return counts;
}

ReleaseConstants release_constants(const DataReleaseParams& p) {
  DataReleaseParams q = p;
  validate_params(q, "release");
  privacy::SvtParams s;
  s.epsilon1 = p.epsilon1;
  s.delta1 = p.delta1;
  s.queries = p.trajectories;
  s.max_length = p.max_length;
  s.p_min = p.p_min;
  const double t = static_cast<double>(p.trajectories);
  const double root = std::sqrt(32.0 * t * std::log(2.0 / p.delta1));
  if (p.calibration == "exact") {
    // 2 eps' = the largest per-pass epsilon whose exact T-fold composition is eps1; feeding
    // svt_params the eps1 that its closed form maps to this eps' yields every other piece
    const double two_eps =
        privacy::advanced_composition_inverse(p.epsilon1, p.trajectories, p.delta1 / 2.0);
    s.epsilon1 = 0.5 * two_eps * root;
  }
  ReleaseConstants c;
  c.svt = privacy::svt_params(s);
  c.epsilon_closed_form = c.svt.eps_prime * root;
  c.epsilon_exact = c.svt.composed_epsilon;
  c.expected_threshold = c.svt.theta + c.svt.threshold_shift;
  if (c.epsilon_exact > p.epsilon1 * (1.0 + 1e-12))
    throw ParamError(fmt::format(
        "release.epsilon1 = {}: the exact advanced composition of T = {} passes gives {:.6g} > "
        "epsilon1 (the paper's closed form holds only for small epsilon); use calibration: exact",
        p.epsilon1, p.trajectories, c.epsilon_exact));
  return c;
}

double max_stable_length(const ReleaseConstants& c, std::int64_t m, int num_actions, double p_min) {
  const double hi = 1.0 - static_cast<double>(num_actions - 1) * p_min;
  return std::log(c.expected_threshold / static_cast<double>(m)) / std::log(hi);
}

DataReleaseResult data_release(const Dataset& data, ExpertPanel& experts,
                               const DataReleaseParams& p, privacy::NoiseSource& noise) {
  DataReleaseResult r;
  r.constants = release_constants(p);
  check_inputs(data, experts, p, true);
  const std::size_t n = data.num_episodes();
  // Alg. 2 line 5: reshuffle (a partial Fisher-Yates: the first T of a uniform permutation)
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  const auto T = static_cast<std::size_t>(p.trajectories);
  for (std::size_t i = 0; i < T; ++i) std::swap(order[i], order[i + uniform_below(noise, n - i)]);
  r.stable_length.assign(n, 0);
  r.examined.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(T));
  examine_all(data, r.examined, experts, p, r.constants.svt, noise, r);
  count_stable(r);
  return r;
}

DataReleaseResult data_release_rollouts(const Dataset& rollouts, ExpertPanel& experts,
                                        const DataReleaseParams& p, privacy::NoiseSource& noise) {
  DataReleaseResult r;
  r.constants = release_constants(p);
  check_inputs(rollouts, experts, p, false);
  const std::size_t n = rollouts.num_episodes();
  r.stable_length.assign(n, 0);
  for (std::size_t e = 0; e < n; ++e) r.examined.push_back(e);
  examine_all(rollouts, r.examined, experts, p, r.constants.svt, noise, r);
  count_stable(r);
  return r;
}

namespace {

// The release's own metadata only: the source's (population, collection seed, ...) is not
// carried over, since D_stable is published.
std::string with_release_meta(const char* part) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["privacy_unit"] = "expert";
  j["release_part"] = part;
  return j.dump();
}

// Appends episode e's transitions [a, b) to out (flags of the last one cleared when cut), with
// the given user id and seed.
void append_part(const Dataset& data, std::size_t e, std::size_t a, std::size_t b, bool cut,
                 Dataset& out, std::int64_t user, std::int64_t seed) {
  const std::size_t t0 = data.episode_start(e), od = data.obs_dim(), ad = data.act_dim();
  const std::size_t n = b - a;
  std::span<const float> obs(data.obs(t0 + a, e).data(), (n + 1) * od);
  std::span<const float> act(data.action(t0 + a).data(), n * ad);
  std::span<const float> rew(data.rewards().data() + t0 + a, n);
  thread_local std::vector<std::uint8_t> term, trunc;
  term.assign(data.terminations().begin() + t0 + a, data.terminations().begin() + t0 + b);
  trunc.assign(data.truncations().begin() + t0 + a, data.truncations().begin() + t0 + b);
  if (cut) term.back() = trunc.back() = 0;
  out.add_episode(obs, act, rew, term, trunc, user, seed);
}

}  // namespace

ReleasedData split_release(const Dataset& data, const std::vector<std::int64_t>& stable_length) {
  DPRL_CHECK(stable_length.size() == data.num_episodes());
  DatasetInfo si = data.info(), ui = data.info();
  si.dataset_id += "/stable";
  ui.dataset_id += "/unstable";
  si.metadata_json = with_release_meta("stable");
  ui.metadata_json = with_release_meta("unstable");
  ReleasedData out{Dataset(std::move(si)), Dataset(std::move(ui))};
  std::size_t se = 0, st = 0;
  for (std::size_t e = 0; e < data.num_episodes(); ++e)
    if (stable_length[e] > 0) ++se, st += static_cast<std::size_t>(stable_length[e]);
  out.stable.reserve(se, st);
  out.unstable.reserve(data.num_episodes(), data.num_transitions() - st);
  for (std::size_t e = 0; e < data.num_episodes(); ++e) {
    const auto len = data.episode_length(e);
    const auto k = static_cast<std::size_t>(stable_length[e]);
    DPRL_CHECK(k <= len);
    if (k > 0)
      append_part(data, e, 0, k, k < len, out.stable, data.user_id(e), data.episode_seed(e));
    if (k < len)
      append_part(data, e, k, len, false, out.unstable, data.user_id(e), data.episode_seed(e));
  }
  return out;
}

Dataset stable_release(const Dataset& data, const std::vector<std::size_t>& examined,
                       const std::vector<std::int64_t>& stable_length) {
  DPRL_CHECK(stable_length.size() == data.num_episodes());
  DatasetInfo si = data.info();
  si.dataset_id += "/stable";
  si.metadata_json = with_release_meta("stable");
  Dataset out(std::move(si));
  std::size_t se = 0, st = 0;
  for (std::size_t e : examined)
    if (stable_length[e] > 0) ++se, st += static_cast<std::size_t>(stable_length[e]);
  out.reserve(se, st);
  std::int64_t ordinal = 0;
  for (std::size_t e : examined) {
    const auto k = static_cast<std::size_t>(stable_length[e]);
    DPRL_CHECK(k <= data.episode_length(e));
    if (k > 0) append_part(data, e, 0, k, k < data.episode_length(e), out, ordinal++, -1);
  }
  return out;
}

PrivacyReport release_report(const DataReleaseParams& p, const DataReleaseResult& r,
                             const std::string& noise_source, bool seeded) {
  const auto& c = r.constants;
  PrivacyReport rep;
  rep.epsilon = c.epsilon_exact;
  rep.delta = p.delta1;
  rep.accountant = "advanced-composition (Dwork and Roth Thm. 3.20) over T sparse-vector passes";
  rep.neighbouring = NeighbouringRelation::kAddRemove;
  rep.unit = "expert";
  rep.sensitivity = "count function: 1 per expert (paper 000 Eq. 12)";
  const bool recorded = p.source == "recorded";
  rep.covers = {"stable/ (the released prefixes D_stable)",
                "release.json (the size of D_stable and its prefix lengths)"};
  rep.formal = !seeded && !recorded;
  rep.noise_source = noise_source;
  rep.reproducible_noise = seeded;
  nlohmann::ordered_json d;
  d["mechanism"] = "DataRelease (paper 000 Alg. 2): sparse vector over trajectory prefixes";
  d["relation"] =
      recorded ? "add or remove one expert together with all of its recorded trajectories (not "
                 "the relation the bound is proven for; see note)"
               : "add or remove one expert's policy; the examined trajectories are rollouts of "
                 "the experts' policies drawn inside the mechanism with secret randomness";
  d["source"] = p.source;
  d["public"] =
      "the default env (its dynamics), the action floor p_min, T, L and the number of experts m";
  d["epsilon1_budget"] = p.epsilon1;
  d["epsilon_closed_form"] = c.epsilon_closed_form;
  d["epsilon_exact"] = c.epsilon_exact;
  d["calibration"] = p.calibration;
  d["trajectories"] = p.trajectories;
  d["max_length"] = p.max_length;
  d["p_min"] = p.p_min;
  d["eps_prime"] = c.svt.eps_prime;
  d["delta_prime"] = c.svt.delta_prime;
  d["theta"] = c.svt.theta;
  d["threshold_shift"] = c.svt.threshold_shift;
  d["per_trajectory"] = {{"epsilon", c.svt.per_trajectory_epsilon},
                         {"delta", c.svt.per_trajectory_delta}};
  d["not_covered"] = "D_unst, the raw data minus the release (private input of the DP-SGD steps)";
  if (recorded)
    d["note"] =
        "recorded source: the examined trajectories are the fixed demonstrations, so a released "
        "prefix holds one recorded episode's exact states, which no other expert's data hold; "
        "the bound (Thm. 5.3, 5.5) is proven for rollouts of the experts' policies drawn with "
        "secret randomness (release.source: policies), not for a fixed recorded set, so the "
        "figures are not a formal guarantee under the data relation";
  else if (seeded)
    d["note"] =
        "seeded noise: reproducible, and anyone holding the seed can regenerate the "
        "thresholds, the query noise, the expert draws and the rollouts, so the figures are not "
        "a formal guarantee";
  rep.details_json = d.dump();
  return rep;
}

}  // namespace dprl::algos
