// DP-SGD's gradient step without the accounting: per-example clipping, the clipped sum, and
// Gaussian noise from a provided normal sampler (Abadi et al. 2016, Algorithm 1, lines 5-8).
//
//   g_i   = gradient of sample i's loss            (never materialised for dense layers)
//   c_i   = min(1, C / (|g_i|_2 + 1e-6))            (Opacus' clip factor)
//   out   = sum_i c_i g_i + sigma * C * N(0, I)    (one weighted product per layer, then noise)
//
// The caller divides by the (expected) batch size and charges the privacy accountant
// (privacy/); nothing here knows about epsilon. This is the float kernel (benchmarks, the
// one-run audit's lower bounds): its sum carries float rounding beyond C. The private learners
// use privacy/user_dp_sgd.hpp, which clips with a proven upper bound on each norm, sums in double
// (accumulate_grad_f64) and calibrates the noise to the sensitivity of the computed sum. Noise comes from a NormalFill so deployments can
// plug privacy/'s secure NoiseSource; fill_standard_normal is the fast seeded sampler (Box-Muller
// with both outputs used, 53-bit radius uniforms so the tails reach 8.5 sigma, vectorised).
//
// | field            | meaning                                        |
// |------------------|------------------------------------------------|
// | clip_norm        | C, the per-example L2 bound (> 0)              |
// | noise_multiplier | sigma; noise std = sigma * C (0: clipping only) |
#pragma once

#include <functional>
#include <span>

#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"

namespace dprl::nn {

// Fills its argument with independent standard normal values.
using NormalFill = std::function<void(std::span<float>)>;

// Independent N(0, 1) values from rng (Box-Muller, both outputs used).
void fill_standard_normal(Rng& rng, std::span<float> out);

struct DpSgdConfig {
  double clip_norm = 1.0;
  double noise_multiplier = 1.0;
};

struct DpSgdStats {
  double mean_norm = 0;  // mean per-example gradient norm before clipping
  int clipped = 0;       // examples whose norm exceeded clip_norm
};

// factors[i] = min(1, clip_norm / (sqrt(sq_norms[i]) + 1e-6)); a NaN norm is a DataError.
DpSgdStats clip_factors(std::span<const float> sq_norms, double clip_norm,
                        std::span<float> factors);
// Adds to sq[g] the squared L2 norm of the gradient summed over group g = columns [g k, (g + 1) k)
// of the batch (k = group_size), accumulated in double, from cache after backward_errors; no
// gradient is materialised. For a dense layer with errors delta_j and inputs a_j the group's
// gradient is sum_j delta_j a_j^T (+ bias sum_j delta_j), whose squared norm is
// sum_{j,j'} (delta_j . delta_j') (a_j . a_j' + 1); for k = 1 this is |delta|^2 (|a|^2 + 1).
// Call it once per network to get the joint norm over several networks (their parameters are
// disjoint, so squared norms add). sq.size() * group_size must equal the cache's batch. For
// k = 1 the sums of squares are in float (positive terms, so each figure is within a relative
// gamma_(n + 4) of the exact one, u = 2^-24, n the longest column; an error column whose sum
// falls below 2^-60, where squares may underflow, is summed again in double); for k > 1 every product is
// exact in double and the Gram sums round: each group's figure is within gamma_n (sum_j
// sqrt(t_j))^2 of the exact one (u = 2^-53), t_j the squared norm of sample j's own gradient and
// n the longest dot product plus the k^2 L terms summed (privacy/user_dp_sgd.cpp). When sample_sq
// is not empty (size = batch) t_j is added to sample_sq[j] too.
void add_group_sq_norms(const MlpShape& s, const MlpCache& c, int group_size, std::span<double> sq,
                        std::span<double> sample_sq = {});

// grad += std * N(0, I) from fill (scratch is resized to grad's size).
void add_gaussian_noise(std::span<float> grad, double std, const NormalFill& fill, Buffer& scratch);

// After backward_errors(dout) with dout holding per-example (not averaged) loss gradients:
// grad = clipped sum + noise (grad overwritten).
DpSgdStats dp_sgd_grad(const MlpShape& s, const MlpCache& c, const DpSgdConfig& cfg,
                       const NormalFill& fill, float* grad);

}  // namespace dprl::nn
