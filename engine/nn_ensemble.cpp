#include "engine/nn_ensemble.hpp"

#include "engine/rng.hpp"

namespace dprl::nn {

void Ensemble::init_kaiming(std::uint64_t seed) {
  for (int k = 0; k < n_; ++k) {
    Rng rng(derive_seed(seed, Domain::kInit, static_cast<std::uint64_t>(k)));
    init_kaiming_uniform(shape_, member(k), rng);
  }
}

void Ensemble::forward_all(const Eigen::Ref<const Mat>& x, Mat& out) {
  const int o = shape_.out();
  out.resize(static_cast<Eigen::Index>(o) * n_, x.cols());
  for (int k = 0; k < n_; ++k) out.middleRows(k * o, o) = forward(shape_, member(k), x, caches_[k]);
}

void Ensemble::backward_all(const Eigen::Ref<const Mat>& dout, float* grad) {
  const int o = shape_.out();
  for (int k = 0; k < n_; ++k)
    backward(shape_, member(k), dout.middleRows(k * o, o), caches_[k],
             grad + k * shape_.num_params());
}

}  // namespace dprl::nn
