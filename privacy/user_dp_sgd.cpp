#include "privacy/user_dp_sgd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/nn/nn_dp.hpp"
#include "privacy/rounding.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::privacy {

void UserDpSgdConfig::validate() const {
  if (!(noise_multiplier > 0.0 && noise_multiplier <= 1e6))
    throw ParamError(fmt::format("noise_multiplier = {} must be in (0, 1e6]", noise_multiplier));
  // below 1e-100 the scaled errors c_u delta_u could underflow in double, outside the relative
  // rounding bounds the sensitivity rests on
  if (!(clip_norm >= 1e-100) || !std::isfinite(clip_norm))
    throw ParamError(fmt::format("clip_norm = {} must be finite and >= 1e-100", clip_norm));
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
  if (!(accumulation_error() <= kMaxAccumulationError))
    throw ParamError(fmt::format(
        "num_users = {} with contribution = {}: the rounding allowance of the sum, {:.3g} of C, "
        "exceeds {} (user_dp_sgd.hpp); use fewer users per dataset or contribution 1",
        num_users, contribution, accumulation_error(), kMaxAccumulationError));
}

DpEvent UserDpSgdConfig::step_event() const {
  return DpEvent::poisson_sampled(sampling_rate(),
                                  discrete ? DpEvent::discrete_gaussian(noise_multiplier)
                                           : DpEvent::gaussian(noise_multiplier));
}

namespace {
// the real parameters of one net (padding excluded): its layer blocks, weights then bias
std::size_t net_values(const DpNetGrad& g) {
  std::size_t n = 0;
  for (int l = 0; l < g.shape->num_layers(); ++l)
    n += static_cast<std::size_t>(g.shape->out(l)) * (g.shape->in(l) + 1);
  return n;
}
}  // namespace

std::size_t noised_values(std::span<const DpNetGrad> nets) {
  std::size_t n = 0;
  for (const auto& g : nets) n += net_values(g);
  return n;
}

namespace {

double gamma_f64(double n) { return rounding_gamma(n, 53); }
double gamma_f32(double n) { return rounding_gamma(n, 24); }


constexpr double kSlack = 0x1.0p-40;  // covers the few roundings of the bounds themselves

}  // namespace

double UserDpSgdConfig::cancellation_ratio() const { return contribution == 1 ? 1.0 : 64.0; }

double UserDpSgdConfig::double_sum_error() const {
  // N <= m + 1 sampled users (the larger neighbour), N k summed columns per entry, plus the
  // roundings of the scaling and of the product: gamma_(N k + 2) per entry, by layer blocks and
  // Minkowski at most gamma_(N k + 2) sum_u w_u S_u <= gamma_(N k + 2) N R C for the whole vector
  const double n = static_cast<double>(num_users) + 1.0;
  return gamma_f64(n * contribution + 2.0) * n * cancellation_ratio();
}

std::int64_t UserDpSgdConfig::float_sum_cap() const {
  const double cap = std::ceil(expected_batch + 8.0 * std::sqrt(expected_batch) + 8.0);
  return static_cast<std::int64_t>(std::min(cap, static_cast<double>(num_users) + 1.0));
}

double UserDpSgdConfig::float_sum_error() const {
  // k = 1, N <= N_f users, against the exact clipped sum sum_u c_u g_u (the double path's
  // reference too, so neighbours summed in different arithmetics compare): gamma^f_(64 + J) per
  // entry relative to sum_u |s_u| |a_u| (its vector norm at most (1 + 2^-53) C per user), 2^-124
  // N per entry absolute for underflow (2^20 over at most 2^40 entries), and per user the
  // rounding toward zero itself, |s_u - c_u delta_u| < 2^-23 relative (two more float roundings)
  // or 2^-126 absolute per entry where it underflows, times |a_u| < 2^64 (a finite squared norm):
  // 2^-42 over at most 2^40 entries
  const double n = static_cast<double>(float_sum_cap());
  const double chunks = std::ceil(n / nn::kFloatSumChunk);
  return gamma_f32(nn::kFloatSumChunk + chunks + 2.0) * n * (1.0 + 0x1.0p-20) +
         n * (0x1.0p-104 + 0x1.0p-42) / clip_norm;
}

bool UserDpSgdConfig::uses_float_sums() const {
  return float_sums && contribution == 1 &&
         2.0 * float_sum_error() * (1.0 + 0x1.0p-20) <= kMaxFloatSumError &&
         static_cast<double>(float_sum_cap()) * clip_norm <= 0x1.0p100;
}

