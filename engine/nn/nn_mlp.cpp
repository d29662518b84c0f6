#include "engine/nn/nn_mlp.hpp"

#include <fmt/format.h>

#include <Eigen/QR>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "engine/error.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::nn {

namespace {

constexpr std::size_t kAlignFloats = 16;  // 64 bytes

std::size_t round_up(std::size_t n) { return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

// Batch products run on at most kGemmCols columns at a time: Eigen then packs its GEMM blocks on
// the stack (EIGEN_STACK_ALLOCATION_LIMIT, 128 KiB) instead of malloc'ing and freeing ~512 KiB per
// product, which glibc returns to the kernel each time (a page fault storm: 256-column products
// of 256x256 layers ran at 72 instead of 104 GFLOP/s on the benchmark machine). Column chunks do
// not change any output element's arithmetic; accumulate_grad's chunks along the batch fix a
// summation order that depends only on the batch size.
constexpr Eigen::Index kGemmCols = 128;
// accumulate_grad_f64 shares layers of at least this many weights with a helper thread
constexpr Eigen::Index kSplitProduct = 16384;

template <class F>
void for_col_chunks(Eigen::Index n, F&& f) {
  for (Eigen::Index c = 0; c < n; c += kGemmCols) f(c, std::min(kGemmCols, n - c));
}

// A layer's product over its output columns: a large layer (kSplitProduct weights or more) is
// always two products, the left and right halves of its columns (a multiple of 8 columns on the
// left), whoever computes them, so the values do not depend on the helper, which takes the right
// half when it is idle.
template <class F>
void run_halves(Eigen::Index rows, Eigen::Index cols, HelperThread* helper, const F& product) {
  const Eigen::Index left = rows * cols >= kSplitProduct ? cols / 2 / 8 * 8 : 0;
  if (left == 0) {
    product(Eigen::Index{0}, cols);
  } else if (helper && helper->idle()) {
    helper->post([&product, left, cols] { product(left, cols - left); });
    product(Eigen::Index{0}, left);
    helper->wait();
  } else {
    product(Eigen::Index{0}, left);
    product(left, cols - left);
  }
}


// a = act(z), elementwise (a may alias z except for SiLU, which keeps z).
void apply_act(Act act, const Mat& z, Mat& a) {
  switch (act) {
    case Act::kIdentity:
      if (&a != &z) a = z;
      break;
    case Act::kRelu:
      a = z.cwiseMax(0.0f);
      break;
    case Act::kTanh:
      a = z.array().tanh();
      break;
    case Act::kSilu:
      a = z.array() / (1.0f + (-z.array()).exp());
      break;
  }
}

// delta *= act'(z), with the derivative taken from the output a (or z for SiLU).
void mul_act_grad(Act act, const Mat& z, const Mat& a, Mat& delta) {
  switch (act) {
    case Act::kIdentity:
      break;
    case Act::kRelu:
      delta = (a.array() > 0.0f).select(delta, 0.0f);
      break;
    case Act::kTanh:
      delta.array() *= 1.0f - a.array().square();
      break;
    case Act::kSilu: {
      auto sig = 1.0f / (1.0f + (-z.array()).exp());
      delta.array() *= sig * (1.0f + z.array() * (1.0f - sig));
      break;
    }
  }
}

}  // namespace

Act parse_act(std::string_view name, std::string_view what) {
  if (name == "identity" || name == "linear") return Act::kIdentity;
  if (name == "relu") return Act::kRelu;
  if (name == "tanh") return Act::kTanh;
  if (name == "silu" || name == "swish") return Act::kSilu;
  throw ParamError(
      fmt::format("{}: unknown activation '{}' (valid: identity, relu, tanh, silu)", what, name));
}

MlpShape::MlpShape(std::vector<int> s, Act h, Act o) : sizes(std::move(s)), hidden(h), output(o) {
  DPRL_CHECK(sizes.size() >= 2);
  std::size_t off = 0;
  for (int l = 0; l < num_layers(); ++l) {
    DPRL_CHECK(sizes[l] > 0 && sizes[l + 1] > 0);
    offsets_.push_back(off);
    off += round_up(static_cast<std::size_t>(out(l)) * in(l));
    offsets_.push_back(off);
    off += round_up(static_cast<std::size_t>(out(l)));
  }
  offsets_.push_back(off);
}

void init_kaiming_uniform(const MlpShape& s, float* params, Rng& rng) {
  std::fill(params, params + s.num_params(), 0.0f);
  for (int l = 0; l < s.num_layers(); ++l) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(s.in(l)));
    auto w = s.weight(params, l);
    // row-major draw order (PyTorch's weight[out][in] order)
    for (int r = 0; r < w.rows(); ++r)
      for (int c = 0; c < w.cols(); ++c) w(r, c) = static_cast<float>(rng.uniform(-bound, bound));
    auto b = s.bias(params, l);
    for (int r = 0; r < b.size(); ++r) b(r) = static_cast<float>(rng.uniform(-bound, bound));
  }
}

