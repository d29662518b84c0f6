#include "algos/expert_level/selective_dp_sgd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "algos/core/private_noise.hpp"
#include "engine/data/dataset_sampler.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"
#include "engine/thread_pool.hpp"
#include "privacy/prefetched_release.hpp"
#include "privacy/calibration.hpp"
#include "privacy/ledger.hpp"
#include "privacy/release_tap.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

void SelectiveDpSgdParams::check() const {
  if (p > 0.0 && !(epsilon2 > 0.0 && delta2 > 0.0))
    throw ParamError(fmt::format(
        "selective.p = {} takes DP steps, which need epsilon2 > 0 and delta2 > 0 (got {} and {})",
        p, epsilon2, delta2));
}

namespace {

// The guarantee record of the DP-SGD part: the user-level DP-SGD record of the offline learners
// (privacy/user_dp_sgd.hpp) with the expert as the unit and the selective figures added.
PrivacyReport dp_part_report(const SelectiveDpSgdParams& p, const privacy::UserDpSgdConfig& cfg,
                             const SelectiveResult& r, const privacy::Ledger& ledger,
                             const std::string& noise_source, double noise_sd,
                             std::size_t noised_values, bool secure) {
  const bool seeded = p.noise == "seeded";
  const bool paper = p.accounting == "paper";
  privacy::UserDpReportInput in;
  in.cfg = cfg;
  in.steps = r.noisy_steps;
  in.epsilon = ledger.spent_epsilon();
  in.delta = p.delta2;
  in.accountant = p.accountant;
  in.unit = "expert";
  in.noise_source = noise_source;
  in.seeded = seeded;
  in.noise_sd = noise_sd;
  // the plan the release used (cached), for its sampler's distance
  in.sampler_tv = privacy::user_dp_release_plan(cfg, noised_values, secure).sampler_tv;
  in.covers = {"policy.bin (the released model)",
               "metrics.csv (evaluation returns of the model in public env episodes; epsilon)",
               "summary.json", privacy::Ledger::kFileName};
  nlohmann::ordered_json d;
  d["mechanism"] =
      "selective DP-SGD (paper 000 Alg. 3; Alg. 4 steps): Bernoulli(p) between an expert-level "
      "DP-SGD step on D_unst and an ordinary step on D_stable";
  d["relation"] = "add or remove one expert together with all of its trajectories";
  d["accounting"] = p.accounting;
  d["p"] = p.p;
  const double q0 = cfg.sampling_rate();
  d["q0"] = q0;
  d["q_accounted"] = paper ? p.p * q0 : q0;
  if (paper)  // every iteration is accounted, at q = p b / m
    d["event"] = nlohmann::json::parse(
        privacy::dpsgd_event({.noise_multiplier = cfg.noise_multiplier,
                              .sampling_rate = p.p * q0,
                              .steps = std::max<std::int64_t>(r.iterations, 1),
                              .discrete = secure})
            .to_json());
  d["iterations"] = r.iterations;
  d["noisy_steps"] = r.noisy_steps;
  d["stable_steps"] = r.stable_steps;
  d["budget_epsilon"] = p.epsilon2;
  d["noised_values"] = noised_values;
  d["release"] = secure ? "secure: the clipped sum snapped to the sampler's grid, table-based "
                          "discrete Gaussian noise (sampler_delta); noise_sd covers C' + "
                          "sqrt(n) grid"
                        : "NoiseSource::add_gaussian, noise_sd = z C'";
  d["public"] = "the number of experts m (it sets q0 = b/m), the coin draws (data-independent)";
  d["post_processing"] =
      "steps on D_stable (a DataRelease output), target networks, Adam state, the greedy policy "
      "and its evaluation returns";
  if (paper)
    d["note"] =
        "paper accounting (q = p b/m per iteration) is valid only if noisy and stable steps "
        "cannot be told apart; with observable intermediate models it is optimistic, so the "
        "record is not formal";
  else if (seeded)
    d["note"] =
        "seeded noise: the run is reproducible and anyone holding the seed can regenerate the "
        "noise and the expert sampling, so the figures are not a formal guarantee";
  in.extra_json = d.dump();
  PrivacyReport rep = privacy::user_dp_report(in);
  rep.sensitivity = fmt::format(
      "L2 C' = C (1 + beta) = {} with C = {} per sampled expert (one transition; joint norm over "
      "all trained networks; beta = {:.3g} covers the double-precision rounding of the sums)",
      cfg.sensitivity(), cfg.clip_norm, cfg.accumulation_error());
  rep.formal = !seeded && !paper;
  return rep;
}

}  // namespace

