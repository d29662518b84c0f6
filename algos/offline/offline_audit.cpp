#include "algos/offline/offline_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "algos/core/private_noise.hpp"
#include "engine/data/dataset_sampler.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/calibration.hpp"
#include "privacy/one_run_audit.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {
namespace {

// Per-dimension mean and std of the dataset's observations (double accumulation).
void obs_moments(const Dataset& ds, std::vector<double>& mean, std::vector<double>& sd) {
  const std::size_t d = ds.obs_dim();
  const auto all = ds.observations();
  const std::size_t rows = all.size() / d;
  mean.assign(d, 0.0);
  sd.assign(d, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < d; ++i) mean[i] += all[r * d + i];
  for (auto& m : mean) m /= static_cast<double>(rows);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < d; ++i)
      sd[i] += (all[r * d + i] - mean[i]) * (all[r * d + i] - mean[i]);
  for (auto& s : sd) s = std::sqrt(s / static_cast<double>(rows)) + 1e-3;
}

}  // namespace

namespace {}  // namespace

CanaryUsers draw_canary_users(const Dataset& ds, const EnvSpec& spec, std::int64_t M,
                              std::uint64_t seed) {
  CanaryUsers c;
  std::vector<double> mean, sd;
  obs_moments(ds, mean, sd);
  const std::size_t d = ds.obs_dim();
  c.obs_dim = d;
  const Space& box = spec.observation;
  Rng r(audit_stream(seed, 1));
  const auto n = static_cast<std::size_t>(M);
  c.obs.resize(n * d);
  c.actions.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < d; ++i) {
      const double u = 2.0 * r.uniform() - 1.0;
      double v = mean[i] + 4.0 * sd[i] * u;
      v = std::clamp(v, std::max(box.low[i], -3.0e38), std::min(box.high[i], 3.0e38));
      c.obs[j * d + i] = static_cast<float>(v);
    }
    c.actions[j] = static_cast<int>(r.below(spec.action.n));
  }
  return c;
}

Dataset with_canary_users(const Dataset& ds, const CanaryUsers& c, std::span<const char> in) {
  std::vector<std::size_t> all(ds.num_episodes());
  std::iota(all.begin(), all.end(), std::size_t{0});
  Dataset out = ds.subset(all);
  const std::size_t d = c.obs_dim;
  std::int64_t next_id = 0;
  for (const auto u : ds.user_ids()) next_id = std::max(next_id, u + 1);
  std::vector<float> obs(2 * d), act(1), rew{1.0f};
  std::vector<std::uint8_t> term{1}, trunc{0};
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (!in[j]) continue;
    std::copy_n(c.obs.begin() + static_cast<std::ptrdiff_t>(j * d), d, obs.begin());
    std::copy_n(c.obs.begin() + static_cast<std::ptrdiff_t>(j * d), d, obs.begin() + d);
    act[0] = static_cast<float>(c.actions[j]);
    out.add_episode(obs, act, rew, term, trunc, next_id + static_cast<std::int64_t>(j));
  }
  return out;
}

void canary_margins(const OfflineLearner& learner, const CanaryUsers& c, std::span<double> score) {
  const std::size_t d = c.obs_dim;
  const auto M = static_cast<Eigen::Index>(c.actions.size());
  nn::Mat obs(static_cast<Eigen::Index>(d), M), out;
  for (Eigen::Index j = 0; j < M; ++j)
    for (std::size_t i = 0; i < d; ++i)
      obs(static_cast<Eigen::Index>(i), j) = c.obs[static_cast<std::size_t>(j) * d + i];
  learner.released_outputs(obs, out);
  for (Eigen::Index j = 0; j < M; ++j) {
    const int aj = c.actions[static_cast<std::size_t>(j)];
    float other = -std::numeric_limits<float>::infinity();
    for (int k = 0; k < out.rows(); ++k)
      if (k != aj) other = std::max(other, out(k, j));
    score[static_cast<std::size_t>(j)] = static_cast<double>(out(aj, j)) - other;
    if (!std::isfinite(score[static_cast<std::size_t>(j)]))
      throw DataError("audit: the released model's output at a canary is not finite");
  }
}

