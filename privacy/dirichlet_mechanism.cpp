#include "privacy/dirichlet_mechanism.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy {

void DirichletParams::check() const {
  if (eta * actions > 1.0 + 1e-12) {
    throw ParamError(
        fmt::format("dirichlet.eta = {} must be <= 1/actions = {}", eta, 1.0 / actions));
  }
  if (tau * actions >= 1.0) {
    throw ParamError(
        fmt::format("dirichlet.tau = {} must be < 1/actions = {}", tau, 1.0 / actions));
  }
}

double dirichlet_epsilon(const DirichletParams& p0) {
  DirichletParams p = p0;
  validate_params(p, "dirichlet");
  const double m = p.actions;
  return std::sqrt(m) * p.lipschitz * p.adjacency * p.k * std::log(1.0 / p.tau) +
         (m - 1.0) * std::lgamma(p.k * p.eta) + std::lgamma(p.k * (1.0 - (m - 1.0) * p.eta)) -
         m * std::lgamma(p.k / m);
}

DeltaEstimate dirichlet_delta_mc(const DirichletParams& p0, std::int64_t samples,
                                 NoiseSource& noise, double beta) {
  DirichletParams p = p0;
  validate_params(p, "dirichlet");
  if (samples < 1) throw ParamError(fmt::format("samples = {} must be >= 1", samples));
  if (!(beta > 0.0 && beta < 1.0))
    throw ParamError(fmt::format("beta = {} must be in (0, 1)", beta));
  const int m = p.actions;
  std::vector<double> alpha(m, p.k * p.eta), x(m);
  alpha[m - 1] = p.k * (1.0 - (m - 1) * p.eta);
  std::int64_t outside = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    noise.dirichlet(alpha, x);
    if (*std::min_element(x.begin(), x.end()) < p.tau) ++outside;
  }
  DeltaEstimate d{};
  d.samples = samples;
  d.estimate = static_cast<double>(outside) / static_cast<double>(samples);
  d.half_width = std::sqrt(std::log(2.0 / beta) / (2.0 * static_cast<double>(samples)));
  d.lower = std::max(0.0, d.estimate - d.half_width);
  d.upper = std::min(1.0, d.estimate + d.half_width);
  d.confidence = 1.0 - beta;
  return d;
}

double dirichlet_delta_exact_m2(double k, double eta, double tau) {
  // the continued fraction of I_x(a, b) needs O(sqrt(a + b)) terms (10^4 at most)
  if (!(k > 0.0 && k <= 1e8)) {
    throw ParamError(
        fmt::format("dirichlet: k = {} must be in (0, 1e8] for the exact Beta CDF", k));
  }
  if (!(eta > 0.0 && eta < 1.0) || !(tau > 0.0 && tau < 0.5)) {
    throw ParamError(fmt::format(
        "dirichlet: eta = {} must be in (0, 1) and tau = {} in (0, 0.5) for m = 2", eta, tau));
  }
  // x1 ~ Beta(k eta, k (1 - eta)); inside Delta_{2,tau} iff tau <= x1 <= 1 - tau
  const double a = k * eta, b = k * (1.0 - eta);
  const double d =
      1.0 - (math::incomplete_beta(a, b, 1.0 - tau) - math::incomplete_beta(a, b, tau));
  if (std::isnan(d)) throw ParamError(fmt::format("dirichlet: exact delta is NaN at k = {}", k));
  return std::clamp(d, 0.0, 1.0);  // rounding can leave [0, 1] by an ulp or so
}

double concentration_radius(double k, double beta) {
  if (!(k > 0.0)) throw ParamError(fmt::format("k = {} must be > 0", k));
  if (!(beta > 0.0 && beta < 1.0))
    throw ParamError(fmt::format("beta = {} must be in (0, 1)", beta));
  return std::sqrt(std::log(1.0 / beta) / (2.0 * (k + 1.0)));
}

DirichletMechanism::DirichletMechanism(DirichletParams p) : p_(p) {
  epsilon_ = dirichlet_epsilon(p_);
}

void DirichletMechanism::release(std::span<const double> pi, std::span<double> out,
                                 NoiseSource& noise) const {
  if (pi.size() != static_cast<std::size_t>(p_.actions) || out.size() != pi.size()) {
    throw ParamError(fmt::format("dirichlet release: policy has {} entries, actions = {}",
                                 pi.size(), p_.actions));
  }
  double sum = 0.0;
  for (double v : pi) {
    if (!std::isfinite(v) || v < p_.eta - 1e-12) {
      throw ParamError(fmt::format(
          "dirichlet release: policy entry {} must be finite and >= eta = {}", v, p_.eta));
    }
    sum += v;
  }
  if (std::fabs(sum - 1.0) > 1e-9) {
    throw ParamError(fmt::format("dirichlet release: policy sums to {}, must sum to 1", sum));
  }
  std::vector<double> alpha(pi.begin(), pi.end());
  for (double& a : alpha) a *= p_.k;
  noise.dirichlet(alpha, out);
}

DirichletReport dirichlet_report(const DirichletParams& p, std::int64_t samples,
                                 std::uint64_t seed) {
  if (samples < 1) throw ParamError(fmt::format("samples = {} must be >= 1", samples));
  if (p.actions > kDirichletMaxActions)
    throw ParamError(
        fmt::format("actions = {} must be at most {}", p.actions, kDirichletMaxActions));
  const double draws = static_cast<double>(samples) * p.actions;
  if (draws > kDirichletMaxDraws)
    throw ParamError(fmt::format(
        "samples = {} x actions = {} is {:g} gamma draws; at most {:g} (hours of CPU beyond)",
        samples, p.actions, draws, kDirichletMaxDraws));
  DirichletReport r;
  r.epsilon = dirichlet_epsilon(p);
  auto noise = make_seeded_noise(seed, 0, 0);
  r.delta = dirichlet_delta_mc(p, samples, *noise);
  r.delta_exact = p.actions == 2 ? dirichlet_delta_exact_m2(p.k, p.eta, p.tau) : NAN;
  r.noise_source = noise->name();
  return r;
}

std::string dirichlet_report_json(const DirichletReport& r) {
  nlohmann::ordered_json j{{"epsilon", json_number(r.epsilon)},
                           {"delta", r.delta.estimate},
                           {"delta_ci", {r.delta.lower, r.delta.upper}},
                           {"delta_upper", r.delta.upper},
                           {"confidence", r.delta.confidence},
                           {"samples", r.delta.samples},
                           {"noise_source", r.noise_source}};
  if (!std::isnan(r.delta_exact)) j["delta_exact"] = r.delta_exact;
  return j.dump();
}

}  // namespace dprl::privacy