void init_orthogonal(const MlpShape& s, float* params, Rng& rng, double hidden_gain,
                     double output_gain) {
  std::fill(params, params + s.num_params(), 0.0f);
  for (int l = 0; l < s.num_layers(); ++l) {
    const int rows = s.out(l), cols = s.in(l);
    const bool tall = rows >= cols;
    const int m = tall ? rows : cols, n = tall ? cols : rows;
    Eigen::MatrixXd g(m, n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) g(i, j) = rng.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
    Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(m, n);
    const Eigen::MatrixXd r = qr.matrixQR();
    for (int j = 0; j < n; ++j)
      if (r(j, j) < 0) q.col(j) *= -1.0;  // unique Q: positive diagonal of R
    const double gain = l + 1 == s.num_layers() ? output_gain : hidden_gain;
    auto w = s.weight(params, l);
    if (tall)
      w = (gain * q).cast<float>();
    else
      w = (gain * q.transpose()).cast<float>();
  }
}

std::uint64_t& matmul_flops() {
  thread_local std::uint64_t flops = 0;
  return flops;
}

namespace {
void count_flops(const MlpShape& s, int l, int batch) {
  matmul_flops() += 2 * static_cast<std::uint64_t>(s.out(l)) * static_cast<std::uint64_t>(s.in(l)) *
                    static_cast<std::uint64_t>(batch);
}
}  // namespace

const Mat& forward(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& x,
                   MlpCache& c) {
  const int L = s.num_layers();
  DPRL_CHECK(x.rows() == s.in());
  c.batch = static_cast<int>(x.cols());
  c.a.resize(L + 1);
  c.z.resize(L);
  c.delta.resize(L);
  c.a[0] = x;
  for (int l = 0; l < L; ++l) {
    const Act act = s.act(l);
    // SiLU keeps z for its derivative; the others compute in place in a[l + 1]
    Mat& z = act == Act::kSilu ? c.z[l] : c.a[l + 1];
    z.resize(s.out(l), c.batch);
    for_col_chunks(c.batch, [&](Eigen::Index c0, Eigen::Index w) {
      z.middleCols(c0, w).noalias() = s.weight(params, l) * c.a[l].middleCols(c0, w);
    });
    count_flops(s, l, c.batch);
    z.colwise() += s.bias(params, l);
    apply_act(act, z, c.a[l + 1]);
  }
  return c.a[L];
}

void forward_one(const MlpShape& s, const float* params, const float* x, float* out,
                 std::vector<float>& scratch) {
  int widest = 0;
  for (int v : s.sizes) widest = std::max(widest, v);
  scratch.resize(2 * static_cast<std::size_t>(widest));
  const float* in = x;
  for (int l = 0; l < s.num_layers(); ++l) {
    float* y = l + 1 == s.num_layers() ? out : scratch.data() + (l % 2) * widest;
    VecMap yv(y, s.out(l));
    yv.noalias() = s.weight(params, l) * CVecMap(in, s.in(l));
    yv += s.bias(params, l);
    switch (s.act(l)) {
      case Act::kIdentity:
        break;
      case Act::kRelu:
        yv = yv.cwiseMax(0.0f);
        break;
      case Act::kTanh:
        yv = yv.array().tanh();
        break;
      case Act::kSilu:
        yv = yv.array() / (1.0f + (-yv.array()).exp());
        break;
    }
    in = y;
  }
}

void backward_errors(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& dout,
                     MlpCache& c, bool want_input_grad) {
  const int L = s.num_layers();
  DPRL_CHECK(dout.rows() == s.out() && dout.cols() == c.batch);
  c.delta[L - 1] = dout;
  mul_act_grad(s.act(L - 1), c.z[L - 1], c.a[L], c.delta[L - 1]);
  for (int l = L - 1; l >= 1; --l) {
    c.delta[l - 1].resize(s.in(l), c.batch);
    for_col_chunks(c.batch, [&](Eigen::Index c0, Eigen::Index w) {
      c.delta[l - 1].middleCols(c0, w).noalias() =
          s.weight(params, l).transpose() * c.delta[l].middleCols(c0, w);
    });
    count_flops(s, l, c.batch);
    mul_act_grad(s.act(l - 1), c.z[l - 1], c.a[l], c.delta[l - 1]);
  }
  if (want_input_grad) {
    c.din.resize(s.in(), c.batch);
    for_col_chunks(c.batch, [&](Eigen::Index c0, Eigen::Index w) {
      c.din.middleCols(c0, w).noalias() =
          s.weight(params, 0).transpose() * c.delta[0].middleCols(c0, w);
    });
    count_flops(s, 0, c.batch);
  }
}

