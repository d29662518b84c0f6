#include "algos/online/ppo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>

#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "engine/nn/nn_heads.hpp"
#include "engine/nn/nn_optim.hpp"
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
  // the activations of one minibatch through the actor and the critic (activation,
  // pre-activation, error and a scratch copy per unit, float32) must fit in this machine's memory:
  // a product of individually valid sizes is refused before anything is allocated
  const double minibatch = static_cast<double>(batch / num_minibatches);
  constexpr double kNets = 2, kCopies = 4;
  check_memory(fmt::format("ppo: a minibatch of {:g} rollout steps x hidden_size {} x "
                           "hidden_layers {} (actor and critic)",
                           minibatch, hidden_size, hidden_layers),
               minibatch * hidden_size * hidden_layers * kNets * kCopies * sizeof(float));
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

// What one train() call carries between its steps: the envs, optimisers, return statistics and
// sampling stream, the rollout buffers (column per sample; sample t * N + i is env i at rollout
// step t), and the scratch of the forward and backward passes.
struct Ppo::Run {
  Run(const PpoParams& p, const PpoUpdateStyle& style, VecEnv<Env>& venv, const Ppo& ppo,
      std::uint64_t seed)
      : venv(venv),
        N(p.num_envs),
        T(p.num_steps),
        batch(N * T),
        mb(batch / p.num_minibatches),
        D(static_cast<int>(venv.obs_dim())),
        A(ppo.act_dim_),
        su(style.spinning_up),
        masked(ppo.discrete_ && p.use_action_mask && venv.spec().has_action_mask),
        vf_lr(style.vf_learning_rate > 0 ? style.vf_learning_rate : p.learning_rate),
        rng(derive_seed(seed, Domain::kAlgo, 0)),
        obs_buf(D, batch),
        act_buf(ppo.discrete_ ? 1 : A, batch),
        xb(D, mb),
        ab(act_buf.rows(), mb) {
    nn::AdamConfig acfg{p.learning_rate, 0.9, 0.999, su ? 1e-8 : 1e-5, 0.0};
    nn::AdamConfig ccfg = acfg;
    ccfg.lr = vf_lr;
    opt_a = nn::Adam(ppo.actor_.size(), acfg);
    opt_c = nn::Adam(ppo.critic_.size(), ccfg);
    opt_s = nn::Adam(ppo.log_std_.size(), acfg);
    g_a.resize(ppo.actor_.size());
    g_c.resize(ppo.critic_.size());
    g_s.resize(ppo.log_std_.size());
    disc_ret.assign(N, 0.0);
    for (auto* v : {&logp_buf, &rew, &done, &val, &adv, &ret}) v->resize(batch);
    act_idx.resize(batch);
    // invalid-action masks (A x batch), only for discrete envs that have them
    mask_buf.resize(masked ? static_cast<std::size_t>(A) * batch : 0);
    mask_mb.resize(masked ? static_cast<std::size_t>(A) * mb : 0);
    x.resize(static_cast<std::size_t>(D) * N);
    fin.resize(D);
    vtmp.resize(1);
    dacts.resize(N);
    cacts.resize(ppo.discrete_ ? 0 : static_cast<std::size_t>(A) * N);
    for (auto* v : {&lp, &w_logp, &w_ent, &madv, &dv}) v->resize(mb);
    idx.resize(batch);
    aidx.resize(mb);
  }

  VecEnv<Env>& venv;
  const int N, T, batch, mb, D, A;
  const bool su, masked;
  const double vf_lr;
  nn::Adam opt_a, opt_c, opt_s;
  nn::Buffer g_a, g_c, g_s;
  nn::RunningStat ret_stat = nn::RunningStat(1);
  std::vector<double> disc_ret;
  std::array<float, 1> dr{};  // the discounted return as ret_stat reads it
  Rng rng;
  // rollout
  Mat obs_buf, act_buf;
  std::vector<float> logp_buf, rew, done, val, adv, ret;
  std::vector<int> act_idx;
  std::vector<std::uint8_t> mask_buf, mask_mb;
  std::vector<float> x, fin, vtmp, scratch;
  std::vector<std::int64_t> dacts;
  std::vector<double> cacts;
  // update
  nn::MlpCache ca, cc;
  Mat logp, lstd, dout, dmean, dlstd;
  Mat xb, ab;
  std::vector<float> lp, w_logp, w_ent, madv, dv;
  std::vector<int> idx, aidx;
  bool pi_stop = false;  // Spinning Up: the policy stopped for this rollout
  // progress
  std::int64_t iters = 0, step = 0, it = 0;
  std::int64_t gradient_steps = 0;  // minibatch steps taken (target_kl may end epochs early)
  double recent = NAN;
};

