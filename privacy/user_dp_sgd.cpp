#include "privacy/user_dp_sgd.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/nn/nn_dp.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::privacy {

void UserDpSgdConfig::validate() const {
  if (!(noise_multiplier > 0.0 && noise_multiplier <= 1e6))
    throw ParamError(fmt::format("noise_multiplier = {} must be in (0, 1e6]", noise_multiplier));
  if (!(clip_norm > 0.0) || !std::isfinite(clip_norm))
    throw ParamError(fmt::format("clip_norm = {} must be finite and > 0", clip_norm));
  if (num_users < 1) throw ParamError(fmt::format("num_users = {} must be >= 1", num_users));
  if (!(expected_batch > 0.0) || !std::isfinite(expected_batch))
    throw ParamError(fmt::format("expected batch b = {} must be finite and > 0", expected_batch));
  const double q = sampling_rate();
  if (!(q > 0.0 && q <= 1.0))
    throw ParamError(fmt::format(
        "sampling rate q = b / m = {} / {} = {} must be in (0, 1] (batch larger than the users)",
        expected_batch, num_users, q));
  if (contribution < 1 || contribution > 1000000)
    throw ParamError(fmt::format("contribution = {} must be in [1, 1000000]", contribution));
}

DpEvent UserDpSgdConfig::step_event() const {
  return DpEvent::poisson_sampled(sampling_rate(),
                                  discrete ? DpEvent::discrete_gaussian(noise_multiplier)
                                           : DpEvent::gaussian(noise_multiplier));
}

std::size_t noised_values(std::span<const DpNetGrad> nets) {
  std::size_t n = 0;
  for (const auto& g : nets)
    for (int l = 0; l < g.shape->num_layers(); ++l)
      n += static_cast<std::size_t>(g.shape->out(l)) * (g.shape->in(l) + 1);
  return n;
}

UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, double noise_sd, const GaussianRelease& release) {
  const int k = cfg.contribution;
  const double C = cfg.clip_norm;
  UserDpStepStats st;
  st.users = users;
  thread_local std::vector<double> sq;
  thread_local std::vector<float> weights;
  thread_local std::vector<double> x;
  // joint per-user squared norms over every trained network
  sq.assign(users, 0.0);
  if (users > 0)
    for (const auto& g : nets) {
      DPRL_CHECK(g.cache->batch == users * k);
      nn::add_group_sq_norms(*g.shape, *g.cache, k, sq);
    }
  weights.resize(static_cast<std::size_t>(users) * k);
  thread_local std::vector<int> dropped;
  dropped.clear();
  double total = 0.0;
  for (int u = 0; u < users; ++u) {
    // sq holds |sum_j g_j|^2 over the user's k transitions; g_u is their mean
    const double norm = std::sqrt(sq[u]) / k;
    // the user's mean over its k transitions, clipped; a non-finite norm (NaN or inf loss, or a
    // square that overflows float) gets the clip factor 0: the user contributes the zero vector,
    // which is inside the clip ball, so the sensitivity stays C and nothing depends on it
    const bool finite = std::isfinite(norm);
    if (!finite) dropped.push_back(u);
    if (finite) total += norm;
    if (finite && norm > C) ++st.clipped;
    const float w = finite ? static_cast<float>(std::min(1.0, C / (norm + 1e-6)) / k) : 0.0f;
    for (int j = 0; j < k; ++j) weights[static_cast<std::size_t>(u) * k + j] = w;
  }
  st.dropped = static_cast<int>(dropped.size());
  st.mean_norm = users - st.dropped > 0 ? total / (users - st.dropped) : 0.0;
  thread_local nn::MlpCache clean;
  for (const auto& g : nets) {
    std::fill(g.grad, g.grad + g.shape->num_params(), 0.0f);
    if (users == 0) continue;
    if (dropped.empty()) {
      nn::accumulate_grad(*g.shape, *g.cache, weights, g.grad);
      continue;
    }
    // 0 * NaN and 0 * inf are NaN: a dropped user's columns are zeroed in a copy of the cache, so
    // its weight 0 yields exactly zero and no NaN reaches the sum, the noise or the optimiser
    clean = *g.cache;
    for (int u : dropped)
      for (int l = 0; l < g.shape->num_layers(); ++l) {
        clean.a[l].middleCols(static_cast<Eigen::Index>(u) * k, k).setZero();
        clean.delta[l].middleCols(static_cast<Eigen::Index>(u) * k, k).setZero();
      }
    nn::accumulate_grad(*g.shape, clean, weights, g.grad);
  }
  // the release: the clipped sum over the real parameters (padding stays zero), noised, over b
  x.resize(noised_values(nets));
  auto blocks = [&](auto&& f) {
    std::size_t pos = 0;
    for (const auto& g : nets)
      for (int l = 0; l < g.shape->num_layers(); ++l) {
        const auto w = static_cast<std::size_t>(g.shape->out(l)) * g.shape->in(l);
        f(g.grad + g.shape->weight_offset(l), w, pos);
        pos += w;
        f(g.grad + g.shape->bias_offset(l), static_cast<std::size_t>(g.shape->out(l)), pos);
        pos += static_cast<std::size_t>(g.shape->out(l));
      }
  };
  blocks([&](const float* src, std::size_t n, std::size_t pos) {
    for (std::size_t i = 0; i < n; ++i) x[pos + i] = src[i];
  });
  release(x, noise_sd);
  const double inv_b = 1.0 / cfg.expected_batch;
  blocks([&](float* dst, std::size_t n, std::size_t pos) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(x[pos + i] * inv_b);
  });
  return st;
}

UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, NoiseSource& noise) {
  return user_dp_gradient(cfg, nets, users, cfg.noise_multiplier * cfg.clip_norm,
                          [&noise](std::span<double> x, double sd) { noise.add_gaussian(x, sd); });
}

PrivacyReport user_dp_report(const UserDpReportInput& in) {
  PrivacyReport r;
  r.epsilon = in.epsilon;
  r.sampler_delta = sampler_delta(in.epsilon, static_cast<double>(in.steps) * in.sampler_tv);
  r.delta = in.delta + r.sampler_delta;
  r.accountant = in.accountant;
  r.neighbouring = "add-remove";
  r.unit = in.unit;
  r.sensitivity = fmt::format("L2 C = {} per sampled user (joint norm over all trained networks)",
                              in.cfg.clip_norm);
  if (in.layers > 0) {
    // the float accumulation's worst case (user_dp_sgd.hpp), at N = 2b sampled users
    const double N = std::ceil(2.0 * in.cfg.expected_batch);
    const double u = std::ldexp(1.0, -24), g = (N + 2) * u / (1 - (N + 2) * u);
    r.sensitivity += in.cfg.contribution == 1
                         ? fmt::format(
                               "; float accumulation adds at most C 2 sqrt(L) N gamma_(N+2) for N "
                               "sampled users (L = {}; {:.2g} C at N = 2b = {})",
                               in.layers, 2 * std::sqrt(double(in.layers)) * N * g, N)
                         : "; float accumulation error not bounded by C alone (contribution > 1)";
  }
  r.covers = in.covers;
  r.formal = !in.seeded;
  r.noise_source = in.noise_source;
  r.reproducible_noise = in.seeded;
  nlohmann::ordered_json d;
  d["mechanism"] = "user-level DP-SGD: Poisson-sampled users, per-user clipping, Gaussian noise";
  d["relation"] =
      fmt::format("add or remove one {} together with all the data it contributed", in.unit);
  d["event"] = nlohmann::json::parse(dpsgd_event(in.cfg.noise_multiplier, in.cfg.sampling_rate(),
                                                 std::max<std::int64_t>(in.steps, 1),
                                                 in.cfg.discrete)
                                         .to_json());
  if (in.cfg.discrete)
    d["accounting"] =
        "Poisson-subsampled discrete Gaussian: RDP bound of Zhu and Wang 2019 (Thm. 6) on the "
        "discrete Gaussian's proven RDP a/(2 z^2); a pld accountant reports this bound too, as it "
        "has no proven curve for the discrete Gaussian";
  d["noise_multiplier"] = in.cfg.noise_multiplier;
  d["noise_sd_on_sum"] = in.noise_sd;
  d["clip_norm"] = in.cfg.clip_norm;
  d["expected_batch"] = in.cfg.expected_batch;
  d["num_users"] = in.cfg.num_users;
  d["sampling_rate"] = in.cfg.sampling_rate();
  d["contribution"] = in.cfg.contribution;
  d["steps"] = in.steps;
  if (in.seeded)
    d["note"] =
        "seeded noise: the run is reproducible and anyone holding the seed can regenerate the "
        "noise and the user sampling, so the figures are not a formal guarantee";
  if (!in.extra_json.empty()) {
    const auto extra = nlohmann::ordered_json::parse(in.extra_json);
    for (const auto& [key, value] : extra.items()) d[key] = value;
  }
  r.details_json = d.dump();
  return r;
}

}  // namespace dprl::privacy
