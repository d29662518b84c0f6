#include "engine/nn/nn_optim.hpp"

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl::nn {

namespace {
using ArrMap = Eigen::Map<Eigen::ArrayXf>;
using CArrMap = Eigen::Map<const Eigen::ArrayXf>;
}  // namespace

void Adam::sync_state(StateIo& io) {
  io(m_, true);
  io(v_, true);
  io.bounded(t_, std::int64_t{0}, std::int64_t{1} << 62, "Adam steps");
  io(cfg_.lr);
}

void Adam::step(std::span<float> params, std::span<const float> grad) {
  DPRL_CHECK(params.size() == m_.size() && grad.size() == m_.size());
  ++t_;
  const auto n = static_cast<Eigen::Index>(m_.size());
  ArrMap p(params.data(), n), m(m_.data(), n), v(v_.data(), n);
  CArrMap g(grad.data(), n);
  const double bc1 = 1.0 - std::pow(cfg_.beta1, static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(cfg_.beta2, static_cast<double>(t_));
  const float b1 = static_cast<float>(cfg_.beta1), b2 = static_cast<float>(cfg_.beta2);
  const float step = static_cast<float>(cfg_.lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float eps = static_cast<float>(cfg_.eps);
  const float decay = static_cast<float>(1.0 - cfg_.lr * cfg_.weight_decay);
  // blocks of 512 floats: the three updates of a block run while it sits in L1 (one pass over
  // memory instead of three; every element's arithmetic is unchanged)
  constexpr Eigen::Index kBlock = 512;
  for (Eigen::Index i = 0; i < n; i += kBlock) {
    const Eigen::Index len = std::min(kBlock, n - i);
    auto pb = p.segment(i, len);
    auto mb = m.segment(i, len);
    auto vb = v.segment(i, len);
    const auto gb = g.segment(i, len);
    if (cfg_.weight_decay != 0.0) pb *= decay;
    mb = b1 * mb + (1.0f - b1) * gb;
    vb = b2 * vb + (1.0f - b2) * gb.square();
    pb -= step * mb / (vb.sqrt() * inv_sqrt_bc2 + eps);
  }
}

void Sgd::step(std::span<float> params, std::span<const float> grad) {
  DPRL_CHECK(params.size() == v_.size() && grad.size() == v_.size());
  const auto n = static_cast<Eigen::Index>(v_.size());
  ArrMap p(params.data(), n), v(v_.data(), n);
  CArrMap g(grad.data(), n);
  const float lr = static_cast<float>(lr_);
  if (momentum_ == 0.0) {
    p -= lr * g;
    return;
  }
  // torch.optim.SGD: the first step seeds the buffer with the gradient
  if (first_)
    v = g;
  else
    v = static_cast<float>(momentum_) * v + g;
  first_ = false;
  p -= lr * v;
}

double l2_norm(std::span<const float> x) {
  double s = 0;
  const auto n = static_cast<Eigen::Index>(x.size());
  // blocks of float sums, accumulated in double
  constexpr Eigen::Index kBlock = 1024;
  for (Eigen::Index i = 0; i < n; i += kBlock) {
    const Eigen::Index len = std::min(kBlock, n - i);
    s += CArrMap(x.data() + i, len).square().sum();
  }
  return std::sqrt(s);
}

double clip_global_norm(std::span<float> grad, double max_norm) {
  const double norm = l2_norm(grad);
  if (norm > max_norm) {
    const float k = static_cast<float>(max_norm / (norm + 1e-6));
    ArrMap(grad.data(), static_cast<Eigen::Index>(grad.size())) *= k;
  }
  return norm;
}

void polyak_update(std::span<float> target, std::span<const float> source, double tau) {
  DPRL_CHECK(target.size() == source.size());
  const auto n = static_cast<Eigen::Index>(target.size());
  ArrMap t(target.data(), n);
  CArrMap s(source.data(), n);
  if (tau >= 1.0)
    t = s;
  else
    t = (1.0f - static_cast<float>(tau)) * t + static_cast<float>(tau) * s;
}

double linear_decay(double lr0, std::int64_t done, std::int64_t total) {
  if (total <= 0) return lr0;
  return std::max(0.0, lr0 * (1.0 - static_cast<double>(done) / static_cast<double>(total)));
}

}  // namespace dprl::nn
