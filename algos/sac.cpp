#include "algos/sac.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "algos/dqn.hpp"
#include "algos/nn_policy.hpp"
#include "algos/replay_buffer.hpp"
#include "engine/error.hpp"
#include "engine/nn_heads.hpp"
#include "engine/nn_optim.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

using nn::Mat;

namespace {
constexpr double kLogStdMin = -5.0, kLogStdMax = 2.0;
}  // namespace

void SacParams::check() const { parse_hidden_sizes(hidden_sizes, "sac.hidden_sizes"); }

Sac::Sac(const Params& p) : p_(p), alpha_(p.alpha) { validate_params(p_, "sac"); }

std::unique_ptr<Policy> Sac::policy() const {
  auto pol = std::make_unique<NnPolicy>(env_id_, NnPolicy::Mode::kTanhScaled, actor_, act_dim_);
  pol->set_action_bounds(low_, high_);
  return pol;
}

void Sac::save_policy(const std::filesystem::path& file) const {
  static_cast<NnPolicy&>(*policy()).save(file);
}

void Sac::check(const RunPlan& plan) { box_action_map(plan.env.spec(), "sac"); }

std::int64_t Sac::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  const BoxActionMap box = box_action_map(spec, "sac");
  env_id_ = spec.id;
  const int D = static_cast<int>(spec.observation.dim()), A = static_cast<int>(spec.action.dim());
  act_dim_ = A;
  low_ = box.low;
  high_ = box.high;
  const Eigen::VectorXf& scale = box.scale;
  const Eigen::VectorXf& bias = box.bias;
  double log_scale_sum = 0;
  for (int j = 0; j < A; ++j) log_scale_sum += std::log(static_cast<double>(scale[j]));
  const std::vector<int> hidden = parse_hidden_sizes(p_.hidden_sizes, "sac.hidden_sizes");
  actor_ = nn::Mlp(nn::MlpShape(layer_sizes(D, hidden, 2 * A), nn::Act::kRelu));
  nn::Mlp q1(nn::MlpShape(layer_sizes(D + A, hidden, 1), nn::Act::kRelu)), q2(q1.shape());
  init_networks(ctx.seed(), {&actor_, &q1, &q2});
  nn::Mlp q1t = q1, q2t = q2;
  nn::Adam opt_a(actor_.size(), nn::AdamConfig{p_.policy_lr});
  nn::Adam opt_q1(q1.size(), nn::AdamConfig{p_.q_lr}), opt_q2(q2.size(), nn::AdamConfig{p_.q_lr});
  nn::Adam opt_alpha(1, nn::AdamConfig{p_.q_lr});
  float log_alpha = 0.0f;  // CleanRL: log_alpha = zeros(1)
  alpha_ = p_.autotune ? 1.0 : p_.alpha;
  const double target_entropy = -static_cast<double>(A);
  nn::Buffer g_a(actor_.size()), g_q1(q1.size()), g_q2(q2.size());
  ReplayBuffer rb(
      static_cast<std::size_t>(std::min<std::int64_t>(p_.buffer_size, ctx.train().steps)), D, A);
  ReplayBatch b;
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));   // acting
  Rng srng(derive_seed(ctx.seed(), Domain::kAlgo, 1));  // replay sampling
  Rng nrng(derive_seed(ctx.seed(), Domain::kAlgo, 2));  // reparameterisation noise
  nn::MlpCache ca, c1, c2, ct1, ct2;
  Mat out1, ls, lsf, xin, dmean, dls, dla, dq, dact;
  nn::TanhSample ts;
  std::vector<float> obs(D), next(D), ascaled(A), y, w(p_.batch_size), scratch, aout(2 * A);
  std::vector<double> act(A);
  const int B = p_.batch_size;

  // actor outputs (2A x n) -> mean, log_std, sample
  auto sample_actor = [&](const Eigen::Ref<const Mat>& x, nn::MlpCache& c) {
    const Mat& o = actor_.forward(x, c);
    nn::bounded_log_std(o.bottomRows(A), kLogStdMin, kLogStdMax, ls);
    out1 = o.topRows(A);
    nn::tanh_gaussian_sample(out1, ls, nrng, ts);
    ts.logp.array() -= static_cast<float>(log_scale_sum);
  };
  auto critic_input = [&](const Mat& x, const Mat& a_tanh) {
    xin.resize(D + A, x.cols());
    xin.topRows(D) = x;
    xin.bottomRows(A) = (a_tanh.array().colwise() * scale.array()).colwise() + bias.array();
  };

  const std::int64_t total = ctx.train().steps;
  env->reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, 0), obs);
  episodes_ = 0;
  double ep_ret = 0, recent = NAN;
  std::int64_t step = 0;  // steps done
  // what carries from one step to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section("sac");
    for (nn::Mlp* net : {&actor_, &q1, &q2, &q1t, &q2t}) io(net->span());
    for (nn::Adam* opt : {&opt_a, &opt_q1, &opt_q2, &opt_alpha}) opt->sync_state(io);
    io(log_alpha);
    io(alpha_);
    rb.sync_state(io);
    io(rng);
    io(srng);
    io(nrng);
    io(obs, true);
    env->sync_state(io);
    io(step);
    io(ep_ret);
    io(recent);
    io(episodes_);
  };
  ctx.resume(sync);
  while (step < total) {
    ++step;
    if (step <= p_.learning_starts) {
      for (int j = 0; j < A; ++j) act[j] = rng.uniform(low_[j], high_[j]);
    } else {
      nn::forward_one(actor_.shape(), actor_.data(), obs.data(), aout.data(), scratch);
      for (int j = 0; j < A; ++j) {
        const double l =
            kLogStdMin + 0.5 * (kLogStdMax - kLogStdMin) * (std::tanh(aout[A + j]) + 1);
        const double u = aout[j] + std::exp(l) * rng.normal();
        act[j] = std::tanh(u) * scale[j] + bias[j];
      }
    }
    const StepResult r = env->step(std::span<const double>(act), next);
    ep_ret += r.reward;
    for (int j = 0; j < A; ++j) ascaled[j] = static_cast<float>(act[j]);
    rb.add(obs, ascaled, r.reward, next, r.terminated);
    if (r.terminated || r.truncated) {
      ++episodes_;
      recent = std::isnan(recent) ? ep_ret : 0.9 * recent + 0.1 * ep_ret;
      ep_ret = 0;
      env->reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, episodes_), obs);
    } else {
      obs = next;
    }
    if (step > p_.learning_starts) {
      rb.sample(B, srng, b);
      // critic targets
      sample_actor(b.next_obs, ca);
      critic_input(b.next_obs, ts.a);
      const Mat& t1 = q1t.forward(xin, ct1);
      const Mat& t2 = q2t.forward(xin, ct2);
      y.resize(B);
      for (int i = 0; i < B; ++i) {
        const float v = std::min(t1(0, i), t2(0, i)) - static_cast<float>(alpha_) * ts.logp[i];
        y[i] = b.rewards[i] + (1.0f - b.terminated[i]) * static_cast<float>(p_.gamma) * v;
      }
      xin.resize(D + A, B);
      xin.topRows(D) = b.obs;
      xin.bottomRows(A) = b.actions;
      for (auto pr : {std::pair{&q1, &c1}, std::pair{&q2, &c2}}) {
        const Mat& qv = pr.first->forward(xin, *pr.second);
        dq = (qv - Eigen::Map<const Eigen::RowVectorXf>(y.data(), B)) * (2.0f / B);
        nn::Buffer& g = pr.first == &q1 ? g_q1 : g_q2;
        nn::backward(pr.first->shape(), pr.first->data(), dq, *pr.second, g.data());
      }
      opt_q1.step(q1.span(), g_q1);
      opt_q2.step(q2.span(), g_q2);
      if (step % p_.policy_frequency == 0) {
        for (int k = 0; k < p_.policy_frequency; ++k) {
          sample_actor(b.obs, ca);
          critic_input(b.obs, ts.a);
          const Mat& v1 = q1.forward(xin, c1);
          const Mat& v2 = q2.forward(xin, c2);
          // d/d(Q input) of -mean(min(Q1, Q2)): route each sample through its smaller critic
          Mat d1 = Mat::Zero(1, B), d2 = Mat::Zero(1, B);
          for (int i = 0; i < B; ++i) (v1(0, i) <= v2(0, i) ? d1 : d2)(0, i) = -1.0f / B;
          nn::backward_errors(q1.shape(), q1.data(), d1, c1, true);
          nn::backward_errors(q2.shape(), q2.data(), d2, c2, true);
          dla = (c1.din.bottomRows(A) + c2.din.bottomRows(A)).array().colwise() * scale.array();
          std::fill(w.begin(), w.end(), static_cast<float>(alpha_ / B));
          nn::tanh_gaussian_backward(ts, w, dla, dmean, dls);
          const Mat& o = ca.a.back();
          nn::bounded_log_std_backward(o.bottomRows(A), kLogStdMin, kLogStdMax, lsf);
          dact.resize(2 * A, B);
          dact.topRows(A) = dmean;
          dact.bottomRows(A) = dls.cwiseProduct(lsf);
          nn::backward(actor_.shape(), actor_.data(), dact, ca, g_a.data());
          opt_a.step(actor_.span(), g_a);
          if (p_.autotune) {
            // alpha loss = mean(-exp(log_alpha) (logp + target_entropy)); d/dlog_alpha
            double m = 0;
            for (int i = 0; i < B; ++i) m += ts.logp[i] + target_entropy;
            const float ga = static_cast<float>(-std::exp(log_alpha) * m / B);
            opt_alpha.step({&log_alpha, 1}, {&ga, 1});
            alpha_ = std::exp(static_cast<double>(log_alpha));
          }
        }
      }
      if (step % p_.target_network_frequency == 0) {
        nn::polyak_update(q1t.span(), q1.span(), p_.tau);
        nn::polyak_update(q2t.span(), q2.span(), p_.tau);
      }
    }
    if (ctx.eval_due(step) || step == total) {
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_, {{"alpha", alpha_}});
    }
    if ((step & 255) == 0 || step == total) ctx.progress().update(step, total, episodes_, recent);
    if (ctx.checkpoint_due(step) && step < total) ctx.save_checkpoint(step, sync);
  }
  return total;
}

}  // namespace dprl::algos
