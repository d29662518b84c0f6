#include "algos/model_based/ensemble_train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/error.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/dp_fedavg.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos::model_based {

using nn::Mat;

namespace {

privacy::EnsembleLayout layout_of(const ProbEnsemble& m) {
  privacy::EnsembleLayout l;
  l.members = m.members();
  l.stride = m.stride();
  for (const auto& b : m.blocks()) l.blocks.push_back({b.offset, b.size});
  return l;
}

privacy::DpFedAvgConfig fedavg_config(const TdpConfig& cfg, std::size_t table_units) {
  const auto units = cfg.units > 0 ? static_cast<std::size_t>(cfg.units) : table_units;
  privacy::DpFedAvgConfig c;
  c.clip_norm = cfg.clip_norm;
  c.noise_multiplier = cfg.variant == "dp" ? cfg.z : 0.0;
  c.sampling_rate = cfg.q;
  c.units = static_cast<std::int64_t>(units);
  c.clipping = privacy::parse_ensemble_clipping(cfg.clipping, "tdp_clipping");
  c.clip = cfg.variant != "no_clip";
  return c;
}

// One client's scratch (reused across rounds).
struct ClientWork {
  nn::Buffer theta, grad, delta;
  EnsembleWork w;
  Mat xb, yb;
  std::vector<std::size_t> order;
  double norm = 0;  // unclipped norm of the final update
  bool clipped = false;
};

// gathers columns idx[b0, b1) of the unit's transitions
void gather(const TransitionTable& t, std::size_t u, const std::vector<std::size_t>& idx,
            std::size_t b0, std::size_t b1, Mat& xb, Mat& yb) {
  const auto n = static_cast<Eigen::Index>(b1 - b0);
  xb.resize(t.x.rows(), n);
  yb.resize(t.y.rows(), n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const auto c = static_cast<Eigen::Index>(t.start[u] + idx[b0 + j]);
    xb.col(j) = t.x.col(c);
    yb.col(j) = t.y.col(c);
  }
}

// ENSCLIPGD of one unit from theta_start: leaves the clipped update in cw.delta
void local_train(const ProbEnsemble& model, const TransitionTable& t, std::size_t u,
                 const nn::Buffer& start, const TdpConfig& cfg,
                 const privacy::EnsembleLayout& layout, const privacy::DpFedAvgConfig& fc,
                 std::uint64_t stream, ClientWork& cw) {
  const std::size_t n = start.size();
  cw.theta = start;
  cw.grad.resize(n);
  cw.delta.resize(n);
  cw.clipped = false;
  nn::Adam adam;
  const bool use_adam = cfg.local_optimizer == "adam";
  if (use_adam) adam = nn::Adam(n, nn::AdamConfig{cfg.lr});
  Rng rng(stream);
  const std::size_t len = t.unit_size(u);
  cw.order.resize(len);
  for (int e = 0; e < cfg.local_epochs; ++e) {
    std::iota(cw.order.begin(), cw.order.end(), 0);
    for (std::size_t i = len - 1; i > 0; --i) std::swap(cw.order[i], cw.order[rng.below(i + 1)]);
    for (std::size_t b0 = 0; b0 < len; b0 += cfg.batch_size) {
      const std::size_t b1 = std::min(len, b0 + cfg.batch_size);
      gather(t, u, cw.order, b0, b1, cw.xb, cw.yb);
      model.loss(cw.theta.data(), cw.xb, cw.yb, cw.grad.data(), cw.w);
      if (use_adam) {
        adam.step(cw.theta, cw.grad);
      } else {
        const float lr = static_cast<float>(cfg.lr);
        for (std::size_t k = 0; k < n; ++k) cw.theta[k] -= lr * cw.grad[k];
      }
      // projection onto the clip set after every step
      for (std::size_t k = 0; k < n; ++k) cw.delta[k] = cw.theta[k] - start[k];
      const privacy::ClipResult r = privacy::ensemble_clip(cw.delta, layout, fc);
      cw.norm = r.norm;
      // a non-finite update (this unit's data drove the loss to NaN or inf): clip factor 0, the
      // client submits the zero update and stops; nothing of it reaches the sum
      if (r.non_finite) {
        cw.clipped = true;
        return;
      }
      if (r.clipped) {
        cw.clipped = true;
        for (std::size_t k = 0; k < n; ++k) cw.theta[k] = start[k] + cw.delta[k];
      }
    }
  }
}

}  // namespace

