// The privacy-aware imitation term of paper 003 ("Privacy-Preserving Kickstarting Deep
// Reinforcement Learning with Privacy-Aware Learners", Gohari et al.), sec. 4:
//   alpha_lambda = lambda sqrt(log(1/beta) / (2 (k + 1)))                                 (eq. 15)
//   phi_lambda(s, pi_t) = ||pi_theta(s) - pi_t(s)||_2 * 1{||pi_theta(s) - pi_t(s)||_2 > alpha}
//                                                                                          (eq. 16)
// The distance is not squared. With p = softmax(z), d = p - q, n = ||d||_2 and n > alpha (and
// n > 1e-12), dphi/dz = p * (g - <p, g>) with g = d / n; otherwise the gradient is 0 (the
// subgradient at n = 0). alpha uses Lemma 1's radius (eq. 14), which is not a valid L2 deviation
// bound for the Dirichlet mechanism (it matches a one-coordinate Hoeffding bound); here it is only
// the student's threshold and does not enter any privacy figure. An exact teacher (no mechanism)
// has k = inf and alpha = 0.
#pragma once

namespace dprl::algos {

inline constexpr int kKickstartMaxActions = 64;  // action counts above it are rejected

// eq. 15; k = +inf gives 0. lambda >= 0, beta in (0, 1), k >= 0 (checked by the callers' params).
double kickstart_alpha(double lambda, double beta, double k);

struct PhiValue {
  double phi = 0;       // phi_lambda (0 when inactive)
  double distance = 0;  // ||p - q||_2
  bool active = false;
};

// phi for one sample with log-probabilities logp and target q (m entries each); when active, adds
// scale * dphi/dz to dz (m entries, m <= kKickstartMaxActions). Arithmetic in double.
PhiValue kickstart_phi(const float* logp, const float* q, int m, double alpha, double scale,
                       float* dz);

}  // namespace dprl::algos