nn::SumArithmetic UserDpSgdConfig::step_arithmetic(int users) const {
  return uses_float_sums() && users <= float_sum_cap() ? nn::SumArithmetic::kFloatChunks
                                                      : nn::SumArithmetic::kDouble;
}

double UserDpSgdConfig::accumulation_error() const {
  // both neighbours' sums carry an error, each of the arithmetic its own user count picks;
  // (1 + 2^-20) covers the computed S_u in the cap, within gamma_norm of the exact one
  const double e = std::max(double_sum_error(), uses_float_sums() ? float_sum_error() : 0.0);
  return 2.0 * e * (1.0 + 0x1.0p-20);
}

double UserDpSgdConfig::sensitivity() const { return clip_norm * (1.0 + accumulation_error()); }

SecurePlan user_dp_release_plan(const UserDpSgdConfig& cfg, std::size_t noised_values,
                                bool secure) {
  const double sens = cfg.sensitivity();
  return gaussian_release_plan(cfg.noise_multiplier * sens, sens, noised_values, secure);
}

UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, double noise_sd, const GaussianRelease& release,
                                 HelperThread* helper) {
  const int k = cfg.contribution;
  const double C = cfg.clip_norm;
  const double R = cfg.cancellation_ratio();
  UserDpStepStats st;
  st.users = users;
  thread_local std::vector<double> sq, sample_sq, weights, x;
  // joint per-user squared norms over every trained network, and each transition's own squared
  // norm t_j (for the rounding bound); the longest dot product and the terms summed set gamma
  sq.assign(users, 0.0);
  sample_sq.assign(static_cast<std::size_t>(users) * k, 0.0);
  double terms = 8.0, longest = 0.0;
  if (users > 0)
    for (const auto& g : nets) {
      DPRL_CHECK(g.cache->batch == users * k);
      nn::add_group_sq_norms(*g.shape, *g.cache, k, sq, sample_sq);
      for (int l = 0; l < g.shape->num_layers(); ++l) {
        const double len = std::max(g.shape->out(l), g.shape->in(l));
        terms += static_cast<double>(k) * k + len;
        longest = std::max(longest, len);
      }
    }
  // k = 1: float sums of squares, relative with one rounding more for underflow (nn_dp.hpp);
  // (1 - gamma)^-2 <= 1 + 3 gamma here
  const double relative = 1.0 + 3.0 * gamma_f32(longest + 4.0) + gamma_f64(terms);
  // k > 1: double Gram sums, absolute in S_u^2
  const double gamma_norm = 2.0 * gamma_f64(terms);
  weights.resize(static_cast<std::size_t>(users) * k);
  double total = 0.0;
  for (int u = 0; u < users; ++u) {
    // S = sum_j |g_j| over the user's transitions: the computed |sum_j g_j|^2 is within
    // gamma S^2 of the exact one (nn_dp.hpp), so `upper` bounds the exact norm of the sum
    double S = 0.0;
    for (int j = 0; j < k; ++j) S += std::sqrt(sample_sq[static_cast<std::size_t>(u) * k + j]);
    const double upper =
        std::sqrt(k == 1 ? sq[u] * relative : sq[u] + gamma_norm * S * S) * (1.0 + kSlack);
    // g_u is the mean over the k transitions; a non-finite norm (NaN or inf loss, or a square
    // that overflows) gets the clip factor 0: the user contributes the zero vector, which is
    // inside the clip ball, so the sensitivity stays C and nothing depends on it
    const double norm = std::sqrt(sq[u]) / k;
    const bool finite = std::isfinite(upper) && std::isfinite(S);
    double c = 0.0;
    if (finite) {
      total += norm;
      if (norm > C) ++st.clipped;
      // |c g_u| <= C for the exact g_u: the factor uses the upper bound and a relative margin
      c = std::min(1.0, C * k / (upper * (1.0 + kSlack)));
      // k > 1: transitions that cancel may make S far larger than the sum's norm; the cap keeps
      // the rounding of the weighted product within R C per user (c S / k <= R C)
      if (k > 1 && S > 0.0) c = std::min(c, R * C * k / (S * (1.0 + kSlack)));
    } else {
      ++st.dropped;
    }
    for (int j = 0; j < k; ++j) weights[static_cast<std::size_t>(u) * k + j] = c / k;
  }
  st.mean_norm = users - st.dropped > 0 ? total / (users - st.dropped) : 0.0;
  // the release: the clipped sum over the real parameters (padding stays zero), in the step's
  // arithmetic (a weight 0 drops its column, so a dropped user's NaN reaches neither the sum nor the noise),
  // noised, over b
  x.resize(noised_values(nets));
  // float_sum_error's absolute term assumes at most 2^40 entries
  DPRL_CHECK(x.size() <= (std::size_t{1} << 40));
  const nn::SumArithmetic arithmetic = cfg.step_arithmetic(users);
  std::size_t pos = 0;
  for (const auto& g : nets) {
    const std::size_t n = net_values(g);
    const std::span<double> block(x.data() + pos, n);
    if (users > 0)
      nn::accumulate_grad_f64(*g.shape, *g.cache, weights, block, helper, arithmetic);
    else
      std::fill(block.begin(), block.end(), 0.0);
    pos += n;
  }
  release(x, noise_sd);
  const double inv_b = 1.0 / cfg.expected_batch;
  pos = 0;
  for (const auto& g : nets) {
    std::fill(g.grad, g.grad + g.shape->num_params(), 0.0f);
    for (int l = 0; l < g.shape->num_layers(); ++l) {
      const auto w = static_cast<std::size_t>(g.shape->out(l)) * g.shape->in(l);
      const auto o = static_cast<std::size_t>(g.shape->out(l));
      float* gw = g.grad + g.shape->weight_offset(l);
      float* gb = g.grad + g.shape->bias_offset(l);
      for (std::size_t i = 0; i < w; ++i) gw[i] = static_cast<float>(x[pos + i] * inv_b);
      pos += w;
      for (std::size_t i = 0; i < o; ++i) gb[i] = static_cast<float>(x[pos + i] * inv_b);
      pos += o;
    }
  }
  return st;
}

UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, NoiseSource& noise) {
  return user_dp_gradient(cfg, nets, users, cfg.noise_multiplier * cfg.sensitivity(),
                          [&noise](std::span<double> x, double sd) { noise.add_gaussian(x, sd); });
}

PrivacyReport user_dp_report(const UserDpReportInput& in) {
  PrivacyReport r;
  r.epsilon = in.epsilon;
  r.sampler_delta = sampler_delta(in.epsilon, static_cast<double>(in.steps) * in.sampler_tv);
  r.delta = record_delta(in.delta, r.sampler_delta);
  r.accountant = in.accountant;
  r.neighbouring = NeighbouringRelation::kAddRemove;
  r.unit = in.unit;
  r.sensitivity = fmt::format(
      "L2 C' = C (1 + beta) = {} with C = {} per sampled user (joint norm over all trained "
      "networks; beta = {:.3g} covers the rounding of both neighbours' sums, {}, and the norms "
      "are bounded from above)",
      in.cfg.sensitivity(), in.cfg.clip_norm, in.cfg.accumulation_error(),
      in.cfg.uses_float_sums()
          ? fmt::format("in float chunks for up to {} sampled users and in double for up to m + 1",
                        in.cfg.float_sum_cap())
          : std::string("in double for up to m + 1 sampled users"));
  r.covers = in.covers;
  r.formal = !in.seeded;
  r.noise_source = in.noise_source;
  r.reproducible_noise = in.seeded;
  nlohmann::ordered_json d;
  d["mechanism"] = "user-level DP-SGD: Poisson-sampled users, per-user clipping, Gaussian noise";
  d["relation"] =
      fmt::format("add or remove one {} together with all the data it contributed", in.unit);
  d["event"] = nlohmann::json::parse(dpsgd_event({.noise_multiplier = in.cfg.noise_multiplier,
                                                  .sampling_rate = in.cfg.sampling_rate(),
                                                  .steps = std::max<std::int64_t>(in.steps, 1),
                                                  .discrete = in.cfg.discrete})
                                         .to_json());
  if (in.cfg.discrete)
    d["accounting"] =
        "Poisson-subsampled discrete Gaussian: RDP bound of Zhu and Wang 2019 (Thm. 6) on the "
        "discrete Gaussian's proven RDP a/(2 z^2); a pld accountant reports this bound too, as it "
        "has no proven curve for the discrete Gaussian";
  d["noise_multiplier"] = in.cfg.noise_multiplier;
  d["noise_sd_on_sum"] = in.noise_sd;
  d["clip_norm"] = in.cfg.clip_norm;
  d["sensitivity"] = in.cfg.sensitivity();
  d["rounding_allowance"] = in.cfg.accumulation_error();
  d["sum_arithmetic"] = in.cfg.uses_float_sums() ? "float chunks, double above the cap" : "double";
  if (in.cfg.uses_float_sums()) d["float_sum_cap"] = in.cfg.float_sum_cap();
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