std::uint64_t client_stream(std::uint64_t seed, std::int64_t round, std::int64_t unit_id) {
  return derive_seed(seed, Domain::kMinibatch, static_cast<std::uint64_t>(round),
                     static_cast<std::uint64_t>(unit_id));
}

void check_tdp(const TdpConfig& cfg, std::size_t table_units, const ProbEnsemble& model) {
  const auto units = cfg.units > 0 ? static_cast<std::size_t>(cfg.units) : table_units;
  if (cfg.variant != "dp" && cfg.variant != "no_noise" && cfg.variant != "no_clip")
    throw ParamError(
        fmt::format("tdp_variant = '{}' must be one of dp, no_noise, no_clip", cfg.variant));
  if (cfg.variant == "dp" && !(cfg.z > 0.0))
    throw ParamError(fmt::format("tdp_z = {} must be > 0 for the dp variant", cfg.z));
  if (!(cfg.clip_norm > 0.0) || !std::isfinite(cfg.clip_norm))
    throw ParamError(fmt::format("tdp_clip_norm = {} must be > 0 and finite", cfg.clip_norm));
  if (cfg.q * static_cast<double>(units) < 1.0)
    throw ParamError(
        fmt::format("tdp_q = {} times K = {} training trajectories must be >= 1 (q K is the fixed "
                    "denominator)",
                    cfg.q, units));
  privacy::check_dp_fedavg(layout_of(model), fedavg_config(cfg, table_units));
}

double tdp_released_noise_std(const TdpConfig& cfg, std::size_t units, const ProbEnsemble& model,
                              bool secure) {
  check_tdp(cfg, units, model);
  if (cfg.variant != "dp") return 0.0;
  return privacy::DpFedAvgRound(layout_of(model), fedavg_config(cfg, units))
      .released_noise_std(secure);
}

