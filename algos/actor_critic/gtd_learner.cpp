#include "algos/actor_critic/gtd_learner.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "algos/actor_critic/actor_critic.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/release_tap.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {
namespace {

constexpr double kMaxDouble = std::numeric_limits<double>::max();

// pi = softmax(pref), the max subtracted first
void softmax_of(std::span<const double> pref, std::span<double> pi) {
  const std::size_t n = pi.size();
  double mx = -INFINITY;
  for (std::size_t a = 0; a < n; ++a) mx = std::max(mx, pref[a]);
  double z = 0;
  for (std::size_t a = 0; a < n; ++a) z += (pi[a] = std::exp(pref[a] - mx));
  for (std::size_t a = 0; a < n; ++a) pi[a] /= z;
}

double norm2(std::span<const double> x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

}  // namespace

double cosine_similarity(std::span<const double> a, std::span<const double> b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : NAN;
}

double median_abs(std::span<const double> x, const std::vector<int>& support, bool all,
                  std::vector<double>& scratch) {
  scratch.clear();
  if (all) {
    for (double v : x) scratch.push_back(std::fabs(v));
  } else {
    for (int i : support) scratch.push_back(std::fabs(x[i]));
  }
  if (scratch.empty()) return 0.0;
  const std::size_t n = scratch.size(), mid = n / 2;
  std::nth_element(scratch.begin(), scratch.begin() + mid, scratch.end());
  const double hi = scratch[mid];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(scratch.begin(), scratch.begin() + mid);
  return 0.5 * (lo + hi);
}

void softmax_policy(const FeatureMap& f, std::span<const float> obs, std::span<const double> u,
                    std::span<double> pi, std::span<double> pref, SparseFeatures& psi) {
  const int n = static_cast<int>(pi.size());
  for (int a = 0; a < n; ++a) {
    f.state_action(obs, a, psi);
    pref[a] = psi.dot(u);
  }
  softmax_of(pref, pi);
}

void softmax_policy(const FeatureMap& f, std::span<const float> obs, std::span<const double> u,
                    std::span<double> pi, std::span<double> pref) {
  SparseFeatures psi;
  softmax_policy(f, obs, u, pi, pref, psi);
}

GtdActorCriticLearner::GtdActorCriticLearner(const ActorCriticParams& params, const FeatureMap& fm,
                                             int actions, bool actor, bool critic, double sig,
                                             privacy::NoiseSource* ns)
    : p(params),
      f(fm),
      num_actions(actions),
      dp_actor(actor),
      dp_critic(critic),
      sigma(sig),
      noise(ns),
      sparse(!critic) {
  const auto S = static_cast<std::size_t>(f.state_dim());
  const auto SA = static_cast<std::size_t>(f.state_action_dim());
  v.assign(S, 0.0);
  w.assign(S, 0.0);
  ev.assign(S, 0.0);
  dv.assign(S, 0.0);
  u.assign(SA, 0.0);
  eu.assign(SA, 0.0);
  grad.assign(SA, 0.0);
  pi.assign(num_actions, 0.0);
  pref.assign(num_actions, 0.0);
  pref_cached.assign(num_actions, 0.0);
}

void GtdActorCriticLearner::begin_episode() {
  std::fill(ev.begin(), ev.end(), 0.0);
  std::fill(eu.begin(), eu.end(), 0.0);
  ev_lo = ev_hi = eu_lo = eu_hi = 0;
}

// pi and pref at obs; pi is recomputed only when the preferences changed (bit for bit), since it
// is a function of them alone
void GtdActorCriticLearner::policy_at(std::span<const float> obs) {
  for (int a = 0; a < num_actions; ++a) {
    f.state_action(obs, a, psi);
    pref[a] = psi.dot(u);
  }
  bool same = pi_cached;
  for (int a = 0; a < num_actions && same; ++a)
    same = std::bit_cast<std::uint64_t>(pref[a]) == std::bit_cast<std::uint64_t>(pref_cached[a]);
  if (same) return;
  softmax_of(pref, pi);
  std::copy(pref.begin(), pref.end(), pref_cached.begin());
  pi_cached = true;
}

std::pair<int, double> GtdActorCriticLearner::act(std::span<const float> obs, Rng& rng) {
  policy_at(obs);
  if (rng.uniform() < p.explore) {
    const int a = static_cast<int>(rng.below(num_actions));
    return {a, pi[a] * num_actions};  // pi / b with b = 1 / |A|
  }
  if (p.policy == "softmax") return {static_cast<int>(rng.categorical(pi)), 1.0};
  int best = 0;
  for (int a = 1; a < num_actions; ++a)
    if (pref[a] > pref[best]) best = a;
  return {best, 1.0};
}

// x (norm exactly c) plus N(0, (sigma c)^2) per element. The L2 sensitivity is 2c (replace one
// trajectory: another vector of norm c); a secure source snaps x to the sampler's grid and widens
// the noise to cover it (privacy/secure_release.hpp), so the noise multiplier is sigma / 2 either
// way. A vector whose scale is not finite (a diverged learner) is not released: it becomes NaN,
// which carries no data and makes the run stop as diverged.
void GtdActorCriticLearner::release(std::span<double> x, double c, int channel) {
  const double sd = sigma * c;
  if (!std::isfinite(sd)) {
    std::fill(x.begin(), x.end(), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  if (!(sd > 0)) return;
  // an audit sees (and may alter, for its mis-specified runs) the release and its noise
  const privacy::ReleaseTap::Release r{
      channel, 0, (channel == 0 ? actor_releases : critic_releases) + 1, sd, 2.0 * c};
  const double used = tap ? tap->before(r, x) : sd;
  const privacy::SecurePlan plan =
      privacy::gaussian_release_plan(used, 2.0 * c, x.size(), noise->secure());
  varying_release(x, plan.scale, plan.grid, *noise);
  if (tap) tap->after(r, x);
}

// C for a release: clip_norm, or the median element (data-dependent). A positive C below 2^-512
// (underflowing gradients) is raised to 2^-512: the vector is still rescaled to norm exactly C and
// the noise is sigma C, so the guarantee is unchanged, and the secure sampler's grid (about
// C 2^-12 / sqrt(n)) stays in the normal range instead of stopping the run on the data's values.
// C = 0 (nothing to release) is kept as it is.
double GtdActorCriticLearner::clip_scale(std::span<const double> x,
                                         const std::vector<int>& support) {
  constexpr double kMinClip = 0x1p-512;
  const double c =
      p.clip == "fixed" ? p.clip_norm : median_abs(x, support, p.median_over == "all", scratch);
  return c > 0 && c < kMinClip ? kMinClip : c;
}

double GtdActorCriticLearner::privatise(std::span<double> x, const std::vector<int>& support,
                                        int channel) {
  const double c = clip_scale(x, support);
  const double n = norm2(x);
  const double scale = n > 0 ? c / n : 0.0;
  for (double& e : x) e *= scale;
  release(x, c, channel);
  return c;
}

double GtdActorCriticLearner::privatise_sparse(std::span<double> x, const std::vector<int>& support,
                                               int channel) {
  const double c = clip_scale(x, support);
  // the dense sum of squares adds +0 off the support, which changes nothing: sum the support in
  // index order
  const std::vector<int>* idx = &support;
  if (!std::is_sorted(support.begin(), support.end())) {
    sorted_support.assign(support.begin(), support.end());
    std::sort(sorted_support.begin(), sorted_support.end());
    idx = &sorted_support;
  }
  double s = 0;
  for (int i : *idx) s += x[i] * x[i];
  const double n = std::sqrt(s);
  const double scale = n > 0 ? c / n : 0.0;
  // +0 * scale is +0 for a finite scale >= 0 (c >= 0, n > 0): rescale the support only
  if (std::isfinite(scale) && scale >= 0) {
    for (int i : support) x[i] *= scale;
  } else {
    for (double& e : x) e *= scale;
  }
  release(x, c, channel);
  return c;
}

// critic, GTD(lambda), over every element
void GtdActorCriticLearner::update_critic_dense(double delta, double rho, double g_next,
                                                double gl) {
  // e_v <- rho (x_s + gamma lambda e_v)
  for (double& e : ev) e *= gl;
  for (const auto& [i, x] : xs.entries) ev[i] += x;
  double w_ev = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    ev[i] *= rho;
    w_ev += w[i] * ev[i];
  }
  // d_v = delta e_v - gamma' (1 - lambda) (w.e_v) x_s'
  const double corr = g_next * (1 - p.lambda) * w_ev;
  dv_support.clear();
  for (std::size_t i = 0; i < ev.size(); ++i) {
    dv[i] = delta * ev[i];
    if (ev[i] != 0) dv_support.push_back(static_cast<int>(i));
  }
  for (const auto& [i, x] : xs2.entries) {
    if (ev[i] == 0 && corr * x != 0) dv_support.push_back(i);
    dv[i] -= corr * x;
  }
  if (dp_critic) {
    c_critic_sum += privatise(dv, dv_support, 1);
    ++critic_releases;
  }
  // w <- w + alpha_w [delta e_v - (w.x_s) x_s], with w.x_s taken before the update
  const double w_xs = xs.dot(w);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] += p.alpha_v * dv[i];
    w[i] += p.alpha_w * delta * ev[i];
  }
  for (const auto& [i, x] : xs.entries) w[i] -= p.alpha_w * w_xs * x;
}

