#include "engine/nn/nn_dp.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "engine/error.hpp"

namespace dprl::nn {

void fill_standard_normal(Rng& rng, std::span<float> out) {
  constexpr Eigen::Index kChunk = 1024;  // pairs per chunk
  thread_local Eigen::ArrayXf mant(kChunk), ex(kChunk), u2(kChunk), r(kChunk), c(kChunk), s(kChunk);
  thread_local std::vector<std::uint64_t> bits(2 * kChunk);
  const std::size_t n = out.size();
  std::size_t done = 0;
  while (done < n) {
    const std::size_t pairs = std::min<std::size_t>(kChunk, (n - done + 1) / 2);
    const auto m = static_cast<Eigen::Index>(pairs);
    for (std::size_t k = 0; k < 2 * pairs; ++k) bits[k] = rng.next_u64();
    // u1 = x 2^-53 with x = (53 random bits) + 1 in [1, 2^53], so u1 in (0, 1]; written as
    // mant 2^e with mant in [0.5, 1) (24 bits) and e exact, ln u1 = ln mant + e ln 2 keeps the
    // full 53-bit tail (radius up to 8.6) with a float logarithm. u2 in [0, 1) has 24 bits.
    for (Eigen::Index k = 0; k < m; ++k) {
      const std::uint64_t x = (bits[2 * k] >> 11) + 1;
      const int lz = std::countl_zero(x);
      mant[k] = static_cast<float>(static_cast<std::int32_t>((x << lz) >> 40)) * 0x1.0p-24f;
      ex[k] = static_cast<float>(11 - lz);
      u2[k] = static_cast<float>(static_cast<std::int32_t>(bits[2 * k + 1] >> 40)) * 0x1.0p-24f;
    }
    r.head(m) = (-2.0f * (mant.head(m).log() + ex.head(m) * static_cast<float>(std::numbers::ln2)))
                    .max(0.0f)
                    .sqrt();
    u2.head(m) *= static_cast<float>(2.0 * std::numbers::pi);
    c.head(m) = u2.head(m).cos();
    s.head(m) = u2.head(m).sin();
    if (done + 2 * pairs <= n) {
      for (Eigen::Index k = 0; k < m; ++k) {
        out[done + 2 * k] = r[k] * c[k];
        out[done + 2 * k + 1] = r[k] * s[k];
      }
      done += 2 * pairs;
    } else {
      for (Eigen::Index k = 0; k < m && done < n; ++k) {
        out[done++] = r[k] * c[k];
        if (done < n) out[done++] = r[k] * s[k];
      }
    }
  }
}

void add_group_sq_norms(const MlpShape& s, const MlpCache& c, int group_size, std::span<double> sq,
                        std::span<double> sample_sq) {
  DPRL_CHECK(group_size >= 1);
  DPRL_CHECK(static_cast<int>(sq.size()) * group_size == c.batch);
  DPRL_CHECK(sample_sq.empty() || static_cast<int>(sample_sq.size()) == c.batch);
  const int groups = static_cast<int>(sq.size());
  thread_local Eigen::RowVectorXf dn, an;
  // k > 1: float values are exact in double and so are their products; only the sums round
  for (int l = 0; l < s.num_layers(); ++l) {
    const Mat& d = c.delta[l];
    const Mat& a = c.a[l];
    if (group_size == 1) {
      // sums of squares in float (positive terms: within a relative gamma_n of the exact sum,
      // n the column length, u = 2^-24; a square that overflows is infinite, never smaller). A
      // square below 2^-126 rounds with an absolute error up to 2^-150, so a column of tiny
      // errors could read as 0 beside huge inputs: an error column whose sum falls below 2^-60
      // is summed again in double from exact squares; above it the absolute errors are below
      // n 2^-89 relative, less than one more float rounding. The inputs' sum is added to 1 (the
      // bias), which absorbs its absolute errors the same way.
      dn = d.colwise().squaredNorm();
      an = a.colwise().squaredNorm();
      for (int g = 0; g < groups; ++g) {
        double dg = dn[g];
        if (!(dg >= 0x1.0p-60)) dg = d.col(g).cast<double>().squaredNorm();
        const double t = dg * (static_cast<double>(an[g]) + 1.0);
        sq[g] += t;
        if (!sample_sq.empty()) sample_sq[g] += t;
      }
      continue;
    }
    for (int g = 0; g < groups; ++g) {
      const int c0 = g * group_size;
      double total = 0.0;
      for (int j = 0; j < group_size; ++j)
        for (int jj = 0; jj < group_size; ++jj) {
          const double dd = d.col(c0 + j).cast<double>().dot(d.col(c0 + jj).cast<double>());
          const double aa = a.col(c0 + j).cast<double>().dot(a.col(c0 + jj).cast<double>());
          total += dd * (aa + 1.0);
          if (j == jj && !sample_sq.empty()) sample_sq[c0 + j] += dd * (aa + 1.0);
        }
      sq[g] += total;
    }
  }
}

DpSgdStats clip_factors(std::span<const float> sq_norms, double clip_norm,
                        std::span<float> factors) {
  DPRL_CHECK(sq_norms.size() == factors.size());
  DpSgdStats st;
  double total = 0;
  for (std::size_t i = 0; i < sq_norms.size(); ++i) {
    const double norm = std::sqrt(static_cast<double>(sq_norms[i]));
    if (!std::isfinite(norm))
      throw DataError("DP-SGD: a per-example gradient norm is not finite (NaN or inf loss)");
    total += norm;
    if (norm > clip_norm) ++st.clipped;
    factors[i] = static_cast<float>(std::min(1.0, clip_norm / (norm + 1e-6)));
  }
  st.mean_norm = sq_norms.empty() ? 0.0 : total / static_cast<double>(sq_norms.size());
  return st;
}

void add_gaussian_noise(std::span<float> grad, double std, const NormalFill& fill,
                        Buffer& scratch) {
  if (std == 0.0) return;
  if (!(std > 0.0) || !std::isfinite(std))
    throw ParamError("DP-SGD: noise standard deviation must be positive and finite");
  scratch.resize(grad.size());
  fill(scratch);
  const auto n = static_cast<Eigen::Index>(grad.size());
  Eigen::Map<Eigen::ArrayXf>(grad.data(), n) +=
      static_cast<float>(std) * Eigen::Map<const Eigen::ArrayXf>(scratch.data(), n);
}

DpSgdStats dp_sgd_grad(const MlpShape& s, const MlpCache& c, const DpSgdConfig& cfg,
                       const NormalFill& fill, float* grad) {
  if (!(cfg.clip_norm > 0.0) || !(cfg.noise_multiplier >= 0.0))
    throw ParamError("DP-SGD: clip_norm must be > 0 and noise_multiplier >= 0");
  thread_local std::vector<float> sq, factors;
  thread_local Buffer noise;
  sq.resize(c.batch);
  factors.resize(c.batch);
  per_sample_sq_norms(s, c, sq);
  const DpSgdStats st = clip_factors(sq, cfg.clip_norm, factors);
  std::fill(grad, grad + s.num_params(), 0.0f);
  accumulate_grad(s, c, factors, grad);
  // noise on the real parameters only: the padding between blocks stays zero
  for (int l = 0; l < s.num_layers(); ++l) {
    const double std = cfg.noise_multiplier * cfg.clip_norm;
    add_gaussian_noise({grad + s.weight_offset(l), static_cast<std::size_t>(s.out(l)) * s.in(l)},
                       std, fill, noise);
    add_gaussian_noise({grad + s.bias_offset(l), static_cast<std::size_t>(s.out(l))}, std, fill,
                       noise);
  }
  return st;
}

}  // namespace dprl::nn
