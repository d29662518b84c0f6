// Distribution heads over network outputs, batched column per sample, with the gradients the
// learners need.
//
// Categorical (logits, optional action mask: masked logits are treated as -inf, as CleanRL's
// invalid-action masking); diagonal Gaussian (mean and log-std, the log-std either from the
// network or a free parameter vector, as ppo_continuous_action.py); tanh-squashed Gaussian (SAC,
// Haarnoja et al. 2018, appendix C): a = tanh(u), u = mu + sigma * eps,
//   log pi(a) = sum_j [log N(u_j; mu_j, sigma_j) - log(1 - tanh(u_j)^2)]
// with log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)) for stability (no 1e-6 fudge).
#pragma once

#include <cstdint>
#include <span>

#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"

namespace dprl::nn {

// ----- categorical -----
// logp = log_softmax(logits) per column; with mask (A x B, 0 = not allowed), masked entries get
// -inf probability (logp = -1e30 so sums stay finite). A column whose allowed logits are all NaN
// or -inf (a diverged network, or parameters loaded damaged) throws Error.
void log_softmax(const Mat& logits, const std::uint8_t* mask, Mat& logp);
// Draws from column col of logp.
int sample_categorical(const Mat& logp, int col, Rng& rng);
// Entropy of each column (size B).
void categorical_entropy(const Mat& logp, std::span<float> entropy);
// dlogits(:, i) = w_logp[i] * d logp(a_i)/dz + w_ent[i] * dH_i/dz.
void categorical_backward(const Mat& logp, std::span<const int> actions,
                          std::span<const float> w_logp, std::span<const float> w_ent,
                          Mat& dlogits);

// ----- diagonal Gaussian -----
// log N(a; mean, exp(log_std)) summed over rows, per column.
void gaussian_log_prob(const Mat& mean, const Mat& log_std, const Mat& actions,
                       std::span<float> logp);
// Entropy per column: sum_j (0.5 + 0.5 log(2 pi) + log_std_j).
void gaussian_entropy(const Mat& log_std, std::span<float> entropy);
// Gradients of w_logp[i] * logp_i + w_ent[i] * H_i w.r.t. mean and log_std.
void gaussian_backward(const Mat& mean, const Mat& log_std, const Mat& actions,
                       std::span<const float> w_logp, std::span<const float> w_ent, Mat& dmean,
                       Mat& dlog_std);

// ----- tanh-squashed Gaussian (reparameterised) -----
struct TanhSample {
  Mat eps;                  // standard normal draws
  Mat u;                    // pre-squash sample
  Mat a;                    // tanh(u) in (-1, 1)
  Mat std;                  // exp(log_std)
  Eigen::RowVectorXf logp;  // log density of a (before any affine action scaling)
};
// Draws a = tanh(mean + std * eps) with eps from rng (column by column, row by row) and its
// log-density.
void tanh_gaussian_sample(const Mat& mean, const Mat& log_std, Rng& rng, TanhSample& s);
// log pi(a) of the squashed sample given u (used by sample and by tests).
void tanh_gaussian_log_prob(const Mat& mean, const Mat& log_std, const Mat& u,
                            Eigen::RowVectorXf& logp);
// Gradient of sum_i [w_logp[i] * logp_i + dL/da(:, i) . a_i] w.r.t. mean and log_std through the
// reparameterisation (dl_da may be empty for w_logp-only).
void tanh_gaussian_backward(const TanhSample& s, std::span<const float> w_logp, const Mat& dl_da,
                            Mat& dmean, Mat& dlog_std);

// SAC's bounded log-std: log_std = lo + 0.5 (hi - lo) (tanh(x) + 1); the chain rule factor into
// dx is 0.5 (hi - lo) (1 - tanh(x)^2).
void bounded_log_std(const Mat& x, double lo, double hi, Mat& log_std);
void bounded_log_std_backward(const Mat& x, double lo, double hi, Mat& dlog_std_to_dx);

}  // namespace dprl::nn
