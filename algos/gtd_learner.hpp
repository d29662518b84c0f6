// The per-agent arithmetic of the off-policy actor-critic (paper 001, Algorithms 1-4): weights,
// eligibility traces and one update per transition, with optional privatisation of the actor
// gradient and/or the critic direction. algos/actor_critic.hpp documents the equations and the
// guarantees; this header exposes the pieces so tests can check them by hand.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "algos/features.hpp"
#include "engine/rng.hpp"

namespace dprl::privacy {
class NoiseSource;
}

namespace dprl::algos {

struct ActorCriticParams;

// pi_u(.|s) (softmax of preferences u.psi(s, a)) into pi and the preferences into pref.
void softmax_policy(const FeatureMap& f, std::span<const float> obs, std::span<const double> u,
                    std::span<double> pi, std::span<double> pref);

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
  // Rescales x to L2 norm C and adds N(0, sigma^2 C^2) to every element; returns C.
  double privatise(std::span<double> x, const std::vector<int>& support);

  const ActorCriticParams& p;
  const FeatureMap& f;
  int num_actions;
  bool dp_actor, dp_critic;
  double sigma;
  privacy::NoiseSource* noise;  // null when not private
  std::vector<double> v, w, ev, u, eu;
  std::vector<double> grad, dv, pi, pref, scratch;
  std::vector<int> grad_support, dv_support;
  SparseFeatures xs, xs2, psi;
  std::int64_t actor_releases = 0, critic_releases = 0;
  double c_actor_sum = 0, c_critic_sum = 0;
};

}  // namespace dprl::algos
