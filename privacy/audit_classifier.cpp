#include "privacy/audit_classifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/error.hpp"

namespace dprl::privacy::audit {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::Map<const RowMajor> as_rows(std::span<const double> rows, int dim) {
  return {rows.data(), static_cast<Eigen::Index>(rows.size() / dim), dim};
}

void check_rows(std::span<const double> rows, int dim, const char* what) {
  if (rows.size() % static_cast<std::size_t>(dim) != 0)
    throw ParamError(fmt::format("audit classifier: {} holds {} values, not rows of {}", what,
                                 rows.size(), dim));
  if (rows.size() / static_cast<std::size_t>(dim) < 2)
    throw ParamError(fmt::format("audit classifier: {} needs at least 2 draws", what));
  if (!std::all_of(rows.begin(), rows.end(), [](double v) { return std::isfinite(v); }))
    throw ParamError(fmt::format("audit classifier: {} holds a non-finite value", what));
}

// the sample covariance (n - 1 denominator) of the rows about their mean
Eigen::MatrixXd covariance(std::span<const double> rows, int dim, Eigen::VectorXd& mean) {
  const auto x = as_rows(rows, dim);
  mean = x.colwise().mean().transpose();
  const RowMajor centred = x.rowwise() - mean.transpose();
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(dim, dim);
  cov.selfadjointView<Eigen::Lower>().rankUpdate(centred.transpose());
  cov = cov.selfadjointView<Eigen::Lower>();
  return cov / static_cast<double>(x.rows() - 1);
}

}  // namespace

GaussianDiscriminant::GaussianDiscriminant(std::span<const double> train0,
                                           std::span<const double> train1, int dim)
    : dim_(dim) {
  if (dim < 1) throw ParamError(fmt::format("audit classifier: dimension {} must be >= 1", dim));
  check_rows(train0, dim, "the training draws under D");
  check_rows(train1, dim, "the training draws under D'");
  Eigen::VectorXd m0, m1;
  const Eigen::MatrixXd c0 = covariance(train0, dim, m0), c1 = covariance(train1, dim, m1);
  const double mean_var = 0.5 * (c0.trace() + c1.trace()) / dim;
  const double ridge = std::max(1e-9 * mean_var, 1e-300);
  const auto side = [&](const Eigen::VectorXd& m, const Eigen::MatrixXd& c) {
    Side s;
    s.mean = m;
    s.chol.compute(c + ridge * Eigen::MatrixXd::Identity(dim, dim));
    if (s.chol.info() != Eigen::Success)
      throw DataError(
          "audit classifier: a fitted covariance is not positive definite (outputs of wildly "
          "different scales)");
    s.half_log_det = s.chol.matrixLLT().diagonal().array().log().sum();
    return s;
  };
  side0_ = side(m0, c0);
  side1_ = side(m1, c1);
}

void GaussianDiscriminant::score(std::span<const double> rows, std::span<double> out) const {
  const auto n = static_cast<Eigen::Index>(rows.size() / dim_);
  if (rows.size() % static_cast<std::size_t>(dim_) != 0 || out.size() != std::size_t(n))
    throw ParamError("audit classifier: rows and scores disagree in size");
  constexpr Eigen::Index kBatch = 4096;
  Eigen::MatrixXd y, z;
  const auto log_density = [&](const Side& s, Eigen::Index m) {
    z = y.leftCols(m).colwise() - s.mean;
    s.chol.matrixL().solveInPlace(z);
    return Eigen::ArrayXd(-0.5 * z.colwise().squaredNorm().transpose().array() - s.half_log_det);
  };
  for (Eigen::Index start = 0; start < n; start += kBatch) {
    const Eigen::Index m = std::min(kBatch, n - start);
    y = as_rows(rows.subspan(std::size_t(start) * dim_, std::size_t(m) * dim_), dim_).transpose();
    const Eigen::ArrayXd s = log_density(side1_, m) - log_density(side0_, m);
    std::copy(s.begin(), s.end(), out.begin() + start);
  }
}

std::vector<double> classifier_thresholds(std::span<const double> score0,
                                          std::span<const double> score1, int k) {
  if (k < 2 || score0.empty() || score1.empty())
    throw ParamError("audit classifier: thresholds need k >= 2 and training scores");
  std::vector<double> t;
  // tail probabilities 1/2, ..., 1 / n geometrically, and the order statistic there
  const auto tail = [&](std::span<const double> scores, int count, bool upper) {
    std::vector<double> s(scores.begin(), scores.end());
    if (upper) {
      std::sort(s.begin(), s.end(), std::greater<>());
    } else {
      std::sort(s.begin(), s.end());
    }
    const double n = static_cast<double>(s.size());
    for (int j = 0; j < count; ++j) {
      const double frac = count > 1 ? double(j) / (count - 1) : 0.0;
      const double p = 0.5 * std::pow(2.0 / n, frac);
      // upper: ceil(p n) draws of D score at or above t; lower: ceil(p n) - 1 draws of D' below
      // t (none at p = 1 / n), ties aside
      const auto idx = static_cast<std::size_t>(std::clamp(std::ceil(p * n) - 1.0, 0.0, n - 1.0));
      t.push_back(s[idx]);
    }
  };
  tail(score0, k / 2, true);
  tail(score1, k - k / 2, false);
  return t;
}

}  // namespace dprl::privacy::audit
