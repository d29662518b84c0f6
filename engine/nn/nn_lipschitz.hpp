// Certified upper bounds on the L2 Lipschitz constant of an MLP (engine/nn/nn_mlp.hpp).
//
// Source: the product bound (Szegedy et al., "Intriguing properties of neural networks", ICLR 2014,
// sec. 4.3): for f = W_L o act o ... o act o W_1 plus biases (biases do not matter),
//   Lip(f) <= prod_l ||W_l||_2 * Lip(act)^(L-1),
// sound though looser than LipSDP (Fazlyab et al., NeurIPS 2019), which paper 003 cites.
// ||W||_2, the largest singular value, is computed two ways, both in double from the float
// weights:
//   estimate  power iteration on the Gram matrix G (W^T W or W W^T, the smaller): a lower bound
//             that converges to ||W||_2 (reported, never used as a certificate);
//   upper     ||G^(2^s)||_F^(1 / 2^(s+1)) by s normalised squarings: an upper bound for every s,
//             since for symmetric positive semi-definite G, ||G^p||_F >= lambda_max(G)^p; it
//             exceeds ||W||_2 by at most the factor rank(G)^(1 / 2^(s+2)) (1.001 for s = 10 and
//             rank 64). The result is inflated by (1 + 1e-9) to cover double rounding (each
//             squaring's relative error is below n * 2^-52, about 1e-13 for n <= 1000, and the
//             final root divides it by 2^(s+1)).
// Activation constants sup |act'|: identity, relu, tanh 1; silu 1.1 (the maximum is 1.0998).
// The bound covers the exact-arithmetic map; float32 evaluation adds rounding of relative size
// about 1e-7 per layer, which no Lipschitz statement covers.
#pragma once

#include <vector>

#include "engine/nn/nn_mlp.hpp"

namespace dprl::nn {

struct SpectralNorm {
  double estimate = 0;  // power iteration (lower bound)
  double upper = 0;     // certified upper bound
};

// ||W||_2 of the rows x cols column-major matrix w; iters power iterations, squarings s.
SpectralNorm spectral_norm(const float* w, int rows, int cols, int iters = 100, int squarings = 10);

// sup |act'(x)|, an upper bound (see the header).
double activation_lipschitz(Act a);

struct MlpLipschitz {
  std::vector<SpectralNorm> layers;
  double activation = 1;  // product of the activation constants over the layers
  double estimate = 0;    // product of the layer estimates times activation (not certified)
  double upper = 0;       // product of the layer upper bounds times activation (certified)
};

MlpLipschitz mlp_lipschitz(const MlpShape& s, const float* params);

}  // namespace dprl::nn
