// Primorl::train: the three stages (data, model, policy) and the record.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "algos/core/networks.hpp"
#include "algos/core/private_noise.hpp"
#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/mb_sac.hpp"
#include "algos/model_based/primorl.hpp"
#include "algos/model_based/primorl_report.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"
#include "engine/thread_pool.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::algos {

namespace mb = model_based;

namespace {

// the Domain::kDpNoise stream of the model training's sampling and noise
constexpr std::uint64_t kPrimorlNoiseStream = 0x7d9;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
// CPU seconds of this run: its thread and the pool threads working for it (not other runs of a
// sweep sharing the process)
double cpu_now() { return work_cpu_seconds(); }

}  // namespace

mb::ProbEnsembleConfig primorl_model_config(const PrimorlParams& p, int D, int A) {
  mb::ProbEnsembleConfig c;
  c.in_dim = D + A;
  c.out_dim = D + 1;
  c.hidden = parse_hidden_sizes(p.model_hidden, "primorl.model_hidden");
  c.members = p.members;
  c.learn_bounds = p.learn_logvar_bounds;
  c.weight_decay = mb::parse_weight_decay(p.weight_decay);
  return c;
}

namespace {

mb::TdpConfig tdp_config(const PrimorlParams& p) {
  mb::TdpConfig c;
  c.variant = p.variant == "tdp" ? "dp" : p.variant;
  c.q = p.q;
  c.units = p.public_trajectories;
  c.z = p.z;
  c.clip_norm = p.clip_norm;
  c.clipping = p.clipping;
  c.rounds = p.rounds;
  c.local_epochs = p.local_epochs;
  c.batch_size = p.local_batch_size;
  c.lr = p.local_lr;
  c.local_optimizer = p.local_optimizer;
  c.eval_every = p.model_eval_every;
  return c;
}

mb::PolicyStageConfig policy_config(const PrimorlParams& p, std::int64_t steps) {
  mb::PolicyStageConfig c;
  c.epochs = static_cast<int>(steps / p.steps_per_epoch);
  c.steps_per_epoch = p.steps_per_epoch;
  c.batch_size = p.sac_batch_size;
  c.rollout_freq = p.rollout_freq;
  c.rollout_batch = p.rollout_batch;
  c.horizon = p.horizon;
  c.retain_epochs = p.retain_epochs;
  c.real_ratio = p.real_ratio;
  c.start_reset = p.start_reset;
  c.start_from_data = p.start_from_data;
  return c;
}

mb::ModelEnvConfig model_env_config(const PrimorlParams& p, const EnvSpec& spec) {
  mb::ModelEnvConfig c;
  c.penalty = mb::parse_penalty(p.penalty, "primorl.penalty");
  c.lambda = p.penalty_lambda;
  c.mpd_with_reward = p.mpd_with_reward;
  bool finite = true;
  for (std::size_t j = 0; j < spec.observation.dim(); ++j)
    finite =
        finite && std::isfinite(spec.observation.low[j]) && std::isfinite(spec.observation.high[j]);
  if (finite)
    for (std::size_t j = 0; j < spec.observation.dim(); ++j) {
      c.obs_low.push_back(static_cast<float>(spec.observation.low[j]));
      c.obs_high.push_back(static_cast<float>(spec.observation.high[j]));
    }
  return c;
}

// data return statistics (private: only with report_data)
std::string data_returns_csv(const Dataset& d, std::vector<std::pair<std::string, double>>& ex) {
  std::string out = "episode,user_id,return\n";
  double s = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t e = 0; e < d.num_episodes(); ++e) {
    const double r = d.episode_return(e);
    out += fmt::format("{},{},{:.6g}\n", e, d.user_id(e), r);
    s += r;
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  ex.push_back({"data_return_mean", s / static_cast<double>(d.num_episodes())});
  ex.push_back({"data_return_min", lo});
  ex.push_back({"data_return_max", hi});
  return out;
}

// the ensemble with its normaliser: the public split's moments, replaced by the spaces'
// mid-points and half-ranges where finite (normalizer: space)
mb::ProbEnsemble build_model(const PrimorlParams& p, const EnvSpec& spec,
                             const mb::TransitionTable& test, std::uint64_t seed) {
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  mb::ProbEnsemble model(primorl_model_config(p, D, A));
  model.init(seed);
  if (p.normalizer == "none") return model;
  std::vector<float> mean, sd;
  mb::input_moments(test, mean, sd);
  if (p.normalizer == "space")
    for (int j = 0; j < D + A; ++j) {
      const Space& sp = j < D ? spec.observation : spec.action;
      const double lo = sp.low[j < D ? j : j - D], hi = sp.high[j < D ? j : j - D];
      if (std::isfinite(lo) && std::isfinite(hi) && hi > lo) {
        mean[j] = static_cast<float>(0.5 * (lo + hi));
        sd[j] = static_cast<float>(0.5 * (hi - lo));
      }
    }
  model.set_normalizer(mean, sd);
  return model;
}

// TDP (with its ledgers) or pooled training; writes model_training.csv and the ledger
mb::PipelineFacts train_model(const PrimorlParams& p, mb::ProbEnsemble& model,
                              const mb::TransitionTable& train, const mb::TransitionTable& test,
                              const std::string& unit, TrainContext& ctx, mb::TrainResult& mres) {
  const bool dp = p.variant == "tdp";
  // the private variant draws its sampling and noise from the learners' shared source
  // (private_noise.hpp: os-entropy by default, seeded reproducible and warned); the non-private
  // variants draw only the Poisson samples, from a seeded stream
  auto source = dp ? make_private_noise(p.noise, ctx.seed(), kPrimorlNoiseStream,
                                        {p.z, p.q, p.clip_norm, p.delta}, "primorl")
                   : privacy::make_seeded_noise(ctx.seed(), kPrimorlNoiseStream, 0);
  // the RDP ledger is the run directory's persistent one (as the offline learners'): each block
  // of rounds is durable before it runs, and a model stage restarted after a kill (before the
  // first checkpoint) composes with what the killed one already released
  const double budget = p.budget_epsilon > 0 ? p.budget_epsilon : 1e12;
  const auto dir = ctx.run_dir();
  privacy::Ledger rdp = dp && dir ? privacy::Ledger::open(*dir, budget, p.delta, "rdp")
                                  : privacy::Ledger(budget, p.delta, "rdp");
  const double spent_before = rdp.spent_epsilon();
  privacy::Ledger pld(1e12, p.delta, "pld");
  if (dp) rdp.set_relation(NeighbouringRelation::kAddRemove, unit);
  rdp.set_noise_source(source->name());
  ThreadPool pool(p.threads);
  auto on_model = [&](const mb::TdpProgress& pr) {
    ctx.progress().update(pr.round, p.variant != "mopo" ? p.rounds : p.pooled_max_epochs, 0,
                          pr.test_mse);
  };
  if (p.variant == "mopo") {
    mb::PooledConfig pc{p.pooled_batch_size, p.pooled_lr, p.pooled_max_epochs, p.pooled_patience};
    mres = mb::train_ensemble_pooled(model, train, test, pc,
                                     derive_seed(ctx.seed(), Domain::kAlgo, 30), on_model);
  } else {
    mres = mb::train_ensemble_tdp(model, train, test, tdp_config(p),
                                  derive_seed(ctx.seed(), Domain::kAlgo, 31), *source,
                                  dp ? &rdp : nullptr, dp ? &pld : nullptr, pool, on_model);
  }
  ctx.write_file("model_training.csv", mb::model_curve_csv(mres, !dp));
  mb::PipelineFacts facts;
  facts.train_units = train.units();
  facts.denominator_units =
      p.public_trajectories > 0 ? static_cast<std::size_t>(p.public_trajectories) : train.units();
  facts.test_units = test.units();
  facts.train_transitions = train.transitions();
  facts.rounds = mres.rounds;
  facts.stopped_by_budget = mres.stopped_by_budget;
  facts.noise_source = source->name();
  if (dp) {
    facts.epsilon_rdp = rdp.spent_epsilon();
    facts.epsilon_spent_before = spent_before;
    facts.epsilon_pld =
        mres.pld_unbounded ? std::numeric_limits<double>::infinity() : pld.spent_epsilon();
    privacy::RdpAccountant acc;
    acc.compose(privacy::dpsgd_event({.noise_multiplier = p.z,
                                      .sampling_rate = p.q,
                                      .steps = std::max<std::int64_t>(mres.rounds, 1),
                                      .discrete = source->secure()}));
    facts.epsilon_rdp_classical =
        privacy::rdp_to_epsilon_classical(acc.orders(), acc.rdp(), p.delta);
    facts.noise_std = p.z * p.clip_norm / (p.q * static_cast<double>(facts.denominator_units));
    facts.released_noise_std = mres.released_noise_std;
    facts.sampler_tv = mres.sampler_tv_per_round * static_cast<double>(mres.rounds);
    if (!rdp.file()) ctx.write_file(privacy::Ledger::kFileName, rdp.to_json());
    ctx.set_epsilon(facts.epsilon_rdp);
  }
  return facts;
}

SacLearnerConfig sac_config(const PrimorlParams& p) {
  SacLearnerConfig sc;
  sc.hidden = parse_hidden_sizes(p.sac_hidden, "primorl.sac_hidden");
  sc.gamma = p.gamma;
  sc.tau = p.tau;
  sc.actor_lr = p.actor_lr;
  sc.critic_lr = p.critic_lr;
  sc.alpha_lr = p.alpha_lr;
  sc.target_entropy = p.target_entropy;
  return sc;
}

// summary.json extras: the score over the last final_window epochs and the model figures
void record_extras(const PrimorlParams& p, const std::vector<double>& evals,
                   const mb::PipelineFacts& facts, const mb::TrainResult& mres,
                   std::vector<std::pair<std::string, double>>& extra) {
  const std::size_t w = std::min<std::size_t>(p.final_window, evals.size());
  double last = 0;
  for (std::size_t i = evals.size() - w; i < evals.size(); ++i) last += evals[i];
  extra.push_back({"return_last_window", w ? last / static_cast<double>(w) : NAN});
  extra.push_back({"final_window", static_cast<double>(w)});
  // the training split's size is published only where it is declared public
  if (p.variant != "tdp" || p.public_trajectories == 0)
    extra.push_back({"train_trajectories", static_cast<double>(facts.train_units)});
  extra.push_back({"test_trajectories", static_cast<double>(facts.test_units)});
  extra.push_back({"model_rounds", static_cast<double>(mres.rounds)});
  extra.push_back({"model_best_round", static_cast<double>(mres.best_round)});
  extra.push_back({"model_best_test_mse", mres.best_test_mse});
  extra.push_back({"model_final_test_mse", mres.final_test_mse});
  if (p.variant == "tdp") {
    extra.push_back({"epsilon_rdp", facts.epsilon_rdp});
    extra.push_back({"epsilon_pld", facts.epsilon_pld});
  }
}

}  // namespace

