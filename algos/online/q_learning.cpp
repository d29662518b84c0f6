#include "algos/online/q_learning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algos/core/tabular_policy.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {
namespace {

void require_tabular(const EnvSpec& spec) {
  if (!spec.observation.is_discrete() || !spec.action.is_discrete())
    throw ParamError(
        fmt::format("q_learning needs discrete observations and actions; env '{}' has "
                    "observation {} and action {}",
                    spec.id, spec.observation.describe(), spec.action.describe()));
}

}  // namespace

void QLearning::check(const RunPlan& plan) { require_tabular(plan.env.spec()); }

TrainSteps QLearning::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  require_tabular(spec);
  env_id_ = spec.id;
  num_states_ = static_cast<int>(spec.observation.n);
  num_actions_ = static_cast<int>(spec.action.n);
  q_.assign(static_cast<std::size_t>(num_states_) * num_actions_, p_.initial_q);

  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  const std::int64_t total = ctx.train().steps;
  const double decay_steps = std::max(1.0, p_.exploration_fraction * static_cast<double>(total));
  const bool masked = p_.use_action_mask && spec.has_action_mask;
  std::vector<std::uint8_t> mask(num_actions_, 1);
  std::span<const std::uint8_t> mask_view =
      masked ? std::span<const std::uint8_t>(mask) : std::span<const std::uint8_t>();
  float obs[1];

  env->reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, 0), obs);
  episodes_ = 0;
  double ep_return = 0, recent = NAN;
  std::int64_t step = 0;
  // everything the loop carries from one step to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section("q_learning");
    io(q_, true);
    io.bounded(episodes_, std::int64_t{0}, std::int64_t{1} << 62, "episodes");
    io(rng);
    io.bounded(step, std::int64_t{0}, total, "step");
    io(ep_return);
    io(recent);
    io(obs[0]);
    env->sync_state(io);
  };
  if (ctx.resume(sync) && !(obs[0] >= 0 && obs[0] < static_cast<float>(num_states_)))
    throw DataError(fmt::format("checkpoint: q_learning observation {} is not a state of '{}'",
                                obs[0], env_id_));
  while (step < total) {
    const int s = static_cast<int>(obs[0]);
    const double frac = std::min(1.0, static_cast<double>(step) / decay_steps);
    const double eps = p_.epsilon_start + frac * (p_.epsilon_end - p_.epsilon_start);
    if (masked) env->action_mask(mask);
    double* qs = q_.data() + static_cast<std::size_t>(s) * num_actions_;
    int a;
    if (rng.uniform() < eps) {
      if (masked) {
        int allowed = 0;
        for (auto m : mask) allowed += m;
        int k = allowed > 0 ? static_cast<int>(rng.below(allowed)) : 0;
        a = 0;
        for (int i = 0; i < num_actions_; ++i)
          if (mask[i] && k-- == 0) {
            a = i;
            break;
          }
      } else {
        a = static_cast<int>(rng.below(num_actions_));
      }
    } else {
      a = greedy_action(qs, num_actions_, mask_view);
    }
    const StepResult r = env->step(static_cast<std::int64_t>(a), obs);
    ++step;
    ep_return += r.reward;
    const int s2 = static_cast<int>(obs[0]);
    double target = r.reward;
    if (!r.terminated) {
      if (masked) env->action_mask(mask);
      const double* q2 = q_.data() + static_cast<std::size_t>(s2) * num_actions_;
      target += p_.gamma * q2[greedy_action(q2, num_actions_, mask_view)];
    }
    qs[a] += p_.learning_rate * (target - qs[a]);
    if (r.terminated || r.truncated) {
      ++episodes_;
      recent = std::isnan(recent) ? ep_return : 0.95 * recent + 0.05 * ep_return;
      ep_return = 0;
      env->reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, episodes_), obs);
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_);
    }
    if ((step & 1023) == 0 || step == total) ctx.progress().update(step, total, episodes_, recent);
    if (ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  return {total, total};  // one TD update per env step
}

std::unique_ptr<Policy> QLearning::policy() const {
  return std::make_unique<TabularGreedyPolicy>(env_id_, num_states_, num_actions_, q_,
                                               p_.use_action_mask);
}

void QLearning::save_policy(const std::filesystem::path& file) const {
  TabularGreedyPolicy(env_id_, num_states_, num_actions_, q_, p_.use_action_mask).save(file);
}

}  // namespace dprl::algos
