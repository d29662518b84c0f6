#include "algos/offline/offline_learner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "algos/dqn.hpp"
#include "engine/error.hpp"
#include "engine/nn_optim.hpp"
#include "engine/rng.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/steps_within_budget.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

void UserDpParams::check(const char* owner) const {
  if (dp && !(epsilon > 0.0))
    throw ParamError(fmt::format(
        "{}.epsilon = {} must be > 0 when dp is true (the privacy budget of the run)", owner,
        format_param(epsilon)));
}

nn::Mlp make_relu_mlp(int in, const std::vector<int>& hidden, int out, std::uint64_t seed,
                      std::uint64_t index) {
  nn::Mlp net(nn::MlpShape(layer_sizes(in, hidden, out), nn::Act::kRelu));
  Rng r(derive_seed(seed, Domain::kInit, index));
  nn::init_kaiming_uniform(net.shape(), net.data(), r);
  return net;
}

struct OfflineLearner::DpRun {
  privacy::UserDpSgdConfig cfg;
  std::unique_ptr<privacy::NoiseSource> noise;     // gradient noise
  std::unique_ptr<privacy::NoiseSource> sampling;  // user and transition draws
  std::optional<privacy::Ledger> ledger;
  std::string unit;
  std::int64_t charged = 0;  // steps charged so far
};

OfflineLearner::OfflineLearner(std::string name, OfflineCommonParams common, UserDpParams dp)
    : name_(std::move(name)), common_(std::move(common)), dp_(std::move(dp)) {}

std::vector<int> OfflineLearner::hidden() const {
  return parse_hidden_sizes(common_.hidden_sizes, (name_ + ".hidden_sizes").c_str());
}

namespace {

// The dataset's privacy unit: metadata "privacy_unit" when the collector wrote one, else "user".
std::string dataset_unit(const Dataset& ds) {
  const std::string& meta = ds.info().metadata_json;
  if (!meta.empty()) {
    const auto j = nlohmann::json::parse(meta, nullptr, false);
    if (j.is_object() && j.contains("privacy_unit") && j["privacy_unit"].is_string())
      return j["privacy_unit"].get<std::string>();
  }
  return "user";
}

}  // namespace

std::int64_t OfflineLearner::plan_dp(TrainContext& ctx, const Dataset& ds, DpRun& run) {
  TransitionSampler probe(ds);
  run.cfg.noise_multiplier = dp_.noise_multiplier;
  run.cfg.clip_norm = dp_.clip_norm;
  run.cfg.expected_batch = common_.batch_size;
  run.cfg.num_users = probe.num_users();
  run.cfg.contribution = dp_.contribution;
  run.cfg.validate();
  run.unit = dataset_unit(ds);
  const bool seeded = dp_.noise == "seeded";
  if (seeded) {
    run.noise = privacy::make_seeded_noise(ctx.seed(), 0);
    run.sampling = privacy::make_seeded_noise(ctx.seed(), 1);
    std::fprintf(stderr,
                 "dprl: warning: %s: noise: seeded makes the run reproducible but not formally "
                 "private (the seed regenerates the noise)\n",
                 name_.c_str());
  } else {
    run.noise = privacy::make_os_entropy_noise(true);
    run.sampling = privacy::make_os_entropy_noise(false);
  }
  run.ledger.emplace(dp_.epsilon, dp_.delta, dp_.accountant);
  run.ledger->set_noise_source(run.noise->name());
  const auto event = run.cfg.step_event();
  if (ctx.train().until_budget) {
    const auto n = privacy::steps_within_budget(dp_.noise_multiplier, run.cfg.sampling_rate(),
                                                dp_.epsilon, dp_.delta, dp_.accountant);
    if (n.steps < 1)
      throw BudgetExceeded(fmt::format(
          "{}: epsilon = {} cannot afford one step at noise_multiplier {} and q = {} / {}", name_,
          dp_.epsilon, dp_.noise_multiplier, common_.batch_size, run.cfg.num_users));
    return n.steps;
  }
  const std::int64_t steps = ctx.train().steps;
  if (!run.ledger->can_afford(event, steps)) {
    const auto n = privacy::steps_within_budget(dp_.noise_multiplier, run.cfg.sampling_rate(),
                                                dp_.epsilon, dp_.delta, dp_.accountant);
    throw BudgetExceeded(fmt::format(
        "{}: train.steps = {} would spend epsilon = {:.4g} > budget {} (q = {:.4g}, "
        "noise_multiplier {}); the budget affords {} steps (or set train.until_budget: true)",
        name_, steps, run.ledger->epsilon_if_charged(event, steps), dp_.epsilon,
        run.cfg.sampling_rate(), dp_.noise_multiplier, n.steps));
  }
  return steps;
}