void Ppo::init_networks(const EnvSpec& spec, int obs_dim, std::uint64_t seed) {
  env_id_ = spec.id;
  discrete_ = spec.action.is_discrete();
  act_dim_ = discrete_ ? static_cast<int>(spec.action.n) : static_cast<int>(spec.action.dim());
  if (!discrete_) {
    low_.assign(spec.action.low.begin(), spec.action.low.end());
    high_.assign(spec.action.high.begin(), spec.action.high.end());
  }
  const nn::Act act = nn::parse_act(p_.activation, "ppo.activation");
  std::vector<int> sizes{obs_dim};
  if (widths_.empty())
    for (int l = 0; l < p_.hidden_layers; ++l) sizes.push_back(p_.hidden_size);
  else
    sizes.insert(sizes.end(), widths_.begin(), widths_.end());
  sizes.push_back(act_dim_);
  actor_ = nn::Mlp(nn::MlpShape(sizes, act));
  sizes.back() = 1;
  critic_ = nn::Mlp(nn::MlpShape(sizes, act));
  Rng r0(derive_seed(seed, Domain::kInit, 0)), r1(derive_seed(seed, Domain::kInit, 1));
  if (style_.spinning_up) {  // torch.nn.Linear's default, as Spinning Up's MLPs
    nn::init_kaiming_uniform(actor_.shape(), actor_.data(), r0);
    nn::init_kaiming_uniform(critic_.shape(), critic_.data(), r1);
  } else {
    nn::init_orthogonal(actor_.shape(), actor_.data(), r0, std::sqrt(2.0), 0.01);
    nn::init_orthogonal(critic_.shape(), critic_.data(), r1, std::sqrt(2.0), 1.0);
  }
  log_std_.assign(discrete_ ? 0 : act_dim_, static_cast<float>(p_.init_log_std));
}

void Ppo::observe(std::span<const float> raw, std::span<float> out, std::size_t n, bool update) {
  std::copy(raw.begin(), raw.end(), out.begin());
  if (!p_.norm_obs) return;
  if (update) obs_stat_.update(raw, n);
  obs_stat_.normalize(out, n);
}

// what carries from one rollout to the next, for checkpoints
void Ppo::sync_run(Run& r, StateIo& io) {
  io.section(hooks_ ? "ppo_hooked" : "ppo");
  io(actor_.span());
  io(critic_.span());
  io(log_std_, true);
  r.opt_a.sync_state(io);
  r.opt_c.sync_state(io);
  r.opt_s.sync_state(io);
  obs_stat_.sync_state(io);
  r.ret_stat.sync_state(io);
  io(r.disc_ret, true);
  io(r.rng);
  r.venv.sync_state(io);
  io(r.x, true);
  io.bounded(r.step, std::int64_t{0}, r.iters * static_cast<std::int64_t>(r.batch), "step");
  io.bounded(r.it, std::int64_t{0}, r.iters, "iteration");
  io(r.recent);
  io.bounded(episodes_, std::int64_t{0}, std::int64_t{1} << 62, "episodes");
  io.bounded(r.gradient_steps, std::int64_t{0}, std::int64_t{1} << 62, "gradient steps");
  if (hooks_) hooks_->sync_state(io);
}

TrainSteps Ppo::train(TrainContext& ctx) {
  std::vector<std::unique_ptr<Env>> envs;
  for (int i = 0; i < p_.num_envs; ++i) envs.push_back(ctx.make_env());
  VecEnv<Env> venv(std::move(envs), ctx.seed());
  const EnvSpec& spec = venv.spec();
  init_networks(spec, static_cast<int>(venv.obs_dim()), ctx.seed());
  Run r(p_, style_, venv, *this, ctx.seed());
  if (hooks_) {
    if (!discrete_) throw ParamError("ppo: actor-loss hooks need a discrete action space");
    hooks_->begin(ctx, spec, r.batch);
  }
  obs_stat_ = nn::RunningStat(r.D);
  venv.reset();
  observe(venv.obs(), r.x, r.N, true);
  r.iters = std::max<std::int64_t>(1, ctx.train().steps / r.batch);
  episodes_ = 0;
  const TrainContext::SyncFn sync = [&](StateIo& io) { sync_run(r, io); };
  ctx.resume(sync);
  while (r.it < r.iters) {
    const double lr =
        p_.anneal_lr ? nn::linear_decay(p_.learning_rate, r.it, r.iters) : p_.learning_rate;
    r.opt_a.set_lr(lr);
    r.opt_c.set_lr(p_.anneal_lr ? nn::linear_decay(r.vf_lr, r.it, r.iters) : r.vf_lr);
    r.opt_s.set_lr(lr);
    collect_rollout(r, ctx);
    compute_advantages(r);
    update(r, ctx.seed());
    if (r.it + 1 == r.iters) {
      auto pol = make_policy();
      ctx.evaluate(*pol, r.step, episodes_);
    }
    if (hooks_) hooks_->end_iteration(ctx, r.step, episodes_);
    ctx.progress().update(r.step, r.iters * r.batch, episodes_, r.recent);
    ++r.it;
    if (ctx.checkpoint_due(r.step) && r.it < r.iters) ctx.save_checkpoint(r.step, sync);
  }
  return {r.step, r.gradient_steps};
}

