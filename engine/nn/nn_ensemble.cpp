#include "engine/nn/nn_ensemble.hpp"

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

}  // namespace dprl::nn
