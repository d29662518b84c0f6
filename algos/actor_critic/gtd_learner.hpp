// The per-agent arithmetic of the off-policy actor-critic (paper 001, Algorithms 1-4): weights,
// eligibility traces and one update per transition, with optional privatisation of the actor
// gradient and/or the critic direction. algos/actor_critic/actor_critic.hpp documents the equations
// and the guarantees; this header exposes the pieces so tests can check them by hand.
//
// Sparse bookkeeping (one-hot features touch one critic weight and |A| actor weights a step): the
// traces are zero outside index ranges that grow as the episode visits states, so the critic and
// the non-private actor loop over those ranges only. Every element they skip is one the dense
// loops would leave unchanged (x + 0 * finite = x; a zero term leaves an ordered sum unchanged),
// so the results are bit-identical to the dense loops. That holds while w is finite and delta,
// rho are finite; the first update where that fails, and every update after it, runs the dense
// loops (a learner in that state has diverged). A privatised critic (dense noise on d_v) always
// runs the dense loops.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "algos/actor_critic/features.hpp"
#include "engine/rng.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::privacy {
class ReleaseTap;
}

namespace dprl::algos {

struct ActorCriticParams;

// pi_u(.|s) (softmax of preferences u.psi(s, a)) into pi and the preferences into pref.
void softmax_policy(const FeatureMap& f, std::span<const float> obs, std::span<const double> u,
                    std::span<double> pi, std::span<double> pref);
// The same with a caller-owned feature buffer (no allocation).
void softmax_policy(const FeatureMap& f, std::span<const float> obs, std::span<const double> u,
                    std::span<double> pi, std::span<double> pref, SparseFeatures& psi);

// Median of |x_i| over the indices in support, or over all of x when all is true (0 if empty).
double median_abs(std::span<const double> x, const std::vector<int>& support, bool all,
                  std::vector<double>& scratch);

double cosine_similarity(std::span<const double> a, std::span<const double> b);

struct GtdActorCriticLearner {
  GtdActorCriticLearner(const ActorCriticParams& params, const FeatureMap& fm, int actions,
                        bool dp_actor, bool dp_critic, double sigma, privacy::NoiseSource* noise);

  // Clears both traces (start of an episode).
  void begin_episode();
  // The paper's selection rule: (action, rho).
  std::pair<int, double> act(std::span<const float> obs, Rng& rng);
  // One transition's update of v, w, e_v, u, e_u (pi is recomputed at obs).
  void update(std::span<const float> obs, int action, double rho, double reward, bool terminated,
              std::span<const float> next_obs);
  // Rescales x to L2 norm C and adds N(0, sigma^2 C^2) to every element (a secure source snaps
  // x to the sampler's grid first, widens the noise by at most 2^-12 to cover the snapping, and
  // draws it from the table sampler of the next ladder width, at most 2^-7 wider:
  // privacy/secure_release.hpp, VaryingGaussianRelease); returns C.
  // channel: 0 the actor gradient, 1 the critic direction (for the tap).
  double privatise(std::span<double> x, const std::vector<int>& support, int channel = 0);
  // The same for an x that is zero outside support (the actor gradient): the norm is summed over
  // the support only, in index order, which gives the dense sum exactly.
  double privatise_sparse(std::span<double> x, const std::vector<int>& support, int channel = 0);

  const ActorCriticParams& p;
  const FeatureMap& f;
  int num_actions;
  bool dp_actor, dp_critic;
  double sigma;
  privacy::NoiseSource* noise;  // null when not private
  // A privacy audit around every release (privacy/release_tap.hpp; null: none): channel 0 the
  // actor gradient, 1 the critic direction, round the release count, sd sigma C, sensitivity 2C.
  privacy::ReleaseTap* tap = nullptr;
  std::vector<double> v, w, ev, u, eu;
  // grad is zero between updates; dv and dv_support are scratch of the dense critic loops
  std::vector<double> grad, dv, pi, pref, scratch;
  std::vector<int> grad_support, dv_support, sorted_support;
  SparseFeatures xs, xs2, psi;
  // sparse bookkeeping (see the top of this file): e_v is zero outside [ev_lo, ev_hi) and, for a
  // non-private actor, e_u outside [eu_lo, eu_hi); sparse = false runs the dense loops for good
  std::size_t ev_lo = 0, ev_hi = 0, eu_lo = 0, eu_hi = 0;
  bool sparse = true;
  // pi is softmax(pref_cached) when pi_cached: act() and update() at the same state share it
  std::vector<double> pref_cached;
  bool pi_cached = false;
  std::int64_t actor_releases = 0, critic_releases = 0;
  double c_actor_sum = 0, c_critic_sum = 0;

 private:
  // the secure releases' samplers, one per ladder width met (C changes every release)
  privacy::VaryingGaussianRelease varying_release;
  void policy_at(std::span<const float> obs);
  void release(std::span<double> x, double c, int channel);
  double clip_scale(std::span<const double> x, const std::vector<int>& support);
  void update_critic_dense(double delta, double rho, double g_next, double gl);
  void update_critic_sparse(double delta, double rho, double g_next, double gl);
  void update_actor(std::span<const float> obs, int a, double rho, double delta, double gl,
                    bool fast);
};

}  // namespace dprl::algos
