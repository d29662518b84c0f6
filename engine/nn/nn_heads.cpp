#include "engine/nn/nn_heads.hpp"

#include <cmath>
#include <numbers>

#include "engine/error.hpp"

namespace dprl::nn {

namespace {
constexpr float kMaskedLogp = -1e30f;
const float kHalfLog2Pi = static_cast<float>(0.5 * std::log(2.0 * std::numbers::pi));

// log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for large |u|
float log1m_tanh_sq(float u) {
  const float x = -2.0f * u;
  const float softplus = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  return 2.0f * (static_cast<float>(std::numbers::ln2) - u - softplus);
}
}  // namespace

void log_softmax(const Mat& logits, const std::uint8_t* mask, Mat& logp) {
  const Eigen::Index A = logits.rows(), B = logits.cols();
  logp.resize(A, B);
  for (Eigen::Index i = 0; i < B; ++i) {
    float mx = -INFINITY;
    for (Eigen::Index j = 0; j < A; ++j)
      if (!mask || mask[i * A + j]) mx = std::max(mx, logits(j, i));
    if (!(mx > -INFINITY)) {
      bool allowed = false;
      for (Eigen::Index j = 0; j < A; ++j) allowed = allowed || !mask || mask[i * A + j];
      DPRL_CHECK(allowed);  // at least one allowed action
      throw Error(
          "policy logits are all NaN or -inf: the network's parameters diverged or were loaded "
          "damaged");
    }
    double sum = 0;
    for (Eigen::Index j = 0; j < A; ++j)
      if (!mask || mask[i * A + j]) sum += std::exp(static_cast<double>(logits(j, i) - mx));
    const float lse = mx + static_cast<float>(std::log(sum));
    for (Eigen::Index j = 0; j < A; ++j)
      logp(j, i) = (!mask || mask[i * A + j]) ? logits(j, i) - lse : kMaskedLogp;
  }
}

int sample_categorical(const Mat& logp, int col, Rng& rng) {
  const double u = rng.uniform();
  double cum = 0;
  const int A = static_cast<int>(logp.rows());
  int last = 0;
  for (int j = 0; j < A; ++j) {
    if (logp(j, col) <= kMaskedLogp) continue;
    cum += std::exp(static_cast<double>(logp(j, col)));
    last = j;
    if (u < cum) return j;
  }
  return last;  // rounding: u beyond the float sum
}

void categorical_entropy(const Mat& logp, std::span<float> entropy) {
  for (Eigen::Index i = 0; i < logp.cols(); ++i) {
    double h = 0;
    for (Eigen::Index j = 0; j < logp.rows(); ++j)
      if (logp(j, i) > kMaskedLogp) h -= std::exp(static_cast<double>(logp(j, i))) * logp(j, i);
    entropy[i] = static_cast<float>(h);
  }
}

void categorical_backward(const Mat& logp, std::span<const int> actions,
                          std::span<const float> w_logp, std::span<const float> w_ent,
                          Mat& dlogits) {
  const Eigen::Index A = logp.rows(), B = logp.cols();
  dlogits.resize(A, B);
  for (Eigen::Index i = 0; i < B; ++i) {
    float h = 0;
    for (Eigen::Index j = 0; j < A; ++j)
      if (logp(j, i) > kMaskedLogp) h -= std::exp(logp(j, i)) * logp(j, i);
    for (Eigen::Index j = 0; j < A; ++j) {
      if (logp(j, i) <= kMaskedLogp) {
        dlogits(j, i) = 0;
        continue;
      }
      const float p = std::exp(logp(j, i));
      // d logp(a)/dz_j = [j == a] - p_j ; dH/dz_j = -p_j (logp_j + H)
      float g = w_logp[i] * ((j == actions[i] ? 1.0f : 0.0f) - p);
      if (!w_ent.empty()) g += w_ent[i] * (-p * (logp(j, i) + h));
      dlogits(j, i) = g;
    }
  }
}

void gaussian_log_prob(const Mat& mean, const Mat& log_std, const Mat& actions,
                       std::span<float> logp) {
  for (Eigen::Index i = 0; i < mean.cols(); ++i) {
    float s = 0;
    for (Eigen::Index j = 0; j < mean.rows(); ++j) {
      const float z = (actions(j, i) - mean(j, i)) * std::exp(-log_std(j, i));
      s += -0.5f * z * z - log_std(j, i) - kHalfLog2Pi;
    }
    logp[i] = s;
  }
}

void gaussian_entropy(const Mat& log_std, std::span<float> entropy) {
  for (Eigen::Index i = 0; i < log_std.cols(); ++i)
    entropy[i] = static_cast<float>(log_std.rows()) * (0.5f + kHalfLog2Pi) + log_std.col(i).sum();
}

void gaussian_backward(const Mat& mean, const Mat& log_std, const Mat& actions,
                       std::span<const float> w_logp, std::span<const float> w_ent, Mat& dmean,
                       Mat& dlog_std) {
  dmean.resize(mean.rows(), mean.cols());
  dlog_std.resize(mean.rows(), mean.cols());
  for (Eigen::Index i = 0; i < mean.cols(); ++i)
    for (Eigen::Index j = 0; j < mean.rows(); ++j) {
      const float inv_std = std::exp(-log_std(j, i));
      const float z = (actions(j, i) - mean(j, i)) * inv_std;
      dmean(j, i) = w_logp[i] * z * inv_std;
      dlog_std(j, i) = w_logp[i] * (z * z - 1.0f) + (w_ent.empty() ? 0.0f : w_ent[i]);
    }
}

void tanh_gaussian_log_prob(const Mat& mean, const Mat& log_std, const Mat& u,
                            Eigen::RowVectorXf& logp) {
  logp.resize(mean.cols());
  for (Eigen::Index i = 0; i < mean.cols(); ++i) {
    float s = 0;
    for (Eigen::Index j = 0; j < mean.rows(); ++j) {
      const float z = (u(j, i) - mean(j, i)) * std::exp(-log_std(j, i));
      s += -0.5f * z * z - log_std(j, i) - kHalfLog2Pi - log1m_tanh_sq(u(j, i));
    }
    logp[i] = s;
  }
}

void tanh_gaussian_sample(const Mat& mean, const Mat& log_std, Rng& rng, TanhSample& s) {
  const Eigen::Index D = mean.rows(), B = mean.cols();
  s.eps.resize(D, B);
  for (Eigen::Index i = 0; i < B; ++i)
    for (Eigen::Index j = 0; j < D; ++j) s.eps(j, i) = static_cast<float>(rng.normal());
  s.std = log_std.array().exp();
  s.u = mean.array() + s.std.array() * s.eps.array();
  s.a = s.u.array().tanh();
  tanh_gaussian_log_prob(mean, log_std, s.u, s.logp);
}

void tanh_gaussian_backward(const TanhSample& s, std::span<const float> w_logp, const Mat& dl_da,
                            Mat& dmean, Mat& dlog_std) {
  const Eigen::Index D = s.u.rows(), B = s.u.cols();
  dmean.resize(D, B);
  dlog_std.resize(D, B);
  for (Eigen::Index i = 0; i < B; ++i)
    for (Eigen::Index j = 0; j < D; ++j) {
      const float a = s.a(j, i), se = s.std(j, i) * s.eps(j, i);
      // under the reparameterisation, d logp/du = 2 tanh(u) (squash term), d logp/dlog_std = -1
      // directly plus du/dlog_std = std * eps
      float du = w_logp[i] * 2.0f * a;
      if (dl_da.size() > 0) du += dl_da(j, i) * (1.0f - a * a);
      dmean(j, i) = du;
      dlog_std(j, i) = du * se - w_logp[i];
    }
}

void bounded_log_std(const Mat& x, double lo, double hi, Mat& log_std) {
  log_std = static_cast<float>(lo) + 0.5f * static_cast<float>(hi - lo) * (x.array().tanh() + 1.0f);
}

void bounded_log_std_backward(const Mat& x, double lo, double hi, Mat& factor) {
  factor = 0.5f * static_cast<float>(hi - lo) * (1.0f - x.array().tanh().square());
}

}  // namespace dprl::nn