// samples every env's action at rollout step t from the actor's outputs (one column per env)
void Ppo::sample_actions(Run& r, const Mat& out, int t) {
  const int N = r.N;
  if (discrete_) {
    std::uint8_t* mt =
        r.masked ? r.mask_buf.data() + static_cast<std::size_t>(t) * N * act_dim_ : nullptr;
    if (r.masked)
      for (int i = 0; i < N; ++i)
        r.venv.env(i).action_mask(
            {mt + static_cast<std::size_t>(i) * act_dim_, static_cast<std::size_t>(act_dim_)});
    nn::log_softmax(out, mt, r.logp);
    for (int i = 0; i < N; ++i) {
      const int a = nn::sample_categorical(r.logp, i, r.rng);
      r.dacts[i] = a;
      r.act_buf(0, t * N + i) = static_cast<float>(a);
      r.act_idx[t * N + i] = a;
      r.logp_buf[t * N + i] = r.logp(a, i);
    }
    return;
  }
  for (int i = 0; i < N; ++i) {
    float s = 0;
    for (int j = 0; j < act_dim_; ++j) {
      const float e = static_cast<float>(r.rng.normal());
      const float a = out(j, i) + std::exp(log_std_[j]) * e;
      r.act_buf(j, t * N + i) = a;
      r.cacts[i * act_dim_ + j] =
          std::clamp(static_cast<double>(a), double{low_[j]}, double{high_[j]});
      s += -0.5f * e * e - log_std_[j] - 0.5f * std::log(2.0f * std::numbers::pi_v<float>);
    }
    r.logp_buf[t * N + i] = s;
  }
}

// the rewards and done flags of rollout step t: normalised by the running std of the discounted
// returns (norm_reward), and bootstrapped with gamma V(final observation) at time-limit truncation
void Ppo::record_rewards(Run& r, int t) {
  VecEnv<Env>& venv = r.venv;
  for (int i = 0; i < r.N; ++i) {
    double rw = venv.rewards()[i];
    const bool d = venv.terminated()[i] || venv.truncated()[i];
    if (p_.norm_reward) {
      r.disc_ret[i] = r.disc_ret[i] * p_.gamma + rw;
      r.dr[0] = static_cast<float>(r.disc_ret[i]);
      r.ret_stat.update(r.dr, 1);
      rw = std::clamp(rw / std::sqrt(r.ret_stat.var()[0] + 1e-8), -10.0, 10.0);
      if (d) r.disc_ret[i] = 0;
    }
    if (p_.bootstrap_truncated && venv.truncated()[i] && !venv.terminated()[i]) {
      observe(venv.final_obs(i), r.fin, 1, false);
      nn::forward_one(critic_.shape(), critic_.data(), r.fin.data(), r.vtmp.data(), r.scratch);
      rw += p_.gamma * r.vtmp[0];
    }
    r.rew[t * r.N + i] = static_cast<float>(rw);
    r.done[t * r.N + i] = d ? 1.0f : 0.0f;
  }
}