namespace {

// One selective run: the samplers (uniform transitions of D_stable, Poisson-sampled experts of
// D_unst), the DP-SGD noise and ledger, and the iterations done so far (r). Not movable: the
// samplers point into it.
struct SelectiveRun {
  SelectiveRun(OfflineLearner& learner, const Dataset* stable, const Dataset* unstable,
               std::int64_t num_experts, int batch_size, const SelectiveDpSgdParams& p,
               TrainContext& ctx, const SelectiveAudit* audit);
  SelectiveRun(const SelectiveRun&) = delete;
  SelectiveRun& operator=(const SelectiveRun&) = delete;

  // noise as the offline learners draw it (algos/core/private_noise.hpp): os-entropy through the
  // secure snapped release (its noise std covers the grid), seeded from the seed and the privacy
  // parameters (reproducible, not formal, warned once); expert draws and coins from OS entropy
  // unless seeded
  void setup_noise();
  // the ledger and the iteration count: the noisy steps the budget affords (sound: the run ends
  // when they are done, max_iterations caps it; paper: every iteration is charged)
  void plan_budget();
  // one 64-bit seed per iteration: its coin and its expert draws
  std::uint64_t draw_seed(std::uint64_t kind, std::int64_t it) const;
  // the coins of the next len iterations (fewer when sound accounting reaches its noisy steps);
  // returns the noisy ones
  std::int64_t draw_coins(std::int64_t len);
  // iteration it: a DP-SGD step on sampled experts of D_unst, or an ordinary step on D_stable
  void iterate(std::int64_t it, bool noisy);
  // the evaluation (when due or finished) and the progress line after a block
  void report_block(bool finished);
  // whether the run is over, from its counters
  bool done() const {
    return r.iterations >= total || (dp && p.accounting == "sound" && r.noisy_steps >= r.planned_noisy);
  }
  // checkpoints, at the end of a block and before its evaluation: the learner, the counters, the
  // noise stream and the ledger's charges (in memory: replayed on load)
  void sync(StateIo& io, bool& eval_pending);