void accumulate_grad(const MlpShape& s, const MlpCache& c, std::span<const float> weights,
                     float* grad) {
  thread_local Mat scaled;
  for (int l = 0; l < s.num_layers(); ++l) {
    count_flops(s, l, c.batch);
    auto gw = s.weight(grad, l);
    auto gb = s.bias(grad, l);
    if (weights.empty()) {
      for_col_chunks(c.batch, [&](Eigen::Index c0, Eigen::Index w) {
        gw.noalias() += c.delta[l].middleCols(c0, w) * c.a[l].middleCols(c0, w).transpose();
      });
      gb += c.delta[l].rowwise().sum();
    } else {
      DPRL_CHECK(static_cast<int>(weights.size()) == c.batch);
      const Eigen::Map<const Eigen::RowVectorXf> w(weights.data(), c.batch);
      scaled = c.delta[l].array().rowwise() * w.array();
      for_col_chunks(c.batch, [&](Eigen::Index c0, Eigen::Index n) {
        gw.noalias() += scaled.middleCols(c0, n) * c.a[l].middleCols(c0, n).transpose();
      });
      gb += scaled.rowwise().sum();
    }
  }
}

namespace {
// grow-only scratch: a buffer resized per layer would be freed and reallocated every call, and
// glibc hands blocks of this size back to the kernel (page faults on every step)
template <class T>
T* scratch(std::vector<T>& v, Eigen::Index rows, Eigen::Index cols) {
  const auto n = static_cast<std::size_t>(rows * cols);
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

namespace {
// the nearest float, moved one step toward zero when it lies farther from zero than x (a float's
// magnitude bits less one are the next float toward zero)
inline float toward_zero(double x) {
  const auto f = static_cast<float>(x);
  const std::uint32_t step = std::fabs(static_cast<double>(f)) > std::fabs(x) ? 1u : 0u;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) - step);
}
}  // namespace

