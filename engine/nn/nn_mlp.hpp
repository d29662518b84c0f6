// engine/nn/: MLPs (this file), their heads, optimisers, per-example gradients and network
// files; docs/architecture.md.
//
// Multi-layer perceptrons on one flat float buffer, batched column per sample, with the
// per-example gradient machinery DP-SGD needs.
//
// Layout (one flat buffer per network): layer l holds W_l (out_l x in_l, column-major) then b_l
// (out_l); each block starts on a 16-float (64-byte) boundary and the padding is zero, so
// clipping, noise, Polyak averaging and checksums run over the whole buffer. Data are
// (features x batch) matrices, one column per sample.
//
// Backward keeps the activations a_l (inputs of layer l) and the errors delta_l = dL/dz_l, so the
// per-example gradient of layer l is delta_{l,i} a_{l,i}^T plus the bias delta_{l,i}, with squared
// norm |delta_{l,i}|^2 (|a_{l,i}|^2 + 1) (Goodfellow 2015, "Efficient per-example gradient
// computations"); the clipped sum is then one product (delta_l diag(c)) a_l^T per layer.
//
// Initialisation: PyTorch's nn.Linear default (Kaiming-uniform with a = sqrt(5): weights and
// biases U(-1/sqrt(in), 1/sqrt(in))) or orthogonal (Saxe et al. 2014; torch.nn.init.orthogonal_)
// with a gain per layer and zero biases, as CleanRL's layer_init.
//
// | field  | meaning                                          |
// |--------|--------------------------------------------------|
// | sizes  | [in, hidden..., out] units per layer boundary    |
// | hidden | activation after every hidden layer              |
// | output | activation after the last layer (usually identity) |
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/eigen_abi.hpp"
#include "engine/rng.hpp"

namespace dprl {
class HelperThread;
}

namespace dprl::nn {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
using MatMap = Eigen::Map<Mat>;
using CMatMap = Eigen::Map<const Mat>;
using VecMap = Eigen::Map<Eigen::VectorXf>;
using CVecMap = Eigen::Map<const Eigen::VectorXf>;
// A float buffer aligned for AVX (parameters, gradients, optimizer state).
using Buffer = std::vector<float, Eigen::aligned_allocator<float>>;

enum class Act { kIdentity, kRelu, kTanh, kSilu };
// "identity", "relu", "tanh", "silu" (alias "swish"); else ParamError naming what.
Act parse_act(std::string_view name, std::string_view what);

struct MlpShape {
  std::vector<int> sizes;  // [in, h1, ..., out], at least two entries
  Act hidden = Act::kTanh;
  Act output = Act::kIdentity;

  MlpShape() = default;
  MlpShape(std::vector<int> s, Act h, Act o = Act::kIdentity);
  int num_layers() const { return static_cast<int>(sizes.size()) - 1; }
  int in() const { return sizes.front(); }
  int out() const { return sizes.back(); }
  int in(int l) const { return sizes[l]; }
  int out(int l) const { return sizes[l + 1]; }
  Act act(int l) const { return l + 1 == num_layers() ? output : hidden; }
  std::size_t weight_offset(int l) const { return offsets_[2 * l]; }
  std::size_t bias_offset(int l) const { return offsets_[2 * l + 1]; }
  // Floats in the flat buffer (padding included).
  std::size_t num_params() const { return offsets_.back(); }

  // Views of layer l inside a buffer of num_params() floats.
  MatMap weight(float* p, int l) const { return {p + weight_offset(l), out(l), in(l)}; }
  CMatMap weight(const float* p, int l) const { return {p + weight_offset(l), out(l), in(l)}; }
  VecMap bias(float* p, int l) const { return {p + bias_offset(l), out(l)}; }
  CVecMap bias(const float* p, int l) const { return {p + bias_offset(l), out(l)}; }

  bool operator==(const MlpShape& o) const {
    return sizes == o.sizes && hidden == o.hidden && output == o.output;
  }