TrainResult train_ensemble_tdp(ProbEnsemble& model, const TransitionTable& train,
                               const TransitionTable& test, const TdpConfig& cfg,
                               std::uint64_t seed, privacy::NoiseSource& source,
                               privacy::Ledger* rdp_ledger, privacy::Ledger* pld_ledger,
                               ThreadPool& pool,
                               const std::function<void(const TdpProgress&)>& on_eval,
                               privacy::ReleaseTap* tap) {
  check_tdp(cfg, train.units(), model);
  const privacy::EnsembleLayout layout = layout_of(model);
  const privacy::DpFedAvgConfig fc = fedavg_config(cfg, train.units());
  privacy::DpFedAvgRound server(layout, fc);
  server.set_tap(tap);
  const bool dp = cfg.variant == "dp";
  // secure noise is the discrete Gaussian: its event carries the bound proven for it (the
  // accountants never apply the continuous Gaussian's curve to it)
  const double z = dp ? cfg.z : 1.0;
  const privacy::DpEvent event = privacy::DpEvent::poisson_sampled(
      cfg.q, source.secure() ? privacy::DpEvent::discrete_gaussian(z)
                             : privacy::DpEvent::gaussian(z));
  std::vector<ClientWork> work;
  nn::Buffer& theta = model.buffer();
  nn::Buffer start, best = theta;
  TrainResult res;
  res.released_noise_std = dp ? server.released_noise_std(source.secure()) : 0.0;
  res.sampler_tv_per_round =
      dp ? privacy::gaussian_release_tv(server.noised_values(), source.secure()) : 0.0;
  res.best_test_mse = test_mse(model, theta.data(), test);
  double norm_sum = 0, norm_window = 0, clients_window = 0;
  std::int64_t clipped = 0, clipped_window = 0, rounds_window = 0;
  auto report = [&](std::int64_t t) {
    TdpProgress p;
    p.round = t;
    p.test_mse = test_mse(model, theta.data(), test);
    p.test_std = test_std(model, theta.data(), test);
    p.epsilon =
        dp && rdp_ledger ? rdp_ledger->spent_epsilon() : std::numeric_limits<double>::infinity();
    p.mean_norm = clients_window > 0 ? norm_window / clients_window : 0.0;
    p.clipped = clients_window > 0 ? clipped_window / clients_window : 0.0;
    p.mean_clients = rounds_window > 0 ? clients_window / rounds_window : 0.0;
    norm_window = clients_window = 0;
    clipped_window = rounds_window = 0;
    res.curve.push_back(p);
    if (p.test_mse < res.best_test_mse) {
      res.best_test_mse = p.test_mse;
      res.best_round = t;
      best = theta;
    }
    if (on_eval) on_eval(p);
  };
  std::int64_t charged = 0;  // rounds paid for on the RDP ledger
  for (std::int64_t t = 0; t < cfg.rounds; ++t) {
    if (dp && rdp_ledger && t == charged) {
      // the rounds up to the next evaluation (the next release of test figures), charged before
      // the first of them; with a budget, only the rounds it affords (as round-by-round charges
      // would stop); a persistent ledger makes each block durable before it runs
      const std::int64_t to_eval =
          cfg.eval_every > 0 ? cfg.eval_every - t % cfg.eval_every : cfg.rounds - t;
      std::int64_t block = std::min(to_eval, cfg.rounds - t);
      if (!rdp_ledger->can_afford(event, block)) block = rdp_ledger->affordable_count(event, block);
      if (block < 1) {
        res.stopped_by_budget = true;
        break;
      }
      rdp_ledger->charge(event, block, fmt::format("tdp rounds {}-{}", t + 1, t + block));
      charged = t + block;
    }
    if (dp && rdp_ledger) {
      if (pld_ledger && !res.pld_unbounded && t % cfg.pld_block == 0) {
        try {
          pld_ledger->charge(event, std::min(cfg.pld_block, cfg.rounds - t), "tdp rounds ahead");
        } catch (const BudgetExceeded&) {
          res.pld_unbounded = true;  // beyond what PLD can bound: infinite from here on
        }
      }
    }
    const auto sample =
        privacy::poisson_sample(static_cast<std::int64_t>(train.units()), cfg.q, source);
    if (work.size() < sample.size()) work.resize(sample.size());
    start = theta;
    pool.parallel_for(sample.size(), [&](std::size_t j) {
      const auto u = static_cast<std::size_t>(sample[j]);
      local_train(model, train, u, start, cfg, layout, fc, client_stream(seed, t, train.user[u]),
                  work[j]);
    });
    server.begin();
    for (std::size_t j = 0; j < sample.size(); ++j) {
      server.add(work[j].delta);
      norm_sum += work[j].norm;
      norm_window += work[j].norm;
      clipped += work[j].clipped;
      clipped_window += work[j].clipped;
    }
    server.release(theta, dp ? &source : nullptr);
    res.clients += static_cast<std::int64_t>(sample.size());
    clients_window += static_cast<double>(sample.size());
    ++rounds_window;
    res.rounds = t + 1;
    if (cfg.eval_every > 0 && res.rounds % cfg.eval_every == 0) report(res.rounds);
  }
  if (res.curve.empty() || res.curve.back().round != res.rounds) report(res.rounds);
  res.final_test_mse = res.curve.back().test_mse;
  res.mean_norm = res.clients > 0 ? norm_sum / static_cast<double>(res.clients) : 0.0;
  res.clipped_fraction =
      res.clients > 0 ? static_cast<double>(clipped) / static_cast<double>(res.clients) : 0.0;
  if (cfg.select_best) theta = best;
  return res;
}

