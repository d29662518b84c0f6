// Optimizers over flat parameter buffers, with state in buffers of the same layout.
//
// Adam (Kingma and Ba 2015, Algorithm 1) and AdamW (Loshchilov and Hutter 2019: decoupled decay
// p -= lr * wd * p before the Adam update), as torch.optim.Adam / AdamW (eps added to
// sqrt(v_hat)); SGD with heavy-ball momentum as torch.optim.SGD (v = mu v + g; p -= lr v).
// Global-norm clipping as torch.nn.utils.clip_grad_norm_ (scale by max_norm / (norm + 1e-6) when
// norm > max_norm). Linear decay as CleanRL's annealing: lr_k = lr0 * (1 - k / K).
//
// | param        | Adam default | meaning                              |
// |--------------|--------------|--------------------------------------|
// | lr           | 1e-3         | step size                            |
// | beta1, beta2 | 0.9, 0.999   | moment decay rates                   |
// | eps          | 1e-8         | denominator floor                    |
// | weight_decay | 0            | AdamW decoupled decay (0: plain Adam) |
#pragma once

#include <cstdint>
#include <span>

#include "engine/nn/nn_mlp.hpp"
#include "engine/state_io.hpp"

namespace dprl::nn {

struct AdamConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled (AdamW)
};

class Adam {
 public:
  Adam() = default;
  Adam(std::size_t n, AdamConfig cfg) : cfg_(cfg), m_(n, 0.0f), v_(n, 0.0f) {}
  // One update of params from grad (both of the size given at construction).
  void step(std::span<float> params, std::span<const float> grad);
  void set_lr(double lr) { cfg_.lr = lr; }
  double lr() const { return cfg_.lr; }
  std::int64_t steps() const { return t_; }
  const Buffer& m() const { return m_; }
  const Buffer& v() const { return v_; }
  // Saves or loads the moments, step count and step size (checkpoints).
  void sync_state(StateIo& io);

 private:
  AdamConfig cfg_;
  Buffer m_, v_;
  std::int64_t t_ = 0;
};

class Sgd {
 public:
  Sgd() = default;
  Sgd(std::size_t n, double lr, double momentum = 0.0)
      : lr_(lr), momentum_(momentum), v_(n, 0.0f) {}
  void step(std::span<float> params, std::span<const float> grad);
  void set_lr(double lr) { lr_ = lr; }

 private:
  double lr_ = 1e-2;
  double momentum_ = 0.0;
  Buffer v_;
  bool first_ = true;
};

// L2 norm of a buffer (accumulated in double).
double l2_norm(std::span<const float> x);
// Scales grad so its L2 norm is at most max_norm; returns the norm before clipping.
double clip_global_norm(std::span<float> grad, double max_norm);
// target = (1 - tau) * target + tau * source (tau = 1: hard copy).
void polyak_update(std::span<float> target, std::span<const float> source, double tau);
// Linear decay: lr0 * (1 - done / total), floored at 0.
double linear_decay(double lr0, std::int64_t done, std::int64_t total);

}  // namespace dprl::nn
