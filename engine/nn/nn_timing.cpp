#include "engine/nn/nn_timing.hpp"

#include <algorithm>
#include <chrono>

#include "engine/nn/nn_dp.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"

namespace dprl::nn {

struct StepBench::State {
  Mlp net;
  Mat x, y, dout;
  MlpCache cache;
  Buffer grad;
  Adam opt;
  Rng noise_rng{derive_seed(0, Domain::kBench, 7)};
  NormalFill fill;
  std::vector<float> sq, one_out, scratch;
  float sink = 0;
};

StepBench::StepBench(std::vector<int> layers, int batch) : s_(new State) {
  s_->net = Mlp(MlpShape(std::move(layers), Act::kRelu));
  Rng rng(derive_seed(0, Domain::kBench, 1));
  init_kaiming_uniform(s_->net.shape(), s_->net.data(), rng);
  const auto& sh = s_->net.shape();
  s_->x.resize(sh.in(), batch);
  s_->y.resize(sh.out(), batch);
  for (Eigen::Index i = 0; i < s_->x.size(); ++i)
    s_->x.data()[i] = static_cast<float>(rng.normal());
  for (Eigen::Index i = 0; i < s_->y.size(); ++i)
    s_->y.data()[i] = static_cast<float>(rng.normal());
  s_->grad.assign(sh.num_params(), 0.0f);
  s_->opt = Adam(sh.num_params(), AdamConfig{1e-4});
  s_->fill = [st = s_](std::span<float> out) { fill_standard_normal(st->noise_rng, out); };
  s_->one_out.resize(sh.out());
}

StepBench::~StepBench() { delete s_; }

void StepBench::adam_step() {
  State& s = *s_;
  const Mat& out = s.net.forward(s.x, s.cache);
  // d/d(out) of mean over samples of 0.5 |out - y|^2
  s.dout = (out - s.y) / static_cast<float>(s.x.cols());
  backward(s.net.shape(), s.net.data(), s.dout, s.cache, s.grad.data());
  s.opt.step(s.net.span(), s.grad);
}

void StepBench::dpsgd_step() {
  State& s = *s_;
  const Mat& out = s.net.forward(s.x, s.cache);
  s.dout = out - s.y;  // per-example loss gradients (not averaged)
  backward_errors(s.net.shape(), s.net.data(), s.dout, s.cache);
  dp_sgd_grad(s.net.shape(), s.cache, DpSgdConfig{1.0, 1.0}, s.fill, s.grad.data());
  const auto n = static_cast<Eigen::Index>(s.grad.size());
  Eigen::Map<Eigen::ArrayXf>(s.grad.data(), n) *= 1.0f / static_cast<float>(s.x.cols());
  s.opt.step(s.net.span(), s.grad);
}

void StepBench::forward1() {
  State& s = *s_;
  forward_one(s.net.shape(), s.net.data(), s.x.col(0).data(), s.one_out.data(), s.scratch);
  s.sink += s.one_out[0];
}

void StepBench::per_sample_norms() {
  State& s = *s_;
  s.net.forward(s.x, s.cache);
  s.dout = s.cache.a.back() - s.y;
  backward_errors(s.net.shape(), s.net.data(), s.dout, s.cache);
  s.sq.resize(s.x.cols());
  nn::per_sample_sq_norms(s.net.shape(), s.cache, s.sq);
}

namespace {
template <class F>
double median_us(F&& f, int iters, int repeats) {
  std::vector<double> t;
  for (int k = 0; k < 3; ++k) f();  // warm-up
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

StepTimes measure_step_times(std::vector<int> layers, int batch, int iters, int repeats) {
  StepTimes st;
  st.layers = layers;
  st.batch = batch;
  StepBench b(layers, batch);
  st.adam_step_us = median_us([&] { b.adam_step(); }, iters, repeats);
  st.dpsgd_step_us = median_us([&] { b.dpsgd_step(); }, iters, repeats);
  st.forward1_us = median_us([&] { b.forward1(); }, iters * 20, repeats);
  return st;
}

}  // namespace dprl::nn