  OfflineLearner& learner;
  const Dataset* const stable;
  const SelectiveDpSgdParams& p;
  TrainContext& ctx;
  const std::uint64_t seed;
  const int batch_size;
  const bool dp;
  std::optional<BatchGatherer> stable_gather, unstable_gather;
  std::optional<UserIndex> unstable_users;
  privacy::UserDpSgdConfig cfg;
  // the configuration the noisy steps run with: an audit's canary experts join the population at
  // the same q0, and its mis-specified clip norm (the accounting keeps cfg)
  privacy::UserDpSgdConfig run_cfg;
  const SelectiveAudit* audit;
  std::int64_t releases = 0;  // noisy releases so far (the tap's round)
  std::optional<PoissonUserSampler> poisson;
  const bool secure;
  std::unique_ptr<privacy::NoiseSource> noise, sampling;
  // the next step's noise drawn ahead (train.noise_threads); not with an audit tap, which may
  // change a release's noise
  std::unique_ptr<HelperThread> helper;  // draws ahead and shares the double products
  std::unique_ptr<privacy::PrefetchedGaussianRelease> prefetched;
  std::size_t noised = 0;
  double noise_sd = 0, noise_grid = 0;
  privacy::GaussianRelease release;
  double q_acc = 0;
  std::optional<privacy::DpEvent> event;
  std::optional<privacy::Ledger> ledger;
  std::int64_t total = 0;  // iterations (sound: a cap; the noisy count ends the run)
  SelectiveResult r;
  // scratch
  OfflineBatch batch;
  std::vector<std::size_t> picked;
  UserBatch users;
  std::vector<std::uint8_t> coins;
};

SelectiveRun::SelectiveRun(OfflineLearner& learner, const Dataset* stable, const Dataset* unstable,
                           std::int64_t num_experts, int batch_size, const SelectiveDpSgdParams& p,
                           TrainContext& ctx, const SelectiveAudit* audit)
    : learner(learner),
      stable(stable),
      p(p),
      ctx(ctx),
      seed(ctx.seed()),
      batch_size(batch_size),
      dp(p.p > 0.0),
      audit(audit),
      secure(p.noise == "os-entropy"),
      total(p.stable_steps) {
  if (stable) stable_gather.emplace(*stable);
  if (unstable) {
    unstable_gather.emplace(*unstable);
    unstable_users.emplace(*unstable);
  }
  cfg.noise_multiplier = p.noise_multiplier;
  cfg.clip_norm = p.clip_norm;
  cfg.expected_batch = batch_size;
  cfg.num_users = num_experts;
  cfg.discrete = secure;
  cfg.validate();
  run_cfg = cfg;
  if (audit) {
    run_cfg.num_users += audit->extra_experts;
    run_cfg.expected_batch = cfg.sampling_rate() * static_cast<double>(run_cfg.num_users);
    run_cfg.clip_norm *= audit->clip_factor;
  }
  if (unstable_users) poisson.emplace(*unstable_users, cfg.sampling_rate(), 1);
}

void SelectiveRun::setup_noise() {
  if (dp) {
    noise = make_private_noise(p.noise, seed, 10,
                               {p.noise_multiplier, p.clip_norm, p.epsilon2, p.delta2, p.p,
                                static_cast<double>(batch_size)},
                               "selective");
    if (secure) sampling = privacy::make_os_entropy_noise(false);
    std::vector<privacy::DpNetGrad> nets;
    for (const auto& t : learner.trained_nets())
      nets.push_back({&t.net->shape(), t.cache, nullptr});
    noised = privacy::noised_values(nets);
    const privacy::SecurePlan plan = privacy::user_dp_release_plan(cfg, noised, secure);
    noise_sd = plan.scale;
    noise_grid = plan.grid;
    helper = privacy::make_noise_helper(ctx.train().resolved_noise_threads());
    if (!(audit && audit->tap))
      prefetched = std::make_unique<privacy::PrefetchedGaussianRelease>(*noise, noised, noise_sd,
                                                                        noise_grid, helper.get());
  }
  release = [this](std::span<double> x, double sd) {
    if (prefetched) {
      DPRL_CHECK(sd == noise_sd);
      return (*prefetched)(x);
    }
    privacy::ReleaseTap* tap = audit ? audit->tap : nullptr;
    if (!tap) return privacy::add_gaussian_release(x, sd, noise_grid, *noise);
    const privacy::ReleaseTap::Release r{0, 0, ++releases, sd, p.clip_norm};
    privacy::add_gaussian_release(x, tap->before(r, x), noise_grid, *noise);
    tap->after(r, x);
  };
}

void SelectiveRun::plan_budget() {
  const double q0 = cfg.sampling_rate();
  q_acc = p.accounting == "paper" ? p.p * q0 : q0;
  // secure noise is the exact discrete Gaussian: accounted with the bound proven for it
  event = privacy::DpEvent::poisson_sampled(
      q_acc, secure ? privacy::DpEvent::discrete_gaussian(p.noise_multiplier)
                    : privacy::DpEvent::gaussian(p.noise_multiplier));
  if (!dp) return;
  ledger.emplace(p.epsilon2, p.delta2, p.accountant);
  ledger->set_relation(NeighbouringRelation::kAddRemove, "expert");
  ledger->set_noise_source(noise->name());
  const std::int64_t n =
      privacy::steps_within_budget(*event, p.epsilon2, p.delta2, p.accountant, p.max_iterations);
  if (n < 1)
    throw BudgetExceeded(fmt::format(
        "selective: epsilon2 = {} cannot afford one step at noise_multiplier {} and q = {:.4g}",
        p.epsilon2, p.noise_multiplier, q_acc));
  r.planned_noisy = p.accounting == "sound" ? n : 0;
  total = p.accounting == "sound" ? p.max_iterations : n;
}

std::uint64_t SelectiveRun::draw_seed(std::uint64_t kind, std::int64_t it) const {
  return sampling ? sampling->next_u64()
                  : derive_seed(seed, Domain::kMinibatch, kind, static_cast<std::uint64_t>(it));
}

std::int64_t SelectiveRun::draw_coins(std::int64_t len) {
  coins.clear();
  std::int64_t noisy = 0;
  for (std::int64_t i = 0; i < len; ++i) {
    bool c = dp && p.p >= 1.0;
    if (dp && p.p < 1.0) {
      Rng coin(draw_seed(2, r.iterations + i + 1));
      c = coin.uniform() < p.p;
    }
    coins.push_back(c ? 1 : 0);
    noisy += c ? 1 : 0;
    if (p.accounting == "sound" && dp && r.noisy_steps + noisy == r.planned_noisy) break;
  }
  return noisy;
}

void SelectiveRun::iterate(std::int64_t it, bool noisy) {
  if (noisy) {
    if (poisson) {
      Rng draws(draw_seed(1, it));
      poisson->sample(draws, users);
      unstable_gather->gather(users.transitions, batch, static_cast<int>(users.num_users()));
    } else {
      batch.n = batch.users = 0;
    }
    learner.dp_step(batch, run_cfg, noise_sd, release, helper.get());
    ++r.noisy_steps;
  } else if (stable) {
    Rng draws(derive_seed(seed, Domain::kMinibatch, 0, static_cast<std::uint64_t>(it)));
    sample_uniform(*stable, static_cast<std::size_t>(batch_size), draws, picked);
    stable_gather->gather(picked, batch);
    learner.step(batch);
    ++r.stable_steps;
  } else {
    ++r.skipped;
  }
}

void SelectiveRun::sync(StateIo& io, bool& eval_pending) {
  io.section("selective");
  learner.sync_model_state(io);
  constexpr std::int64_t kMax = std::int64_t{1} << 50;
  io.bounded(r.iterations, std::int64_t{0}, total, "iterations");
  io.bounded(r.noisy_steps, std::int64_t{0}, r.iterations, "noisy steps");
  io.bounded(r.stable_steps, std::int64_t{0}, r.iterations, "stable steps");
  io.bounded(r.skipped, std::int64_t{0}, r.iterations, "skipped steps");
  io(r.capped);
  io.bounded(releases, std::int64_t{0}, kMax, "releases");
  io(eval_pending);
  bool noised_run = noise != nullptr;
  io(noised_run);
  if (noised_run != (noise != nullptr))
    throw DataError("checkpoint: section 'selective' is of a run with other noise");
  if (prefetched)
    prefetched->sync_state(io);
  else if (noise)
    noise->sync_state(io);
  std::uint64_t n = ledger ? ledger->entries().size() : 0;
  io.bounded(n, std::uint64_t{0}, ledger ? std::uint64_t{1} << 20 : 0, "ledger charges");
  // a run without DP-SGD steps (p = 0, or no budget for them) has no ledger
  const std::vector<privacy::LedgerEntry> saved =
      io.loading() || !ledger ? std::vector<privacy::LedgerEntry>{} : ledger->entries();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string event = io.loading() ? std::string() : saved[i].event.to_json();
    std::string label = io.loading() ? std::string() : saved[i].label;
    std::int64_t count = io.loading() ? 0 : saved[i].count;
    io(event);
    io(label);
    io.bounded(count, std::int64_t{1}, kMax, "charge count");
    if (!io.loading()) continue;
    try {
      ledger->charge(privacy::DpEvent::from_json(event), count, label);
    } catch (const Error& e) {
      throw DataError(fmt::format("checkpoint: section 'selective': charge {}: {}", i + 1, e.what()));
    }
  }
}

