#include "algos/model_based/prob_ensemble.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace dprl::algos::model_based {

using nn::Mat;

namespace {

constexpr std::size_t kAlign = 16;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// softplus(x) = log(1 + e^x), stable for large |x|
Eigen::ArrayXXf softplus(const Eigen::ArrayXXf& x) {
  return x.max(0.0f) + (-x.abs()).exp().log1p();
}
Eigen::ArrayXXf sigmoid(const Eigen::ArrayXXf& x) { return 1.0f / (1.0f + (-x).exp()); }

}  // namespace

std::vector<double> parse_weight_decay(const std::string& text) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    char* stop = nullptr;
    const double v = std::strtod(item.c_str(), &stop);
    if (item.empty() || stop != item.c_str() + item.size() || !(v >= 0.0) || !std::isfinite(v))
      throw ParamError(fmt::format("primorl.weight_decay = '{}': '{}' must be a finite number >= 0",
                                   text, item));
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

ProbEnsemble::ProbEnsemble(ProbEnsembleConfig cfg) : cfg_(std::move(cfg)) {
  if (cfg_.in_dim < 1 || cfg_.out_dim < 1)
    throw ParamError(
        fmt::format("model: in_dim {} and out_dim {} must be >= 1", cfg_.in_dim, cfg_.out_dim));
  if (cfg_.members < 1)
    throw ParamError(fmt::format("model: members = {} must be >= 1", cfg_.members));
  if (cfg_.weight_decay.empty()) cfg_.weight_decay = {0.0};
  std::vector<int> sizes{cfg_.in_dim};
  for (int h : cfg_.hidden) {
    if (h < 1) throw ParamError(fmt::format("model: hidden width {} must be >= 1", h));
    sizes.push_back(h);
  }
  sizes.push_back(2 * cfg_.out_dim);
  shape_ = nn::MlpShape(sizes, nn::Act::kSilu);
  mlp_params_ = shape_.num_params();
  bound_off_ = round_up(static_cast<std::size_t>(cfg_.out_dim));
  stride_ = mlp_params_ + 2 * bound_off_;
  for (int l = 0; l < shape_.num_layers(); ++l) {
    blocks_.push_back({shape_.weight_offset(l), static_cast<std::size_t>(shape_.out(l)) *
                                                    static_cast<std::size_t>(shape_.in(l))});
    blocks_.push_back({shape_.bias_offset(l), static_cast<std::size_t>(shape_.out(l))});
  }
  if (cfg_.learn_bounds) {
    blocks_.push_back({mlp_params_, static_cast<std::size_t>(cfg_.out_dim)});
    blocks_.push_back({mlp_params_ + bound_off_, static_cast<std::size_t>(cfg_.out_dim)});
  }
  params_.assign(stride_ * static_cast<std::size_t>(cfg_.members), 0.0f);
  norm_mean_.assign(cfg_.in_dim, 0.0f);
  norm_std_.assign(cfg_.in_dim, 1.0f);
}

void ProbEnsemble::init(std::uint64_t seed) {
  std::fill(params_.begin(), params_.end(), 0.0f);
  for (int i = 0; i < cfg_.members; ++i) {
    Rng rng(derive_seed(seed, Domain::kInit, static_cast<std::uint64_t>(i)));
    float* p = member(i);
    nn::init_kaiming_uniform(shape_, p, rng);
    std::fill(p + mlp_params_, p + mlp_params_ + cfg_.out_dim,
              static_cast<float>(cfg_.max_logvar_init));
    std::fill(p + mlp_params_ + bound_off_, p + mlp_params_ + bound_off_ + cfg_.out_dim,
              static_cast<float>(cfg_.min_logvar_init));
  }
}

void ProbEnsemble::set_normalizer(std::vector<float> mean, std::vector<float> std) {
  if (static_cast<int>(mean.size()) != cfg_.in_dim || static_cast<int>(std.size()) != cfg_.in_dim)
    throw ParamError(fmt::format("model: normaliser needs {} means and scales", cfg_.in_dim));
  for (float s : std)
    if (!(s > 0.0f) || !std::isfinite(s))
      throw ParamError(fmt::format("model: normaliser scale {} must be positive and finite", s));
  norm_mean_ = std::move(mean);
  norm_std_ = std::move(std);
}

double ProbEnsemble::decay(int layer) const {
  const auto& wd = cfg_.weight_decay;
  const int L = shape_.num_layers();
  if (static_cast<int>(wd.size()) == L) return wd[layer];
  // first, middle (repeated), last
  if (layer == 0) return wd.front();
  if (layer == L - 1) return wd.back();
  return wd[std::min<std::size_t>(1, wd.size() - 1)];
}

void ProbEnsemble::normalize(const Eigen::Ref<const Mat>& x, Mat& xn) const {
  DPRL_CHECK(x.rows() == cfg_.in_dim);
  const Eigen::Map<const Eigen::VectorXf> m(norm_mean_.data(), cfg_.in_dim);
  const Eigen::Map<const Eigen::VectorXf> s(norm_std_.data(), cfg_.in_dim);
  xn = (x.colwise() - m).array().colwise() / s.array();
}