void OfflineLearner::setup(int obs_dim, int actions, std::uint64_t seed) {
  obs_dim_ = obs_dim;
  actions_ = actions;
  build(obs_dim, actions, seed);
  opt_.clear();
  grad_.clear();
  for (const auto& t : trained()) {
    nn::AdamConfig cfg;
    cfg.lr = common_.learning_rate;
    cfg.eps = common_.adam_eps;
    opt_.emplace_back(t.net->size(), cfg);
    grad_.emplace_back(t.net->size(), 0.0f);
  }
  steps_ = 0;
}

void OfflineLearner::apply(const std::vector<TrainedNet>& nets) {
  for (std::size_t i = 0; i < nets.size(); ++i) opt_[i].step(nets[i].net->span(), grad_[i]);
  after_step(++steps_);
}

double OfflineLearner::gradient(const OfflineBatch& b) {
  DPRL_CHECK(b.n > 0 && !opt_.empty());
  const double loss = compute_errors(b, 1.0f / static_cast<float>(b.n));
  const auto nets = trained();
  for (std::size_t i = 0; i < nets.size(); ++i) {
    std::fill(grad_[i].begin(), grad_[i].end(), 0.0f);
    nn::accumulate_grad(nets[i].net->shape(), *nets[i].cache, {}, grad_[i].data());
  }
  return loss;
}

double OfflineLearner::step(const OfflineBatch& b) {
  const double loss = gradient(b);
  apply(trained());
  return loss;
}

void OfflineLearner::dp_step(const OfflineBatch& b, const privacy::UserDpSgdConfig& cfg,
                             privacy::NoiseSource& noise) {
  DPRL_CHECK(!opt_.empty() && b.n == b.users * cfg.contribution);
  if (b.n > 0) compute_errors(b, 1.0f);
  const auto nets = trained();
  thread_local std::vector<privacy::DpNetGrad> dp_nets;
  dp_nets.clear();
  for (std::size_t i = 0; i < nets.size(); ++i)
    dp_nets.push_back({&nets[i].net->shape(), nets[i].cache, grad_[i].data()});
  privacy::user_dp_gradient(cfg, dp_nets, b.users, noise);
  apply(nets);
}

