#include "privacy/one_run_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "engine/nn/nn_dp.hpp"
#include "engine/rng.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/root_finding.hpp"

namespace dprl::privacy::audit {

namespace {

// log P(Binomial(r, q) = k), 0 < q < 1
double log_binom_pmf(std::int64_t r, std::int64_t k, double log_q, double log_1q) {
  return std::lgamma(double(r) + 1.0) - std::lgamma(double(k) + 1.0) -
         std::lgamma(double(r - k) + 1.0) + double(k) * log_q + double(r - k) * log_1q;
}

}  // namespace

double one_run_p_value(std::int64_t m, std::int64_t r, std::int64_t v, double epsilon,
                       double delta) {
  if (m < 1) throw ParamError(fmt::format("one-run audit: canaries m = {} must be >= 1", m));
  if (!(0 <= v && v <= r && r <= m))
    throw ParamError(fmt::format("one-run audit: need 0 <= v = {} <= r = {} <= m = {}", v, r, m));
  if (!(epsilon >= 0.0) || std::isinf(epsilon))
    throw ParamError(fmt::format("one-run audit: epsilon = {} must be finite and >= 0", epsilon));
  if (!(delta >= 0.0 && delta <= 1.0))
    throw ParamError(fmt::format("one-run audit: delta = {} must be in [0, 1]", delta));
  if (v == 0) return 1.0;
  // q = e^eps / (1 + e^eps) in logs: log q = -log1p(e^-eps), log(1 - q) = -eps + log q
  const double log_q = -std::log1p(std::exp(-epsilon));
  const double log_1q = -epsilon + log_q;
  std::vector<double> pmf(static_cast<std::size_t>(r) + 1);
  for (std::int64_t k = 0; k <= r; ++k) pmf[k] = std::exp(log_binom_pmf(r, k, log_q, log_1q));
  // tail P(B >= v), summed from the small end for accuracy
  double tail = 0.0;
  for (std::int64_t k = r; k >= v; --k) tail += pmf[k];
  double alpha = 0.0, window = 0.0;  // window = P(v - i <= B < v)
  for (std::int64_t i = 1; i <= v; ++i) {
    window += pmf[v - i];
    alpha = std::max(alpha, window / double(i));
  }
  return std::min(1.0, tail + 2.0 * double(m) * delta * alpha);
}

double poisson_llr(double y, double shift, double sd, double q) {
  const double a = (y * shift - 0.5 * shift * shift) / (sd * sd);
  if (q >= 1.0) return a;
  // log(1 - q + q e^a): factor out e^a when it dominates
  if (a > 0.0) return a + std::log(q + (1.0 - q) * std::exp(-a));
  return std::log1p(q * std::expm1(a));
}

OneRunTally one_run_tally(std::span<const double> scores, std::span<const char> in,
                          std::int64_t guesses, double delta, double confidence) {
  const auto m = static_cast<std::int64_t>(scores.size());
  if (scores.size() != in.size())
    throw ParamError(
        fmt::format("one-run audit: {} scores for {} canaries", scores.size(), in.size()));
  for (const double s : scores)
    if (std::isnan(s)) throw DataError("one-run audit: a canary score is NaN");
  const std::int64_t r = guesses > 0 ? guesses : m / 5;
  if (r > m)
    throw ParamError(fmt::format("one-run audit: guesses = {} exceed the canaries {}", r, m));
  std::vector<std::int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return scores[a] > scores[b]; });
  OneRunTally t;
  t.guesses = r;
  for (std::int64_t i = 0; i < r / 2; ++i) t.correct += in[order[i]] ? 1 : 0;
  for (std::int64_t i = 0; i < r - r / 2; ++i) t.correct += in[order[m - 1 - i]] ? 0 : 1;
  t.epsilon_lower = m > 0 ? epsilon_lower_one_run(m, r, t.correct, delta, confidence) : 0.0;
  return t;
}

double epsilon_lower_one_run(std::int64_t m, std::int64_t r, std::int64_t v, double delta,
                             double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw ParamError(fmt::format("one-run audit: confidence = {} must be in (0, 1)", confidence));
  const double level = 1.0 - confidence;
  // the p-value increases with epsilon: find the largest epsilon still rejected
  if (one_run_p_value(m, r, v, 0.0, delta) >= level) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (one_run_p_value(m, r, v, hi, delta) < level) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e3) return lo;  // every guess right with r huge: cap the search
  }
  // p(lo) < level <= p(hi): bisect to 1e-9 and return the lower end (still rejected)
  const auto rejected = [&](double eps) {
    return one_run_p_value(m, r, v, eps, delta) < level ? 1.0 : -1.0;
  };
  return find_boundary(rejected, lo, hi, {.rel_tol = 0.0, .abs_tol = 1e-9}).lo;
}

