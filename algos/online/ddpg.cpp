#include "algos/online/ddpg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/core/replay_buffer.hpp"
#include "algos/online/online_episodes.hpp"
#include "engine/error.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

using nn::Mat;

void DdpgParams::check() const {
  parse_hidden_sizes(hidden_sizes, "ddpg.hidden_sizes", batch_size, "ddpg.batch_size");
}

Ddpg::Ddpg(const Params& p) : p_(p) { validate_params(p_, "ddpg"); }

std::unique_ptr<Policy> Ddpg::policy() const {
  auto pol = std::make_unique<NnPolicy>(env_id_, NnPolicy::Mode::kTanhScaled, actor_, act_dim_);
  pol->set_action_bounds(low_, high_);
  pol->set_squash_output(false);  // the actor's output layer is already tanh
  return pol;
}

void Ddpg::save_policy(const std::filesystem::path& file) const {
  static_cast<NnPolicy&>(*policy()).save(file);
}

void Ddpg::check(const RunPlan& plan) { box_action_map(plan.env.spec(), "ddpg"); }

TrainSteps Ddpg::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  const BoxActionMap box = box_action_map(spec, "ddpg");
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  act_dim_ = A;
  low_ = box.low;
  high_ = box.high;
  const Eigen::VectorXf& scale = box.scale;
  const Eigen::VectorXf& bias = box.bias;
  const std::vector<int> hidden = parse_hidden_sizes(p_.hidden_sizes, "ddpg.hidden_sizes");
  actor_ = nn::Mlp(nn::MlpShape(layer_sizes(D, hidden, A), nn::Act::kRelu, nn::Act::kTanh));
  nn::Mlp q(nn::MlpShape(layer_sizes(D + A, hidden, 1), nn::Act::kRelu));
  init_networks(ctx.seed(), {&actor_, &q});
  nn::Mlp actor_t = actor_, qt = q;
  nn::Adam opt_a(actor_.size(), nn::AdamConfig{p_.learning_rate});
  nn::Adam opt_q(q.size(), nn::AdamConfig{p_.learning_rate});
  nn::Buffer g_a(actor_.size()), g_q(q.size());
  ReplayBuffer rb(
      static_cast<std::size_t>(std::min<std::int64_t>(p_.buffer_size, ctx.train().steps)), D, A);
  ReplayBatch b;
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  Rng srng(derive_seed(ctx.seed(), Domain::kAlgo, 1));
  nn::MlpCache ca, cq, cat, cqt;
  Mat xin, dq, da;
  std::vector<float> af(A), aout(A), scratch, y(p_.batch_size);
  std::vector<double> act(A);
  const int B = p_.batch_size;
  auto critic_input = [&](const Mat& x, const Mat& a_tanh) {
    xin.resize(D + A, x.cols());
    xin.topRows(D) = x;
    xin.bottomRows(A) = (a_tanh.array().colwise() * scale.array()).colwise() + bias.array();
  };

  const std::int64_t total = ctx.train().steps;
  OnlineEpisodes ep(*env, ctx.seed(), episodes_);
  std::vector<float>& obs = ep.obs();
  std::int64_t step = 0;  // steps done
  std::int64_t gradient_steps = 0;  // critic updates (an actor update shares its minibatch)
  // what carries from one step to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section("ddpg");
    for (nn::Mlp* net : {&actor_, &q, &actor_t, &qt}) io(net->span());
    opt_a.sync_state(io);
    opt_q.sync_state(io);
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
      for (int j = 0; j < A; ++j) act[j] = rng.uniform(low_[j], high_[j]);
    } else {
      nn::forward_one(actor_.shape(), actor_.data(), obs.data(), aout.data(), scratch);
      for (int j = 0; j < A; ++j) {
        const double a =
            aout[j] * scale[j] + bias[j] + rng.normal() * scale[j] * p_.exploration_noise;
        act[j] = std::clamp(a, double{low_[j]}, double{high_[j]});
      }
    }
    const StepResult r = env->step(std::span<const double>(act), ep.next());
    for (int j = 0; j < A; ++j) af[j] = static_cast<float>(act[j]);
    rb.add(obs, af, r.reward, ep.next(), r.terminated);
    ep.advance(r);
    if (step > p_.learning_starts) {
      rb.sample(B, srng, b);
      const Mat& na = actor_t.forward(b.next_obs, cat);
      critic_input(b.next_obs, na);
      const Mat& tq = qt.forward(xin, cqt);
      for (int i = 0; i < B; ++i)
        y[i] = b.rewards[i] + (1.0f - b.terminated[i]) * static_cast<float>(p_.gamma) * tq(0, i);
      xin.resize(D + A, B);
      xin.topRows(D) = b.obs;
      xin.bottomRows(A) = b.actions;
      const Mat& qv = q.forward(xin, cq);
      dq = (qv - Eigen::Map<const Eigen::RowVectorXf>(y.data(), B)) * (2.0f / B);
      nn::backward(q.shape(), q.data(), dq, cq, g_q.data());
      opt_q.step(q.span(), g_q);
      ++gradient_steps;
      if (step % p_.policy_frequency == 0) {
        const Mat& a = actor_.forward(b.obs, ca);
        critic_input(b.obs, a);
        q.forward(xin, cq);
        // d/d(action) of -mean Q(s, mu(s)), through the action scaling
        nn::backward_errors(q.shape(), q.data(), Mat::Constant(1, B, -1.0f / B), cq, true);
        da = cq.din.bottomRows(A).array().colwise() * scale.array();
        nn::backward(actor_.shape(), actor_.data(), da, ca, g_a.data());
        opt_a.step(actor_.span(), g_a);
        nn::polyak_update(actor_t.span(), actor_.span(), p_.tau);
        nn::polyak_update(qt.span(), q.span(), p_.tau);
      }
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_);
    }
    if ((step & 255) == 0 || step == total) ctx.progress().update(step, total, episodes_, ep.recent());
    if (ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  return {total, gradient_steps};
}

}  // namespace dprl::algos
