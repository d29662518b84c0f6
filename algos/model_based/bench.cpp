#include "algos/model_based/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/model_env.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos::model_based {

namespace {

// CPU time of the calling thread in ms (the machine may be shared: wall time would count waits)
double thread_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TransitionTable synthetic_table(const PrimorlBenchConfig& cfg, int units, Rng& rng) {
  TransitionTable t;
  const int n = units * cfg.traj_len;
  t.x.resize(cfg.obs_dim + cfg.act_dim, n);
  t.y.resize(cfg.obs_dim + 1, n);
  for (int c = 0; c < n; ++c) {
    for (int j = 0; j < t.x.rows(); ++j) t.x(j, c) = static_cast<float>(rng.uniform(-1, 1));
    for (int j = 0; j < t.y.rows(); ++j) t.y(j, c) = static_cast<float>(0.1 * rng.normal());
  }
  for (int u = 0; u < units; ++u) {
    t.start.push_back(static_cast<std::size_t>(u + 1) * cfg.traj_len);
    t.user.push_back(u);
  }
  return t;
}

}  // namespace

PrimorlBenchResult bench_primorl(const PrimorlBenchConfig& cfg) {
  ProbEnsembleConfig mc;
  mc.in_dim = cfg.obs_dim + cfg.act_dim;
  mc.out_dim = cfg.obs_dim + 1;
  mc.hidden = cfg.hidden;
  mc.members = cfg.members;
  ProbEnsemble model(mc);
  model.init(1);
  Rng rng(2);
  const TransitionTable train = synthetic_table(cfg, cfg.clients, rng);
  const TransitionTable test = synthetic_table(cfg, 1, rng);
  TdpConfig tc;
  tc.q = 1.0;  // every one of the `clients` trajectories each round: q K = clients
  tc.z = 0.52;
  tc.clip_norm = 1.0;
  tc.clipping = cfg.clipping;
  tc.rounds = 1;
  tc.batch_size = cfg.batch_size;
  tc.eval_every = 0;
  tc.select_best = false;
  ThreadPool pool(1);
  if (cfg.noise != "seeded" && cfg.noise != "os-entropy")
    throw ParamError(fmt::format("--noise = '{}': must be seeded or os-entropy", cfg.noise));
  auto noise =
      cfg.noise == "seeded" ? privacy::make_seeded_noise(3) : privacy::make_os_entropy_noise(true);
  privacy::Ledger ledger(1e12, 1e-5, "rdp");
  PrimorlBenchResult r;
  r.params = model.num_params();
  r.local_steps =
      static_cast<double>(cfg.clients) * ((cfg.traj_len + cfg.batch_size - 1) / cfg.batch_size);
  std::vector<double> times;
  for (int i = 0; i < cfg.reps + 1; ++i) {
    const double t0 = thread_ms();
    train_ensemble_tdp(model, train, test, tc, 4, *noise, &ledger, nullptr, pool);
    const double ms = thread_ms() - t0;
    if (i > 0) times.push_back(ms);  // the first round warms the caches
  }
  r.round_ms = median(times);

  ModelEnvConfig ec;
  ec.penalty = parse_penalty(cfg.penalty, "--penalty");
  ModelEnv env(model, ec);
  nn::Mat s(cfg.obs_dim, cfg.rollout_batch), a(cfg.act_dim, cfg.rollout_batch), next;
  for (int c = 0; c < cfg.rollout_batch; ++c) {
    for (int j = 0; j < cfg.obs_dim; ++j) s(j, c) = static_cast<float>(rng.uniform(-1, 1));
    for (int j = 0; j < cfg.act_dim; ++j) a(j, c) = static_cast<float>(rng.uniform(-1, 1));
  }
  std::vector<float> rew, raw, u;
  times.clear();
  for (int i = 0; i < cfg.reps + 1; ++i) {
    const double t0 = thread_ms();
    env.step(s, a, rng, next, rew, raw, u);
    const double ms = thread_ms() - t0;
    if (i > 0) times.push_back(ms);
  }
  r.rollout_step_ms = median(times);
  return r;
}

}  // namespace dprl::algos::model_based
