#include "algos/offline/offline_learner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algos/core/networks.hpp"
#include "algos/core/private_noise.hpp"
#include "algos/offline/offline_dp.hpp"
#include "engine/data/dataset_sampler.hpp"
#include "engine/error.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"
#include "privacy/noise_source.hpp"
#include "engine/thread_pool.hpp"
#include "privacy/prefetched_release.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

void UserDpParams::check(const char* owner) const {
  if (dp && !(epsilon > 0.0))
    throw ParamError(
        fmt::format("{}.epsilon = {} must be > 0 when dp is true (the privacy budget of the run)",
                    owner, format_param(epsilon)));
}

nn::Mlp make_relu_mlp(int in, const std::vector<int>& hidden, int out, std::uint64_t seed,
                      std::uint64_t index) {
  nn::Mlp net(nn::MlpShape(layer_sizes(in, hidden, out), nn::Act::kRelu));
  Rng r(derive_seed(seed, Domain::kInit, index));
  nn::init_kaiming_uniform(net.shape(), net.data(), r);
  return net;
}

OfflineLearner::OfflineLearner(std::string name, OfflineCommonParams common, UserDpParams dp)
    : name_(std::move(name)), common_(std::move(common)), dp_(std::move(dp)) {}

OfflineLearner::~OfflineLearner() = default;