// num_steps steps of every env into the rollout buffers, with the evaluations that fall due
void Ppo::collect_rollout(Run& r, TrainContext& ctx) {
  const int N = r.N;
  VecEnv<Env>& venv = r.venv;
  for (int t = 0; t < r.T; ++t) {
    if (hooks_) hooks_->on_step(t, venv.obs(), N);
    const nn::CMatMap X(r.x.data(), r.D, N);
    const Mat& out = actor_.forward(X, r.ca);
    const Mat& v = critic_.forward(X, r.cc);
    r.obs_buf.middleCols(t * N, N) = X;
    sample_actions(r, out, t);
    for (int i = 0; i < N; ++i) r.val[t * N + i] = v(0, i);
    if (discrete_)
      venv.step(std::span<const std::int64_t>(r.dacts));
    else
      venv.step(std::span<const double>(r.cacts));
    r.step += N;
    record_rewards(r, t);
    if (hooks_) hooks_->on_episodes(venv.finished());
    for (const auto& e : venv.finished()) {
      ++episodes_;
      r.recent = std::isnan(r.recent) ? e.ret : 0.9 * r.recent + 0.1 * e.ret;
    }
    observe(venv.obs(), r.x, N, true);
    if (ctx.eval_due(r.step) && r.step < r.iters * r.batch) {
      auto pol = make_policy();
      ctx.evaluate(*pol, r.step, episodes_);
    }
  }
}

// GAE(lambda) advantages and value targets of the rollout (Spinning Up: its own targets)
void Ppo::compute_advantages(Run& r) {
  const int N = r.N, T = r.T;
  const nn::CMatMap X(r.x.data(), r.D, N);
  const Mat& vnext = critic_.forward(X, r.cc);
  std::vector<float> last(N, 0.0f);
  for (int t = T - 1; t >= 0; --t)
    for (int i = 0; i < N; ++i) {
      const int k = t * N + i;
      const float nv = t == T - 1 ? vnext(0, i) : r.val[k + N];
      const float nnt = 1.0f - r.done[k];
      const float delta = r.rew[k] + static_cast<float>(p_.gamma) * nv * nnt - r.val[k];
      last[i] = delta + static_cast<float>(p_.gamma * p_.gae_lambda) * nnt * last[i];
      r.adv[k] = last[i];
      r.ret[k] = r.adv[k] + r.val[k];
    }
  if (r.su)
    spinning_up_targets(vnext, r.done, r.rew, static_cast<float>(p_.gamma), p_.norm_adv, N, T,
                        r.adv, r.ret);
}

// update_epochs passes over the rollout in shuffled minibatches (CleanRL: all epochs stop once
// the approx KL of a minibatch exceeds target_kl)
void Ppo::update(Run& r, std::uint64_t seed) {
  bool stop = false;
  r.pi_stop = false;
  for (int ep = 0; ep < p_.update_epochs && !stop; ++ep) {
    std::iota(r.idx.begin(), r.idx.end(), 0);
    Rng mrng(derive_seed(seed, Domain::kMinibatch, static_cast<std::uint64_t>(r.it),
                         static_cast<std::uint64_t>(ep)));
    for (int k = r.batch - 1; k > 0; --k) std::swap(r.idx[k], r.idx[mrng.below(k + 1)]);
    for (int m = 0; m < p_.num_minibatches; ++m) {
      const double kl = minibatch_step(r, r.idx.data() + m * r.mb);
      ++r.gradient_steps;
      if (!r.su && p_.target_kl > 0 && kl > p_.target_kl) stop = true;
    }
  }
}

// copies the minibatch ids[0..mb) into xb, ab, aidx, mask_mb and madv, with CleanRL's per-minibatch
// advantage normalisation
void Ppo::gather_minibatch(Run& r, const int* ids) {
  const int mb = r.mb;
  double am = 0, as = 0;
  for (int j = 0; j < mb; ++j) {
    r.xb.col(j) = r.obs_buf.col(ids[j]);
    r.ab.col(j) = r.act_buf.col(ids[j]);
    r.aidx[j] = r.act_idx[ids[j]];
    if (r.masked)
      std::copy_n(r.mask_buf.begin() + static_cast<std::size_t>(ids[j]) * act_dim_, act_dim_,
                  r.mask_mb.begin() + static_cast<std::size_t>(j) * act_dim_);
    r.madv[j] = r.adv[ids[j]];
    am += r.madv[j];
  }
  am /= mb;
  for (int j = 0; j < mb; ++j) as += (r.madv[j] - am) * (r.madv[j] - am);
  as = std::sqrt(as / (mb - 1));  // torch.std is unbiased
  if (p_.norm_adv && !r.su)
    for (auto& a : r.madv) a = static_cast<float>((a - am) / (as + 1e-8));
}