 private:
  std::vector<std::size_t> offsets_;  // 2 per layer, then the total
};

// Activations and errors of one batch (reused between calls; allocates only when sizes change).
struct MlpCache {
  int batch = 0;
  std::vector<Mat> a;      // a[l]: input of layer l (a[0] the batch input, a[L] the output)
  std::vector<Mat> z;      // z[l]: pre-activation of layer l
  std::vector<Mat> delta;  // delta[l]: dL/dz_l after backward
  Mat din;                 // dL/d(input) when asked for
};

// Initialisers write every parameter (padding stays zero).
void init_kaiming_uniform(const MlpShape& s, float* params, Rng& rng);
// Orthogonal weights scaled by hidden_gain (output_gain for the last layer), zero biases.
void init_orthogonal(const MlpShape& s, float* params, Rng& rng, double hidden_gain,
                     double output_gain);

// Matrix-product flops (2 m n k per product) of forward, backward_errors, accumulate_grad and
// accumulate_grad_f64 on this thread since it started: a counter for benchmarks (dprl bench
// offline reports a step's GFLOP/s from it).
std::uint64_t& matmul_flops();

// Forward of x (in x B) into cache; returns the output (out x B), a view valid until the next call.
const Mat& forward(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& x,
                   MlpCache& c);
// Output of a single input column without a cache (acting): out = f(x); scratch holds 2 widths.
void forward_one(const MlpShape& s, const float* params, const float* x, float* out,
                 std::vector<float>& scratch);

// Back-propagates dout = dL/d(output) (out x B) into cache.delta (no parameter gradients).
// With want_input_grad, cache.din = dL/dx (DDPG/SAC actor losses through a critic).
void backward_errors(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& dout,
                     MlpCache& c, bool want_input_grad = false);
// grad += sum_i w_i * (per-example gradient of sample i) from cache.delta and cache.a: one weighted
// product per layer. Empty weights mean w_i = 1.
void accumulate_grad(const MlpShape& s, const MlpCache& c, std::span<const float> weights,
                     float* grad);
// How accumulate_grad_f64 forms its products (both give the layout and the zero-weight rule
// below; privacy/user_dp_sgd.hpp chooses one per step and covers its bound):
//  - kDouble: errors and activations converted exactly, each column scaled by its weight in double
//    and the products summed in double: every entry is within gamma_(B+2) sum_i w_i |delta_i,r|
//    |a_i,c| of the exact weighted sum (u = 2^-53, B = batch columns).
//  - kFloatChunks: each column scaled by its weight in double and rounded toward zero to float
//    (s_i: |s_i,r| <= (1 + 2^-53) |w_i delta_i,r|), the products s_i a_i summed in float over
//    chunks of kFloatSumChunk batch columns (in any order, fused or not) and the J = ceil(B /
//    kFloatSumChunk) chunk sums added in double: every weight entry is within
//    gamma_(kFloatSumChunk + J) sum_i |s_i,r| |a_i,c| of sum_i s_i,r a_i,c (u = 2^-24, the double
//    additions counted as float roundings), plus B 2^-124 for the operations that may underflow
//    or flush to zero. About twice as fast as kDouble on AVX2 cores. Bias entries are the double
//    sums of the double-scaled errors either way.
enum class SumArithmetic { kDouble, kFloatChunks };
inline constexpr int kFloatSumChunk = 64;
// out[i] = in[i] rounded to float toward zero (|out[i]| <= |in[i]|; beyond float's range the
// largest float; 0 and NaN stay), kFloatChunks' scaling.
void round_toward_zero(std::span<const double> in, std::span<float> out);

// The weighted sum of accumulate_grad in higher precision, for the private releases: out
// (overwritten) holds every layer's weight block (out x in, column-major) then its bias, layer
// after layer, with sum(out(l) (in(l) + 1)) values. A column whose weight is 0 is left out
// entirely, so NaN or infinite errors or inputs in it do not reach the sum.
// A large layer's product (16384 weights or more) is computed as two, the left and right halves
// of its output columns; with a helper that is idle when it starts, the helper computes the right
// half while the caller computes the left. The same products run either way, so the values do
// not depend on the helper (tested bit for bit).
void accumulate_grad_f64(const MlpShape& s, const MlpCache& c, std::span<const double> weights,
                         std::span<double> out, HelperThread* helper = nullptr,
                         SumArithmetic arithmetic = SumArithmetic::kDouble);
// backward_errors then accumulate_grad with unit weights (grad is overwritten when zero_first).
void backward(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& dout,
              MlpCache& c, float* grad, bool zero_first = true);

// Squared L2 norm of every sample's gradient (size B), from cache after backward_errors, without
// materialising per-example gradients.
void per_sample_sq_norms(const MlpShape& s, const MlpCache& c, std::span<float> sq_norms);
// Per-example gradients materialised: column i of g (num_params x B) is sample i's gradient.
void per_sample_grads(const MlpShape& s, const MlpCache& c, Mat& g);

// An MLP that owns its parameters.
class Mlp {
 public:
  Mlp() = default;
  explicit Mlp(MlpShape s) : shape_(std::move(s)), params_(shape_.num_params(), 0.0f) {}
  const MlpShape& shape() const { return shape_; }
  float* data() { return params_.data(); }
  const float* data() const { return params_.data(); }
  std::size_t size() const { return params_.size(); }
  Buffer& buffer() { return params_; }
  const Buffer& buffer() const { return params_; }
  std::span<float> span() { return params_; }
  std::span<const float> span() const { return params_; }

  const Mat& forward(const Eigen::Ref<const Mat>& x, MlpCache& c) const {
    return nn::forward(shape_, data(), x, c);
  }

 private:
  MlpShape shape_;
  Buffer params_;
};

}  // namespace dprl::nn