void round_toward_zero(std::span<const double> in, std::span<float> out) {
  DPRL_CHECK(in.size() == out.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = toward_zero(in[i]);
}

void accumulate_grad_f64(const MlpShape& s, const MlpCache& c, std::span<const double> weights,
                         std::span<double> out, HelperThread* helper, SumArithmetic arithmetic) {
  using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;
  DPRL_CHECK(static_cast<int>(weights.size()) == c.batch);
  const bool chunks = arithmetic == SumArithmetic::kFloatChunks;
  bool zero_weight = false;
  for (const double w : weights) zero_weight |= w == 0.0;
  thread_local std::vector<double> scaled_d, act_d;
  thread_local std::vector<float> scaled_f, act_f;
  std::size_t pos = 0;
  for (int l = 0; l < s.num_layers(); ++l) {
    const Eigen::Index rows = s.out(l), cols = s.in(l);
    DPRL_CHECK(pos + static_cast<std::size_t>(rows * (cols + 1)) <= out.size());
    Eigen::Map<MatD> gw(out.data() + pos, rows, cols);
    Eigen::Map<Eigen::VectorXd> gb(out.data() + pos + rows * cols, rows);
    pos += static_cast<std::size_t>(rows * (cols + 1));
    if (chunks) {
      // each error scaled in double (the bias sums add these) and rounded to float toward zero
      // (no larger than the double one), in one pass; a zero weight drops the column outright
      // (0 x NaN would be NaN); the activations as they are, unless such a column is cleared
      Eigen::Map<Mat> sf(scratch(scaled_f, rows, c.batch), rows, c.batch);
      gb.setZero();
      if (c.batch == 0) gw.setZero();  // no chunk to set the sums
      for (Eigen::Index i = 0; i < c.batch; ++i) {
        const double w = weights[static_cast<std::size_t>(i)];
        float* to = sf.col(i).data();
        if (w == 0.0) {
          std::fill(to, to + rows, 0.0f);
          continue;
        }
        const float* from = c.delta[l].col(i).data();
        double* sum = gb.data();
        for (Eigen::Index r = 0; r < rows; ++r) {
          const double x = static_cast<double>(from[r]) * w;
          to[r] = toward_zero(x);
          sum[r] += x;
        }
      }
      const float* act = c.a[l].data();
      if (zero_weight) {
        Eigen::Map<Mat> af(scratch(act_f, cols, c.batch), cols, c.batch);
        af = c.a[l];
        for (Eigen::Index i = 0; i < c.batch; ++i)
          if (weights[static_cast<std::size_t>(i)] == 0.0) af.col(i).setZero();
        act = af.data();
      }
      const Eigen::Map<const Mat> ac(act, cols, c.batch);
      // columns [col0, col0 + w): per chunk of kFloatSumChunk batch columns, a float product
      // (at most kGemmCols output columns at a time) added to the double sum
      const auto product = [&gw, &sf, &ac, &c](Eigen::Index col0, Eigen::Index w) {
        thread_local std::vector<float> part_buf;
        Eigen::Map<Mat> part(scratch(part_buf, gw.rows(), w), gw.rows(), w);
        for (Eigen::Index b0 = 0; b0 < c.batch; b0 += kFloatSumChunk) {
          const Eigen::Index n = std::min<Eigen::Index>(kFloatSumChunk, c.batch - b0);
          for_col_chunks(w, [&](Eigen::Index c0, Eigen::Index cw) {
            part.middleCols(c0, cw).noalias() =
                sf.middleCols(b0, n) * ac.middleRows(col0 + c0, cw).middleCols(b0, n).transpose();
          });
          // the first chunk's sums are the running sums: no zeroing pass
          if (b0 == 0)
            gw.middleCols(col0, w) = part.cast<double>();
          else
            gw.middleCols(col0, w) += part.cast<double>();
        }
      };
      run_halves(rows, cols, helper, product);
    } else {
      const Eigen::Map<const Eigen::RowVectorXd> wv(weights.data(), c.batch);
      Eigen::Map<MatD> sd(scratch(scaled_d, rows, c.batch), rows, c.batch);
      sd = c.delta[l].cast<double>().array().rowwise() * wv.array();
      // a zero weight drops the column outright: 0 x NaN would be NaN
      for (Eigen::Index i = 0; i < c.batch; ++i)
        if (weights[static_cast<std::size_t>(i)] == 0.0) sd.col(i).setZero();
      gw.setZero();
      gb = sd.rowwise().sum();
      Eigen::Map<MatD> ad(scratch(act_d, cols, c.batch), cols, c.batch);
      ad = c.a[l].cast<double>();
      for (Eigen::Index i = 0; i < c.batch; ++i)
        if (weights[static_cast<std::size_t>(i)] == 0.0) ad.col(i).setZero();
      // columns [col0, col0 + w) of the product; half the float chunk over the batch, so the
      // packed double blocks fit the same stack limit
      const auto product = [&gw, &sd, &ad, &c](Eigen::Index col0, Eigen::Index w) {
        for (Eigen::Index b0 = 0; b0 < c.batch; b0 += kGemmCols / 2) {
          const Eigen::Index n = std::min(kGemmCols / 2, c.batch - b0);
          gw.middleCols(col0, w).noalias() +=
              sd.middleCols(b0, n) * ad.middleRows(col0, w).middleCols(b0, n).transpose();
        }
      };
      run_halves(rows, cols, helper, product);
    }
    count_flops(s, l, c.batch);
  }
  DPRL_CHECK(pos == out.size());
}

void backward(const MlpShape& s, const float* params, const Eigen::Ref<const Mat>& dout,
              MlpCache& c, float* grad, bool zero_first) {
  backward_errors(s, params, dout, c);
  if (zero_first) std::fill(grad, grad + s.num_params(), 0.0f);
  accumulate_grad(s, c, {}, grad);
}

void per_sample_sq_norms(const MlpShape& s, const MlpCache& c, std::span<float> sq_norms) {
  DPRL_CHECK(static_cast<int>(sq_norms.size()) == c.batch);
  Eigen::Map<Eigen::RowVectorXf> out(sq_norms.data(), c.batch);
  out.setZero();
  for (int l = 0; l < s.num_layers(); ++l) {
    // |delta_i a_i^T|_F^2 + |delta_i|^2 = |delta_i|^2 (|a_i|^2 + 1)
    out.array() += c.delta[l].colwise().squaredNorm().array() *
                   (c.a[l].colwise().squaredNorm().array() + 1.0f);
  }
}

void per_sample_grads(const MlpShape& s, const MlpCache& c, Mat& g) {
  g.setZero(static_cast<Eigen::Index>(s.num_params()), c.batch);
  for (int i = 0; i < c.batch; ++i) {
    float* gi = g.col(i).data();
    for (int l = 0; l < s.num_layers(); ++l) {
      s.weight(gi, l).noalias() = c.delta[l].col(i) * c.a[l].col(i).transpose();
      s.bias(gi, l) = c.delta[l].col(i);
    }
  }
}

}  // namespace dprl::nn
