// Primorl::train: the three stages (data, model, policy) and the record.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "algos/dqn.hpp"
#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/mb_sac.hpp"
#include "algos/model_based/primorl.hpp"
#include "algos/model_based/primorl_report.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::algos {

namespace mb = model_based;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
// process CPU seconds (all threads)
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

mb::ProbEnsembleConfig model_config(const PrimorlParams& p, int D, int A) {
  mb::ProbEnsembleConfig c;
  c.in_dim = D + A;
  c.out_dim = D + 1;
  c.hidden = parse_hidden_sizes(p.model_hidden, "primorl.model_hidden");
  c.members = p.members;
  c.learn_bounds = p.learn_logvar_bounds;
  c.weight_decay = mb::parse_weight_decay(p.weight_decay);
  return c;
}

mb::TdpConfig tdp_config(const PrimorlParams& p) {
  mb::TdpConfig c;
  c.variant = p.variant == "tdp" ? "dp" : p.variant;
  c.q = p.q;
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

}  // namespace

std::int64_t Primorl::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  check(RunPlan{*env, ctx.train(), ctx.seed(), std::nullopt});
  const EnvSpec& spec = env->spec();
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  mb::StageTimes times;
  extra_.clear();

  // (1) data, then the public split; the Dataset itself is dropped once tabled
  auto t0 = Clock::now();
  double c0 = cpu_now();
  Dataset data = data_ ? std::move(*data_) : obtain_data([&ctx] { return ctx.make_env(); }, *env);
  data_.reset();
  const auto split = mb::split_by_unit(
      data, p_.test_fraction,
      derive_seed(static_cast<std::uint64_t>(p_.data_seed), Domain::kDataset, 1u << 20));
  mb::TransitionTable train_tab = mb::make_table(data, split.train_users);
  const mb::TransitionTable test_tab = mb::make_table(data, split.test_users);
  if (p_.report_data) ctx.write_file("data_returns.csv", data_returns_csv(data, extra_));
  data = Dataset();
  times.data_s = since(t0);
  times.data_cpu_s = cpu_now() - c0;

  // (2) model
  t0 = Clock::now();
  c0 = cpu_now();
  mb::ProbEnsemble model(model_config(p_, D, A));
  model.init(derive_seed(ctx.seed(), Domain::kInit, 1000));
  if (p_.normalizer != "none") {
    // public split moments, replaced by the spaces' mid-points and half-ranges where finite
    std::vector<float> mean, sd;
    mb::input_moments(test_tab, mean, sd);
    if (p_.normalizer == "space")
      for (int j = 0; j < D + A; ++j) {
        const Space& sp = j < D ? spec.observation : spec.action;
        const double lo = sp.low[j < D ? j : j - D], hi = sp.high[j < D ? j : j - D];
        if (std::isfinite(lo) && std::isfinite(hi) && hi > lo) {
          mean[j] = static_cast<float>(0.5 * (lo + hi));
          sd[j] = static_cast<float>(0.5 * (hi - lo));
        }
      }
    model.set_normalizer(mean, sd);
  }
  const bool dp = p_.variant == "tdp";
  const bool seeded = p_.noise == "seeded" || !dp;
  if (dp && seeded)
    std::fprintf(stderr,
                 "warning: primorl noise: seeded makes the noise reproducible; the guarantee "
                 "is not formal\n");
  auto source =
      seeded ? privacy::make_seeded_noise(ctx.seed(), 0x7d9, 0) : privacy::make_os_entropy_noise();
  privacy::Ledger rdp(p_.budget_epsilon > 0 ? p_.budget_epsilon : 1e12, p_.delta, "rdp");
  privacy::Ledger pld(1e12, p_.delta, "pld");
  rdp.set_noise_source(source->name());
  ThreadPool pool(p_.threads);
  mb::TrainResult mres;
  auto on_model = [&](const mb::TdpProgress& pr) {
    ctx.progress().update(pr.round, dp || p_.variant != "mopo" ? p_.rounds : p_.pooled_max_epochs,
                          0, pr.test_mse);
  };
  if (p_.variant == "mopo") {
    mb::PooledConfig pc{p_.pooled_batch_size, p_.pooled_lr, p_.pooled_max_epochs,
                        p_.pooled_patience};
    mres = mb::train_ensemble_pooled(model, train_tab, test_tab, pc,
                                     derive_seed(ctx.seed(), Domain::kAlgo, 30), on_model);
  } else {
    mres = mb::train_ensemble_tdp(model, train_tab, test_tab, tdp_config(p_),
                                  derive_seed(ctx.seed(), Domain::kAlgo, 31), *source,
                                  dp ? &rdp : nullptr, dp ? &pld : nullptr, pool, on_model);
  }
  ctx.write_file("model_training.csv", mb::model_curve_csv(mres, !dp));
  mb::PipelineFacts facts;
  facts.train_units = train_tab.units();
  facts.test_units = test_tab.units();
  facts.train_transitions = train_tab.transitions();
  facts.rounds = mres.rounds;
  facts.stopped_by_budget = mres.stopped_by_budget;
  facts.noise_source = source->name();
  if (dp) {
    facts.epsilon_rdp = rdp.spent_epsilon();
    facts.epsilon_pld = pld.spent_epsilon();
    privacy::RdpAccountant acc;
    acc.compose(privacy::dpsgd_event(p_.z, p_.q, std::max<std::int64_t>(mres.rounds, 1)));
    facts.epsilon_rdp_classical =
        privacy::rdp_to_epsilon_classical(acc.orders(), acc.rdp(), p_.delta);
    facts.noise_std = p_.z * p_.clip_norm / (p_.q * static_cast<double>(train_tab.units()));
    ctx.write_file(privacy::Ledger::kFileName, rdp.to_json());
    ctx.set_epsilon(facts.epsilon_rdp);
  }
  // PriMORL variants (and MOPO without real data) release the private table here: nothing below
  // may read it
  const bool needs_real = p_.real_ratio > 0.0 || p_.start_from_data;
  if (!needs_real) {
    if (after_model_) after_model_(train_tab);
    train_tab = mb::TransitionTable();
  }
  times.model_s = since(t0);
  times.model_cpu_s = cpu_now() - c0;

  // (3) policy in the penalised model, evaluated in the real env after every epoch
  t0 = Clock::now();
  c0 = cpu_now();
  mb::SacAgentConfig sc;
  sc.hidden = parse_hidden_sizes(p_.sac_hidden, "primorl.sac_hidden");
  sc.gamma = p_.gamma;
  sc.tau = p_.tau;
  sc.actor_lr = p_.actor_lr;
  sc.critic_lr = p_.critic_lr;
  sc.alpha_lr = p_.alpha_lr;
  sc.target_entropy = p_.target_entropy;
  std::vector<float> low(spec.action.low.begin(), spec.action.low.end());
  std::vector<float> high(spec.action.high.begin(), spec.action.high.end());
  agent_ = std::make_unique<mb::SacAgent>(D, A, low, high, sc,
                                          derive_seed(ctx.seed(), Domain::kAlgo, 40));
  const std::int64_t total = ctx.train().steps;
  std::vector<double> evals;
  mb::train_policy_in_model(model, model_env_config(p_, spec), policy_config(p_, total), *agent_,
                            *env, derive_seed(ctx.seed(), Domain::kAlgo, 41),
                            needs_real ? &train_tab : nullptr, [&](const mb::EpochStats& st) {
                              const auto te = Clock::now();
                              auto pol = agent_->policy(env_id_);
                              const EvalStats ev =
                                  ctx.evaluate(*pol, st.updates, 0,
                                               {{"epoch", st.epoch},
                                                {"model_reward", st.model_reward},
                                                {"model_raw_reward", st.raw_reward},
                                                {"penalty", st.penalty},
                                                {"alpha", st.alpha},
                                                {"q_loss", st.q_loss}});
                              evals.push_back(ev.return_mean);
                              times.eval_s += since(te);
                              ctx.progress().update(st.updates, total, 0, ev.return_mean);
                            });
  times.policy_s = since(t0);
  times.policy_cpu_s = cpu_now() - c0;

  // (4) the record
  const std::size_t w = std::min<std::size_t>(p_.final_window, evals.size());
  double last = 0;
  for (std::size_t i = evals.size() - w; i < evals.size(); ++i) last += evals[i];
  extra_.push_back({"return_last_window", w ? last / static_cast<double>(w) : NAN});
  extra_.push_back({"final_window", static_cast<double>(w)});
  extra_.push_back({"train_trajectories", static_cast<double>(facts.train_units)});
  extra_.push_back({"test_trajectories", static_cast<double>(facts.test_units)});
  extra_.push_back({"model_rounds", static_cast<double>(mres.rounds)});
  extra_.push_back({"model_best_round", static_cast<double>(mres.best_round)});
  extra_.push_back({"model_best_test_mse", mres.best_test_mse});
  extra_.push_back({"model_final_test_mse", mres.final_test_mse});
  if (dp) {
    extra_.push_back({"epsilon_rdp", facts.epsilon_rdp});
    extra_.push_back({"epsilon_pld", facts.epsilon_pld});
  }
  privacy_ = mb::primorl_privacy_report(p_, facts);
  ctx.write_file("timing.json", mb::timing_json(times));
  return total;
}

}  // namespace dprl::algos
