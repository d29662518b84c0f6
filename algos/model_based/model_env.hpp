// The pessimistic model MDP: batched transitions of a probabilistic ensemble with the reward
// penalised by an uncertainty estimate, r~ = r^ - lambda u(s, a).
//
// Sources: PriMORL ("Differentially Private Deep Model-Based Reinforcement Learning", sec. 4.3,
// Eq. 2); MOPO (Yu et al. 2020, NeurIPS) for u_MA; MOReL (Kidambi et al. 2020, NeurIPS) for the
// pairwise-discrepancy idea of u_MPD. Penalties (N members, o = obs + 1 outputs, diagonal
// Gaussians with variance v_i = exp(logvar_i)):
//   ma_variance  max_i |v_i|_2            (the paper's max_i |Sigma_i|_F for diagonal Sigma)
//   ma_std       max_i |sqrt(v_i)|_2      (the MOPO code's "aleatoric" penalty; our default)
//   mpd          max_{i,j} |mu_i - mu_j|_2 over the predicted delta-s dims (the reward dim too
//                with mpd_with_reward), the paper's max pairwise difference
//   none         u = 0
// Both u_MA forms run over all o outputs (state change and reward), as the MOPO code does.
// Sampling (MOPO code): each sample picks one member uniformly (among `members`, all by default)
// and draws (s' - s, r) ~ N(mu_m, diag v_m); s' = s + (s' - s), clipped to the observation box
// when one is given (data-independent post-processing). The model never terminates (PriMORL's
// tasks have no terminal states): rollouts end by truncation at the horizon.
// Privacy: everything here is a function of the released ensemble and of fresh randomness, so it
// is post-processing of the model's guarantee (PriMORL Thm. 4.5).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "algos/model_based/prob_ensemble.hpp"
#include "engine/rng.hpp"

namespace dprl::algos::model_based {

enum class Penalty { kMaStd, kMaVariance, kMpd, kNone };
// "ma_std", "ma_variance", "mpd", "none"; else ParamError naming what.
Penalty parse_penalty(const std::string& name, const std::string& what);

// u for every column of the stacked predictions ((N o) x B); u has B entries.
void penalty_ma(const nn::Mat& logvar, int members, int out, bool use_std, std::span<float> u);
void penalty_mpd(const nn::Mat& mean, int members, int out, int dims, std::span<float> u);

struct ModelEnvConfig {
  Penalty penalty = Penalty::kMaStd;
  double lambda = 2.0;
  bool mpd_with_reward = false;
  std::vector<int> members;              // members to sample from (empty: all)
  std::vector<float> obs_low, obs_high;  // observation box for clipping (empty: none)
};

class ModelEnv {
 public:
  // ParamError for lambda < 0 or an mpd penalty with fewer than 2 members.
  ModelEnv(const ProbEnsemble& model, ModelEnvConfig cfg);

  // One batched step from states s (obs x B) and env-scale actions a (act x B): next states,
  // penalised rewards, raw model rewards and penalties (B each).
  void step(const nn::Mat& s, const nn::Mat& a, Rng& rng, nn::Mat& next, std::vector<float>& reward,
            std::vector<float>& raw_reward, std::vector<float>& penalty);

 private:
  const ProbEnsemble& model_;
  ModelEnvConfig cfg_;
  EnsembleWork work_;
  nn::Mat x_, mean_, logvar_;
};

}  // namespace dprl::algos::model_based