TrainResult train_ensemble_pooled(ProbEnsemble& model, const TransitionTable& train,
                                  const TransitionTable& test, const PooledConfig& cfg,
                                  std::uint64_t seed,
                                  const std::function<void(const TdpProgress&)>& on_eval) {
  if (cfg.batch_size < 1 || cfg.max_epochs < 1 || cfg.patience < 1 || !(cfg.lr > 0.0))
    throw ParamError("pooled model training: batch_size, max_epochs, patience >= 1, lr > 0");
  nn::Buffer& theta = model.buffer();
  nn::Adam opt(theta.size(), nn::AdamConfig{cfg.lr});
  nn::Buffer grad(theta.size()), best = theta;
  EnsembleWork w;
  Mat xb, yb;
  const std::size_t n = train.transitions();
  std::vector<std::size_t> order(n);
  TrainResult res;
  res.best_test_mse = test_mse(model, theta.data(), test);
  int since = 0;
  for (int epoch = 1; epoch <= cfg.max_epochs && since < cfg.patience; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    Rng rng(derive_seed(seed, Domain::kMinibatch, static_cast<std::uint64_t>(epoch)));
    for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    for (std::size_t b0 = 0; b0 < n; b0 += cfg.batch_size) {
      const auto len = static_cast<Eigen::Index>(std::min<std::size_t>(cfg.batch_size, n - b0));
      xb.resize(train.x.rows(), len);
      yb.resize(train.y.rows(), len);
      for (Eigen::Index j = 0; j < len; ++j) {
        xb.col(j) = train.x.col(static_cast<Eigen::Index>(order[b0 + j]));
        yb.col(j) = train.y.col(static_cast<Eigen::Index>(order[b0 + j]));
      }
      model.loss(theta.data(), xb, yb, grad.data(), w);
      opt.step(theta, grad);
    }
    TdpProgress p;
    p.round = epoch;
    p.test_mse = test_mse(model, theta.data(), test);
    p.test_std = test_std(model, theta.data(), test);
    p.epsilon = std::numeric_limits<double>::infinity();
    res.curve.push_back(p);
    res.rounds = epoch;
    // the MOPO code's rule: an improvement counts when it is more than 1% relative
    if ((res.best_test_mse - p.test_mse) / res.best_test_mse > 0.01) {
      res.best_test_mse = p.test_mse;
      res.best_round = epoch;
      best = theta;
      since = 0;
    } else {
      ++since;
    }
    if (on_eval) on_eval(p);
  }
  res.final_test_mse = res.curve.empty() ? res.best_test_mse : res.curve.back().test_mse;
  theta = best;
  return res;
}

double test_mse(const ProbEnsemble& model, const float* params, const TransitionTable& t) {
  EnsembleWork w;
  std::vector<double> m(model.members());
  double total = 0;
  const auto n = t.x.cols();
  constexpr Eigen::Index kChunk = 8192;
  for (Eigen::Index c = 0; c < n; c += kChunk) {
    const Eigen::Index len = std::min(kChunk, n - c);
    model.mse(params, t.x.middleCols(c, len), t.y.middleCols(c, len), m, w);
    for (double v : m) total += v * static_cast<double>(len);
  }
  return total / (static_cast<double>(n) * model.members());
}

}  // namespace dprl::algos::model_based

namespace dprl::algos::model_based {

double test_std(const ProbEnsemble& model, const float* params, const TransitionTable& t) {
  EnsembleWork w;
  Mat mean, lv;
  double total = 0;
  const auto n = t.x.cols();
  constexpr Eigen::Index kChunk = 8192;
  for (Eigen::Index c = 0; c < n; c += kChunk) {
    const Eigen::Index len = std::min(kChunk, n - c);
    model.predict(params, t.x.middleCols(c, len), mean, lv, w);
    total += static_cast<double>((0.5f * lv.array()).exp().sum());
  }
  return total / (static_cast<double>(n) * model.members() * model.out_dim());
}

}  // namespace dprl::algos::model_based