namespace {

void validate(const OfflineAuditParams& a) { check_audit_params(a); }

// Everything decided before training: the audited population, q, T, the noised values.
struct Plan {
  privacy::UserDpSgdConfig cfg;
  double q = 0;
  std::int64_t T = 0, m_run = 0;
  std::size_t coords = 0;
};

Plan plan_audit(OfflineLearner& learner, const EnvSpec& spec, const Dataset& data,
                std::int64_t steps, bool until_budget, const OfflineAuditParams& a) {
  validate(a);
  const UserDpParams& dp = learner.dp_params();
  const OfflineCommonParams& common = learner.common_params();
  if (!dp.dp)
    throw ParamError(
        "audit: the learner is not private (set algo.params.dp: true); only user-level DP-SGD "
        "runs carry a claim to audit");
  Plan pl;
  pl.m_run = static_cast<std::int64_t>(data.users().size());
  const std::int64_t M = a.canaries;
  pl.q = static_cast<double>(common.batch_size) / static_cast<double>(pl.m_run);
  if (!(pl.q > 0.0 && pl.q <= 1.0))
    throw ParamError(
        fmt::format("audit: sampling rate q = batch_size / users = {} / {} must be in (0, 1]",
                    common.batch_size, pl.m_run));
  // the audited population: the run's users and the canaries, at the run's q
  pl.cfg.noise_multiplier = dp.noise_multiplier;
  pl.cfg.clip_norm = dp.clip_norm;
  pl.cfg.num_users = pl.m_run + M;
  pl.cfg.expected_batch = pl.q * static_cast<double>(pl.cfg.num_users);
  pl.cfg.contribution = dp.contribution;
  pl.cfg.validate();
  pl.T = a.steps > 0 ? a.steps : steps;
  if (a.steps == 0 && until_budget)
    pl.T = privacy::steps_within_budget(pl.cfg.step_event(), dp.epsilon, dp.delta, dp.accountant,
                                        std::int64_t{1} << 40);
  if (pl.T < 1) throw ParamError(fmt::format("audit: {} gradient steps: nothing to audit", pl.T));
  learner.setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n),
                audit_stream(static_cast<std::uint64_t>(a.seed), 2));
  std::vector<privacy::DpNetGrad> nets;
  for (const auto& t : learner.trained_nets()) nets.push_back({&t.net->shape(), t.cache, nullptr});
  pl.coords = privacy::noised_values(nets);
  if (a.white_box && static_cast<std::size_t>(M) > pl.coords)
    throw ParamError(fmt::format(
        "audit.canaries = {}: white-box canaries need one noised coordinate each ({} here)", M,
        pl.coords));
  return pl;
}

}  // namespace

void check_offline_audit(OfflineLearner& learner, const EnvSpec& spec, const Dataset& data,
                         std::int64_t steps, bool until_budget, const OfflineAuditParams& a) {
  plan_audit(learner, spec, data, steps, until_budget, a);
}