namespace {

void validate(const DpSgdAuditParams& p) {
  if (!p.white_box) throw ParamError("--white-box: only the white-box audit is implemented");
  if (p.canaries < 2 || p.canaries > 1000000)
    throw ParamError(fmt::format("--canaries = {} must be in [2, 1e6]", p.canaries));
  if (!(p.noise_multiplier > 0.0) || !std::isfinite(p.noise_multiplier))
    throw ParamError(
        fmt::format("--noise-multiplier = {} must be finite and > 0", p.noise_multiplier));
  if (p.steps < 1 || p.steps > 100000)
    throw ParamError(fmt::format("--steps = {} must be in [1, 1e5]", p.steps));
  if (p.examples < 1 || p.examples > 100000)
    throw ParamError(fmt::format("--examples = {} must be in [1, 1e5]", p.examples));
  if (p.guesses < 0 || p.guesses > p.canaries)
    throw ParamError(fmt::format("--guesses = {} must be in [0, canaries]", p.guesses));
  if (!(p.delta >= 0.0 && p.delta < 1.0))
    throw ParamError(fmt::format("--delta = {} must be in [0, 1)", p.delta));
  if (!(p.confidence > 0.0 && p.confidence < 1.0))
    throw ParamError(fmt::format("--confidence = {} must be in (0, 1)", p.confidence));
  if (!std::isnan(p.claim_epsilon) && !(p.claim_epsilon >= 0.0 && std::isfinite(p.claim_epsilon)))
    throw ParamError(fmt::format("--claim-epsilon = {} must be finite and >= 0", p.claim_epsilon));
  if (p.mis_specify != "none" && p.mis_specify != "halve-noise" &&
      p.mis_specify != "double-sensitivity")
    throw ParamError(fmt::format("--mis-specify = {} is unknown (halve-noise, double-sensitivity)",
                                 p.mis_specify));
  if (p.delta == 0.0 && std::isnan(p.claim_epsilon))
    throw ParamError("--delta must be > 0 for the Gaussian accounting of DP-SGD");
}

// The audited task: n examples (x: n x P, row-major) of a linear regression in P >= m dimensions,
// and each canary's coin (in[j]: canary j's gradient enters every step).
struct AuditTask {
  std::size_t P = 0, n = 0;
  std::vector<float> x, y;
  std::vector<char> in;
  std::int64_t included = 0;
};

// the task and the canaries' coins, each from its own derived stream
AuditTask make_task(const DpSgdAuditParams& p) {
  const std::int64_t m = p.canaries;
  AuditTask t;
  t.P = static_cast<std::size_t>(std::max<std::int64_t>(m, 16));
  t.n = static_cast<std::size_t>(p.examples);
  const std::size_t P = t.P, n = t.n;
  Rng data_rng(derive_seed(p.seed, Domain::kDataset, 0));
  Rng coin_rng(derive_seed(p.seed, Domain::kAlgo, 1));
  t.x.resize(n * P);
  t.y.resize(n);
  std::vector<float> w_star(P);
  nn::fill_standard_normal(data_rng, w_star);
  nn::fill_standard_normal(data_rng, t.x);
  const float inv_sqrt_p = 1.0f / std::sqrt(float(P));
  for (float& e : t.x) e *= inv_sqrt_p;
  std::vector<float> eps_y(n);
  nn::fill_standard_normal(data_rng, eps_y);
  for (std::size_t i = 0; i < n; ++i) {
    t.y[i] = std::inner_product(w_star.begin(), w_star.end(), t.x.begin() + i * P, 0.0f) +
             0.1f * eps_y[i];
  }
  t.in.resize(static_cast<std::size_t>(m));
  for (auto& b : t.in) {
    b = (coin_rng.next_u64() >> 63) != 0;
    t.included += b;
  }
  return t;
}

// Full-batch DP-SGD on the task with the included canaries' gradients (canary_norm on their own
// coordinate) and noise z_run: the final weights w and the summed noisy gradient sums.
void run_dpsgd(const DpSgdAuditParams& p, const AuditTask& t, double z_run, double canary_norm,
               std::vector<float>& w, std::vector<double>& sum) {
  const std::size_t P = t.P, n = t.n;
  const double clip = 1.0;
  Rng noise_rng(derive_seed(p.seed, Domain::kDpNoise, 0));
  w.assign(P, 0.0f);
  sum.assign(P, 0.0);
  std::vector<float> grad(P), resid(n), sq(n), factors(n);
  nn::Buffer scratch;
  const nn::NormalFill fill = [&noise_rng](std::span<float> out) {
    nn::fill_standard_normal(noise_rng, out);
  };
  const float lr = 0.5f / float(n);
  for (std::int64_t s = 0; s < p.steps; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      const float* xi = t.x.data() + i * P;
      resid[i] = std::inner_product(w.begin(), w.end(), xi, 0.0f) - t.y[i];
      const float xx = std::inner_product(xi, xi + P, xi, 0.0f);
      sq[i] = resid[i] * resid[i] * xx;  // |g_i|^2 = r_i^2 |x_i|^2
    }
    nn::clip_factors(sq, clip, factors);
    std::fill(grad.begin(), grad.end(), 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      const float c = factors[i] * resid[i];
      const float* xi = t.x.data() + i * P;
      for (std::size_t k = 0; k < P; ++k) grad[k] += c * xi[k];
    }
    for (std::int64_t j = 0; j < p.canaries; ++j) {
      if (t.in[j]) grad[j] += static_cast<float>(canary_norm);
    }
    nn::add_gaussian_noise(grad, z_run * clip, fill, scratch);
    for (std::size_t k = 0; k < P; ++k) {
      sum[k] += grad[k];
      w[k] -= lr * grad[k];
    }
  }
}

}  // namespace