void SelectiveRun::report_block(bool finished) {
  if (ctx.eval_due(r.iterations) || finished) {
    auto pol = learner.policy();
    ctx.evaluate(*pol, r.iterations, 0,
                 {{"noisy_steps", static_cast<double>(r.noisy_steps)},
                  {"stable_steps", static_cast<double>(r.stable_steps)}});
  }
  // sound mode ends by its noisy-step count: about planned / p iterations
  const std::int64_t shown =
      dp && p.accounting == "sound"
          ? static_cast<std::int64_t>(static_cast<double>(r.planned_noisy) / p.p)
          : total;
  ctx.progress().update(r.iterations, std::max(shown, r.iterations), 0,
                        ctx.last_eval().return_mean);
}

}  // namespace

SelectiveResult train_selective(OfflineLearner& learner, const Dataset* stable,
                                const Dataset* unstable, std::int64_t num_experts, int batch_size,
                                const SelectiveDpSgdParams& params, TrainContext& ctx,
                                const SelectiveAudit* audit) {
  SelectiveDpSgdParams p = params;
  validate_params(p, "selective");
  if (stable && stable->num_transitions() == 0) stable = nullptr;
  if (unstable && unstable->num_transitions() == 0) unstable = nullptr;
  const bool dp = p.p > 0.0;
  if (!dp && !stable)
    throw DataError("selective DP-SGD: p = 0 trains on the stable data only, and it is empty");
  if (!dp && p.stable_steps < 1)
    throw ParamError("selective.stable_steps must be >= 1 when p = 0 (no DP step runs)");
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  learner.setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n),
                ctx.seed());
  ctx.set_step_column("iteration");
  SelectiveRun run(learner, stable, unstable, num_experts, batch_size, p, ctx, audit);
  run.setup_noise();
  run.plan_budget();
  SelectiveResult& r = run.r;
  const std::int64_t every = ctx.train().eval_every > 0 ? ctx.train().eval_every : run.total;
  // a run whose context checkpoints (the pipeline's) saves at the end of every block, before the
  // block's evaluation (the release), and continues from there when killed
  bool eval_pending = false;
  const TrainContext::SyncFn sync = [&](StateIo& io) { run.sync(io, eval_pending); };
  bool finished = false;
  if (ctx.resume(sync)) {
    // the charges after checkpoint.prev.bin lived only in the lost newest checkpoint: with fresh
    // noise, redrawing those steps would release them twice, uncounted
    if (ctx.resumed_from_previous() && dp && p.noise != "seeded")
      throw DataError(
          "selective DP-SGD: the newest checkpoint is damaged and the noise is not seeded, so the "
          "stage cannot continue from checkpoint.prev.bin without losing count of its releases");
    finished = run.done();
    if (eval_pending) run.report_block(finished);
  }
  while (!finished) {
    // the block up to the next evaluation: draw its coins, charge its noisy steps, then run it
    const std::int64_t noisy =
        run.draw_coins(std::min(every - r.iterations % every, run.total - r.iterations));
    const auto n = static_cast<std::int64_t>(run.coins.size());
    const std::int64_t charge = p.accounting == "paper" ? n : noisy;
    if (dp && charge > 0) {
      run.ledger->charge(*run.event, charge,
                         fmt::format("iterations {}-{}", r.iterations + 1, r.iterations + n));
      ctx.set_epsilon(run.ledger->spent_epsilon());
    }
    for (std::int64_t i = 0; i < n; ++i)
      run.iterate(r.iterations + i + 1, run.coins[static_cast<std::size_t>(i)] != 0);
    r.iterations += n;
    finished = run.done();
    r.capped = dp && p.accounting == "sound" && r.noisy_steps < r.planned_noisy &&
               r.iterations >= run.total;
    eval_pending = true;
    ctx.save_checkpoint(r.iterations, sync);
    eval_pending = false;
    run.report_block(finished);
  }
  if (run.ledger) {
    r.epsilon = run.ledger->spent_epsilon();
    ctx.write_file(privacy::Ledger::kFileName, run.ledger->to_json());
    r.report = dp_part_report(p, run.cfg, r, *run.ledger, run.noise->name(), run.noise_sd,
                              run.noised, run.secure);
  }
  return std::move(r);
}

}  // namespace dprl::algos