void ProbEnsemble::predict(const float* params, const Eigen::Ref<const Mat>& x, Mat& mean,
                           Mat& logvar, EnsembleWork& w) const {
  const int o = cfg_.out_dim, n = cfg_.members;
  const auto B = x.cols();
  normalize(x, w.xn);
  w.caches.resize(n);
  mean.resize(static_cast<Eigen::Index>(n) * o, B);
  logvar.resize(static_cast<Eigen::Index>(n) * o, B);
  for (int i = 0; i < n; ++i) {
    const float* p = params + static_cast<std::size_t>(i) * stride_;
    const Mat& out = nn::forward(shape_, p, w.xn, w.caches[i]);
    const Eigen::Map<const Eigen::VectorXf> mx(p + mlp_params_, o),
        mn(p + mlp_params_ + bound_off_, o);
    mean.middleRows(i * o, o) = out.topRows(o);
    const Eigen::ArrayXXf h =
        (-softplus((-(out.bottomRows(o).colwise() - mx)).array())).colwise() + mx.array();
    logvar.middleRows(i * o, o) =
        (softplus((h.matrix().colwise() - mn).array()).colwise() + mn.array()).matrix();
  }
}

double ProbEnsemble::loss(const float* params, const Eigen::Ref<const Mat>& x,
                          const Eigen::Ref<const Mat>& y, float* grad, EnsembleWork& w) const {
  const int o = cfg_.out_dim, n = cfg_.members;
  const auto B = x.cols();
  DPRL_CHECK(y.rows() == o && y.cols() == B && B > 0);
  normalize(x, w.xn);
  w.caches.resize(n);
  const float inv = 1.0f / static_cast<float>(B * o);
  double total = 0;
  if (grad) std::fill(grad, grad + params_.size(), 0.0f);
  for (int i = 0; i < n; ++i) {
    const float* p = params + static_cast<std::size_t>(i) * stride_;
    const Mat& out = nn::forward(shape_, p, w.xn, w.caches[i]);
    const Eigen::Map<const Eigen::VectorXf> mx(p + mlp_params_, o),
        mn(p + mlp_params_ + bound_off_, o);
    // soft bounds: a = max - raw, h = max - sp(a), c = h - min, logvar = min + sp(c)
    const Eigen::ArrayXXf a = (-(out.bottomRows(o).colwise() - mx)).array();
    const Eigen::ArrayXXf h = (-softplus(a)).colwise() + mx.array();
    const Eigen::ArrayXXf c = h.colwise() - mn.array();
    const Eigen::ArrayXXf lv = softplus(c).colwise() + mn.array();
    const Eigen::ArrayXXf r = out.topRows(o).array() - y.array();
    const Eigen::ArrayXXf iv = (-lv).exp();
    total += static_cast<double>(((r.square() * iv + lv).sum()) * inv);
    total += cfg_.bound_coef * (static_cast<double>(mx.sum()) - static_cast<double>(mn.sum()));
    for (int l = 0; l < shape_.num_layers(); ++l)
      total += 0.5 * decay(l) * static_cast<double>(shape_.weight(p, l).squaredNorm());
    if (!grad) continue;
    float* g = grad + static_cast<std::size_t>(i) * stride_;
    const Eigen::ArrayXXf dlv = (1.0f - r.square() * iv) * inv;
    const Eigen::ArrayXXf sc = sigmoid(c), sa = sigmoid(a);
    w.dout.resize(2 * o, B);
    w.dout.topRows(o) = (2.0f * r * iv * inv).matrix();
    w.dout.bottomRows(o) = (dlv * sc * sa).matrix();
    nn::backward(shape_, p, w.dout, w.caches[i], g, false);
    for (int l = 0; l < shape_.num_layers(); ++l)
      shape_.weight(g, l) += static_cast<float>(decay(l)) * shape_.weight(p, l);
    if (cfg_.learn_bounds) {
      Eigen::Map<Eigen::VectorXf> gmx(g + mlp_params_, o), gmn(g + mlp_params_ + bound_off_, o);
      gmx = (dlv * sc * (1.0f - sa)).rowwise().sum().matrix();
      gmx.array() += static_cast<float>(cfg_.bound_coef);
      gmn = (dlv * (1.0f - sc)).rowwise().sum().matrix();
      gmn.array() -= static_cast<float>(cfg_.bound_coef);
    }
  }
  return total;
}

void ProbEnsemble::mse(const float* params, const Eigen::Ref<const Mat>& x,
                       const Eigen::Ref<const Mat>& y, std::span<double> out,
                       EnsembleWork& w) const {
  const int o = cfg_.out_dim, n = cfg_.members;
  DPRL_CHECK(static_cast<int>(out.size()) == n && y.rows() == o && y.cols() == x.cols());
  normalize(x, w.xn);
  w.caches.resize(n);
  for (int i = 0; i < n; ++i) {
    const float* p = params + static_cast<std::size_t>(i) * stride_;
    const Mat& pred = nn::forward(shape_, p, w.xn, w.caches[i]);
    out[i] =
        static_cast<double>((pred.topRows(o) - y).squaredNorm()) / static_cast<double>(y.size());
  }
}

}  // namespace dprl::algos::model_based
