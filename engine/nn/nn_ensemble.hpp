// Ensembles: N networks of one shape in one flat buffer (member k at offset k * num_params), as
// PriMORL's dynamics models (3 to 7 trained together). Forward runs every member on one input
// batch; the outputs are stacked row-wise ((N * out) x B, member k in rows [k * out, (k+1) * out)).
// Clipping, noise, Polyak averaging and checksums run over the whole buffer.
#pragma once

#include <vector>

#include "engine/nn/nn_mlp.hpp"

namespace dprl::nn {

class Ensemble {
 public:
  Ensemble() = default;
  Ensemble(MlpShape shape, int members)
      : shape_(std::move(shape)),
        n_(members),
        params_(shape_.num_params() * members, 0.0f),
        caches_(members) {}
  const MlpShape& shape() const { return shape_; }
  int members() const { return n_; }
  float* member(int k) { return params_.data() + k * shape_.num_params(); }
  const float* member(int k) const { return params_.data() + k * shape_.num_params(); }
  Buffer& buffer() { return params_; }
  const Buffer& buffer() const { return params_; }
  MlpCache& cache(int k) { return caches_[k]; }

  // Kaiming-uniform init of member k from rng derived for (seed, kInit, k).
  void init_kaiming(std::uint64_t seed);
  // Every member on x; stacked outputs in out.
  void forward_all(const Eigen::Ref<const Mat>& x, Mat& out);

 private:
  MlpShape shape_;
  int n_ = 0;
  Buffer params_;
  std::vector<MlpCache> caches_;
};

}  // namespace dprl::nn