// the clipped-surrogate weights of the minibatch (w_logp, w_ent) from a forward pass of the actor
// (*out), and its approx KL; Spinning Up stops the policy (pi_stop) when its KL is too large
double Ppo::actor_weights(Run& r, const int* ids, const Mat*& out) {
  const int mb = r.mb;
  out = &actor_.forward(r.xb, r.ca);
  if (discrete_) {
    nn::log_softmax(*out, r.masked ? r.mask_mb.data() : nullptr, r.logp);
    for (int j = 0; j < mb; ++j) r.lp[j] = r.logp(r.aidx[j], j);
  } else {
    r.lstd = Eigen::Map<const Eigen::VectorXf>(log_std_.data(), act_dim_).replicate(1, mb);
    nn::gaussian_log_prob(*out, r.lstd, r.ab, r.lp);
  }
  double kl = 0, kl_su = 0;
  for (int j = 0; j < mb; ++j) {
    const float lr_ = r.lp[j] - r.logp_buf[ids[j]];
    const float ratio = std::exp(lr_);
    kl += (ratio - 1.0f) - lr_;
    kl_su -= lr_;
    const float c = static_cast<float>(p_.clip_coef);
    const float l1 = -r.madv[j] * ratio, l2 = -r.madv[j] * std::clamp(ratio, 1.0f - c, 1.0f + c);
    r.w_logp[j] = (l1 >= l2 ? -r.madv[j] * ratio : 0.0f) / mb;
    r.w_ent[j] = static_cast<float>(-p_.ent_coef / mb);
  }
  kl /= mb;
  // Spinning Up checks the KL of the current policy before stepping it
  if (r.su && p_.target_kl > 0 && kl_su / mb > 1.5 * p_.target_kl) r.pi_stop = true;
  return kl;
}

// the critic's gradient of the (optionally clipped) value loss into g_c
void Ppo::critic_gradient(Run& r, const int* ids) {
  const int mb = r.mb;
  const Mat& v = critic_.forward(r.xb, r.cc);
  for (int j = 0; j < mb; ++j) {
    const float R = r.ret[ids[j]], vo = r.val[ids[j]], vn = v(0, j);
    float g = vn - R;
    if (p_.clip_vloss) {
      const float c = static_cast<float>(p_.clip_coef);
      const float d = std::clamp(vn - vo, -c, c);
      const float vc = vo + d;
      if ((vc - R) * (vc - R) > (vn - R) * (vn - R))
        g = (vn - vo > -c && vn - vo < c) ? vc - R : 0.0f;
    }
    r.dv[j] = static_cast<float>(p_.vf_coef) * g / mb;
  }
  nn::backward(critic_.shape(), critic_.data(), nn::CMatMap(r.dv.data(), 1, mb), r.cc,
               r.g_c.data());
}

// one gradient step on minibatch ids[0..mb): actor (unless stopped), critic, joint norm clip;
// returns the approx KL (0 when the policy is stopped)
double Ppo::minibatch_step(Run& r, const int* ids) {
  gather_minibatch(r, ids);
  double kl = 0;
  bool actor_step = !r.pi_stop;
  const Mat* out = nullptr;
  if (actor_step) {
    kl = actor_weights(r, ids, out);
    actor_step = !r.pi_stop;
  }
  if (actor_step && discrete_) {
    nn::categorical_backward(r.logp, r.aidx, r.w_logp, r.w_ent, r.dout);
    if (hooks_) hooks_->add_actor_grad(r.logp, ids, r.mb, r.dout);
    nn::backward(actor_.shape(), actor_.data(), r.dout, r.ca, r.g_a.data());
  } else if (actor_step) {
    nn::gaussian_backward(*out, r.lstd, r.ab, r.w_logp, r.w_ent, r.dmean, r.dlstd);
    nn::backward(actor_.shape(), actor_.data(), r.dmean, r.ca, r.g_a.data());
    for (int j = 0; j < act_dim_; ++j) r.g_s[j] = r.dlstd.row(j).sum();
  }
  critic_gradient(r, ids);
  // joint clip (none in Spinning Up)
  const double na = nn::l2_norm(r.g_a), nc = nn::l2_norm(r.g_c), ns = nn::l2_norm(r.g_s);
  const double norm = std::sqrt(na * na + nc * nc + ns * ns);
  if (!r.su && norm > p_.max_grad_norm) {
    const float k = static_cast<float>(p_.max_grad_norm / (norm + 1e-6));
    for (auto* g : {&r.g_a, &r.g_c, &r.g_s})
      for (auto& e : *g) e *= k;
  }
  if (actor_step) r.opt_a.step(actor_.span(), r.g_a);
  r.opt_c.step(critic_.span(), r.g_c);
  if (actor_step && !discrete_) r.opt_s.step(log_std_, r.g_s);
  return kl;
}

}  // namespace dprl::algos
