#include "algos/ppo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "engine/nn_heads.hpp"
#include "engine/nn_optim.hpp"
#include "engine/rng.hpp"
#include "engine/vec_env.hpp"

namespace dprl::algos {

using nn::Mat;

void PpoParams::check() const {
  // in 64 bits: num_envs * num_steps reaches 4096 * 10^6
  const std::int64_t batch = std::int64_t{num_envs} * num_steps;
  if (static_cast<double>(batch) > kMaxRolloutSteps)
    throw ParamError(
        fmt::format("ppo: num_envs * num_steps = {} * {} = {} rollout steps; at most {:g}",
                    num_envs, num_steps, batch, kMaxRolloutSteps));
  const double hidden_weights =
      static_cast<double>(hidden_size) * hidden_size * static_cast<double>(hidden_layers - 1);
  if (hidden_weights > kMaxHiddenWeights)
    throw ParamError(fmt::format(
        "ppo: hidden_size = {} with hidden_layers = {} is {:g} weights between hidden layers; at "
        "most {:g}",
        hidden_size, hidden_layers, hidden_weights, kMaxHiddenWeights));
  if (batch % num_minibatches != 0 || batch / num_minibatches < 2)
    throw ParamError(
        fmt::format("ppo: num_envs * num_steps = {} must split into num_minibatches "
                    "= {} minibatches of at least 2",
                    batch, num_minibatches));
}

namespace {

// Spinning Up's value targets and advantage normalisation: ret = discounted rewards-to-go,
// bootstrapped with V(next) at the rollout cut (rew already holds gamma V(final) at time-limit
// truncations); adv = (adv - mean) / sd over the whole rollout, sd with divisor n.
void spinning_up_targets(const Mat& vnext, std::span<const float> done, std::span<const float> rew,
                         float gamma, bool norm_adv, int n, int steps, std::span<float> adv,
                         std::span<float> ret) {
  std::vector<float> run(n);
  for (int i = 0; i < n; ++i) run[i] = vnext(0, i);
  for (int t = steps - 1; t >= 0; --t)
    for (int i = 0; i < n; ++i) {
      const int k = t * n + i;
      run[i] = rew[k] + gamma * (1.0f - done[k]) * run[i];
      ret[k] = run[i];
    }
  if (!norm_adv) return;
  double mean = 0, var = 0;
  for (float a : adv) mean += a;
  mean /= static_cast<double>(adv.size());
  for (float a : adv) var += (a - mean) * (a - mean);
  const double sd = std::sqrt(var / static_cast<double>(adv.size()));
  for (float& a : adv) a = static_cast<float>((a - mean) / (sd + 1e-8));
}

}  // namespace

Ppo::Ppo(const PpoParams& p) : p_(p) { validate_params(p_, "ppo"); }

Ppo::Ppo(const PpoParams& p, PpoHooks* hooks, PpoUpdateStyle style)
    : p_(p), hooks_(hooks), style_(style) {
  validate_params(p_, "ppo");
}

std::unique_ptr<NnPolicy> Ppo::make_policy() const {
  auto pol = std::make_unique<NnPolicy>(
      env_id_, discrete_ ? NnPolicy::Mode::kArgmax : NnPolicy::Mode::kClip, actor_, act_dim_);
  if (p_.norm_obs) pol->set_obs_norm(obs_stat_.mean_f(), obs_stat_.var_f());
  if (!discrete_) pol->set_action_bounds(low_, high_);
  return pol;
}

std::unique_ptr<Policy> Ppo::policy() const { return make_policy(); }
void Ppo::save_policy(const std::filesystem::path& file) const { make_policy()->save(file); }

std::int64_t Ppo::train(TrainContext& ctx) {
  const int N = p_.num_envs, T = p_.num_steps, batch = N * T;
  const int mb = batch / p_.num_minibatches;
  std::vector<std::unique_ptr<Env>> envs;
  for (int i = 0; i < N; ++i) envs.push_back(ctx.make_env());
  VecEnv<Env> venv(std::move(envs), ctx.seed());
  const EnvSpec& spec = venv.spec();
  env_id_ = spec.id;
  discrete_ = spec.action.is_discrete();
  const int D = static_cast<int>(venv.obs_dim());
  act_dim_ = discrete_ ? static_cast<int>(spec.action.n) : static_cast<int>(spec.action.dim());
  if (!discrete_) {
    low_.assign(spec.action.low.begin(), spec.action.low.end());
    high_.assign(spec.action.high.begin(), spec.action.high.end());
  }
  const nn::Act act = nn::parse_act(p_.activation, "ppo.activation");
  std::vector<int> sizes{D};
  if (widths_.empty())
    for (int l = 0; l < p_.hidden_layers; ++l) sizes.push_back(p_.hidden_size);
  else
    sizes.insert(sizes.end(), widths_.begin(), widths_.end());
  sizes.push_back(act_dim_);
  actor_ = nn::Mlp(nn::MlpShape(sizes, act));
  sizes.back() = 1;
  critic_ = nn::Mlp(nn::MlpShape(sizes, act));
  const bool su = style_.spinning_up;
  {
    Rng r0(derive_seed(ctx.seed(), Domain::kInit, 0)),
        r1(derive_seed(ctx.seed(), Domain::kInit, 1));
    if (su) {  // torch.nn.Linear's default, as Spinning Up's MLPs
      nn::init_kaiming_uniform(actor_.shape(), actor_.data(), r0);
      nn::init_kaiming_uniform(critic_.shape(), critic_.data(), r1);
    } else {
      nn::init_orthogonal(actor_.shape(), actor_.data(), r0, std::sqrt(2.0), 0.01);
      nn::init_orthogonal(critic_.shape(), critic_.data(), r1, std::sqrt(2.0), 1.0);
    }
  }
  log_std_.assign(discrete_ ? 0 : act_dim_, static_cast<float>(p_.init_log_std));
  nn::AdamConfig acfg{p_.learning_rate, 0.9, 0.999, su ? 1e-8 : 1e-5, 0.0};
  const double vf_lr = style_.vf_learning_rate > 0 ? style_.vf_learning_rate : p_.learning_rate;
  nn::AdamConfig ccfg = acfg;
  ccfg.lr = vf_lr;
  nn::Adam opt_a(actor_.size(), acfg), opt_c(critic_.size(), ccfg), opt_s(log_std_.size(), acfg);
  if (hooks_) {
    if (!discrete_) throw ParamError("ppo: actor-loss hooks need a discrete action space");
    hooks_->begin(ctx, spec, batch);
  }
  nn::Buffer g_a(actor_.size()), g_c(critic_.size()), g_s(log_std_.size());
  obs_stat_ = nn::RunningStat(D);
  nn::RunningStat ret_stat(1);
  std::vector<double> disc_ret(N, 0.0);

  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  Mat obs_buf(D, batch), act_buf(discrete_ ? 1 : act_dim_, batch);
  std::vector<float> logp_buf(batch), rew(batch), done(batch), val(batch), adv(batch), ret(batch);
  std::vector<int> act_idx(batch);
  // invalid-action masks (A x batch), only for discrete envs that have them
  const bool masked = discrete_ && p_.use_action_mask && spec.has_action_mask;
  std::vector<std::uint8_t> mask_buf(masked ? static_cast<std::size_t>(act_dim_) * batch : 0),
      mask_mb(masked ? static_cast<std::size_t>(act_dim_) * mb : 0);
  std::vector<float> x(D * N), fin(D), vtmp(1), scratch;
  std::vector<std::int64_t> dacts(N);
  std::vector<double> cacts(discrete_ ? 0 : act_dim_ * N);
  nn::MlpCache ca, cc;
  Mat logp, lstd, dout, dmean, dlstd;
  std::vector<float> ent(mb), lp(mb), w_logp(mb), w_ent(mb);

  auto observe = [&](std::span<const float> raw, std::span<float> out, std::size_t n, bool upd) {
    std::copy(raw.begin(), raw.end(), out.begin());
    if (!p_.norm_obs) return;
    if (upd) obs_stat_.update(raw, n);
    obs_stat_.normalize(out, n);
  };

  venv.reset();
  observe(venv.obs(), x, N, true);
  const std::int64_t total = ctx.train().steps;
  const std::int64_t iters = std::max<std::int64_t>(1, total / batch);
  std::int64_t step = 0, it = 0;
  double recent = NAN;
  episodes_ = 0;
  // what carries from one rollout to the next, for checkpoints
  const auto sync = [&](StateIo& io) {
    io.section(hooks_ ? "ppo_hooked" : "ppo");
    io(actor_.span());
    io(critic_.span());
    io(log_std_, true);
    opt_a.sync_state(io);
    opt_c.sync_state(io);
    opt_s.sync_state(io);
    obs_stat_.sync_state(io);
    ret_stat.sync_state(io);
    io(disc_ret, true);
    io(rng);
    venv.sync_state(io);
    io(x, true);
    io.bounded(step, std::int64_t{0}, total, "step");
    io.bounded(it, std::int64_t{0}, iters, "iteration");
    io(recent);
    io.bounded(episodes_, std::int64_t{0}, std::int64_t{1} << 62, "episodes");
  };
  ctx.resume(sync);
  while (it < iters) {
    const double lr =
        p_.anneal_lr ? nn::linear_decay(p_.learning_rate, it, iters) : p_.learning_rate;
    opt_a.set_lr(lr);
    opt_c.set_lr(p_.anneal_lr ? nn::linear_decay(vf_lr, it, iters) : vf_lr);
    opt_s.set_lr(lr);
    // rollout
    for (int t = 0; t < T; ++t) {
      if (hooks_) hooks_->on_step(t, venv.obs(), N);
      const nn::CMatMap X(x.data(), D, N);
      const Mat& out = actor_.forward(X, ca);
      const Mat& v = critic_.forward(X, cc);
      obs_buf.middleCols(t * N, N) = X;
      if (discrete_) {
        std::uint8_t* mt =
            masked ? mask_buf.data() + static_cast<std::size_t>(t) * N * act_dim_ : nullptr;
        if (masked)
          for (int i = 0; i < N; ++i)
            venv.env(i).action_mask(
                {mt + static_cast<std::size_t>(i) * act_dim_, static_cast<std::size_t>(act_dim_)});
        nn::log_softmax(out, mt, logp);
        for (int i = 0; i < N; ++i) {
          const int a = nn::sample_categorical(logp, i, rng);
          dacts[i] = a;
          act_buf(0, t * N + i) = static_cast<float>(a);
          act_idx[t * N + i] = a;
          logp_buf[t * N + i] = logp(a, i);
        }
      } else {
        for (int i = 0; i < N; ++i) {
          float s = 0;
          for (int j = 0; j < act_dim_; ++j) {
            const float e = static_cast<float>(rng.normal());
            const float a = out(j, i) + std::exp(log_std_[j]) * e;
            act_buf(j, t * N + i) = a;
            cacts[i * act_dim_ + j] =
                std::clamp(static_cast<double>(a), double{low_[j]}, double{high_[j]});
            s += -0.5f * e * e - log_std_[j] - 0.5f * std::log(2.0f * std::numbers::pi_v<float>);
          }
          logp_buf[t * N + i] = s;
        }
      }
      for (int i = 0; i < N; ++i) val[t * N + i] = v(0, i);
      if (discrete_)
        venv.step(std::span<const std::int64_t>(dacts));
      else
        venv.step(std::span<const double>(cacts));
      step += N;
      for (int i = 0; i < N; ++i) {
        double r = venv.rewards()[i];
        const bool d = venv.terminated()[i] || venv.truncated()[i];
        if (p_.norm_reward) {
          disc_ret[i] = disc_ret[i] * p_.gamma + r;
          const float dr = static_cast<float>(disc_ret[i]);
          ret_stat.update({&dr, 1}, 1);
          r = std::clamp(r / std::sqrt(ret_stat.var()[0] + 1e-8), -10.0, 10.0);
          if (d) disc_ret[i] = 0;
        }
        if (p_.bootstrap_truncated && venv.truncated()[i] && !venv.terminated()[i]) {
          observe(venv.final_obs(i), fin, 1, false);
          nn::forward_one(critic_.shape(), critic_.data(), fin.data(), vtmp.data(), scratch);
          r += p_.gamma * vtmp[0];
        }
        rew[t * N + i] = static_cast<float>(r);
        done[t * N + i] = d ? 1.0f : 0.0f;
      }
      if (hooks_) hooks_->on_episodes(venv.finished());
      for (const auto& e : venv.finished()) {
        ++episodes_;
        recent = std::isnan(recent) ? e.ret : 0.9 * recent + 0.1 * e.ret;
      }
      observe(venv.obs(), x, N, true);
      if (ctx.eval_due(step) && step < iters * batch) {
        auto pol = make_policy();
        ctx.evaluate(*pol, step, episodes_);
      }
    }
    // GAE
    {
      const nn::CMatMap X(x.data(), D, N);
      const Mat& vnext = critic_.forward(X, cc);
      std::vector<float> last(N, 0.0f);
      for (int t = T - 1; t >= 0; --t)
        for (int i = 0; i < N; ++i) {
          const int k = t * N + i;
          const float nv = t == T - 1 ? vnext(0, i) : val[k + N];
          const float nnt = 1.0f - done[k];
          const float delta = rew[k] + static_cast<float>(p_.gamma) * nv * nnt - val[k];
          last[i] = delta + static_cast<float>(p_.gamma * p_.gae_lambda) * nnt * last[i];
          adv[k] = last[i];
          ret[k] = adv[k] + val[k];
        }
      if (su)
        spinning_up_targets(vnext, done, rew, static_cast<float>(p_.gamma), p_.norm_adv, N, T, adv,
                            ret);
    }
    // minibatch epochs
    std::vector<int> idx(batch);
    Mat xb(D, mb), ab(act_buf.rows(), mb);
    std::vector<int> aidx(mb);
    std::vector<float> madv(mb), dv(mb);
    bool stop = false, pi_stop = false;
    for (int ep = 0; ep < p_.update_epochs && !stop; ++ep) {
      std::iota(idx.begin(), idx.end(), 0);
      Rng mrng(derive_seed(ctx.seed(), Domain::kMinibatch, static_cast<std::uint64_t>(it),
                           static_cast<std::uint64_t>(ep)));
      for (int k = batch - 1; k > 0; --k) std::swap(idx[k], idx[mrng.below(k + 1)]);
      for (int m = 0; m < p_.num_minibatches; ++m) {
        const int* ids = idx.data() + m * mb;
        double am = 0, as = 0;
        for (int j = 0; j < mb; ++j) {
          xb.col(j) = obs_buf.col(ids[j]);
          ab.col(j) = act_buf.col(ids[j]);
          aidx[j] = act_idx[ids[j]];
          if (masked)
            std::copy_n(mask_buf.begin() + static_cast<std::size_t>(ids[j]) * act_dim_, act_dim_,
                        mask_mb.begin() + static_cast<std::size_t>(j) * act_dim_);
          madv[j] = adv[ids[j]];
          am += madv[j];
        }
        am /= mb;
        for (int j = 0; j < mb; ++j) as += (madv[j] - am) * (madv[j] - am);
        as = std::sqrt(as / (mb - 1));  // torch.std is unbiased
        if (p_.norm_adv && !su)
          for (auto& a : madv) a = static_cast<float>((a - am) / (as + 1e-8));
        // actor
        double kl = 0;
        bool actor_step = !pi_stop;
        const Mat* out = nullptr;
        if (actor_step) {
          out = &actor_.forward(xb, ca);
          if (discrete_) {
            nn::log_softmax(*out, masked ? mask_mb.data() : nullptr, logp);
            for (int j = 0; j < mb; ++j) lp[j] = logp(aidx[j], j);
          } else {
            lstd = Eigen::Map<const Eigen::VectorXf>(log_std_.data(), act_dim_).replicate(1, mb);
            nn::gaussian_log_prob(*out, lstd, ab, lp);
          }
          double kl_su = 0;
          for (int j = 0; j < mb; ++j) {
            const float lr_ = lp[j] - logp_buf[ids[j]];
            const float r = std::exp(lr_);
            kl += (r - 1.0f) - lr_;
            kl_su -= lr_;
            const float c = static_cast<float>(p_.clip_coef);
            const float l1 = -madv[j] * r, l2 = -madv[j] * std::clamp(r, 1.0f - c, 1.0f + c);
            w_logp[j] = (l1 >= l2 ? -madv[j] * r : 0.0f) / mb;
            w_ent[j] = static_cast<float>(-p_.ent_coef / mb);
          }
          kl /= mb;
          // Spinning Up checks the KL of the current policy before stepping it
          if (su && p_.target_kl > 0 && kl_su / mb > 1.5 * p_.target_kl) pi_stop = true;
          actor_step = !pi_stop;
        }
        if (actor_step && discrete_) {
          nn::categorical_backward(logp, aidx, w_logp, w_ent, dout);
          if (hooks_) hooks_->add_actor_grad(logp, ids, mb, dout);
          nn::backward(actor_.shape(), actor_.data(), dout, ca, g_a.data());
        } else if (actor_step) {
          nn::gaussian_backward(*out, lstd, ab, w_logp, w_ent, dmean, dlstd);
          nn::backward(actor_.shape(), actor_.data(), dmean, ca, g_a.data());
          for (int j = 0; j < act_dim_; ++j) g_s[j] = dlstd.row(j).sum();
        }
        // critic
        const Mat& v = critic_.forward(xb, cc);
        for (int j = 0; j < mb; ++j) {
          const float R = ret[ids[j]], vo = val[ids[j]], vn = v(0, j);
          float g = vn - R;
          if (p_.clip_vloss) {
            const float c = static_cast<float>(p_.clip_coef);
            const float d = std::clamp(vn - vo, -c, c);
            const float vc = vo + d;
            if ((vc - R) * (vc - R) > (vn - R) * (vn - R))
              g = (vn - vo > -c && vn - vo < c) ? vc - R : 0.0f;
          }
          dv[j] = static_cast<float>(p_.vf_coef) * g / mb;
        }
        nn::backward(critic_.shape(), critic_.data(), nn::CMatMap(dv.data(), 1, mb), cc,
                     g_c.data());
        // joint clip (none in Spinning Up)
        const double na = nn::l2_norm(g_a), nc = nn::l2_norm(g_c), ns = nn::l2_norm(g_s);
        const double norm = std::sqrt(na * na + nc * nc + ns * ns);
        if (!su && norm > p_.max_grad_norm) {
          const float k = static_cast<float>(p_.max_grad_norm / (norm + 1e-6));
          for (auto* g : {&g_a, &g_c, &g_s})
            for (auto& e : *g) e *= k;
        }
        if (actor_step) opt_a.step(actor_.span(), g_a);
        opt_c.step(critic_.span(), g_c);
        if (actor_step && !discrete_) opt_s.step(log_std_, g_s);
        if (!su && p_.target_kl > 0 && kl > p_.target_kl) stop = true;
      }
    }
    if (it + 1 == iters) {
      auto pol = make_policy();
      ctx.evaluate(*pol, step, episodes_);
    }
    if (hooks_) hooks_->end_iteration(ctx, step, episodes_);
    ctx.progress().update(step, iters * batch, episodes_, recent);
    ++it;
    if (ctx.checkpoint_due(step) && it < iters) ctx.save_checkpoint(step, sync);
  }
  return step;
}

}  // namespace dprl::algos