void Primorl::check_model_training(const EnvSpec& spec, std::size_t K) const {
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  const mb::ProbEnsemble model(primorl_model_config(p_, D, A));
  mb::tdp_released_noise_std(tdp_config(p_), K, model, p_.noise == "os-entropy");
  if (p_.variant == "tdp" && p_.budget_epsilon > 0.0) {
    const double one = privacy::rdp_dpsgd_epsilon(
        {.noise_multiplier = p_.z, .sampling_rate = p_.q, .steps = 1}, p_.delta);
    if (one > p_.budget_epsilon)
      throw BudgetExceeded(fmt::format(
          "primorl.budget_epsilon = {} cannot afford one round (epsilon {:.6g} at z = {}, q = {}, "
          "delta = {})",
          p_.budget_epsilon, one, p_.z, p_.q, p_.delta));
  }
}

Primorl::ModelStage Primorl::model_stage(const std::function<std::unique_ptr<Env>()>& make_env,
                                         const Env& env, std::uint64_t seed,
                                         const std::function<void(const Dataset&)>& on_data) {
  // the experiment's dataset is tabled where it is; a collected or cached one is owned here
  Dataset owned;
  if (!external_) owned = data_ ? std::move(*data_) : obtain_data(make_env, env);
  data_.reset();
  const Dataset& data = external_ ? *external_ : owned;
  const auto split = mb::split_by_unit(
      data, p_.test_fraction,
      derive_seed(static_cast<std::uint64_t>(p_.data_seed), Domain::kDataset, 1u << 20));
  ModelStage st;
  st.train = mb::make_table(data, split.train_users);
  st.test = mb::make_table(data, split.test_users);
  if (on_data) on_data(data);
  st.model = build_model(p_, env.spec(), st.test, derive_seed(seed, Domain::kInit, 1000));
  st.tdp = tdp_config(p_);
  st.tdp_seed = derive_seed(seed, Domain::kAlgo, 31);
  return st;
}

