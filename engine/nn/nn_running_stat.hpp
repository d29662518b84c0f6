// Running mean and variance of vectors (Gymnasium's RunningMeanStd: mean 0, var 1, count 1e-4 at
// start; batches merged with Chan et al.'s parallel update), for observation and reward
// normalisation.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "engine/state_io.hpp"

namespace dprl::nn {

class RunningStat {
 public:
  explicit RunningStat(std::size_t dim = 0) : mean_(dim, 0.0), var_(dim, 1.0) {}
  std::size_t dim() const { return mean_.size(); }

  // Merges a batch of n vectors stored column by column (x[i * dim + j]).
  void update(std::span<const float> x, std::size_t n) {
    const std::size_t d = dim();
    std::vector<double> bm(d, 0.0), bv(d, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < d; ++j) bm[j] += x[i * d + j];
    for (auto& v : bm) v /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        const double e = x[i * d + j] - bm[j];
        bv[j] += e * e;
      }
    const double nb = static_cast<double>(n), tot = count_ + nb;
    for (std::size_t j = 0; j < d; ++j) {
      bv[j] /= nb;
      const double delta = bm[j] - mean_[j];
      const double m2 = var_[j] * count_ + bv[j] * nb + delta * delta * count_ * nb / tot;
      mean_[j] += delta * nb / tot;
      var_[j] = m2 / tot;
    }
    count_ = tot;
  }
  // In place: clip((x - mean) / sqrt(var + eps), -clip, clip) for n column vectors.
  void normalize(std::span<float> x, std::size_t n, double clip = 10.0, double eps = 1e-8) const {
    const std::size_t d = dim();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        const double v = (x[i * d + j] - mean_[j]) / std::sqrt(var_[j] + eps);
        x[i * d + j] = static_cast<float>(std::clamp(v, -clip, clip));
      }
  }
  std::vector<float> mean_f() const { return {mean_.begin(), mean_.end()}; }
  std::vector<float> var_f() const { return {var_.begin(), var_.end()}; }
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& var() const { return var_; }

  // Saves or loads the statistics (checkpoints).
  void sync_state(StateIo& io) {
    io(mean_, true);
    io(var_, true);
    io(count_);
  }

 private:
  std::vector<double> mean_, var_;
  double count_ = 1e-4;
};

}  // namespace dprl::nn