// the same arithmetic over [ev_lo, ev_hi) plus the entries of x_s and x_s'; needs delta, rho and
// w finite and no critic noise. d_v is not stored: v[i] gets alpha_v (delta e_v[i]), the d_v of
// every element but x_s''s, whose v is then redone from its saved value.
void GtdActorCriticLearner::update_critic_sparse(double delta, double rho, double g_next,
                                                 double gl) {
  for (const auto& [i, x] : xs.entries) {
    const auto k = static_cast<std::size_t>(i);
    if (ev_lo == ev_hi) {
      ev_lo = k;
      ev_hi = k + 1;
    } else {
      ev_lo = std::min(ev_lo, k);
      ev_hi = std::max(ev_hi, k + 1);
    }
  }
  const std::size_t lo = ev_lo, n = ev_hi - ev_lo;
  double* __restrict e = ev.data() + lo;
  double* __restrict vv = v.data() + lo;
  double* __restrict ww = w.data() + lo;
  // e_v <- rho (x_s + gamma lambda e_v)
  for (std::size_t i = 0; i < n; ++i) e[i] *= gl;
  for (const auto& [i, x] : xs.entries) ev[i] += x;
  double w_ev = 0;
  for (std::size_t i = 0; i < n; ++i) {
    e[i] *= rho;
    w_ev += ww[i] * e[i];
  }
  // w <- w + alpha_w [delta e_v - (w.x_s) x_s], with w.x_s taken before the update
  const double w_xs = xs.dot(w);
  scratch.clear();
  for (const auto& [i, x] : xs2.entries) scratch.push_back(v[i]);
  const double aw = p.alpha_w * delta, av = p.alpha_v;
  std::uint64_t nonfinite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    vv[i] += av * (delta * e[i]);
    const double wi = ww[i] + aw * e[i];
    ww[i] = wi;
    nonfinite |= static_cast<std::uint64_t>(!(std::fabs(wi) <= kMaxDouble));
  }
  // d_v on x_s' = delta e_v - gamma' (1 - lambda) (w.e_v) x_s'
  const double corr = g_next * (1 - p.lambda) * w_ev;
  for (std::size_t j = 0; j < xs2.entries.size(); ++j) {
    const auto [i, x] = xs2.entries[j];
    v[i] = scratch[j] + av * (delta * ev[i] - corr * x);
  }
  for (const auto& [i, x] : xs.entries) {
    w[i] -= p.alpha_w * w_xs * x;
    nonfinite |= static_cast<std::uint64_t>(!std::isfinite(w[i]));
  }
  // the bookkeeping's premise for the next update: w finite (only [lo, hi) changed)
  if (nonfinite) sparse = false;
  // trim zeros (traces with lambda = 0, or decayed below the smallest double) off both ends
  while (ev_lo < ev_hi && ev[ev_lo] == 0) ++ev_lo;
  while (ev_hi > ev_lo && ev[ev_hi - 1] == 0) --ev_hi;
}

