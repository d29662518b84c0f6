// A small regression fitted with dprl's MLP: forward, backward and Adam steps, with the cache and
// the gradient buffer owned by this program while the library resizes them (Eigen buffers cross
// the library boundary here, so both sides must agree on Eigen's alignment settings).
#include <cmath>
#include <cstdio>
#include <dprl/engine/nn/nn_mlp.hpp>
#include <dprl/engine/nn/nn_optim.hpp>
#include <dprl/engine/rng.hpp>

int main() {
  namespace nn = dprl::nn;
  nn::Mlp net(nn::MlpShape({4, 64, 64, 2}, nn::Act::kTanh));
  dprl::Rng init(dprl::derive_seed(/*root=*/7, dprl::Domain::kInit, 0));
  nn::init_orthogonal(net.shape(), net.data(), init, std::sqrt(2.0), 0.01);
  nn::Adam opt(net.size(), {.lr = 1e-2});
  nn::MlpCache cache;  // activations and errors, resized inside the library
  nn::Buffer grad(net.size());

  // target: y = (x0 + x1, x2 - x3) on a fixed batch of 32 samples (one column each)
  dprl::Rng data(3);
  nn::Mat x(4, 32), y(2, 32);
  for (int i = 0; i < 32; ++i) {
    for (int k = 0; k < 4; ++k) x(k, i) = static_cast<float>(data.uniform(-1, 1));
    y(0, i) = x(0, i) + x(1, i);
    y(1, i) = x(2, i) - x(3, i);
  }
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    const nn::Mat& out = net.forward(x, cache);
    const nn::Mat dout = (out - y) / 32.0f;  // gradient of the mean of 0.5 * squared error
    const double loss = 0.5 * (out - y).squaredNorm() / 32.0;
    if (step == 0) first = loss;
    last = loss;
    nn::backward(net.shape(), net.data(), dout, cache, grad.data());
    opt.step(net.span(), grad);
  }
  std::printf("mlp: loss %.4f -> %.4f\n", first, last);
  return last < 0.1 * first ? 0 : 1;
}