namespace {

// A run's checkpoints, written once its model is trained (stages 1 and 2) and then between the
// policy stage's epochs: the model, the facts and figures of its training, the summary extras
// and evaluations so far, and the policy stage's state (bytes; empty before its first epoch). The
// model's release is charged and written out (privacy_ledger.json, model_training.csv) before the
// first, so a run killed in the policy stage resumes and never trains (releases) a second model.
void sync_model_stage(StateIo& io, mb::ProbEnsemble& model, mb::PipelineFacts& f,
                      mb::TrainResult& r, std::vector<std::pair<std::string, double>>& extra,
                      std::vector<double>& evals, std::string& policy_state) {
  io.section("primorl_model");
  io(model.buffer(), true);
  std::vector<float> mean = model.normalizer_mean(), sd = model.normalizer_std();
  io(mean);
  io(sd);
  const auto in = static_cast<std::size_t>(model.in_dim());
  if (io.loading()) {
    if ((mean.size() != in && !mean.empty()) || sd.size() != mean.size())
      throw DataError("checkpoint: section 'primorl_model' holds a normaliser of another size");
    if (!mean.empty()) model.set_normalizer(mean, sd);
  }
  constexpr std::uint64_t kMaxU = std::uint64_t{1} << 40;
  constexpr std::int64_t kMax = std::int64_t{1} << 40;
  for (std::size_t* v :
       {&f.train_units, &f.denominator_units, &f.test_units, &f.train_transitions}) {
    std::uint64_t x = *v;
    io.bounded(x, std::uint64_t{0}, kMaxU, "model data counts");
    *v = static_cast<std::size_t>(x);
  }
  io.bounded(f.rounds, std::int64_t{0}, kMax, "model rounds");
  io(f.epsilon_rdp);
  io(f.epsilon_spent_before);
  io(f.epsilon_pld);
  io(f.epsilon_rdp_classical);
  io(f.noise_std);
  io(f.released_noise_std);
  io(f.sampler_tv);
  io(f.noise_source);
  io(f.stopped_by_budget);
  io.bounded(r.rounds, std::int64_t{0}, kMax, "model rounds");
  io.bounded(r.best_round, std::int64_t{0}, kMax, "best model round");
  io(r.best_test_mse);
  io(r.final_test_mse);
  io.bounded(r.clients, std::int64_t{0}, std::int64_t{1} << 62, "sampled clients");
  io(r.mean_norm);
  io(r.clipped_fraction);
  io(r.stopped_by_budget);
  io(r.released_noise_std);
  io(r.sampler_tv_per_round);
  std::uint64_t n = extra.size();
  io.bounded(n, std::uint64_t{0}, std::uint64_t{64}, "summary extras");
  if (io.loading()) extra.assign(n, {});
  for (auto& [k, v] : extra) {
    io(k);
    io(v);
  }
  io(evals);
  io(policy_state);
}

}  // namespace