// actor: grad log pi(a|s) = psi(s, a) - sum_b pi(b|s) psi(s, b), then the trace and u
void GtdActorCriticLearner::update_actor(std::span<const float> obs, int a, double rho,
                                         double delta, double gl, bool fast) {
  grad_support.clear();
  for (int b = 0; b < num_actions; ++b) {
    f.state_action(obs, b, psi);
    const double coef = (b == a ? 1.0 : 0.0) - pi[b];
    for (const auto& [i, x] : psi.entries) {
      if (std::find(grad_support.begin(), grad_support.end(), i) == grad_support.end())
        grad_support.push_back(i);
      grad[i] += coef * x;
    }
  }
  const double au = p.alpha_u * delta;
  if (dp_actor) {
    c_actor_sum +=
        fast ? privatise_sparse(grad, grad_support, 0) : privatise(grad, grad_support, 0);
    ++actor_releases;
    // the noised gradient is dense
    for (std::size_t i = 0; i < eu.size(); ++i) {
      eu[i] = rho * (grad[i] + gl * eu[i]);
      u[i] += au * eu[i];
      grad[i] = 0;
    }
  } else if (fast) {
    // e_u <- rho (grad + gamma lambda e_u) over [eu_lo, eu_hi), which covers the gradient
    for (int i : grad_support) {
      const auto k = static_cast<std::size_t>(i);
      if (eu_lo == eu_hi) {
        eu_lo = k;
        eu_hi = k + 1;
      } else {
        eu_lo = std::min(eu_lo, k);
        eu_hi = std::max(eu_hi, k + 1);
      }
    }
    const std::size_t lo = eu_lo, hi = eu_hi;
    for (std::size_t i = lo; i < hi; ++i) eu[i] *= gl;
    for (int i : grad_support) eu[i] += grad[i];
    for (std::size_t i = lo; i < hi; ++i) {
      eu[i] *= rho;
      u[i] += au * eu[i];
    }
    for (int i : grad_support) grad[i] = 0;
    while (eu_lo < eu_hi && eu[eu_lo] == 0) ++eu_lo;
    while (eu_hi > eu_lo && eu[eu_hi - 1] == 0) --eu_hi;
  } else {
    // e_u <- rho (grad + gamma lambda e_u); the gradient is sparse, so clear only its support
    for (std::size_t i = 0; i < eu.size(); ++i) eu[i] *= gl;
    for (int i : grad_support) eu[i] += grad[i];
    for (std::size_t i = 0; i < eu.size(); ++i) {
      eu[i] *= rho;
      u[i] += au * eu[i];
    }
    for (int i : grad_support) grad[i] = 0;
  }
}

void GtdActorCriticLearner::update(std::span<const float> obs, int a, double rho, double r,
                                   bool terminated, std::span<const float> next_obs) {
  const double gl = p.gamma * p.lambda;
  const double g_next = terminated ? 0.0 : p.gamma;
  policy_at(obs);
  f.state(obs, xs);
  f.state(next_obs, xs2);
  const double delta = r + g_next * xs2.dot(v) - xs.dot(v);
  // the sparse loops skip only elements the dense ones leave unchanged: that needs finite
  // factors (0 * inf is NaN)
  const bool fast = sparse && std::isfinite(delta) && std::isfinite(rho) &&
                    std::isfinite(p.alpha_w * delta) && std::isfinite(p.alpha_u * delta);
  if (fast) {
    update_critic_sparse(delta, rho, g_next, gl);
  } else {
    sparse = false;
    update_critic_dense(delta, rho, g_next, gl);
  }
  update_actor(obs, a, rho, delta, gl, fast);
}

}  // namespace dprl::algos
