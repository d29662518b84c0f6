// A small classifier for the vector outputs of a black-box mechanism audit.
//
// The fixed statistic of privacy/mechanism_audit.hpp (the projection on the difference direction)
// is the most powerful test only when the noise is what the mechanism claims: isotropic and
// independent of the input. A mechanism with a bug (a coordinate released without noise, one draw
// reused on every coordinate, noise whose scale depends on the data) can leak along directions the
// projection never looks at. This classifier learns where to look from training draws:
//
//   a Gaussian model per input, q_b = N(mu_b, Sigma_b + lambda I), b in {D, D'}, with the sample
//   mean and covariance of n_b training draws (n_b >= 2) and a ridge lambda = 1e-9 x the mean
//   pooled variance (1e-300 at least), so that a coordinate without noise gives a finite, very
//   large score; its score is the fitted log likelihood ratio
//     s(y) = log q_1(y) - log q_0(y)
//   (quadratic discriminant analysis). For Gaussian outputs of any covariance it tends to the
//   Neyman-Pearson statistic as the training draws grow; for other noises it is a heuristic.
//
// Validity: the audit evaluates the sets {s >= t} on draws disjoint from the training draws, with
// thresholds fixed from the training scores alone (classifier_thresholds), so the Clopper-Pearson
// intervals of privacy/audit.hpp hold for them exactly as for sets fixed before sampling. A bad
// fit only weakens the bound; it never makes it invalid.
//
// Cost: fitting O(n_b d^2), scoring O(d^2) per draw (two triangular solves).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <span>
#include <vector>

#include "engine/eigen_abi.hpp"

namespace dprl::privacy::audit {

class GaussianDiscriminant {
 public:
  // train0, train1: n_0 x d and n_1 x d draws, row-major, under D and D'; d >= 1, n_b >= 2,
  // finite values (ParamError otherwise).
  GaussianDiscriminant(std::span<const double> train0, std::span<const double> train1, int dim);

  int dim() const { return dim_; }
  // s(y) of each of the rows.size() / d rows (row-major) into out.
  void score(std::span<const double> rows, std::span<double> out) const;

 private:
  struct Side {
    Eigen::VectorXd mean;
    Eigen::LLT<Eigen::MatrixXd> chol;
    double half_log_det = 0.0;
  };
  Side fit(std::span<const double> rows, double ridge) const;
  int dim_;
  Side side0_, side1_;
};

// k thresholds for the sets {s >= t} from training scores: k / 2 upper order statistics of score0
// (where D rarely lands) at tail probabilities p from 1/2 down to 1 / n_0, geometrically spaced
// (ceil(p n_0) scores at or above t), and k - k / 2 lower order statistics of score1 likewise
// (ceil(p n_1) - 1 scores below t). k >= 2, both spans non-empty.
std::vector<double> classifier_thresholds(std::span<const double> score0,
                                          std::span<const double> score1, int k);

}  // namespace dprl::privacy::audit
