#include "algos/online/dqn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/core/replay_buffer.hpp"
#include "algos/online/online_episodes.hpp"
#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

using nn::Mat;

void DqnParams::check() const {
  parse_hidden_sizes(hidden_sizes, "dqn.hidden_sizes", batch_size, "dqn.batch_size");
}

Dqn::Dqn(const Params& p) : p_(p) { validate_params(p_, "dqn"); }

std::unique_ptr<Policy> Dqn::policy() const {
  return std::make_unique<NnPolicy>(env_id_, NnPolicy::Mode::kArgmax, q_, q_.shape().out());
}

void Dqn::save_policy(const std::filesystem::path& file) const {
  NnPolicy(env_id_, NnPolicy::Mode::kArgmax, q_, q_.shape().out()).save(file);
}

static void require_box_discrete(const EnvSpec& spec) {
  if (!spec.action.is_discrete() || spec.observation.is_discrete())
    throw ParamError(
        fmt::format("dqn needs a Box observation and Discrete actions; env '{}' has "
                    "observation {} and action {}",
                    spec.id, spec.observation.describe(), spec.action.describe()));
}

void Dqn::check(const RunPlan& plan) { require_box_discrete(plan.env.spec()); }

TrainSteps Dqn::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  require_box_discrete(spec);
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.n);
  q_ = nn::Mlp(nn::MlpShape(
      layer_sizes(D, parse_hidden_sizes(p_.hidden_sizes, "dqn.hidden_sizes"), A), nn::Act::kRelu));
  init_networks(ctx.seed(), {&q_});
  target_ = q_;
  nn::Adam opt(q_.size(), nn::AdamConfig{p_.learning_rate});
  nn::Buffer grad(q_.size());
  ReplayBuffer rb(static_cast<std::size_t>(p_.buffer_size), D, 1);
  ReplayBatch b;
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  Rng srng(derive_seed(ctx.seed(), Domain::kAlgo, 1));
  nn::MlpCache cq, cn, ct;
  Mat dout;
  std::vector<float> qv(A), scratch, y(p_.batch_size);

  const std::int64_t total = ctx.train().steps;
  const double decay = std::max(1.0, p_.exploration_fraction * static_cast<double>(total));
  target_updates_ = 0;
  OnlineEpisodes ep(*env, ctx.seed(), episodes_);
  std::vector<float>& obs = ep.obs();
  std::int64_t step = 0;  // steps done
  std::int64_t gradient_steps = 0;
  // what carries from one step to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section("dqn");
    io(q_.span());
    io(target_.span());
    opt.sync_state(io);
    rb.sync_state(io, A);
    io(rng);
    io(srng);
    ep.sync(io, step, total);
    io.bounded(target_updates_, std::int64_t{0}, std::int64_t{1} << 62, "target updates");
    io.bounded(gradient_steps, std::int64_t{0}, step, "gradient steps");
  };
  ctx.resume(sync);
  while (step < total) {
    ++step;
    const double frac = std::min(1.0, static_cast<double>(step - 1) / decay);
    const double eps = p_.start_e + frac * (p_.end_e - p_.start_e);
    int a;
    if (rng.uniform() < eps) {
      a = static_cast<int>(rng.below(A));
    } else {
      nn::forward_one(q_.shape(), q_.data(), obs.data(), qv.data(), scratch);
      a = static_cast<int>(std::max_element(qv.begin(), qv.end()) - qv.begin());
    }
    const StepResult r = env->step(static_cast<std::int64_t>(a), ep.next());
    const float af = static_cast<float>(a);
    rb.add(obs, {&af, 1}, r.reward, ep.next(), r.terminated);
    ep.advance(r);
    if (step > p_.learning_starts && step % p_.train_frequency == 0) {
      const int B = p_.batch_size;
      rb.sample(B, srng, b);
      const Mat& tq = target_.forward(b.next_obs, ct);
      const Mat* oq = p_.double_q ? &q_.forward(b.next_obs, cn) : nullptr;
      for (int i = 0; i < B; ++i) {
        int k;
        if (oq)
          oq->col(i).maxCoeff(&k);
        else
          tq.col(i).maxCoeff(&k);
        y[i] = b.rewards[i] + static_cast<float>(p_.gamma) * (1.0f - b.terminated[i]) * tq(k, i);
      }
      const Mat& out = q_.forward(b.obs, cq);
      dout.setZero(A, B);
      for (int i = 0; i < B; ++i) {
        const int ai = static_cast<int>(b.actions(0, i));
        const float d = out(ai, i) - y[i];
        // d/dq of mean (q - y)^2, or of mean smooth-L1 (beta 1)
        dout(ai, i) = p_.loss == "mse" ? 2.0f * d / B : std::clamp(d, -1.0f, 1.0f) / B;
      }
      nn::backward(q_.shape(), q_.data(), dout, cq, grad.data());
      if (p_.max_grad_norm > 0) nn::clip_global_norm(grad, p_.max_grad_norm);
      opt.step(q_.span(), grad);
      ++gradient_steps;
    }
    if (step > p_.learning_starts && step % p_.target_network_frequency == 0) {
      nn::polyak_update(target_.span(), q_.span(), p_.tau);
      ++target_updates_;
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_);
    }
    if ((step & 1023) == 0 || step == total) ctx.progress().update(step, total, episodes_, ep.recent());
    if (ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  return {total, gradient_steps};
}

}  // namespace dprl::algos