OfflineAuditReport audit_offline(OfflineLearner& learner, const EnvSpec& spec, const Dataset& data,
                                 std::int64_t steps, bool until_budget,
                                 const OfflineAuditParams& a) {
  const Plan pl = plan_audit(learner, spec, data, steps, until_budget, a);
  const UserDpParams& dp = learner.dp_params();
  const OfflineCommonParams& common = learner.common_params();
  const std::int64_t M = a.canaries;
  const privacy::UserDpSgdConfig& cfg = pl.cfg;
  const double q = pl.q;
  const std::int64_t T = pl.T;
  const std::size_t coords = pl.coords;
  const std::int64_t m_run = pl.m_run;
  const auto seed = static_cast<std::uint64_t>(a.seed);
  const CanarySet can(M, seed);
  CanaryUsers users_bb;
  if (!a.white_box) users_bb = draw_canary_users(data, spec, M, seed);
  const Dataset audited = a.white_box ? with_canary_users(data, users_bb, {})
                                      : with_canary_users(data, users_bb, can.in);
  const UserIndex users(audited);
  const BatchGatherer gather(audited);
  const PoissonUserSampler poisson(users, q, static_cast<std::size_t>(cfg.contribution));

  const bool secure = dp.noise == "os-entropy";
  const privacy::SecurePlan plan = privacy::user_dp_release_plan(cfg, coords, secure);
  double sd = plan.scale;                  // a mis-specified run shrinks it on the same grid
  privacy::UserDpSgdConfig run_cfg = cfg;  // what the learner is run with
  double canary_norm = dp.clip_norm;
  sd *= mis_noise_factor(a.mis_specify);
  if (a.mis_specify == "double-sensitivity") {
    run_cfg.clip_norm *= 2.0;
    canary_norm *= 2.0;
  }
  auto noise = make_private_noise(dp.noise, audit_stream(seed, 3), 0,
                                  {dp.noise_multiplier, dp.clip_norm, dp.epsilon, dp.delta,
                                   static_cast<double>(common.batch_size)},
                                  "audit");
  std::unique_ptr<privacy::NoiseSource> sampling;
  if (noise->secure()) sampling = privacy::make_os_entropy_noise(false);

  // white box: which canaries a step samples, and the running scores (the log likelihood
  // ratio of each release, with the noise scale estimated from the first release)
  std::vector<double> score(static_cast<std::size_t>(M), 0.0);
  std::vector<char> sampled(static_cast<std::size_t>(M), 0);
  double sd_seen = 0;
  const privacy::GaussianRelease release = [&](std::span<double> x, double s) {
    if (a.white_box)
      for (std::int64_t j = 0; j < M; ++j)
        if (sampled[j]) x[j] += canary_norm;
    privacy::add_gaussian_release(x, s, plan.grid, *noise);
    if (!a.white_box) return;
    if (sd_seen == 0) sd_seen = robust_scale(x.first(static_cast<std::size_t>(M)), s);
    for (std::int64_t j = 0; j < M; ++j)
      score[j] += privacy::audit::poisson_llr(x[j], canary_norm, sd_seen, q);
  };
  // black box: the initial model's margins are the baseline (public: the initial networks are
  // fixed by the audit seed before any data is seen)
  std::vector<double> base(static_cast<std::size_t>(M), 0.0);
  if (!a.white_box) canary_margins(learner, users_bb, base);
  OfflineBatch batch;
  UserBatch ub;
  for (std::int64_t step = 1; step <= T; ++step) {
    Rng r(sampling ? sampling->next_u64()
                   : derive_seed(seed, Domain::kMinibatch, kAuditStream,
                                 static_cast<std::uint64_t>(step)));
    poisson.sample(r, ub);
    if (a.white_box)
      for (std::int64_t j = 0; j < M; ++j) sampled[j] = can.in[j] && r.uniform() < q;
    gather.gather(ub.transitions, batch, static_cast<int>(ub.num_users()));
    learner.dp_step(batch, run_cfg, sd, release);
  }

  // black box: scores from the released model's outputs at the canaries
  if (!a.white_box) {
    canary_margins(learner, users_bb, score);
    for (std::int64_t j = 0; j < M; ++j) score[j] -= base[j];
  }

  // guesses: "in" for the r/2 largest scores, "out" for the r - r/2 smallest
  const privacy::audit::OneRunTally tally =
      privacy::audit::one_run_tally(score, can.in, a.guesses, dp.delta, a.confidence);

  OfflineAuditReport rep;
  rep.mode = a.white_box ? "white-box" : "black-box";
  rep.mis_specify = a.mis_specify;
  rep.epsilon_claimed = privacy::dpsgd_epsilon(
      {.noise_multiplier = dp.noise_multiplier, .sampling_rate = q, .steps = T}, dp.delta,
      dp.accountant);
  rep.epsilon_lower = tally.epsilon_lower;
  rep.refuted = rep.epsilon_lower > rep.epsilon_claimed;
  rep.delta = dp.delta;
  rep.confidence = a.confidence;
  rep.accountant = dp.accountant;
  rep.canaries = M;
  rep.included = can.included;
  rep.guesses = tally.guesses;
  rep.correct = tally.correct;
  rep.steps = T;
  rep.run_users = m_run;
  rep.sampling_rate = q;
  rep.noise_multiplier = dp.noise_multiplier;
  rep.clip_norm = dp.clip_norm;
  rep.noise_sd = sd;
  rep.noise_source = noise->name();
  return rep;
}

AuditReport to_audit_report(const OfflineAuditReport& r, const std::string& learner,
                            double epsilon_reported) {
  AuditReport a;
  a.learner = learner;
  a.kind = "one-run user-level DP-SGD audit (Steinke, Nasr and Jagielski, NeurIPS 2023)";
  a.mode = r.mode;
  a.mis_specify = r.mis_specify;
  a.epsilon_reported = epsilon_reported;
  a.epsilon_claimed = r.epsilon_claimed;
  a.epsilon_lower = r.epsilon_lower;
  a.delta = r.delta;
  a.confidence = r.confidence;
  a.refuted = r.refuted;
  a.canaries = r.canaries;
  a.included = r.included;
  a.guesses = r.guesses;
  a.correct = r.correct;
  nlohmann::ordered_json d;
  d["accountant"] = r.accountant;
  d["steps"] = r.steps;
  d["run_users"] = r.run_users;
  d["sampling_rate"] = r.sampling_rate;
  d["noise_multiplier"] = r.noise_multiplier;
  d["clip_norm"] = r.clip_norm;
  d["noise_sd"] = r.noise_sd;
  d["noise_source"] = r.noise_source;
  a.details_json = d.dump();
  return a;
}

std::string audit_json(const OfflineAuditReport& r, const std::string& learner,
                       double epsilon_reported) {
  return audit_report_json(to_audit_report(r, learner, epsilon_reported));
}

}  // namespace dprl::algos
