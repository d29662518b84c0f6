#include "algos/gtd_learner.hpp"

#include <algorithm>
#include <cmath>

#include "algos/actor_critic.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {
namespace {

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
                    std::span<double> pi, std::span<double> pref) {
  SparseFeatures psi;
  const int n = static_cast<int>(pi.size());
  double mx = -INFINITY;
  for (int a = 0; a < n; ++a) {
    f.state_action(obs, a, psi);
    pref[a] = psi.dot(u);
    mx = std::max(mx, pref[a]);
  }
  double z = 0;
  for (int a = 0; a < n; ++a) z += (pi[a] = std::exp(pref[a] - mx));
  for (int a = 0; a < n; ++a) pi[a] /= z;
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
      noise(ns) {
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
}

void GtdActorCriticLearner::begin_episode() {
  std::fill(ev.begin(), ev.end(), 0.0);
  std::fill(eu.begin(), eu.end(), 0.0);
}

std::pair<int, double> GtdActorCriticLearner::act(std::span<const float> obs, Rng& rng) {
  softmax_policy(f, obs, u, pi, pref);
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

double GtdActorCriticLearner::privatise(std::span<double> x, const std::vector<int>& support) {
  const double c =
      p.clip == "fixed" ? p.clip_norm : median_abs(x, support, p.median_over == "all", scratch);
  const double n = norm2(x);
  const double scale = n > 0 ? c / n : 0.0;
  const double sd = sigma * c;
  for (double& e : x) e *= scale;
  if (sd > 0) noise->add_gaussian(x, sd);
  return c;
}

void GtdActorCriticLearner::update(std::span<const float> obs, int a, double rho, double r,
                                   bool terminated, std::span<const float> next_obs) {
  const double gl = p.gamma * p.lambda;
  const double g_next = terminated ? 0.0 : p.gamma;
  softmax_policy(f, obs, u, pi, pref);
  f.state(obs, xs);
  f.state(next_obs, xs2);
  const double delta = r + g_next * xs2.dot(v) - xs.dot(v);

  // critic, GTD(lambda): e_v <- rho (x_s + gamma lambda e_v)
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
    c_critic_sum += privatise(dv, dv_support);
    ++critic_releases;
  }
  // w <- w + alpha_w [delta e_v - (w.x_s) x_s], with w.x_s taken before the update
  const double w_xs = xs.dot(w);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] += p.alpha_v * dv[i];
    w[i] += p.alpha_w * delta * ev[i];
  }
  for (const auto& [i, x] : xs.entries) w[i] -= p.alpha_w * w_xs * x;

  // actor: grad log pi(a|s) = psi(s, a) - sum_b pi(b|s) psi(s, b)
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
  if (dp_actor) {
    c_actor_sum += privatise(grad, grad_support);
    ++actor_releases;
    // the noised gradient is dense
    for (std::size_t i = 0; i < eu.size(); ++i) {
      eu[i] = rho * (grad[i] + gl * eu[i]);
      u[i] += p.alpha_u * delta * eu[i];
      grad[i] = 0;
    }
  } else {
    // e_u <- rho (grad + gamma lambda e_u); the gradient is sparse, so clear only its support
    for (std::size_t i = 0; i < eu.size(); ++i) eu[i] *= gl;
    for (int i : grad_support) eu[i] += grad[i];
    for (std::size_t i = 0; i < eu.size(); ++i) {
      eu[i] *= rho;
      u[i] += p.alpha_u * delta * eu[i];
    }
    for (int i : grad_support) grad[i] = 0;
  }
}

}  // namespace dprl::algos
