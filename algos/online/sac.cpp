#include "algos/online/sac.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/core/replay_buffer.hpp"
#include "algos/online/online_episodes.hpp"
#include "algos/online/sac_learner.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

using nn::Mat;

void SacParams::check() const {
  parse_hidden_sizes(hidden_sizes, "sac.hidden_sizes", batch_size, "sac.batch_size");
}

Sac::Sac(const Params& p) : p_(p) { validate_params(p_, "sac"); }
Sac::~Sac() = default;

double Sac::alpha() const { return learner_ ? learner_->alpha() : p_.alpha; }

std::unique_ptr<Policy> Sac::policy() const {
  DPRL_CHECK(learner_);
  return learner_->policy(env_id_);
}

void Sac::save_policy(const std::filesystem::path& file) const {
  static_cast<NnPolicy&>(*policy()).save(file);
}

void Sac::check(const RunPlan& plan) { box_action_map(plan.env.spec(), "sac"); }

TrainSteps Sac::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  // CleanRL: critics and temperature share q_lr; the temperature targets entropy -dim(A)
  SacLearnerConfig cfg;
  cfg.hidden = parse_hidden_sizes(p_.hidden_sizes, "sac.hidden_sizes");
  cfg.gamma = p_.gamma;
  cfg.tau = p_.tau;
  cfg.actor_lr = p_.policy_lr;
  cfg.critic_lr = p_.q_lr;
  cfg.alpha_lr = p_.q_lr;
  cfg.target_entropy = -static_cast<double>(A);
  cfg.autotune = p_.autotune;
  cfg.alpha = p_.alpha;
  learner_ = std::make_unique<SacLearner>(D, box_action_map(spec, "sac"), cfg, ctx.seed());
  const BoxActionMap& box = learner_->box();
  ReplayBuffer rb(
      static_cast<std::size_t>(std::min<std::int64_t>(p_.buffer_size, ctx.train().steps)), D, A);
  ReplayBatch b;
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));   // acting
  Rng srng(derive_seed(ctx.seed(), Domain::kAlgo, 1));  // replay sampling
  std::vector<float> ascaled(A), scratch, aout(2 * A);
  std::vector<double> act(A);
  const int B = p_.batch_size;
  constexpr double kLo = SacLearner::kLogStdMin, kHi = SacLearner::kLogStdMax;

  const std::int64_t total = ctx.train().steps;
  OnlineEpisodes ep(*env, ctx.seed(), episodes_);
  std::vector<float>& obs = ep.obs();
  std::int64_t step = 0;  // steps done
  std::int64_t gradient_steps = 0;  // critic updates (actor updates share their minibatches)
  // what carries from one step to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section("sac");
    learner_->sync_state(io);
    rb.sync_state(io);
    io(rng);
    io(srng);
    ep.sync(io, step, total);
    io.bounded(gradient_steps, std::int64_t{0}, step, "gradient steps");
  };
  ctx.resume(sync);
  while (step < total) {
    ++step;
    if (step <= p_.learning_starts) {
      for (int j = 0; j < A; ++j) act[j] = rng.uniform(box.low[j], box.high[j]);
    } else {
      const nn::Mlp& actor = learner_->actor();
      nn::forward_one(actor.shape(), actor.data(), obs.data(), aout.data(), scratch);
      for (int j = 0; j < A; ++j) {
        const double l = kLo + 0.5 * (kHi - kLo) * (std::tanh(aout[A + j]) + 1);
        const double u = aout[j] + std::exp(l) * rng.normal();
        act[j] = std::tanh(u) * box.scale[j] + box.bias[j];
      }
    }
    const StepResult r = env->step(std::span<const double>(act), ep.next());
    for (int j = 0; j < A; ++j) ascaled[j] = static_cast<float>(act[j]);
    rb.add(obs, ascaled, r.reward, ep.next(), r.terminated);
    ep.advance(r);
    if (step > p_.learning_starts) {
      // CleanRL's schedule: a critic step every step, policy_frequency delayed actor steps every
      // policy_frequency steps, targets every target_network_frequency steps
      rb.sample(B, srng, b);
      learner_->critic_update(b);
      ++gradient_steps;
      if (step % p_.policy_frequency == 0)
        for (int k = 0; k < p_.policy_frequency; ++k) learner_->actor_update(b.obs);
      if (step % p_.target_network_frequency == 0) learner_->target_update();
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_, {{"alpha", learner_->alpha()}});
    }
    if ((step & 255) == 0 || step == total) ctx.progress().update(step, total, episodes_, ep.recent());
    if (ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  return {total, gradient_steps};
}

}  // namespace dprl::algos