std::vector<int> OfflineLearner::hidden() const {
  return parse_hidden_sizes(common_.hidden_sizes, (name_ + ".hidden_sizes").c_str());
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

std::vector<nn::Mlp*> OfflineLearner::state_nets() {
  std::vector<nn::Mlp*> nets;
  for (const auto& t : trained()) nets.push_back(t.net);
  return nets;
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
  dp_step(b, cfg, cfg.noise_multiplier * cfg.clip_norm,
          [&noise](std::span<double> x, double sd) { noise.add_gaussian(x, sd); });
}

void OfflineLearner::dp_step(const OfflineBatch& b, const privacy::UserDpSgdConfig& cfg,
                             double noise_sd, const privacy::GaussianRelease& release,
                             HelperThread* helper) {
  DPRL_CHECK(!opt_.empty() && b.n == b.users * cfg.contribution);
  if (b.n > 0) compute_errors(b, 1.0f);
  const auto nets = trained();
  thread_local std::vector<privacy::DpNetGrad> dp_nets;
  dp_nets.clear();
  for (std::size_t i = 0; i < nets.size(); ++i)
    dp_nets.push_back({&nets[i].net->shape(), nets[i].cache, grad_[i].data()});
  privacy::user_dp_gradient(cfg, dp_nets, b.users, noise_sd, release, helper);
  apply(nets);
}

void OfflineLearner::check_inputs(const RunPlan& plan) {
  const Dataset* ds = plan.dataset;
  if (!ds)
    throw ConfigError(fmt::format(
        "{} learns from a dataset: add `data: {{path: ..., format: minari|d4rl}}` to the "
        "experiment",
        name_));
  if (plan.train.until_budget && !dp_.dp)
    throw ParamError(
        fmt::format("train.until_budget needs a private learner ({}.dp: true)", name_));
  const EnvSpec& spec = plan.env.spec();
  if (!spec.action.is_discrete() || spec.observation.is_discrete())
    throw ParamError(fmt::format(
        "{} needs a Box observation and Discrete actions; env '{}' has observation {} and "
        "action {}",
        name_, spec.id, spec.observation.describe(), spec.action.describe()));
  if (!ds->info().action_space.is_discrete() || ds->info().action_space.n != spec.action.n ||
      ds->obs_dim() != spec.observation.dim())
    throw DataError(fmt::format(
        "dataset spaces (observation {}, action {}) do not match env '{}' (observation {}, "
        "action {})",
        ds->info().observation_space.describe(), ds->info().action_space.describe(), spec.id,
        spec.observation.describe(), spec.action.describe()));
  if (ds->num_transitions() == 0) throw DataError("the dataset holds no transitions");
}

void OfflineLearner::check(const RunPlan& plan) {
  check_inputs(plan);
  run_.reset();
  planned_steps_ = plan.train.steps;
  if (dp_.dp) plan_dp(plan);
  checked_ = true;
}

void OfflineLearner::sync_model_state(StateIo& io) {
  io.section(name_ + " (model)");
  for (nn::Mlp* net : state_nets()) io(net->span());
  for (auto& opt : opt_) opt.sync_state(io);
  io.bounded(steps_, std::int64_t{0}, std::int64_t{1} << 50, "gradient steps");
}

void OfflineLearner::check_in_train(const TrainContext& ctx, const Env& env) {
  if (!checked_) {
    try {
      check(RunPlan{env, ctx.train(), ctx.seed(), ctx.run_dir(), ctx.dataset()});
    } catch (const DataError& e) {  // name the data's source, as the experiment runner does
      throw DataError(fmt::format("{}: {}", ctx.dataset_source(), e.what()));
    }
  }
  checked_ = false;  // a second train() checks (and opens its ledger) again
}

void OfflineLearner::finish_run(const TrainContext& ctx, std::int64_t total, const Dataset& ds,
                                std::size_t users) {
  // private runs publish the user count only when it is declared public (public_users: 0, as in
  // DP-SGD practice: q = b / m); with a configured public m the data's count stays private
  extra_ = {{"gradient_steps", static_cast<double>(total)}};
  if (!run_ || dp_.public_users == 0)
    extra_.push_back({"dataset_users", static_cast<double>(users)});
  if (run_) {
    finish_dp(ctx, total);
    run_.reset();  // closes (and unlocks) the ledger
  } else {
    extra_.push_back({"dataset_transitions", static_cast<double>(ds.num_transitions())});
    extra_.push_back({"dataset_episodes", static_cast<double>(ds.num_episodes())});
  }
}

TrainSteps OfflineLearner::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec spec = env->spec();
  check_in_train(ctx, *env);
  const Dataset& ds = *ctx.dataset();
  env_id_ = spec.id;
  setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n), ctx.seed());
  const BatchGatherer gather(ds);
  const UserIndex users(ds);
  std::int64_t total = planned_steps_;
  std::unique_ptr<privacy::NoiseSource> noise, sampling;
  std::optional<PoissonUserSampler> poisson;
  if (run_) {
    noise = make_private_noise(dp_.noise, ctx.seed(), 0,
                               {dp_.noise_multiplier, dp_.clip_norm, dp_.epsilon, dp_.delta,
                                static_cast<double>(common_.batch_size)},
                               name_);
    if (noise->secure()) sampling = privacy::make_os_entropy_noise(false);
    run_->ledger->set_noise_source(noise->name());
    run_->noise_name = noise->name();
    poisson.emplace(users, run_->cfg.sampling_rate(),
                    static_cast<std::size_t>(run_->cfg.contribution));
  }
  // the noise of the next step is drawn ahead while this step's gradient is computed
  // (train.noise_threads; the values released do not depend on it)
  // and a helper thread (train.noise_threads = 1) also shares the step's double products
  const std::unique_ptr<HelperThread> helper =
      privacy::make_noise_helper(run_ ? ctx.train().resolved_noise_threads() : 0);
  std::optional<privacy::PrefetchedGaussianRelease> noised;
  if (run_)
    noised.emplace(*noise, run_->noised_values, run_->noise_sd, run_->noise_grid, helper.get());
  const privacy::GaussianRelease release = [&](std::span<double> x, double sd) {
    DPRL_CHECK(sd == run_->noise_sd);
    (*noised)(x);
  };
  ctx.set_step_column("gradient_step");
  OfflineBatch batch;
  std::vector<std::size_t> picked;
  UserBatch user_batch;
  double loss_sum = 0;
  std::int64_t loss_n = 0;
  std::int64_t step = 0;  // gradient steps done (== steps_)
  // what carries from one step to the next, for checkpoints (non-private runs)
  const auto sync = [&](StateIo& io) {
    io.section(name_);
    for (nn::Mlp* net : state_nets()) io(net->span());
    for (auto& opt : opt_) opt.sync_state(io);
    io.bounded(steps_, std::int64_t{0}, total, "gradient steps");
    io.bounded(step, std::int64_t{0}, total, "step");
    io(loss_sum);
    io.bounded(loss_n, std::int64_t{0}, std::int64_t{1} << 62, "losses summed");
  };
  // a private run's checkpoint also holds its step count (until_budget decides it once), its
  // ledger position and noise stream, and whether the evaluation of its step is still to come
  std::uint64_t entries_at_checkpoint = 0;
  bool eval_pending = false;
  const auto sync_dp = [&](StateIo& io) {
    io.section(name_ + " (private)");
    io.bounded(total, std::int64_t{1}, std::int64_t{1} << 40, "planned gradient steps");
    sync(io);
    io.bounded(run_->charged, std::int64_t{0}, total, "charged gradient steps");
    entries_at_checkpoint = run_->ledger->entries().size();
    io.bounded(entries_at_checkpoint, std::uint64_t{0}, std::uint64_t{1} << 40, "ledger charges");
    io(run_->spent_before);
    io(eval_pending);
    noised->sync_state(io);
  };
  if (!run_) {
    ctx.resume(sync);
  } else if (ctx.resume(sync_dp)) {
    if (!ctx.train().until_budget && total != ctx.train().steps)
      throw DataError("checkpoint: its planned gradient steps differ from train.steps");
    // after a fall-back to checkpoint.prev.bin with fresh noise every step after that checkpoint
    // is drawn again and paid again, also those its earlier charges covered (resume_dp)
    if (ctx.resumed_from_previous() && dp_.noise != "seeded") run_->charged = step;
    resume_dp(ctx, entries_at_checkpoint, total);
    if (eval_pending) evaluate_private(ctx, step);
  } else {
    // the ledger position before the run's first charge: a run killed from here on resumes
    ctx.save_checkpoint(0, sync_dp);
  }
  while (step < total) {
    ++step;  // step == steps_ + 1
    if (run_) {
      if (step > run_->charged) charge_block(ctx, step, total);
      // the user draws: seeded runs from the seed, private runs from 64 fresh OS-entropy bits
      Rng r(sampling
                ? sampling->next_u64()
                : derive_seed(ctx.seed(), Domain::kMinibatch, 1, static_cast<std::uint64_t>(step)));
      poisson->sample(r, user_batch);
      gather.gather(user_batch.transitions, batch, static_cast<int>(user_batch.num_users()));
      dp_step(batch, run_->cfg, run_->noise_sd, release, helper.get());
    } else {
      Rng r(derive_seed(ctx.seed(), Domain::kMinibatch, 0, static_cast<std::uint64_t>(step)));
      sample_uniform(ds, static_cast<std::size_t>(common_.batch_size), r, picked);
      gather.gather(picked, batch);
      loss_sum += this->step(batch);
      ++loss_n;
    }
    const bool release = ctx.eval_due(step) || step == total;
    if (run_ && (release || ctx.checkpoint_due(step))) {
      // a private model is evaluated (released) only once the state that made it is on disk
      eval_pending = release;
      ctx.save_checkpoint(step, sync_dp);
      eval_pending = false;
    }
    if (release && run_) {
      evaluate_private(ctx, step);
    } else if (release) {
      auto pol = policy();
      ctx.evaluate(*pol, step, 0, {{"loss", loss_sum / static_cast<double>(loss_n)}});
      loss_sum = 0;
      loss_n = 0;
    }
    if ((step & 1023) == 0 || step == total)
      ctx.progress().update(step, total, 0, ctx.last_eval().return_mean);
    if (!run_ && ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  finish_run(ctx, total, ds, users.num_users());
  return {0, total};
}

}  // namespace dprl::algos