TrainSteps Primorl::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  check(RunPlan{*env, ctx.train(), ctx.seed(), std::nullopt, ctx.dataset()});
  const EnvSpec& spec = env->spec();
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  mb::StageTimes times;
  extra_.clear();

  const bool needs_real = p_.real_ratio > 0.0 || p_.start_from_data;
  ModelStage stage;
  stage.model = mb::ProbEnsemble(primorl_model_config(p_, D, A));
  mb::ProbEnsemble& model = stage.model;
  mb::TrainResult mres;
  mb::PipelineFacts facts;
  std::vector<double> evals;
  mb::PolicyStageCheckpoints policy_ckpt;
  const TrainContext::SyncFn sync = [&](StateIo& io) {
    sync_model_stage(io, model, facts, mres, extra_, evals, policy_ckpt.resume_state);
  };
  auto t0 = Clock::now();
  double c0 = cpu_now();
  if (!ctx.resume(sync)) {
    // (1) data, then the public split; the Dataset itself is dropped once tabled
    stage = model_stage([&ctx] { return ctx.make_env(); }, *env, ctx.seed(),
                        [&](const Dataset& data) {
                          if (!p_.data_export.empty())
                            save_minari(data, p_.data_export, SaveOptions{.overwrite = true});
                          if (p_.report_data)
                            ctx.write_file("data_returns.csv", data_returns_csv(data, extra_));
                        });
    times.data_s = since(t0);
    times.data_cpu_s = cpu_now() - c0;

    // (2) model
    t0 = Clock::now();
    c0 = cpu_now();
    facts = train_model(p_, model, stage.train, stage.test, external_ ? "user" : "trajectory", ctx,
                        mres);
    // PriMORL variants (and MOPO without real data) release the private table here: nothing
    // below may read it
    if (!needs_real) {
      if (after_model_) after_model_(stage.train);
      stage.train = mb::TransitionTable();
      ctx.save_checkpoint(0, sync);
    }
    times.model_s = since(t0);
    times.model_cpu_s = cpu_now() - c0;
  }
  mb::TransitionTable& train_tab = stage.train;

  // (3) policy in the penalised model, evaluated in the real env after every epoch
  t0 = Clock::now();
  c0 = cpu_now();
  learner_ = std::make_unique<SacLearner>(
      D, A, std::vector<float>(spec.action.low.begin(), spec.action.low.end()),
      std::vector<float>(spec.action.high.begin(), spec.action.high.end()), sac_config(p_),
      derive_seed(ctx.seed(), Domain::kAlgo, 40));
  const std::int64_t total = ctx.train().steps;
  policy_ckpt.due = [&](std::int64_t updates) { return ctx.checkpoint_due(updates); };
  policy_ckpt.save = [&](std::int64_t updates, std::string state) {
    policy_ckpt.resume_state = std::move(state);
    ctx.save_checkpoint(updates, sync);
  };
  mb::train_policy_in_model(
      model, model_env_config(p_, spec), policy_config(p_, total), *learner_, *env,
      derive_seed(ctx.seed(), Domain::kAlgo, 41), needs_real ? &train_tab : nullptr,
      [&](const mb::EpochStats& st) {
        const auto te = Clock::now();
        auto pol = learner_->policy(env_id_);
        const EvalStats ev = ctx.evaluate(*pol, st.updates, 0,
                                          {{"epoch", st.epoch},
                                           {"model_reward", st.model_reward},
                                           {"model_raw_reward", st.raw_reward},
                                           {"penalty", st.penalty},
                                           {"alpha", st.alpha},
                                           {"q_loss", st.q_loss}});
        evals.push_back(ev.return_mean);
        times.eval_s += since(te);
        ctx.progress().update(st.updates, total, 0, ev.return_mean);
      },
      needs_real ? nullptr : &policy_ckpt);
  times.policy_s = since(t0);
  times.policy_cpu_s = cpu_now() - c0;

  // (4) the record
  record_extras(p_, evals, facts, mres, extra_);
  privacy_ = mb::primorl_privacy_report(p_, facts, external_ ? ctx.dataset_source() : "");
  ctx.write_file("timing.json", mb::timing_json(times));
  // the run is counted in its policy stage's SAC updates (the step column); the ensemble's own
  // training is recorded in extra
  return {total, total};
}

}  // namespace dprl::algos
