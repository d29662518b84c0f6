#include "algos/model_based/mb_sac.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos::model_based {

using nn::Mat;

namespace {

// start states: rho_0 resets, model replay states, or real states (MOPO)
void start_states(const PolicyStageConfig& cfg, Env& reset_env, const ReplayBuffer& model_rb,
                  const TransitionTable* real, std::uint64_t seed, std::int64_t rollout, Rng& rng,
                  Mat& s) {
  const int D = static_cast<int>(reset_env.obs_dim());
  const int n = cfg.rollout_batch;
  s.resize(D, n);
  if (cfg.start_from_data) {
    for (int i = 0; i < n; ++i)
      s.col(i) = real->x.col(static_cast<Eigen::Index>(rng.below(real->transitions()))).topRows(D);
    return;
  }
  int n_reset = model_rb.size() == 0 ? n : static_cast<int>(std::lround(cfg.start_reset * n));
  std::vector<float> obs(D);
  for (int i = 0; i < n_reset; ++i) {
    reset_env.reset(derive_seed(seed, Domain::kEnvReset, static_cast<std::uint64_t>(rollout),
                                static_cast<std::uint64_t>(i)),
                    obs);
    for (int j = 0; j < D; ++j) s(j, i) = obs[j];
  }
  if (n_reset < n) {
    ReplayBatch b;
    model_rb.sample(n - n_reset, rng, b);
    s.rightCols(n - n_reset) = b.obs;
  }
}

// real transitions as a replay buffer (MOPO's real-data mixing)
std::unique_ptr<ReplayBuffer> real_buffer(const TransitionTable& t, int D, int A) {
  auto rb = std::make_unique<ReplayBuffer>(t.transitions(), D, A);
  std::vector<float> s(D), a(A), s1(D);
  for (Eigen::Index c = 0; c < t.x.cols(); ++c) {
    for (int j = 0; j < D; ++j) {
      s[j] = t.x(j, c);
      s1[j] = s[j] + t.y(j, c);
    }
    for (int j = 0; j < A; ++j) a[j] = t.x(D + j, c);
    rb->add(s, a, t.y(D, c), s1, false);
  }
  return rb;
}

void concat(const ReplayBatch& a, const ReplayBatch& b, ReplayBatch& out) {
  const auto na = a.obs.cols(), nb = b.obs.cols();
  out.obs.resize(a.obs.rows(), na + nb);
  out.obs << a.obs, b.obs;
  out.next_obs.resize(a.obs.rows(), na + nb);
  out.next_obs << a.next_obs, b.next_obs;
  out.actions.resize(a.actions.rows(), na + nb);
  out.actions << a.actions, b.actions;
  out.rewards = a.rewards;
  out.rewards.insert(out.rewards.end(), b.rewards.begin(), b.rewards.end());
  out.terminated = a.terminated;
  out.terminated.insert(out.terminated.end(), b.terminated.begin(), b.terminated.end());
}

}  // namespace

void train_policy_in_model(const ProbEnsemble& model, const ModelEnvConfig& env_cfg,
                           const PolicyStageConfig& cfg, SacLearner& learner, Env& reset_env,
                           std::uint64_t seed, const TransitionTable* real,
                           const std::function<void(const EpochStats&)>& on_epoch,
                           PolicyStageCheckpoints* checkpoints) {
  const bool needs_real = cfg.real_ratio > 0.0 || cfg.start_from_data;
  if (needs_real != (real != nullptr))
    throw ParamError(
        "policy stage: real data must be given exactly when real_ratio > 0 or start_from_data");
  const int D = static_cast<int>(reset_env.obs_dim());
  const int A = static_cast<int>(reset_env.spec().action.dim());
  ModelEnv menv(model, env_cfg);
  const std::size_t cap = static_cast<std::size_t>(cfg.rollout_batch) * cfg.horizon *
                          static_cast<std::size_t>(cfg.retain_epochs);
  ReplayBuffer model_rb(cap, D, A);
  std::unique_ptr<ReplayBuffer> real_rb = real ? real_buffer(*real, D, A) : nullptr;
  const int n_real = real ? static_cast<int>(std::lround(cfg.real_ratio * cfg.batch_size)) : 0;
  Rng roll_rng(derive_seed(seed, Domain::kAlgo, 10));   // member choice, model noise, starts
  Rng batch_rng(derive_seed(seed, Domain::kAlgo, 11));  // replay sampling
  Mat s, a, next;
  std::vector<float> r, raw, u;
  ReplayBatch bm, br, b;
  EpochStats st;
  std::int64_t updates = 0, rollouts = 0;
  int done = 0;  // epochs done
  const auto sync = [&](StateIo& io) {
    io.section("policy_stage");
    io.bounded(done, 0, cfg.epochs, "epochs done");
    constexpr std::int64_t kMax = std::int64_t{1} << 50;
    io.bounded(updates, std::int64_t{0}, kMax, "policy updates");
    io.bounded(rollouts, std::int64_t{0}, kMax, "model rollouts");
    if (io.loading() && updates != std::int64_t{done} * cfg.steps_per_epoch)
      throw DataError("checkpoint: section 'policy_stage' holds updates that are not its epochs'");
    io(roll_rng);
    io(batch_rng);
    model_rb.sync_state(io);
    learner.sync_state(io);
    io(st.model_reward);
    io(st.raw_reward);
    io(st.penalty);
  };
  if (checkpoints && !checkpoints->resume_state.empty()) {
    StateIo io(checkpoints->resume_state, "checkpoint (policy stage)");
    sync(io);
    io.expect_end();
  }
  for (int epoch = done + 1; epoch <= cfg.epochs; ++epoch) {
    for (int k = 0; k < cfg.steps_per_epoch; ++k, ++updates) {
      if (updates % cfg.rollout_freq == 0) {
        start_states(cfg, reset_env, model_rb, real, seed, rollouts++, roll_rng, s);
        double sr = 0, sraw = 0, su = 0;
        for (int h = 0; h < cfg.horizon; ++h) {
          learner.act(s, a);
          menv.step(s, a, roll_rng, next, r, raw, u);
          for (Eigen::Index i = 0; i < s.cols(); ++i) {
            model_rb.add({s.col(i).data(), static_cast<std::size_t>(D)},
                         {a.col(i).data(), static_cast<std::size_t>(A)}, r[i],
                         {next.col(i).data(), static_cast<std::size_t>(D)}, false);
            sr += r[i];
            sraw += raw[i];
            su += u[i];
          }
          s.swap(next);
        }
        const double n = static_cast<double>(cfg.rollout_batch) * cfg.horizon;
        st.model_reward = sr / n;
        st.raw_reward = sraw / n;
        st.penalty = su / n;
      }
      if (n_real > 0) {
        real_rb->sample(n_real, batch_rng, br);
        model_rb.sample(cfg.batch_size - n_real, batch_rng, bm);
        concat(bm, br, b);
        learner.update(b);
      } else {
        model_rb.sample(cfg.batch_size, batch_rng, b);
        learner.update(b);
      }
    }
    st.epoch = epoch;
    st.updates = updates;
    st.q_loss = learner.last_q_loss();
    st.alpha = learner.alpha();
    if (on_epoch) on_epoch(st);
    done = epoch;
    if (checkpoints && epoch < cfg.epochs && checkpoints->due(updates)) {
      StateIo io;
      sync(io);
      checkpoints->save(updates, io.take());
    }
  }
}

}  // namespace dprl::algos::model_based
