#include "engine/nn/nn_lipschitz.hpp"

#include <Eigen/Core>
#include <cmath>

namespace dprl::nn {

namespace {

using MatD = Eigen::MatrixXd;

// The smaller Gram matrix of w (its eigenvalues are the squared singular values).
MatD gram(const float* w, int rows, int cols) {
  const MatD W = Eigen::Map<const Mat>(w, rows, cols).cast<double>();
  return cols <= rows ? MatD(W.transpose() * W) : MatD(W * W.transpose());
}

}  // namespace

SpectralNorm spectral_norm(const float* w, int rows, int cols, int iters, int squarings) {
  SpectralNorm out;
  const MatD g = gram(w, rows, cols);
  const double fro = g.norm();
  if (!(fro > 0)) return out;  // the zero matrix
  // estimate: power iteration from a fixed start (not orthogonal to a top eigenvector except on
  // a null set; the value is a lower bound whatever the start)
  const auto n = g.rows();
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = 1.0 + 0.5 * static_cast<double>(i) / n;
  v.normalize();
  double lambda = 0;
  for (int k = 0; k < iters; ++k) {
    Eigen::VectorXd gv = g * v;
    lambda = v.dot(gv);  // Rayleigh quotient <= lambda_max
    const double nrm = gv.norm();
    if (!(nrm > 0)) break;
    v = gv / nrm;
  }
  out.estimate = std::sqrt(std::max(lambda, 0.0));
  // upper: G^(2^j) = c_j B_j with ||B_j||_F = 1, log c_{j+1} = 2 log c_j + log ||B_j^2||_F
  MatD b = g / fro;
  double log_c = std::log(fro);
  for (int j = 0; j < squarings; ++j) {
    MatD b2 = b * b;
    const double f = b2.norm();
    if (!(f > 0)) break;
    b = b2 / f;
    log_c = 2.0 * log_c + std::log(f);
  }
  const double p = std::ldexp(1.0, squarings);  // G^p with p = 2^s
  out.upper = std::exp(log_c / (2.0 * p)) * (1.0 + 1e-9);
  out.estimate = std::min(out.estimate, out.upper);
  return out;
}

double activation_lipschitz(Act a) {
  switch (a) {
    case Act::kIdentity:
    case Act::kRelu:
    case Act::kTanh:
      return 1.0;
    case Act::kSilu:
      return 1.1;
  }
  return 1.1;
}

MlpLipschitz mlp_lipschitz(const MlpShape& s, const float* params) {
  MlpLipschitz out;
  out.estimate = 1.0;
  out.upper = 1.0;
  for (int l = 0; l < s.num_layers(); ++l) {
    const SpectralNorm sn = spectral_norm(params + s.weight_offset(l), s.out(l), s.in(l));
    out.layers.push_back(sn);
    out.activation *= activation_lipschitz(s.act(l));
    out.estimate *= sn.estimate;
    out.upper *= sn.upper;
  }
  out.estimate *= out.activation;
  out.upper *= out.activation;
  return out;
}

}  // namespace dprl::nn