std::int64_t OfflineLearner::train(TrainContext& ctx) {
  const Dataset* ds = ctx.dataset();
  if (!ds)
    throw ConfigError(fmt::format(
        "{} learns from a dataset: add `data: {{path: ..., format: minari|d4rl}}` to the "
        "experiment",
        name_));
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  if (!spec.action.is_discrete() || spec.observation.is_discrete())
    throw ParamError(fmt::format(
        "{} needs a Box observation and Discrete actions; env '{}' has observation {} and "
        "action {}",
        name_, spec.id, spec.observation.describe(), spec.action.describe()));
  if (!ds->info().action_space.is_discrete() ||
      ds->info().action_space.n != spec.action.n || ds->obs_dim() != spec.observation.dim())
    throw DataError(fmt::format("{}: dataset spaces (observation {}, action {}) do not match env "
                                "'{}' (observation {}, action {})",
                                ctx.dataset_source(), ds->info().observation_space.describe(),
                                ds->info().action_space.describe(), spec.id,
                                spec.observation.describe(), spec.action.describe()));
  if (ds->num_transitions() == 0)
    throw DataError(fmt::format("{}: the dataset holds no transitions", ctx.dataset_source()));
  env_id_ = spec.id;
  obs_dim_ = static_cast<int>(spec.observation.dim());
  actions_ = static_cast<int>(spec.action.n);
  setup(obs_dim_, actions_, ctx.seed());

  TransitionSampler sampler(*ds);
  DpRun run;
  const std::int64_t total = dp_.dp ? plan_dp(ctx, *ds, run) : ctx.train().steps;
  ctx.set_step_column("gradient_step");
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  OfflineBatch batch;
  const std::int64_t every = ctx.train().eval_every > 0 ? ctx.train().eval_every : total;
  double loss_sum = 0;
  std::int64_t loss_n = 0;
  for (std::int64_t step = 1; step <= total; ++step) {  // step == steps_ + 1
    if (dp_.dp) {
      if (step > run.charged) {  // charge the block up to the next evaluation before it runs
        const std::int64_t count = std::min(total, (step - 1) / every * every + every) - step + 1;
        run.ledger->charge(run.cfg.step_event(), count,
                           fmt::format("gradient steps {}-{}", step, step + count - 1));
        run.charged = step + count - 1;
        ctx.set_epsilon(run.ledger->spent_epsilon());
      }
      sampler.poisson_users(run.cfg.sampling_rate(), run.cfg.contribution, *run.sampling, batch);
      dp_step(batch, run.cfg, *run.noise);
    } else {
      sampler.uniform(common_.batch_size, rng, batch);
      loss_sum += this->step(batch);
      ++loss_n;
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      // the training loss reads private batches without noise: private runs do not publish it
      const double loss = loss_n > 0 ? loss_sum / static_cast<double>(loss_n) : NAN;
      if (dp_.dp)
        ctx.evaluate(*pol, step, 0);
      else
        ctx.evaluate(*pol, step, 0, {{"loss", loss}});
      loss_sum = 0;
      loss_n = 0;
    }
    if ((step & 1023) == 0 || step == total)
      ctx.progress().update(step, total, 0, ctx.last_eval().return_mean);
  }
  // private runs publish only the user count (public, as in DP-SGD practice: q = b / m)
  extra_ = {{"gradient_steps", static_cast<double>(total)},
            {"dataset_users", static_cast<double>(sampler.num_users())}};
  if (dp_.dp) {
    finish_dp(ctx, run, total);
  } else {
    extra_.push_back({"dataset_transitions", static_cast<double>(ds->num_transitions())});
    extra_.push_back({"dataset_episodes", static_cast<double>(ds->num_episodes())});
  }
  return total;
}

void OfflineLearner::finish_dp(const TrainContext& ctx, const DpRun& run, std::int64_t steps) {
  ctx.write_file(privacy::Ledger::kFileName, run.ledger->to_json());
  privacy::UserDpReportInput in;
  in.cfg = run.cfg;
  in.steps = steps;
  in.epsilon = run.ledger->spent_epsilon();
  in.delta = dp_.delta;
  in.accountant = dp_.accountant;
  in.unit = run.unit;
  in.noise_source = run.noise->name();
  in.seeded = dp_.noise == "seeded";
  in.covers = {policy_file() + " (the released model)",
               "metrics.csv (evaluation returns of the released model in public env episodes; "
               "epsilon spent)",
               "summary.json (final_eval of the released model, step counts, this record)",
               privacy::Ledger::kFileName};
  nlohmann::ordered_json d;
  d["until_budget"] = ctx.train().until_budget;
  d["budget_epsilon"] = dp_.epsilon;
  d["public"] =
      "the number of users m (it sets q = b / m, as in paper 000 and DP-SGD practice), the env, "
      "the hyper-parameters";
  d["post_processing"] =
      "target networks, Adam state, the greedy policy and its evaluation returns";
  in.extra_json = d.dump();
  privacy_ = privacy::user_dp_report(in);
}

}  // namespace dprl::algos