std::int64_t correct_guesses(std::span<const char> in, std::span<const double> score,
                             std::int64_t r) {
  const auto m = static_cast<std::int64_t>(in.size());
  const std::int64_t k_in = r / 2, k_out = r - r / 2;
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return score[a] > score[b]; });
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < k_in; ++i) correct += in[order[i]] ? 1 : 0;
  for (std::int64_t i = 0; i < k_out; ++i) correct += in[order[m - 1 - i]] ? 0 : 1;
  return correct;
}

DpSgdAuditReport audit_dpsgd(const DpSgdAuditParams& p) {
  validate(p);
  const std::int64_t m = p.canaries;
  const double clip = 1.0;
  const double z_run =
      p.mis_specify == "halve-noise" ? 0.5 * p.noise_multiplier : p.noise_multiplier;
  const double canary_norm = p.mis_specify == "double-sensitivity" ? 2.0 * clip : clip;
  const AuditTask t = make_task(p);
  std::vector<float> w;
  std::vector<double> sum;
  run_dpsgd(p, t, z_run, canary_norm, w, sum);
  const std::int64_t r = p.guesses > 0 ? p.guesses : m / 5;
  const std::int64_t correct = correct_guesses(t.in, sum, r);

  double loss = 0.0;
  for (std::size_t i = 0; i < t.n; ++i) {
    const float ri = std::inner_product(w.begin(), w.end(), t.x.begin() + i * t.P, 0.0f) - t.y[i];
    loss += double(ri) * ri;
  }

  DpSgdAuditReport rep;
  rep.epsilon_claimed =
      std::isnan(p.claim_epsilon)
          ? gaussian_epsilon(p.noise_multiplier / std::sqrt(double(p.steps)), p.delta)
          : p.claim_epsilon;
  rep.epsilon_lower = epsilon_lower_one_run(m, r, correct, p.delta, p.confidence);
  rep.refuted = rep.epsilon_lower > rep.epsilon_claimed;
  rep.included = t.included;
  rep.guesses = r;
  rep.correct = correct;
  rep.final_loss = loss / double(t.n);
  return rep;
}

std::string dpsgd_audit_json(const DpSgdAuditParams& p, const DpSgdAuditReport& r) {
  return nlohmann::ordered_json{{"mode", "white-box"},
                                {"mis_specify", p.mis_specify},
                                {"epsilon_claimed", json_number(r.epsilon_claimed)},
                                {"epsilon_lower", json_number(r.epsilon_lower)},
                                {"delta", p.delta},
                                {"confidence", p.confidence},
                                {"refuted", r.refuted},
                                {"canaries", p.canaries},
                                {"included", r.included},
                                {"guesses", r.guesses},
                                {"correct", r.correct},
                                {"steps", p.steps},
                                {"noise_multiplier", p.noise_multiplier},
                                {"seed", p.seed},
                                {"final_loss", r.final_loss}}
      .dump();
}

}  // namespace dprl::privacy::audit
