// Probabilistic ensemble dynamics model: N Gaussian MLPs predicting (s' - s, r) from (s, a).
//
// Source: PriMORL ("Differentially Private Deep Model-Based Reinforcement Learning", sec. 4.2,
// App. H.2, Table 7), which builds on MOPO (Yu et al. 2020, "MOPO: Model-based Offline Policy
// Optimization", NeurIPS) and the probabilistic ensembles of Chua et al. 2018 (PETS). Each member
// is one MLP [in, hidden..., 2 out] with swish (SiLU) hidden units whose output holds the mean
// mu (rows 0..out-1) and a raw log-variance (rows out..2 out-1), soft-bounded as in the MOPO code:
//   h = max_lv - softplus(max_lv - raw),  logvar = min_lv + softplus(h - min_lv)
// with per-member learnable bound vectors max_lv (init 0.5) and min_lv (init -10).
//
// Loss of one batch (x, y) of B samples, out dims (the MOPO code's training loss):
//   L = sum_i [ 1/(B out) sum_{b,j} ((mu_ibj - y_bj)^2 exp(-logvar_ibj) + logvar_ibj) ]
//     + bound_coef * sum_i (sum_j max_lv_ij - sum_j min_lv_ij)
//     + sum_i sum_l 0.5 wd_l |W_il|_F^2                       (weights only, not biases)
// The weight decay is inside the loss, so DP-FedAvg clips it with everything else.
//
// Parameter layout: one flat float buffer; member i occupies [i * stride, (i + 1) * stride): the
// MLP's own layout (engine/nn/nn_mlp.hpp), then max_lv and min_lv (out floats each, each on a
// 16-float boundary). Padding stays zero. blocks() lists every trainable tensor of one member
// (W_l, b_l for each layer, then max_lv and min_lv when learnable): per-layer clipping clips each
// block, so every trainable parameter lies in exactly one clipped block.
//
// Input normaliser: x_n = (x - mean) / std with fixed vectors (identity by default). It is a
// release of whatever data it is fitted on, so private training fits it on the public split or
// uses env-known scales (set_normalizer); it is not a trainable parameter.
//
// | field             | default              | meaning                                   |
// |-------------------|----------------------|-------------------------------------------|
// | members           | 3 (Pendulum, Tab. 7) | ensemble size N >= 1                       |
// | hidden            | 64,64 (Pendulum)     | hidden widths                              |
// | max_logvar_init   | 0.5 (MOPO code)      | initial upper log-variance bound           |
// | min_logvar_init   | -10 (MOPO code)      | initial lower log-variance bound           |
// | learn_bounds      | true                 | bounds are trainable (inside the clip set) |
// | bound_coef        | 0.01 (MOPO code)     | coefficient of the bound regulariser       |
// | weight_decay      | 2.5e-5,5e-5,1e-4     | per layer (first, middle..., last)         |
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos::model_based {

struct ProbEnsembleConfig {
  int in_dim = 0;   // obs_dim + act_dim
  int out_dim = 0;  // obs_dim + 1 (delta s, reward)
  std::vector<int> hidden{64, 64};
  int members = 3;
  double max_logvar_init = 0.5;
  double min_logvar_init = -10.0;
  bool learn_bounds = true;
  double bound_coef = 0.01;
  // Per layer; shorter lists repeat their middle entry for inner layers (first, middle, last).
  std::vector<double> weight_decay{2.5e-5, 5e-5, 1e-4};
};

// "2.5e-5,5e-5,1e-4" -> values >= 0 (ParamError naming primorl.weight_decay otherwise).
std::vector<double> parse_weight_decay(const std::string& text);

// A contiguous range of one member's parameters (offset relative to the member's start).
struct ParamBlock {
  std::size_t offset;
  std::size_t size;
};

// Scratch for one thread's forward/backward (reused between calls).
struct EnsembleWork {
  std::vector<nn::MlpCache> caches;
  nn::Mat xn, out, dout, h, lv;
};

class ProbEnsemble {
 public:
  ProbEnsemble() = default;
  explicit ProbEnsemble(ProbEnsembleConfig cfg);

  const ProbEnsembleConfig& config() const { return cfg_; }
  const nn::MlpShape& shape() const { return shape_; }
  int members() const { return cfg_.members; }
  int in_dim() const { return cfg_.in_dim; }
  int out_dim() const { return cfg_.out_dim; }
  std::size_t stride() const { return stride_; }
  const std::vector<ParamBlock>& blocks() const { return blocks_; }
  std::size_t num_params() const { return params_.size(); }

  nn::Buffer& buffer() { return params_; }
  const nn::Buffer& buffer() const { return params_; }
  float* member(int i) { return params_.data() + static_cast<std::size_t>(i) * stride_; }
  const float* member(int i) const {
    return params_.data() + static_cast<std::size_t>(i) * stride_;
  }

  // Kaiming-uniform MLP weights (member i from derive_seed(seed, kInit, i)) and the bound inits.
  void init(std::uint64_t seed);
  void set_normalizer(std::vector<float> mean, std::vector<float> std);
  const std::vector<float>& normalizer_mean() const { return norm_mean_; }
  const std::vector<float>& normalizer_std() const { return norm_std_; }

  // Every member on the raw inputs x (in x B) with the given parameter buffer (this ensemble's
  // layout): mean and logvar stacked by member ((N out) x B, member i in rows [i out, (i+1) out)).
  void predict(const float* params, const Eigen::Ref<const nn::Mat>& x, nn::Mat& mean,
               nn::Mat& logvar, EnsembleWork& w) const;
  void predict(const Eigen::Ref<const nn::Mat>& x, nn::Mat& mean, nn::Mat& logvar,
               EnsembleWork& w) const {
    predict(params_.data(), x, mean, logvar, w);
  }
  // The loss above on (x raw inputs, y targets (out x B)); grad (num_params floats) is
  // overwritten when not null. Returns the loss.
  double loss(const float* params, const Eigen::Ref<const nn::Mat>& x,
              const Eigen::Ref<const nn::Mat>& y, float* grad, EnsembleWork& w) const;
  // Mean squared error of each member's mean on (x, y), averaged over samples and dims (the
  // holdout figure of the MOPO code); mse has members() entries.
  void mse(const float* params, const Eigen::Ref<const nn::Mat>& x,
           const Eigen::Ref<const nn::Mat>& y, std::span<double> mse, EnsembleWork& w) const;

 private:
  void normalize(const Eigen::Ref<const nn::Mat>& x, nn::Mat& xn) const;
  double decay(int layer) const;

  ProbEnsembleConfig cfg_;
  nn::MlpShape shape_;
  std::size_t mlp_params_ = 0, bound_off_ = 0, stride_ = 0;
  std::vector<ParamBlock> blocks_;
  std::vector<float> norm_mean_, norm_std_;
  nn::Buffer params_;
};

}  // namespace dprl::algos::model_based
